// Tokens and their rotation. The access token is attached to every
// authenticated call; when the server says it expired (or the client knows it
// is about to), the refresh token is rotated through /auth/validate. Rotation
// is single-flight: however many calls find the token stale at once, one
// rotation runs and the rest wait for it. Two rotations of one refresh token
// would look like a replay to the server, which then revokes the session
// (the server's refresh-token reuse detection).
//
// Every login (any sign-in), useToken and sign-out starts a new "lineage" of tokens. A
// rotation or a logout only changes the tokens of the lineage it started in,
// and a call is replayed after a rotation only within its own lineage: a call
// sent as one player is never replayed as another.
import { ApiError, NetworkError, NotSignedIn } from './errors.js'
import { newDeviceSecret, newDeviceToken } from './ids.js'
import { readJson, type Call, type Transport } from './transport.js'
import type {
  ChangePasswordBody,
  DeleteAccountBody,
  DeviceLoginBody,
  DeviceTokenBody,
  ExchangeBody,
  ForgotPasswordBody,
  IdTokenLoginBody,
  LoginBody,
  LogoutBody,
  RefreshBody,
  ResetPasswordBody,
  SteamLoginBody,
  VerifyEmailBody,
} from './requests.js'
import type { Accepted, AccountDeleted, DeviceCode, GuestSignIn, LogoutResult, Session, SessionsEnded, SignInResponse, SignInResult, TokenResponse, Tokens, User } from './types.js'

export interface AuthOptions {
  /** Called with the new tokens after login and every rotation, and with null when they are gone. */
  onTokens?: (tokens: Tokens | null) => void
  /** The client's clock, epoch ms (tests move it). */
  now?: () => number
  /**
   * This device's token, kept in the app's storage from an earlier run (see
   * `onDeviceToken`). Without one the SDK makes one (32 random bytes,
   * base64url). Sent with every sign-in of every kind as `x-arena-device`:
   * from a device that signed in before, strangers' failed logins on the
   * same name do not block it, and the server's integrity checks see which
   * accounts share a device (a signal, never proof).
   */
  deviceToken?: string
  /** Called with the device token after every sign-in, to keep it for the next run (it is a secret: store it like the refresh token). */
  onDeviceToken?: (token: string) => void
}

/** The sign-ins' request and response header carrying the device token. */
const DEVICE_HEADER = 'x-arena-device'

/** Rotate this long before the known expiry (at most a quarter of the lifetime), so a request does not race the clock. */
const EXPIRY_MARGIN_MS = 30_000

export class Auth {
  private tokens: Tokens | null = null
  /** When to rotate before sending: known only for tokens this client obtained. */
  private rotateAt: number | undefined
  private lineage = 0
  private rotation: { lineage: number; promise: Promise<void> } | null = null
  private readonly now: () => number
  private deviceToken: string

  constructor(
    private readonly transport: Transport,
    private readonly options: AuthOptions = {},
  ) {
    this.now = options.now ?? Date.now
    this.deviceToken = options.deviceToken ?? newDeviceToken()
  }

  /** Exchanges an identifier (username or e-mail) and password for tokens. */
  async login(identifier: string, password: string): Promise<User> {
    const response = await this.transport.send({
      method: 'POST',
      path: '/api/v1/user/login',
      body: { identifier, password } satisfies LoginBody,
      headers: this.deviceHeaders(),
    })
    const body = await readJson<TokenResponse>(response)
    this.keepDevice(response)
    this.lineage++
    this.store(body)
    return body.user
  }

  // ---- sign-in beyond passwords: guests, OpenID Connect, Steam, devices without a keyboard ----
  // Each stores the tokens like `login` and says whether it created the
  // account. Without `create`, an identity no account has is ApiError 401
  // `invalid_credentials`; a first sign-in whose verified e-mail belongs to
  // an existing account is 409 `account_exists` (sign in to that account and
  // link the identity instead: accounts are never merged).

  /**
   * Signs in as a guest with a secret this device keeps. Without
   * `deviceSecret`, the SDK makes a new one (32 random bytes) and creates the
   * account; the result carries the secret either way: keep it like the
   * refresh token and pass it back next time, for it is the only way into a
   * guest account that has no other identity. `create` defaults to true
   * without a secret and false with one. Account creation is throttled per
   * address (429 `rate_limited`).
   */
  async loginAsGuest(options: { deviceSecret?: string; create?: boolean } = {}): Promise<GuestSignIn> {
    const deviceSecret = options.deviceSecret ?? newDeviceSecret()
    const create = options.create ?? options.deviceSecret === undefined
    const result = await this.signIn('/api/v1/user/login/device', { deviceSecret, ...(create ? { create } : {}) } satisfies DeviceLoginBody)
    return { ...result, deviceSecret }
  }

  /**
   * Signs in with an OpenID Connect ID token a native or mobile app got from
   * the provider's own SDK (Google, Apple, ...). `provider` is the name the
   * server configured (`google`, or the identity's `oidc:google`); `nonce`
   * is checked against the token's when given.
   */
  async loginWithIdToken(provider: string, idToken: string, options: { nonce?: string; create?: boolean } = {}): Promise<SignInResult> {
    const body: IdTokenLoginBody = { idToken, ...(options.nonce !== undefined ? { nonce: options.nonce } : {}), ...(options.create ? { create: true } : {}) }
    return this.signIn(`/api/v1/user/login/oidc/${encodeURIComponent(oidcName(provider))}`, body)
  }

  /**
   * Signs in with a Steam Web API ticket: Steamworks'
   * `GetAuthTicketForWebApi` bytes as hex, for the identity the server names
   * (`arena` unless the studio changed it). A VAC- or publisher-banned Steam
   * account is ApiError 403 `platform_banned`.
   */
  async loginWithSteam(ticket: string, options: { create?: boolean } = {}): Promise<SignInResult> {
    return this.signIn('/api/v1/user/login/steam', { ticket, ...(options.create ? { create: true } : {}) } satisfies SteamLoginBody)
  }

  /**
   * Starts a sign-in for a device without a keyboard (a TV, a console;
   * RFC 8628): show the player `userCode` and `verificationUri` (or a QR code
   * of `verificationUriComplete`), where they sign in and approve this
   * device; then `pollDeviceCode`.
   */
  async startDeviceCode(): Promise<DeviceCode> {
    return readJson<DeviceCode>(await this.transport.send({ method: 'POST', path: '/api/v1/auth/device-code', body: {} }))
  }

  /**
   * Polls once: the user, signed in here, once the player approved; null
   * while they have not. ApiError 400 `slow_down` (polled sooner than the
   * interval: wait 5 s longer from now on), `expired_token` (start again) or
   * `access_denied` (the player said no). `pollDeviceCode` runs the loop.
   */
  async checkDeviceCode(deviceCode: string): Promise<User | null> {
    const response = await this.transport.send({ method: 'POST', path: '/api/v1/auth/device-code/token', body: { deviceCode } satisfies DeviceTokenBody, headers: this.deviceHeaders() })
    if (response.status === 400) {
      const error = await ApiError.from(response)
      if (error.code === 'authorization_pending') return null
      throw error
    }
    const body = await readJson<TokenResponse>(response)
    this.keepDevice(response)
    this.lineage++
    this.store(body)
    return body.user
  }

  /**
   * Polls every `interval` seconds (the started code's, else 5; 5 more after
   * each `slow_down`) until the player approves: resolves with the user,
   * signed in here. Rejects with ApiError 400 `expired_token` or
   * `access_denied`, and with NetworkError when `signal` aborts it. Pass the
   * whole `DeviceCode` to take its interval.
   */
  async pollDeviceCode(deviceCode: string | DeviceCode, options: { signal?: AbortSignal; interval?: number } = {}): Promise<User> {
    const code = typeof deviceCode === 'string' ? deviceCode : deviceCode.deviceCode
    let interval = options.interval ?? (typeof deviceCode === 'string' ? DEVICE_POLL_INTERVAL_S : deviceCode.interval)
    for (;;) {
      await sleep(interval * 1000, options.signal)
      try {
        const user = await this.checkDeviceCode(code)
        if (user !== null) return user
      } catch (error) {
        if (!(error instanceof ApiError && error.code === 'slow_down')) throw error
        interval += DEVICE_POLL_INTERVAL_S
      }
    }
  }

  /**
   * The address to send the browser to for a web sign-in with an OpenID
   * Connect provider (a browser game): the server sends the player to the
   * provider and back to `redirect` (which must start with one of the
   * prefixes the server allows, and carry no fragment) with `#code=…` or
   * `#error=<code>`; pass that fragment to `completeWebLogin`. With
   * `create`, a first sign-in creates the account.
   */
  beginWebLogin(provider: string, options: { redirect: string; create?: boolean }): string {
    const url = new URL(`${this.transport.baseUrl}/api/v1/auth/oidc/${encodeURIComponent(oidcName(provider))}/start`)
    url.searchParams.set('redirect', options.redirect)
    if (options.create) url.searchParams.set('create', '1')
    return url.toString()
  }

  /**
   * Ends a web sign-in on the page it came back to: takes the fragment
   * (`#code=…` or `#error=…`; a whole URL, or the bare code, also do;
   * default: this page's `location.hash`) and trades the one-time code for
   * tokens (once, within 60 s). An `#error=<code>` rejects with the ApiError
   * of that code (`access_denied`: the player said no at the provider;
   * `account_exists`, `invalid_credentials`, `account_banned`, ...). The
   * fragment is not cleared: replace the page's URL so a reload does not
   * trade a spent code.
   */
  async completeWebLogin(fragmentOrCode?: string): Promise<SignInResult> {
    const input = fragmentOrCode ?? (globalThis as { location?: { hash?: string } }).location?.hash ?? ''
    const code = webSignInCode(input)
    return this.signIn('/api/v1/user/login/exchange', { code } satisfies ExchangeBody)
  }

  /** Adopts tokens the app already holds (from storage, or from the platform frontend). Without a refresh token there is no rotation. */
  useToken(accessToken: string, refreshToken?: string): void {
    this.lineage++
    this.tokens = { accessToken, ...(refreshToken ? { refreshToken } : {}) }
    this.rotateAt = undefined
    this.options.onTokens?.({ ...this.tokens })
  }

  /**
   * Revokes this session (or, with `all`, every session of the user) on the
   * server, then forgets the tokens. When the server cannot be reached (a
   * network error, a 5xx) the tokens are kept, so the logout can be retried;
   * `clear()` forgets them locally without asking the server.
   *
   * With `others`, ends every session of the user but this one (a "log out
   * everywhere else"): this client stays signed in and keeps its tokens.
   * `all` and `others` together are refused (422).
   */
  async logout(options: { all?: boolean; others?: boolean } = {}): Promise<LogoutResult> {
    const lineage = this.lineage
    const body: LogoutBody = { ...(options.all ? { all: true } : {}), ...(options.others ? { others: true } : {}) }
    const response = await this.send({ method: 'POST', path: '/api/v1/user/s/logout', body })
    if (options.others && !options.all) return readJson<LogoutResult>(response)
    // Answered: a 2xx revoked the session, a 4xx says it is not usable anyway.
    if (response.status < 500 && this.lineage === lineage) this.clear()
    return readJson<LogoutResult>(response)
  }

  // ---- the account: email verification, password change and reset, sessions ----

  /** Confirms the signed-in user's e-mail address with the code mailed to it; the user, now `emailVerified`. */
  async verifyEmail(code: string): Promise<User> {
    const response = await this.send({ method: 'POST', path: '/api/v1/user/email/verify', body: { code } satisfies VerifyEmailBody })
    return (await readJson<{ user: User }>(response)).user
  }

  /** Mails the signed-in user a new verification code (the previous one stops working). */
  async resendVerification(): Promise<void> {
    await readJson<Accepted>(await this.send({ method: 'POST', path: '/api/v1/user/email/resend', body: {} }))
  }

  /**
   * Changes the signed-in user's password. Every other session of the user
   * ends; this one stays, and so do the tokens held here. A wrong current
   * password is `ApiError` 403 `invalid_credentials`.
   */
  async changePassword(currentPassword: string, newPassword: string): Promise<SessionsEnded> {
    const response = await this.send({ method: 'POST', path: '/api/v1/user/password/change', body: { currentPassword, newPassword } satisfies ChangePasswordBody })
    return readJson<SessionsEnded>(response)
  }

  /**
   * Asks for a password reset code to be mailed to `email`. Needs no sign-in.
   * Resolves the same whether or not the address has an account.
   */
  async forgotPassword(email: string): Promise<void> {
    await readJson<Accepted>(await this.transport.send({ method: 'POST', path: '/api/v1/user/password/forgot', body: { email } satisfies ForgotPasswordBody }))
  }

  /**
   * Sets a new password with the code `forgotPassword` mailed. Needs no
   * sign-in. Every session of that user ends, a session held here included:
   * sign in again with the new password. A wrong, used or expired code is
   * `ApiError` 400 `invalid_reset_code`.
   */
  async resetPassword(email: string, code: string, newPassword: string): Promise<SessionsEnded> {
    const response = await this.transport.send({ method: 'POST', path: '/api/v1/user/password/reset', body: { email, code, newPassword } satisfies ResetPasswordBody })
    return readJson<SessionsEnded>(response)
  }

  /** Where the user is logged in: their live sessions, most recently used first (`current` marks this client's). */
  async sessions(): Promise<Session[]> {
    return (await readJson<{ sessions: Session[] }>(await this.send({ method: 'GET', path: '/api/v1/me/sessions' }))).sessions
  }

  /**
   * Ends one of the user's live sessions (a lost phone's, say): its tokens
   * stop working at once. Ending this client's own session ends its tokens
   * too: the next call fails and the tokens are forgotten. An id that is not
   * one of the user's live sessions is an ApiError 404 `not_found`.
   */
  async revokeSession(sessionId: string): Promise<LogoutResult> {
    return readJson<LogoutResult>(await this.send({ method: 'DELETE', path: `/api/v1/me/sessions/${encodeURIComponent(sessionId)}` }))
  }

  /**
   * Deletes the account for good, with its password asked again (an account
   * without a password identity, a guest say, is asked none: omit it):
   * personal data and identities are erased and every session ends, so the
   * tokens are forgotten here. A wrong password is an ApiError 403
   * `invalid_credentials` (throttled like a login: 429 `rate_limited`), none
   * where one is needed 422 `validation_failed`; a wallet still holding funds
   * or a pending withdrawal is 409 `balance_not_empty`, and nothing is
   * deleted.
   */
  async deleteAccount(password?: string): Promise<AccountDeleted> {
    const lineage = this.lineage
    const body: DeleteAccountBody = password === undefined ? {} : { password }
    const result = await readJson<AccountDeleted>(await this.send({ method: 'POST', path: '/api/v1/me/delete', body }))
    if (this.lineage === lineage) this.clear()
    return result
  }

  /** Forgets the tokens here, without telling the server (the session stays live until it expires). */
  clear(): void {
    this.lineage++
    this.rotation = null
    if (this.tokens === null) return
    this.tokens = null
    this.rotateAt = undefined
    this.options.onTokens?.(null)
  }

  get signedIn(): boolean {
    return this.tokens !== null
  }

  /** A copy of the tokens held now (to persist them), or null. */
  current(): Tokens | null {
    return this.tokens ? { ...this.tokens } : null
  }

  /** Rotates the refresh token now. Joins a rotation already in flight instead of starting a second one. */
  refresh(): Promise<void> {
    if (!this.tokens) return Promise.reject(new NotSignedIn())
    return this.rotateFrom(this.tokens.accessToken, this.lineage)
  }

  /**
   * Sends an authenticated call. When the answer is 401 `unauthorized` (the
   * access token expired) and `replayAfterRotation` is set, rotates once and
   * sends the call once more with the new token of the same session: a 401
   * from the bearer check means the server did nothing with the request.
   */
  async send(call: Call, replayAfterRotation = true): Promise<Response> {
    const { token, lineage } = await this.freshToken()
    const response = await this.transport.send(withBearer(call, token))
    if (response.status !== 401 || !replayAfterRotation || !this.tokens?.refreshToken || this.lineage !== lineage) return response
    const error = await ApiError.from(response.clone() as Response)
    if (error.code !== 'unauthorized') return response
    await this.rotateFrom(token, lineage)
    if (!this.tokens || this.lineage !== lineage || this.tokens.accessToken === token) return response
    await response.body?.cancel()
    return this.transport.send(withBearer(call, this.tokens.accessToken))
  }

  /**
   * Sends a call exactly once with the given token: no rotation, no replay.
   * @internal the purchase client's verify.
   */
  sendOnce(call: Call, token: string): Promise<Response> {
    return this.transport.send(withBearer(call, token))
  }

  /**
   * The access token to send, rotated first when the client knows it is
   * (nearly) expired. A proactive rotation that gets no answer falls back to
   * the current token while it is still valid.
   * @internal used by the purchase client to separate "could not prepare" from "sent".
   */
  async freshToken(): Promise<{ token: string; lineage: number }> {
    if (this.rotation && this.rotation.lineage === this.lineage) await this.rotation.promise.catch(() => undefined)
    const tokens = this.tokens
    const lineage = this.lineage
    if (!tokens) throw new NotSignedIn()
    if (tokens.refreshToken && this.rotateAt !== undefined && this.now() >= this.rotateAt) {
      try {
        await this.rotateFrom(tokens.accessToken, lineage)
      } catch (error) {
        const stillValid = error instanceof NetworkError && tokens.expiresAt !== undefined && this.now() < tokens.expiresAt
        if (!stillValid) throw error
      }
      if (!this.tokens || this.lineage !== lineage) throw new NotSignedIn()
      return { token: this.tokens.accessToken, lineage }
    }
    return { token: tokens.accessToken, lineage }
  }

  /** Rotates unless another call already replaced `stale`; concurrent callers of one lineage share one rotation. */
  private rotateFrom(stale: string, lineage: number): Promise<void> {
    if (this.lineage !== lineage) return Promise.resolve()
    if (this.rotation?.lineage === lineage) return this.rotation.promise
    if (!this.tokens || this.tokens.accessToken !== stale) return Promise.resolve()
    const refreshToken = this.tokens.refreshToken
    if (!refreshToken) return Promise.resolve()
    const rotation = {
      lineage,
      promise: this.rotate(stale, refreshToken, lineage).finally(() => {
        if (this.rotation === rotation) this.rotation = null
      }),
    }
    this.rotation = rotation
    return rotation.promise
  }

  private async rotate(access: string, refreshToken: string, lineage: number): Promise<void> {
    // The bearer is the (expired) access token of the same session: /auth/validate requires it.
    const response = await this.transport.send(withBearer({ method: 'POST', path: '/api/v1/auth/validate', body: { refreshToken } satisfies RefreshBody }, access))
    if (response.status === 401) {
      // Spent, reused or revoked: this session is over. Keeping the tokens would only repeat the failure.
      const error = await ApiError.from(response)
      if (this.lineage === lineage) this.clear()
      throw error
    }
    const body = await readJson<TokenResponse>(response)
    // A login, useToken or sign-out while this was in flight wins: its tokens stay.
    if (this.lineage === lineage) this.store(body)
  }

  /** A sign-in that needs no bearer and answers the login shape plus `created`: its tokens kept like login's. */
  private async signIn(path: string, body: object): Promise<SignInResult> {
    const response = await this.transport.send({ method: 'POST', path, body, headers: this.deviceHeaders() })
    const answer = await readJson<SignInResponse>(response)
    this.keepDevice(response)
    this.lineage++
    this.store(answer)
    return { user: answer.user, created: answer.created }
  }

  /** The device token, sent with every sign-in. */
  private deviceHeaders(): Record<string, string> {
    return { [DEVICE_HEADER]: this.deviceToken }
  }

  /**
   * Keeps the token a sign-in answered (the one sent, unless the server found
   * it malformed and answered a new one) and reports it. Kept across
   * sign-outs and accounts: it names the device, not the session.
   */
  private keepDevice(response: Response): void {
    const device = response.headers.get(DEVICE_HEADER)
    if (device === null) return
    this.deviceToken = device
    this.options.onDeviceToken?.(device)
  }

  private store(body: TokenResponse): void {
    const lifetimeMs = body.expiresIn * 1000
    const expiresAt = this.now() + lifetimeMs
    this.tokens = { accessToken: body.accessToken, refreshToken: body.refreshToken, expiresAt }
    this.rotateAt = expiresAt - Math.min(EXPIRY_MARGIN_MS, lifetimeMs / 4)
    this.options.onTokens?.({ ...this.tokens })
  }
}

/** RFC 8628's default interval, and what a `slow_down` adds to it. */
const DEVICE_POLL_INTERVAL_S = 5

/** The configured provider name of `google` or `oidc:google` (an identity's provider). */
function oidcName(provider: string): string {
  return provider.startsWith('oidc:') ? provider.slice('oidc:'.length) : provider
}

/**
 * The statuses of the codes a web sign-in's `#error=` may carry (the server
 * answers them over a redirect, which has no status of its own); any other
 * code is taken as 400.
 */
export const WEB_SIGN_IN_ERROR_STATUS: Readonly<Record<string, number>> = {
  access_denied: 400,
  invalid_credentials: 401,
  account_banned: 403,
  platform_banned: 403,
  account_exists: 409,
  rate_limited: 429,
  service_unavailable: 503,
}

/** The ApiError of a web sign-in's `#error=<code>`. */
function webSignInError(code: string): ApiError {
  const status = WEB_SIGN_IN_ERROR_STATUS[code] ?? 400
  return ApiError.fromBody(status, { error: { code, message: `The web sign-in failed: ${code}`, status } })
}

/** The one-time code of a web sign-in's return (fragment, URL or bare code); an `error=` becomes its ApiError. */
function webSignInCode(input: string): string {
  const fragment = input.includes('#') ? input.slice(input.indexOf('#') + 1) : input
  if (!fragment.includes('=')) {
    if (fragment === '') throw new TypeError('completeWebLogin: no #code= or #error= to complete (pass the page\'s location.hash)')
    return fragment
  }
  const params = new URLSearchParams(fragment)
  const error = params.get('error')
  if (error !== null) throw webSignInError(error)
  const code = params.get('code')
  if (code === null || code === '') throw new TypeError('completeWebLogin: the fragment has neither code= nor error=')
  return code
}

/** Waits `ms`; rejects with NetworkError when `signal` aborts (as an aborted request does). */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const aborted = () => {
      clearTimeout(timer)
      reject(new NetworkError('device-code poll: aborted', { cause: signal?.reason }))
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', aborted)
      resolve()
    }, ms)
    if (signal?.aborted) aborted()
    else signal?.addEventListener('abort', aborted, { once: true })
  })
}

function withBearer(call: Call, token: string): Call {
  return { ...call, headers: { ...call.headers, authorization: `Bearer ${token}` } }
}
