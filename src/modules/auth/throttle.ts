// Failed-login throttling, per account and per client address. Counters live
// in the database so a restart does not reset them.
//
// What must stay true:
// - An attempt on an account is counted BEFORE its password is checked, in
//   the same unit of work as the block check, so requests racing in
//   parallel cannot all get their guess evaluated: the sixth sees the block.
// - A block is never shortened by a later failure, and attempts refused while
//   blocked are not counted, so a block always ends on time: never permanent.
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
  /** One client spraying many accounts. */
  address: { maxFailures: 20, windowMs: 15 * MINUTE, blockMs: 15 * MINUTE },
} as const satisfies Record<string, ThrottleLimit>

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
