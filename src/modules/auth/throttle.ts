// Failed-login throttling, per identifier and per client address. Counters
// live in the database so a restart does not reset them. A block always ends:
// it lasts a fixed time from the failure that triggered it, and attempts made
// while blocked are refused without counting, so nothing extends it forever.
import { eq, inArray } from 'drizzle-orm'
import type { Executor } from '../../db/client'
import { loginThrottle } from '../../db/schema'

export interface ThrottleLimit {
  /** Failures within the window that trigger a block. */
  maxFailures: number
  windowMs: number
  blockMs: number
}

const MINUTE = 60_000

export const LOGIN_LIMITS = {
  /** Guessing one account's password. */
  identifier: { maxFailures: 5, windowMs: 15 * MINUTE, blockMs: 15 * MINUTE },
  /** One client spraying many accounts. */
  address: { maxFailures: 20, windowMs: 15 * MINUTE, blockMs: 15 * MINUTE },
} as const satisfies Record<string, ThrottleLimit>

export type ThrottleKind = keyof typeof LOGIN_LIMITS

export function throttleKey(kind: ThrottleKind, value: string): string {
  return `${kind}:${value.toLowerCase()}`
}

/** Seconds until the longest current block ends, or null when none applies. */
export function retryAfterSeconds(db: Executor, keys: string[], now: Date): number | null {
  const rows = db.select().from(loginThrottle).where(inArray(loginThrottle.key, keys)).all()
  let until = 0
  for (const row of rows) {
    if (row.blockedUntil && row.blockedUntil.getTime() > now.getTime()) until = Math.max(until, row.blockedUntil.getTime())
  }
  return until === 0 ? null : Math.max(1, Math.ceil((until - now.getTime()) / 1000))
}

export function recordFailure(tx: Executor, key: string, limit: ThrottleLimit, now: Date): void {
  const row = tx.select().from(loginThrottle).where(eq(loginThrottle.key, key)).get()
  const windowOpen = row && now.getTime() - row.windowStartedAt.getTime() < limit.windowMs
  const failures = windowOpen ? row.failures + 1 : 1
  const windowStartedAt = windowOpen ? row.windowStartedAt : now
  const blocked = failures >= limit.maxFailures
  // A block starts a fresh window: when it ends, the count starts from zero.
  const state = blocked
    ? { failures: 0, windowStartedAt: now, blockedUntil: new Date(now.getTime() + limit.blockMs) }
    : { failures, windowStartedAt, blockedUntil: null }
  tx.insert(loginThrottle)
    .values({ key, ...state })
    .onConflictDoUpdate({ target: loginThrottle.key, set: state })
    .run()
}

export function clearFailures(tx: Executor, key: string): void {
  tx.delete(loginThrottle).where(eq(loginThrottle.key, key)).run()
}
