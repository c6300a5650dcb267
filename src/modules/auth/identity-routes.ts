// Identities over HTTP (contract §13): the guest sign-in, the account's
// identities (list, link, unlink) and its profile. The other providers' own
// sign-in routes are their modules' (oidc/, steam.ts, device-code.ts); the
// link route reaches them through the same `prove` their sign-in uses.
import { Elysia } from 'elysia'
import { authGuard } from '../../plugins/auth'
import { BEARER, BEARER_SECURITY, errors, INVALID, JSON_BODY, STORAGE } from '../../plugins/openapi'
import { AppError } from '../../shared/errors'
import { COUNTRY_CODES } from './countries'
import { deviceIdentity, isProviderName, type Identities, type ProvenIdentity } from './identities'
import { answerSignIn, DEVICE_DESCRIPTION, signInFrom, type ClientAddressOptions } from './index'
import { DeviceLoginBody, IdentitiesResponse, LinkIdentityBody, ProviderParams, SignInResponse, UpdateProfileBody, UserResponse } from './model'
import type { AuthService } from './service'

/** The providers' proofs the link route calls, when the provider is configured (steam.ts, oidc/). */
export interface IdentityProofs {
  steam?: { prove(body: { ticket: string }): Promise<ProvenIdentity> }
  oidc?: { proveIdToken(name: string, body: { idToken: string; nonce?: string }): Promise<ProvenIdentity> }
}

const LINK_ERRORS = { 401: ['invalid_credentials'], 403: ['platform_banned'], 404: ['not_found'], 409: ['identity_in_use', 'email_taken', 'username_taken'], 429: ['rate_limited'] } as const

export function identitiesModule(auth: AuthService, options: ClientAddressOptions, services: { identities: Identities } & IdentityProofs) {
  const { identities } = services
  return new Elysia({ name: 'arena/identities', prefix: '/api/v1' })
    .use(authGuard(auth))
    .post(
      '/user/login/device',
      async ({ body, request, server, set }) =>
        answerSignIn(set, await identities.signIn(deviceIdentity(body.deviceSecret), { create: body.create === true, ...signInFrom(request, server, options) })),
      {
        body: DeviceLoginBody,
        response: { 200: SignInResponse, ...errors(JSON_BODY, { 401: ['invalid_credentials'], 403: ['account_banned'], 429: ['rate_limited'] }, STORAGE) },
        detail: {
          tags: ['auth'],
          summary: 'Sign in as a guest with the secret the device keeps; with `create`, an unknown secret creates the account',
          description:
            'The secret (at least 128 random bits) is stored only as a hash. Account creation is throttled per client address (ARENA_GUEST_CREATE_PER_HOUR). The device secret is the credential; the `x-arena-device` token is not: ' +
            DEVICE_DESCRIPTION,
        },
      },
    )
    .get('/me/identities', async ({ auth: { user } }) => ({ identities: await identities.list(user.id) }), {
      auth: true,
      response: { 200: IdentitiesResponse, ...errors(BEARER, STORAGE) },
      detail: { tags: ['auth'], summary: 'Every way the account signs in, in the order they were linked', security: BEARER_SECURITY },
    })
    .patch(
      '/me',
      async ({ body, auth: { user } }) => {
        const country = body.country?.toUpperCase()
        if (country !== undefined && !COUNTRY_CODES.has(country)) {
          throw new AppError('validation_failed', 'Request failed validation', { details: [{ path: 'body/country', message: 'Expected an ISO 3166-1 alpha-2 country code' }] })
        }
        return { user: await identities.updateProfile(user.id, { ...(body.username === undefined ? {} : { username: body.username }), ...(country === undefined ? {} : { country }) }) }
      },
      {
        auth: true,
        body: UpdateProfileBody,
        response: { 200: UserResponse, ...errors(JSON_BODY, BEARER, { 409: ['username_taken'] }, STORAGE) },
        detail: { tags: ['auth'], summary: 'Change the username or the country', security: BEARER_SECURITY },
      },
    )
    .post(
      '/me/identities/:provider',
      async ({ params: { provider }, body, auth: { user } }) => {
        if (provider === 'password') {
          const { email, password } = body
          if (email === undefined || password === undefined) throw missing(email === undefined ? 'email' : 'password')
          return { identities: await identities.linkPassword(user.id, { email, password, ...(body.username === undefined ? {} : { username: body.username }) }) }
        }
        return { identities: await identities.link(user.id, await prove(services, provider, body)) }
      },
      {
        auth: true,
        params: ProviderParams,
        body: LinkIdentityBody,
        response: { 200: IdentitiesResponse, ...errors(JSON_BODY, BEARER, LINK_ERRORS, STORAGE) },
        detail: {
          tags: ['auth'],
          summary: "Link an identity to the caller's account, with the body of that provider's sign-in ({ email, password, username? } for `password`)",
          description: 'An identity linked to another account: 409 identity_in_use (accounts are never merged). A password identity asks for its email to be verified, as a registration does.',
          security: BEARER_SECURITY,
        },
      },
    )
    .delete('/me/identities/:provider', async ({ params: { provider }, auth: { user } }) => ({ identities: await identities.unlink(user.id, provider) }), {
      auth: true,
      params: ProviderParams,
      response: { 200: IdentitiesResponse, ...errors(BEARER, INVALID, { 404: ['not_found'], 409: ['last_identity'] }, STORAGE) },
      detail: { tags: ['auth'], summary: 'Unlink an identity; 409 last_identity when it is the only way left to sign in', security: BEARER_SECURITY },
    })
}

/** The identity a link body proves, by the provider's own check: the same one its sign-in runs. */
async function prove(services: IdentityProofs, provider: string, body: LinkIdentityBody): Promise<ProvenIdentity> {
  if (!isProviderName(provider)) throw new AppError('not_found', `No identity provider ${provider}`)
  if (provider === 'device') {
    if (body.deviceSecret === undefined) throw missing('deviceSecret')
    return deviceIdentity(body.deviceSecret)
  }
  if (provider === 'steam') {
    if (!services.steam) throw new AppError('not_found', 'Steam sign-in is not configured')
    if (body.ticket === undefined) throw missing('ticket')
    return services.steam.prove({ ticket: body.ticket })
  }
  if (!services.oidc) throw new AppError('not_found', `No identity provider ${provider}`)
  if (body.idToken === undefined) throw missing('idToken')
  return services.oidc.proveIdToken(provider.slice('oidc:'.length), { idToken: body.idToken, ...(body.nonce === undefined ? {} : { nonce: body.nonce }) })
}

function missing(field: string): AppError {
  return new AppError('validation_failed', 'Request failed validation', { details: [{ path: `body/${field}`, message: 'Required for this provider' }] })
}
