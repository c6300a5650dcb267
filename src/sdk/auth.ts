// Tokens and their rotation. The access token is attached to every
// authenticated call; when the server says it expired (or the client knows it
// is about to), the refresh token is rotated through /auth/validate. Rotation
// is single-flight: however many calls find the token stale at once, one
// rotation runs and the rest wait for it. Two rotations of one refresh token
// would look like a replay to the server, which then revokes the session
// (contract §1).
import { ApiError, NotSignedIn } from './errors'
import { readJson, type Call, type Transport } from './transport'
import type { LogoutResult, TokenResponse, Tokens, User } from './types'

export interface AuthOptions {
  /** Called with the new tokens after login and every rotation, and with null when they are gone. */
  onTokens?: (tokens: Tokens | null) => void
  /** The client's clock, epoch ms (tests move it). */
  now?: () => number
}

/** Rotate this long before the known expiry (at most a quarter of the lifetime), so a request does not race the clock. */
const EXPIRY_MARGIN_MS = 30_000

export class Auth {
  private tokens: Tokens | null = null
  /** When to rotate before sending: known only for tokens this client obtained. */
  private rotateAt: number | undefined
  private rotation: Promise<void> | null = null
  private readonly now: () => number

  constructor(
    private readonly transport: Transport,
    private readonly options: AuthOptions = {},
  ) {
    this.now = options.now ?? Date.now
  }

  /** Exchanges an identifier (username or e-mail) and password for tokens. */
  async login(identifier: string, password: string): Promise<User> {
    const response = await this.transport.send({ method: 'POST', path: '/api/v1/user/login', body: { identifier, password } })
    const body = await readJson<TokenResponse>(response)
    this.store(body)
    return body.user
  }

  /** Adopts tokens the app already holds (from storage, or from the platform frontend). Without a refresh token there is no rotation. */
  useToken(accessToken: string, refreshToken?: string): void {
    this.tokens = { accessToken, ...(refreshToken ? { refreshToken } : {}) }
    this.rotateAt = undefined
    this.options.onTokens?.({ ...this.tokens })
  }

  /** Revokes this session (or, with `all`, every session of the user) on the server, then forgets the tokens. */
  async logout(options: { all?: boolean } = {}): Promise<LogoutResult> {
    try {
      const response = await this.send({ method: 'POST', path: '/api/v1/user/s/logout', body: options.all ? { all: true } : {} })
      return await readJson<LogoutResult>(response)
    } finally {
      this.forget()
    }
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
    return this.rotateFrom(this.tokens.accessToken)
  }

  /**
   * Sends an authenticated call. When the answer is 401 `unauthorized` (the
   * access token expired) and `replayAfterRotation` is set, rotates once and
   * sends the call once more: a 401 from the bearer check means the server did
   * nothing with the request. Calls that must never be sent twice (PIN verify)
   * pass false.
   */
  async send(call: Call, replayAfterRotation = true): Promise<Response> {
    const access = await this.freshAccessToken()
    const response = await this.transport.send(withBearer(call, access))
    if (response.status !== 401 || !replayAfterRotation || !this.tokens?.refreshToken) return response
    const error = await ApiError.from(response.clone() as Response)
    if (error.code !== 'unauthorized') return response
    await this.rotateFrom(access)
    if (!this.tokens) return response
    return this.transport.send(withBearer(call, this.tokens.accessToken))
  }

  /** The access token to send, rotated first when the client knows it is (nearly) expired. */
  private async freshAccessToken(): Promise<string> {
    if (this.rotation) await this.rotation.catch(() => undefined)
    const tokens = this.tokens
    if (!tokens) throw new NotSignedIn()
    if (tokens.refreshToken && this.rotateAt !== undefined && this.now() >= this.rotateAt) {
      await this.rotateFrom(tokens.accessToken)
      if (!this.tokens) throw new NotSignedIn()
      return this.tokens.accessToken
    }
    return tokens.accessToken
  }

  /** Rotates unless another call already replaced `stale`; concurrent callers share one rotation. */
  private rotateFrom(stale: string): Promise<void> {
    if (this.rotation) return this.rotation
    if (!this.tokens || this.tokens.accessToken !== stale) return Promise.resolve()
    const refreshToken = this.tokens.refreshToken
    if (!refreshToken) return Promise.resolve()
    this.rotation = this.rotate(stale, refreshToken).finally(() => {
      this.rotation = null
    })
    return this.rotation
  }

  private async rotate(access: string, refreshToken: string): Promise<void> {
    // The bearer is the (expired) access token of the same session: /auth/validate requires it (contract §1).
    const response = await this.transport.send(withBearer({ method: 'POST', path: '/api/v1/auth/validate', body: { refreshToken } }, access))
    if (response.status === 401) {
      // Spent, reused or revoked: this session is over. Keeping the tokens would only repeat the failure.
      this.forget()
      throw await ApiError.from(response)
    }
    this.store(await readJson<TokenResponse>(response))
  }

  private store(body: TokenResponse): void {
    const lifetimeMs = body.expiresIn * 1000
    this.tokens = { accessToken: body.accessToken, refreshToken: body.refreshToken, expiresAt: this.now() + lifetimeMs }
    this.rotateAt = this.tokens.expiresAt! - Math.min(EXPIRY_MARGIN_MS, lifetimeMs / 4)
    this.options.onTokens?.({ ...this.tokens })
  }

  private forget(): void {
    if (this.tokens === null) return
    this.tokens = null
    this.options.onTokens?.(null)
  }
}

function withBearer(call: Call, token: string): Call {
  return { ...call, headers: { ...call.headers, authorization: `Bearer ${token}` } }
}
