// Sign-in with OpenID Connect (contract §13), for every provider of
// ARENA_OIDC_PROVIDERS:
//
// - native apps send the ID token they got from the provider's SDK
//   (proveIdToken / signInWithIdToken; checked by id-token.ts);
// - web games go through the redirect flow (startFlow → the provider →
//   callback → a one-time code in the redirect's fragment → exchange).
//
// The web flow keeps nothing secret: oidc_login_flows holds the state's
// SHA-256, and the PKCE verifier and nonce are HMACs of the state under a
// server key (flowKey), computed again at the callback from the state the
// provider sends back. A flow is taken (deleted) in the callback's first unit
// of work, so a state works once; the exchange code is taken the same way.
//
// The device-code page (another module) signs players in through the same
// flow with purpose 'device': startFlow(name, { purpose: 'device', redirect:
// '/device?…' }) gives the provider's URL to send the browser to; the
// callback then sends the browser back to that redirect with a query
// parameter `signin=<one-time code>` (or `signin_error=<code>`), which the
// page redeems server-side with redeemExchange(code) → { userId } within 60 s.
// Query, not fragment: the page is rendered by the server, without script.
import { createHmac } from 'node:crypto'
import * as oauth from 'oauth4webapi'
import type { Storage } from '../../../db/storage'
import { AppError, type ErrorCode } from '../../../shared/errors'
import type { Clock } from '../../../shared/clock'
import { randomToken, sha256Hex } from '../../../shared/crypto'
import type { Logger } from '../../../shared/logger'
import type { Identities, ProvenIdentity, SignInPlace } from '../identities'
import type { SignInResponse } from '../model'
import { verifyIdToken } from './id-token'
import { OidcIssuer } from './issuer'
import { redirectAllowed, type OidcProviderSettings } from './settings'

export const FLOW_TTL_MS = 10 * 60_000
export const EXCHANGE_CODE_TTL_MS = 60_000
export const OIDC_SCOPE = 'openid email profile'
/**
 * Apple answers a request for `name` or `email` only with
 * response_mode=form_post (a POST to the callback), and the callback is a
 * GET: of Apple the web flow asks `openid` alone. Its ID token still names
 * the player (`sub`), which is all a sign-in needs; the address is asked for
 * by the app, if at all (docs/identities.md, "Apple").
 */
const APPLE_ISSUER = 'https://appleid.apple.com'
export function scopeFor(issuer: string): string {
  return issuer === APPLE_ISSUER ? 'openid' : OIDC_SCOPE
}

/** What this module asks of the identities service: find or create the account, open a session. */
export type IdentitySessions = Pick<Identities, 'signIn' | 'resolve' | 'openSession'>

export interface OidcDeps {
  storage: Storage
  clock: Clock
  logger: Logger
  providers: readonly OidcProviderSettings[]
  /** ARENA_OIDC_REDIRECTS: the prefixes a game's `redirect` must start with. */
  redirects: readonly string[]
  /** ARENA_SERVER_URL: arena's own base URL for the callback; unset, the request's origin. */
  serverUrl: string | undefined
  /** The server key the PKCE verifier and nonce are derived under. */
  flowKey: string
  identities: IdentitySessions
  /** Outgoing request timeout (FETCH_TIMEOUT_MS unless a test shortens it). */
  timeoutMs?: number
}

export type FlowPurpose = 'login' | 'device'

export class OidcService {
  readonly #issuers: ReadonlyMap<string, OidcIssuer>

  constructor(private readonly deps: OidcDeps) {
    this.#issuers = new Map(deps.providers.map((settings) => [settings.name, new OidcIssuer(settings, { clock: deps.clock, logger: deps.logger, timeoutMs: deps.timeoutMs })]))
  }

  /** The configured provider names, in configuration order (the device page lists them). */
  providerNames(): string[] {
    return [...this.#issuers.keys()]
  }

  #issuer(name: string): OidcIssuer {
    const issuer = this.#issuers.get(name)
    if (issuer === undefined) throw new AppError('not_found', `No sign-in provider is named "${name}"`)
    return issuer
  }

  /**
   * The identity a native app's ID token proves (the link route calls this,
   * as the sign-in does): 404 for an unknown provider, 401
   * invalid_credentials for any token that does not check out, 503 when the
   * provider cannot be reached.
   */
  async proveIdToken(name: string, body: { idToken: string; nonce?: string }): Promise<ProvenIdentity> {
    const issuer = this.#issuer(name)
    const claims = await verifyIdToken(issuer, body.idToken, body.nonce === undefined ? {} : { nonce: body.nonce }, this.deps)
    return { provider: `oidc:${name}`, subject: claims.sub, email: claims.email, emailVerified: claims.emailVerified }
  }

  /** POST /user/login/oidc/{provider}: the ID token's account (created with `create`), and a session. */
  async signInWithIdToken(name: string, body: { idToken: string; nonce?: string; create?: boolean }, place: SignInPlace): Promise<SignInResponse & { deviceToken: string }> {
    const proven = await this.proveIdToken(name, body)
    return this.deps.identities.signIn(proven, { create: body.create === true, ...place })
  }

  /**
   * Starts a web sign-in: stores the flow and answers the provider's
   * authorization URL (PKCE S256, state, nonce). `redirect`: for a game's
   * sign-in, where the player comes back (an allowed prefix of
   * ARENA_OIDC_REDIRECTS, else 422); for the device page, its own path.
   * `origin`: the request's, for the callback URL when ARENA_SERVER_URL is unset.
   */
  async startFlow(name: string, options: { purpose: FlowPurpose; redirect: string; create: boolean; origin: string }): Promise<string> {
    const issuer = this.#issuer(name)
    if (options.purpose === 'login') checkRedirect(options.redirect, this.deps.redirects)
    // The device page's redirect is arena's own page, never another site's.
    else if (!options.redirect.startsWith('/') || options.redirect.startsWith('//') || options.redirect.includes('#')) throw new Error(`a device sign-in returns to a path of arena's, not ${options.redirect}`)
    const server = await issuer.metadata()
    if (server.authorization_endpoint === undefined) throw new AppError('service_unavailable', `The sign-in provider "${name}" has no authorization endpoint`)
    const state = randomToken(32)
    const { verifier, nonce } = this.#derived(state)
    const now = this.deps.clock.now()
    await this.deps.storage.write(async (tx) => {
      await tx.oidc.insertFlow({
        stateHash: sha256Hex(state),
        provider: name,
        redirect: options.redirect,
        create: options.create,
        purpose: options.purpose,
        createdAt: now,
        expiresAt: new Date(now.getTime() + FLOW_TTL_MS),
      })
    })
    const url = new URL(server.authorization_endpoint)
    url.search = new URLSearchParams({
      client_id: issuer.settings.clientId,
      redirect_uri: this.callbackUrl(name, options.origin),
      response_type: 'code',
      scope: scopeFor(issuer.settings.issuer),
      state,
      nonce,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }).toString()
    return url.href
  }

  /** The redirect_uri registered with the provider: `<ARENA_SERVER_URL or origin>/api/v1/auth/oidc/<name>/callback`. */
  callbackUrl(name: string, origin: string): string {
    return `${this.deps.serverUrl ?? origin}/api/v1/auth/oidc/${name}/callback`
  }

  /**
   * The provider sent the browser back: where to send it next. The flow is
   * taken first (a state works once; unknown, used or expired: 400, since
   * there is no trusted place to send the browser). Then the code is traded
   * at the provider's token endpoint (PKCE verifier, client secret), the ID
   * token checked (nonce included), the account found or created, and a
   * one-time code stored; the answer is the flow's redirect with `#code=…`,
   * or `#error=<code>` for a refusal (the provider's access_denied, the
   * account's account_exists, invalid_credentials, account_banned,
   * rate_limited, service_unavailable).
   */
  async callback(name: string, params: URLSearchParams, context: { origin: string; address: string }): Promise<string> {
    const issuer = this.#issuer(name)
    const state = params.get('state')
    const now = this.deps.clock.now()
    const flow = state === null || state.length > 512 ? null : await this.deps.storage.write((tx) => tx.oidc.takeFlow(sha256Hex(state), now))
    if (flow === null || flow.provider !== name) {
      throw new AppError('bad_request', 'This sign-in has expired or was used already: start it again')
    }
    const back = (result: { code: string } | { error: ErrorCode }) => backTo(flow.redirect, flow.purpose, result)
    if (params.has('error')) {
      const error = params.get('error')
      this.deps.logger.info('oidc.provider_refused', { provider: name, error })
      return back({ error: error === 'access_denied' ? 'access_denied' : error === 'temporarily_unavailable' || error === 'server_error' ? 'service_unavailable' : 'invalid_credentials' })
    }
    try {
      const proven = await this.#redeemAtProvider(issuer, params, state!, this.callbackUrl(name, context.origin))
      const { userId, created } = await this.deps.identities.resolve(proven, { create: flow.create, address: context.address })
      const code = randomToken(32)
      const at = this.deps.clock.now()
      await this.deps.storage.write(async (tx) => {
        await tx.oidc.insertExchangeCode({ codeHash: sha256Hex(code), userId, created, createdAt: at, expiresAt: new Date(at.getTime() + EXCHANGE_CODE_TTL_MS) })
      })
      return back({ code })
    } catch (error) {
      if (!(error instanceof AppError)) throw error
      return back({ error: error.code as ErrorCode })
    }
  }

  /** The authorization code traded at the token endpoint, its ID token checked: who the player is. */
  async #redeemAtProvider(issuer: OidcIssuer, params: URLSearchParams, state: string, redirectUri: string): Promise<ProvenIdentity> {
    const server = await issuer.metadata()
    const { verifier, nonce } = this.#derived(state)
    const { clientId, clientSecret } = issuer.settings
    // oauth4webapi checks timestamps by the system clock; the skew makes it arena's.
    const client: oauth.Client = { client_id: clientId, [oauth.clockSkew]: Math.round((this.deps.clock.now().getTime() - Date.now()) / 1000) }
    const auth = clientSecret === undefined ? oauth.None() : oauth.ClientSecretBasic(clientSecret.reveal())
    let idToken: string
    try {
      const checked = oauth.validateAuthResponse(server, client, params, state)
      const response = await oauth.authorizationCodeGrantRequest(server, client, auth, checked, redirectUri, verifier, issuer.requestOptions())
      const tokens = await oauth.processAuthorizationCodeResponse(server, client, response, { expectedNonce: nonce, requireIdToken: true })
      idToken = tokens.id_token!
    } catch (error) {
      // The provider's refusal (a spent or forged code, a wrong verifier or secret) or a token that fails its checks: invalid_credentials.
      // Anything else is the network: the provider is not answering.
      const refused = error instanceof oauth.ResponseBodyError || error instanceof oauth.AuthorizationResponseError || error instanceof oauth.OperationProcessingError || error instanceof oauth.WWWAuthenticateChallengeError
      this.deps.logger.warn('oidc.code_exchange_failed', { provider: issuer.name, error: String(error) })
      throw refused ? new AppError('invalid_credentials', 'The sign-in provider did not confirm the sign-in') : new AppError('service_unavailable', `The sign-in provider "${issuer.name}" is not answering; try again later`)
    }
    // The same checks as a native token (signature by the cached key set included), the nonce the flow's.
    return this.proveIdToken(issuer.name, { idToken, nonce })
  }

  /** POST /user/login/exchange: the code the callback handed out, traded once within 60 s for a session. */
  async exchange(code: string, place: SignInPlace): Promise<SignInResponse & { deviceToken: string }> {
    const { userId, created } = await this.redeemExchange(code)
    return { ...(await this.deps.identities.openSession(userId, place)), created }
  }

  /** Takes a one-time code (the device page's `signin=`): whose it was, once, within 60 s; else 401 invalid_credentials. */
  async redeemExchange(code: string): Promise<{ userId: string; created: boolean }> {
    const now = this.deps.clock.now()
    const taken = code.length > 512 ? null : await this.deps.storage.write((tx) => tx.oidc.takeExchangeCode(sha256Hex(code), now))
    if (taken === null) throw new AppError('invalid_credentials', 'The sign-in code is unknown, used or expired')
    return { userId: taken.userId, created: taken.created }
  }

  /** The PKCE verifier and nonce of a flow: HMACs of its state under the server key, so neither is stored. */
  #derived(state: string): { verifier: string; nonce: string } {
    const derive = (purpose: string) => createHmac('sha256', this.deps.flowKey).update(`arena oidc ${purpose} v1\n`).update(state).digest('base64url')
    // 43 base64url characters: the shortest verifier RFC 7636 allows, 256 bits.
    return { verifier: derive('pkce'), nonce: derive('nonce') }
  }
}

/** A game's `redirect` must start with an allowed prefix and carry no fragment (the code goes there): else 422. */
function checkRedirect(redirect: string, prefixes: readonly string[]): void {
  const problem =
    prefixes.length === 0
      ? 'No redirect is allowed: the server has no ARENA_OIDC_REDIRECTS'
      : redirect.includes('#')
        ? 'A redirect carries no fragment: the sign-in code goes there'
        : !redirectAllowed(redirect, prefixes)
          ? 'Not an allowed redirect: it must start with one of the prefixes the server was given (ARENA_OIDC_REDIRECTS)'
          : undefined
  if (problem !== undefined) throw new AppError('validation_failed', 'Request failed validation', { details: [{ path: 'query/redirect', message: problem }] })
}

/** Where the browser goes at the end: a game's redirect with the result in the fragment, the device page's with it in the query. */
function backTo(redirect: string, purpose: FlowPurpose, result: { code: string } | { error: ErrorCode }): string {
  if (purpose === 'login') return `${redirect}#${new URLSearchParams('code' in result ? { code: result.code } : { error: result.error })}`
  const query = new URLSearchParams('code' in result ? { signin: result.code } : { signin_error: result.error })
  return `${redirect}${redirect.includes('?') ? '&' : '?'}${query}`
}
