// The purchase client (secure purchases: a PIN session, one verify): on-device
// integrity checks, then a one-time PIN session minted and verified exactly
// once. A verify is never sent twice, whatever happens to the first one.
import type { Auth } from './auth.js'
import { ApiError, IntegrityBlocked, NetworkError, OutcomeUnknown, PinLocked, PinSessionExpired, RateLimited, type IntegrityFinding } from './errors.js'
import { newIdempotencyKey } from './ids.js'
import type { SecurityEventAccepted, SecurityEventBody, SetPinBody, VerifyBody } from './requests.js'
import { readJson, type Call } from './transport.js'
import type { IntegrityLevel, PinSessionResponse, PinVerifyResponse } from './types.js'

/** What a check may return: a level, or a level with a reason for the report. */
export type IntegrityVerdict = IntegrityLevel | { level: IntegrityLevel; reason?: string }

/**
 * An on-device check (root or jailbreak, debugger, accessibility abuse,
 * screen capture, ...). Its function name names it in reports; a check that
 * throws counts as COMPROMISED, so a check an attacker breaks fails closed.
 */
export type IntegrityCheck = () => IntegrityVerdict | Promise<IntegrityVerdict>

export interface IntegrityReport {
  /** The worst level any check returned. */
  level: IntegrityLevel
  findings: IntegrityFinding[]
}

export interface AuthorizeInput {
  pin: string
  /** Decimal string, e.g. "12.50" (amounts are never JSON numbers). */
  amount: string
  destinationAddress: string
  /** Defaults to a new UUID. Pass the key of an OutcomeUnknown to learn that attempt's outcome. */
  idempotencyKey?: string
}

export type AuthorizeResult = PinVerifyResponse & { idempotencyKey: string; pinSessionId: string }

const RANK: Record<IntegrityLevel, number> = { SAFE: 0, WARN: 1, COMPROMISED: 2 }

export class PurchaseClient {
  private readonly checks: IntegrityCheck[]

  constructor(
    private readonly auth: Auth,
    checks: IntegrityCheck[] = [],
  ) {
    this.checks = [...checks]
  }

  /** Adds an on-device check; it runs before every purchase. */
  addIntegrityCheck(check: IntegrityCheck): void {
    this.checks.push(check)
  }

  /** Runs every check. No checks means SAFE: the app decides what its platform can detect. */
  async checkIntegrity(): Promise<IntegrityReport> {
    const findings = await Promise.all(
      this.checks.map(async (check, index): Promise<IntegrityFinding> => {
        const name = check.name || `check_${index + 1}`
        try {
          const verdict = await check()
          const level = typeof verdict === 'string' ? verdict : verdict?.level
          if (level !== 'SAFE' && level !== 'WARN' && level !== 'COMPROMISED') return { check: name, level: 'COMPROMISED', reason: 'check returned no level' }
          const reason = typeof verdict === 'object' ? verdict.reason : undefined
          return { check: name, level, ...(reason ? { reason } : {}) }
        } catch (error) {
          return { check: name, level: 'COMPROMISED', reason: `check failed: ${error instanceof Error ? error.message : String(error)}` }
        }
      }),
    )
    const level = findings.reduce<IntegrityLevel>((worst, f) => (RANK[f.level] > RANK[worst] ? f.level : worst), 'SAFE')
    return { level, findings }
  }

  /**
   * Authorizes one withdrawal: integrity checks, a new PIN session, one verify.
   * - COMPROMISED: reports ENV_COMPROMISED and throws IntegrityBlocked; nothing is minted.
   * - WARN: reports ENV_WARN and goes on.
   * - A wrong PIN is not an error: `{ valid: false, locked, attempt }`.
   * - 410 → PinSessionExpired, 429 → PinLocked (429 rate_limited → RateLimited), other refusals → ApiError.
   * - No answer to the verify (network error, timeout, abort, a 5xx): OutcomeUnknown
   *   with the idempotency key. The verify is never sent a second time.
   */
  async authorize(input: AuthorizeInput): Promise<AuthorizeResult> {
    const integrity = await this.checkIntegrity()
    if (integrity.level === 'COMPROMISED') {
      const reported = await this.report('ENV_COMPROMISED', integrity)
      throw new IntegrityBlocked(integrity.findings, reported)
    }
    if (integrity.level === 'WARN') await this.report('ENV_WARN', integrity)

    let mint: PinSessionResponse
    try {
      mint = await readJson<PinSessionResponse>(await this.auth.send({ method: 'POST', path: '/api/v1/security/pin-session', body: {} }))
    } catch (error) {
      throw pinError(error)
    }
    const idempotencyKey = input.idempotencyKey ?? newIdempotencyKey()
    const call: Call = {
      method: 'POST',
      path: `/api/v1/security/pin-session/${encodeURIComponent(mint.sessionId)}/verify`,
      headers: { 'x-secure-session': mint.sessionToken },
      body: { pin: input.pin, amount: input.amount, destinationAddress: input.destinationAddress, idempotencyKey } satisfies VerifyBody,
    }
    // Failing to get a token (a rotation without an answer) happens before the
    // verify is sent: that is an ordinary error, not an unknown outcome.
    const { token } = await this.auth.freshToken()
    const unknown = (cause: unknown) => new OutcomeUnknown({ idempotencyKey, pinSessionId: mint.sessionId, cause })
    let response: Response
    try {
      response = await this.auth.sendOnce(call, token)
    } catch (error) {
      throw error instanceof NetworkError ? unknown(error) : error
    }
    // A 5xx may come after the withdrawal committed (a proxy timing out, say): as unknown as no answer.
    if (response.status >= 500) throw unknown(await ApiError.from(response))
    if (!response.ok) throw pinError(await ApiError.from(response))
    let result: PinVerifyResponse
    try {
      result = (await response.json()) as PinVerifyResponse
    } catch (error) {
      throw unknown(error)
    }
    return { ...result, idempotencyKey, pinSessionId: mint.sessionId }
  }

  /** Sets or changes the PIN (4–8 digits); the account password re-authenticates. */
  async setPin(pin: string, password: string): Promise<void> {
    await readJson(await this.auth.send({ method: 'PUT', path: '/api/v1/security/pin', body: { pin, password } satisfies SetPinBody }))
  }

  /** Best effort: a report that fails must not decide the purchase, so it answers whether it got through. */
  private async report(kind: 'ENV_COMPROMISED' | 'ENV_WARN', integrity: IntegrityReport): Promise<boolean> {
    try {
      const response = await this.auth.send({
        method: 'POST',
        path: '/api/v1/security/events',
        body: { kind, level: integrity.level, details: { findings: integrity.findings } } satisfies SecurityEventBody,
      })
      if (response.status !== 202) return false
      // 202 with accepted: false means the server shed it under load.
      return ((await response.json()) as Partial<SecurityEventAccepted>).accepted === true
    } catch {
      return false
    }
  }
}

/**
 * On the PIN routes a 429 is the PIN lock and a 410 the expired one-time
 * session, whichever error shape carried them; but an
 * envelope saying `rate_limited` is the server's rate limit (RateLimited).
 */
function pinError(error: unknown): unknown {
  if (!(error instanceof ApiError) || error instanceof PinLocked || error instanceof PinSessionExpired || error instanceof RateLimited) return error
  const init = { status: error.status, code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}), ...(error.retryAfter !== undefined ? { retryAfter: error.retryAfter } : {}), ...(error.requestId ? { requestId: error.requestId } : {}) }
  if (error.status === 429) return new PinLocked(init)
  if (error.status === 410) return new PinSessionExpired(init)
  return error
}
