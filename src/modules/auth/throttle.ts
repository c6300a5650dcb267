// Failed-login throttling, per account and per client address. Counters live
// in the database so a restart does not reset them.
//
// What must stay true:
// - An attempt on an account is counted BEFORE its password is checked, in
//   the same unit of work as the block check, so requests racing in
//   parallel cannot all get their guess evaluated: the sixth sees the block.
// - A block is never shortened by a later failure, and attempts refused while
//   blocked are not counted, so a block always ends on time: never permanent.
import { AppError } from '../../shared/errors'
import type { AuthStore, ThrottleCounter } from './store'

export interface ThrottleLimit {
  /** Attempts within the window that trigger a block. */
  maxFailures: number
  windowMs: number
  blockMs: number
}

const MINUTE = 60_000

export const LOGIN_LIMITS = {
  /** Guessing one account's password (by username or email alike). */
  account: { maxFailures: 5, windowMs: 15 * MINUTE, blockMs: 15 * MINUTE },
  /**
   * Guessing one account's password from a place it signed in from before
   * (known-places.ts): a counter per account and place, beside the account's,
   * so strangers elsewhere cannot lock the owner out, and as tight, so a
   * stranger sharing that place cannot guess faster.
   */
  knownPlace: { maxFailures: 5, windowMs: 15 * MINUTE, blockMs: 15 * MINUTE },
  /** One client spraying many accounts. */
  address: { maxFailures: 20, windowMs: 15 * MINUTE, blockMs: 15 * MINUTE },
} as const satisfies Record<string, ThrottleLimit>

const HOUR = 60 * MINUTE

/**
 * Mailed one-time codes (contract §8). Every request counts here, not only a
 * failure: each one sends a mail or tries a code. The attempt that reaches
 * the limit still goes through and starts the block (as with logins), so
 * `maxFailures` is how many are let through per window.
 */
export const ACCOUNT_CODE_LIMITS = {
  /** Verification mails one user asks for (POST /user/email/resend). */
  resend: { maxFailures: 5, windowMs: HOUR, blockMs: HOUR },
  /** Reset mails to one address, known or not (POST /user/password/forgot). */
  forgotEmail: { maxFailures: 5, windowMs: HOUR, blockMs: HOUR },
  /** Reset mails one client asks for, to any addresses. */
  forgotClient: { maxFailures: 20, windowMs: HOUR, blockMs: HOUR },
  /** Reset attempts from one client, to any addresses (spraying codes across accounts). */
  resetClient: { maxFailures: 20, windowMs: HOUR, blockMs: HOUR },
} as const satisfies Record<string, ThrottleLimit>

/** Housekeeping keeps a counter at least this long after its window started, so no window is cut short. */
export const LONGEST_THROTTLE_WINDOW_MS = Math.max(...[...Object.values(LOGIN_LIMITS), ...Object.values(ACCOUNT_CODE_LIMITS)].map((limit) => limit.windowMs))

/** The counter keys of ACCOUNT_CODE_LIMITS, one prefix each, apart from the login keys. */
export const accountCodeKeys = {
  resend: (userId: string) => `resend:${userId}`,
  /** The address as typed, lower-cased: a known and an unknown address are counted alike. */
  forgotEmail: (email: string) => `forgot-email:${email.trim().toLowerCase()}`,
  forgotClient: (address: string) => `forgot-client:${address.toLowerCase()}`,
  resetClient: (address: string) => `reset-client:${address.toLowerCase()}`,
}

/**
 * `account:<user id>` when the identifier names an account, so its username
 * and email share one counter; `identifier:<lower-cased text>` otherwise, so
 * unknown identifiers are throttled exactly like real ones.
 */
export function accountKey(userId: string | undefined, identifier: string): string {
  return userId ? `account:${userId}` : `identifier:${identifier.trim().toLowerCase()}`
}

export function addressKey(address: string): string {
  return `address:${address.toLowerCase()}`
}

/** Seconds until the longest current block among `counters` ends, or null when none applies. */
function secondsBlocked(counters: readonly ThrottleCounter[], now: Date): number | null {
  let until = 0
  for (const counter of counters) {
    if (counter.blockedUntil && counter.blockedUntil.getTime() > now.getTime()) until = Math.max(until, counter.blockedUntil.getTime())
  }
  return until === 0 ? null : Math.max(1, Math.ceil((until - now.getTime()) / 1000))
}

/**
 * The counter after one more attempt against `key`, or null when the key is
 * blocked (the attempt is not counted). The attempt that reaches the limit
 * starts the block.
 */
function afterAttempt(key: string, current: ThrottleCounter | undefined, limit: ThrottleLimit, now: Date): ThrottleCounter | null {
  if (current?.blockedUntil && current.blockedUntil.getTime() > now.getTime()) return null
  const windowOpen = current !== undefined && now.getTime() - current.windowStartedAt.getTime() < limit.windowMs
  const failures = windowOpen ? current.failures + 1 : 1
  // A block starts a fresh window: when it ends, the count starts from zero.
  return failures >= limit.maxFailures
    ? { key, failures: 0, windowStartedAt: now, blockedUntil: new Date(now.getTime() + limit.blockMs) }
    : { key, failures, windowStartedAt: windowOpen ? current.windowStartedAt : now, blockedUntil: null }
}

/** Seconds until the longest current block among `keys` ends, or null when none applies. */
export async function retryAfter(store: AuthStore, keys: string[], now: Date): Promise<number | null> {
  return secondsBlocked(await store.throttleCounters(keys), now)
}

/**
 * Counts one attempt (or failure) against `key`, inside the caller's unit of
 * work. Call it only when the key is not blocked; the attempt that reaches
 * the limit starts the block.
 */
export async function recordAttempt(store: AuthStore, key: string, limit: ThrottleLimit, now: Date): Promise<void> {
  const [current] = await store.throttleCounters([key])
  const next = afterAttempt(key, current, limit, now)
  if (next) await store.saveThrottleCounter(next)
}

/** A successful login forgets the account's attempts, including a block its own attempt started. */
export async function clearAttempts(store: AuthStore, key: string): Promise<void> {
  await store.deleteThrottleCounter(key)
}

/** The 429 a blocked request answers: `Retry-After` the seconds until its block ends. */
export function rateLimited(retryAfterS: number, message: string): AppError {
  return new AppError('rate_limited', message, { headers: { 'retry-after': String(retryAfterS) } })
}
