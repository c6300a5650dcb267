// The ways the signed-in account signs in (`arena.identities`): list them,
// link another (with the body of that provider's sign-in) and unlink one.
// An identity already linked to another account is ApiError 409
// `identity_in_use` (accounts are never merged); unlinking the only way left
// to sign in is 409 `last_identity`.
import type { Auth } from './auth.js'
import type { LinkIdentityBody } from './requests.js'
import { readJson } from './transport.js'
import type { Identity } from './types.js'

/** The providers an identity can be linked with: the configured OpenID Connect ones as `oidc:<name>`. */
export type LinkProvider = 'password' | 'device' | 'steam' | `oidc:${string}`

/** What linking a provider takes: the credential its sign-in takes (`{ email, password, username? }` for a password). */
export type LinkBody<P extends LinkProvider> = P extends 'password'
  ? { email: string; password: string; username?: string }
  : P extends 'device'
    ? { deviceSecret: string }
    : P extends 'steam'
      ? { ticket: string }
      : { idToken: string; nonce?: string }

export interface IdentitiesClient {
  /** Every way the account signs in, in the order they were linked. */
  list(): Promise<Identity[]>
  /**
   * Links an identity to the signed-in account: `password` with `{ email,
   * password, username? }` (the address then asks to be verified, as at
   * registration), `device` with `{ deviceSecret }`, `steam` with `{ ticket }`,
   * `oidc:<name>` with `{ idToken, nonce? }`. Resolves with every identity of
   * the account, the new one last.
   */
  link<P extends LinkProvider>(provider: P, body: LinkBody<P>): Promise<Identity[]>
  /** Unlinks an identity; resolves with the ones left. ApiError 409 `last_identity` when it is the only way left to sign in, 404 when the account has none of that provider. */
  unlink(provider: string): Promise<Identity[]>
}

export function identitiesClient(auth: Auth): IdentitiesClient {
  const path = (provider: string) => `/api/v1/me/identities/${encodeURIComponent(provider)}`
  const identities = async (response: Response) => (await readJson<{ identities: Identity[] }>(response)).identities
  return {
    list: async () => identities(await auth.send({ method: 'GET', path: '/api/v1/me/identities' })),
    link: async (provider, body) => identities(await auth.send({ method: 'POST', path: path(provider), body: body satisfies LinkIdentityBody })),
    unlink: async (provider) => identities(await auth.send({ method: 'DELETE', path: path(provider) })),
  }
}
