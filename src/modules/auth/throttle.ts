// Failed-login throttling, per account and per client address. Counters live
// in the database so a restart does not reset them.
//
// What must stay true:
// - An attempt on an account is counted BEFORE its password is checked, in
//   the same IMMEDIATE transaction as the block check, so requests racing in
//   parallel cannot all get their guess evaluated: the sixth sees the block.
// - A block is never shortened by a later failure, and attempts refused while
//   blocked are not counted, so a block always ends on time: never permanent.
import { eq, inArray } from 'drizzle-orm'
import type { Executor } from '../../db/sqlite/connection'
import { loginThrottle } from '../../db/schema'

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

/** Seconds until the longest current block among `keys` ends, or null when none applies. */
export function retryAfterSeconds(db: Executor, keys: string[], now: Date): number | null {
  const rows = db.select().from(loginThrottle).where(inArray(loginThrottle.key, keys)).all()
  let until = 0
  for (const row of rows) {
    if (row.blockedUntil && row.blockedUntil.getTime() > now.getTime()) until = Math.max(until, row.blockedUntil.getTime())
  }
  return until === 0 ? null : Math.max(1, Math.ceil((until - now.getTime()) / 1000))
}

/**
 * Counts one attempt (or failure) against `key`. Call it only when the key is
 * not blocked; the attempt that reaches the limit starts the block.
 */
export function countAttempt(tx: Executor, key: string, limit: ThrottleLimit, now: Date): void {
  const row = tx.select().from(loginThrottle).where(eq(loginThrottle.key, key)).get()
  if (row?.blockedUntil && row.blockedUntil.getTime() > now.getTime()) return
  const windowOpen = row !== undefined && now.getTime() - row.windowStartedAt.getTime() < limit.windowMs
  const failures = windowOpen ? row.failures + 1 : 1
  // A block starts a fresh window: when it ends, the count starts from zero.
  const state =
    failures >= limit.maxFailures
      ? { failures: 0, windowStartedAt: now, blockedUntil: new Date(now.getTime() + limit.blockMs) }
      : { failures, windowStartedAt: windowOpen ? row.windowStartedAt : now, blockedUntil: null }
  tx.insert(loginThrottle)
    .values({ key, ...state })
    .onConflictDoUpdate({ target: loginThrottle.key, set: state })
    .run()
}

/** A successful login forgets the account's attempts, including a block its own attempt started. */
export function clearAttempts(tx: Executor, key: string): void {
  tx.delete(loginThrottle).where(eq(loginThrottle.key, key)).run()
}
