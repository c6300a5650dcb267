// Every failure the SDK throws. HTTP answers become ApiError (or a subclass a
// caller can `instanceof`); a request that never got an answer is a
// NetworkError, except on PIN verify, where it is OutcomeUnknown.
import type { ErrorDetail, IntegrityLevel } from './types.js'

/** Codes for answers that carried no envelope (a proxy's page, or the plain `{ message }` shape). */
const CODE_BY_STATUS: Record<number, string> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  410: 'gone',
  413: 'payload_too_large',
  422: 'validation_failed',
  429: 'rate_limited',
  500: 'internal',
  503: 'service_unavailable',
}

/**
 * An error answer from the server. Understands both error shapes a platform API
 * may send: the envelope `{ error: { code, message, status } }` and the plain
 * `{ message }`. Without an envelope, `code` is derived from the status.
 */
export class ApiError extends Error {
  override readonly name: string = 'ApiError'
  readonly status: number
  readonly code: string
  readonly details?: ErrorDetail[]
  /** Seconds, from `Retry-After` (on 429 and 503). */
  readonly retryAfter?: number
  readonly requestId?: string
  /** `account_banned`: when the ban ends (ISO-8601), null until an operator lifts it; absent on other errors. */
  readonly until?: string | null

  constructor(init: { status: number; code: string; message: string; details?: ErrorDetail[]; retryAfter?: number; requestId?: string; until?: string | null }) {
    super(init.message)
    this.status = init.status
    this.code = init.code
    if (init.details) this.details = init.details
    if (init.retryAfter !== undefined) this.retryAfter = init.retryAfter
    if (init.requestId) this.requestId = init.requestId
    if (init.until !== undefined) this.until = init.until
  }

  /** Reads an error answer. Never throws: an unreadable body still gives an ApiError. */
  static async from(response: Response): Promise<ApiError> {
    let text = ''
    try {
      text = await response.text()
    } catch {
      // the body could not be read: the status still says what happened
    }
    return ApiError.fromBody(response.status, parseJson(text), response.headers)
  }

  static fromBody(status: number, body: unknown, headers?: Headers): ApiError {
    const retryAfter = parseRetryAfter(headers?.get('retry-after') ?? null)
    const requestId = headers?.get('x-request-id') ?? undefined
    const common = { ...(retryAfter !== undefined ? { retryAfter } : {}), ...(requestId ? { requestId } : {}) }
    const fallbackCode = CODE_BY_STATUS[status] ?? `http_${status}`
    if (isObject(body) && isObject(body.error) && typeof body.error.message === 'string') {
      const e = body.error
      const details = Array.isArray(e.details) ? e.details.filter(isDetail) : undefined
      if (status === 429 && e.code === 'rate_limited') {
        return new RateLimited({ status, code: 'rate_limited', message: e.message as string, ...common })
      }
      return make(status, {
        status: typeof e.status === 'number' ? e.status : status,
        code: typeof e.code === 'string' && e.code !== '' ? e.code : fallbackCode,
        message: e.message as string,
        ...(details && details.length > 0 ? { details } : {}),
        ...(typeof e.until === 'string' || e.until === null ? { until: e.until } : {}),
        ...common,
      })
    }
    if (isObject(body) && typeof body.message === 'string') {
      return make(status, { status, code: fallbackCode, message: body.message, ...common })
    }
    return make(status, { status, code: fallbackCode, message: `HTTP ${status}`, ...common })
  }
}

/** 410 on PIN verify: the one-time session expired or was already used. Mint a new one. */
export class PinSessionExpired extends ApiError {
  override readonly name: string = 'PinSessionExpired'
}

/** 429 on PIN mint or verify: too many wrong PINs; `retryAfter` says for how long. */
export class PinLocked extends ApiError {
  override readonly name: string = 'PinLocked'
}

/**
 * 429 `rate_limited` (an envelope saying so): the server's rate limit for the
 * route, its address or its account; `retryAfter` says when to try again. On
 * the PIN routes too: it is not the PIN lock.
 */
export class RateLimited extends ApiError {
  override readonly name: string = 'RateLimited'
}

function make(status: number, init: ConstructorParameters<typeof ApiError>[0]): ApiError {
  // Codes that name the PIN lock or the one-time session get their class
  // anywhere; the purchase client also maps a bare 429/410 of its own routes.
  if (status === 410 && init.code === 'session_expired') return new PinSessionExpired(init)
  if (status === 429 && init.code === 'pin_locked') return new PinLocked(init)
  return new ApiError(init)
}

/** The request got no HTTP answer (connection refused or reset, DNS, timeout, abort). */
export class NetworkError extends Error {
  override readonly name: string = 'NetworkError'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}

/**
 * A PIN verify was sent but no answer came back: the withdrawal may or may not
 * have happened. The SDK never retries a verify. To find out, authorize again
 * with the same `idempotencyKey` (a new PIN session, the same amount and
 * destination): the server answers with the first withdrawal if there was one,
 * and never debits twice.
 */
export class OutcomeUnknown extends Error {
  override readonly name: string = 'OutcomeUnknown'
  readonly idempotencyKey: string
  readonly pinSessionId: string
  constructor(init: { idempotencyKey: string; pinSessionId: string; cause: unknown }) {
    super('The PIN verify got no answer; its outcome is unknown. Authorize again with the same idempotencyKey to learn it.', { cause: init.cause })
    this.idempotencyKey = init.idempotencyKey
    this.pinSessionId = init.pinSessionId
  }
}

export interface IntegrityFinding {
  check: string
  level: IntegrityLevel
  reason?: string
}

/** An on-device check found the environment COMPROMISED: the purchase was not attempted. */
export class IntegrityBlocked extends Error {
  override readonly name: string = 'IntegrityBlocked'
  readonly level = 'COMPROMISED' as const
  readonly findings: IntegrityFinding[]
  /** Whether the ENV_COMPROMISED report reached the server (best effort). */
  readonly reported: boolean
  constructor(findings: IntegrityFinding[], reported: boolean) {
    super(`Purchase blocked: the device environment is compromised (${findings.filter((f) => f.level === 'COMPROMISED').map((f) => f.check).join(', ')})`)
    this.findings = findings
    this.reported = reported
  }
}

/** An authenticated call while the client holds no tokens (never logged in, logged out, or the session ended). */
export class NotSignedIn extends Error {
  override readonly name: string = 'NotSignedIn'
  constructor() {
    super('Not signed in: call auth.login() or auth.useToken() first')
  }
}

function parseJson(text: string): unknown {
  if (text === '') return undefined
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

function parseRetryAfter(value: string | null): number | undefined {
  if (value === null) return undefined
  if (/^\d+$/.test(value.trim())) return Number(value.trim())
  const at = Date.parse(value)
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000))
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isDetail(value: unknown): value is ErrorDetail {
  return isObject(value) && typeof value.path === 'string' && typeof value.message === 'string'
}
