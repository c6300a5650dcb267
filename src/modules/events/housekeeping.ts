// Hourly housekeeping: what has no use any more is deleted. Outbox events
// past their retention; game and PIN sessions a day after they expired (a
// consumed one was already useless; the day keeps recent ones for support);
// login-throttle rows whose window and block have both ended.
import { and, isNull, lt, or } from 'drizzle-orm'
import type { Executor } from '../../db/sqlite/connection'
import { gameSessions, loginThrottle, outboxEvents, pinSessions } from '../../db/schema'
import type { Clock } from '../../shared/clock'
import { LOGIN_LIMITS } from '../auth/throttle'

const DAY_MS = 86_400_000

export interface HousekeepingReport {
  events: number
  gameSessions: number
  pinSessions: number
  throttleRows: number
}

export function housekeeping(db: Executor, clock: Clock, eventRetentionDays: number): HousekeepingReport {
  const now = clock.now().getTime()
  const sessionCutoff = new Date(now - DAY_MS)
  const longestWindow = Math.max(LOGIN_LIMITS.account.windowMs, LOGIN_LIMITS.address.windowMs)
  const windowCutoff = new Date(now - longestWindow)
  return {
    events: db.delete(outboxEvents).where(lt(outboxEvents.createdAt, new Date(now - eventRetentionDays * DAY_MS))).returning({ seq: outboxEvents.seq }).all().length,
    gameSessions: db.delete(gameSessions).where(lt(gameSessions.expiresAt, sessionCutoff)).returning({ id: gameSessions.id }).all().length,
    pinSessions: db.delete(pinSessions).where(lt(pinSessions.expiresAt, sessionCutoff)).returning({ id: pinSessions.id }).all().length,
    throttleRows: db
      .delete(loginThrottle)
      .where(and(lt(loginThrottle.windowStartedAt, windowCutoff), or(isNull(loginThrottle.blockedUntil), lt(loginThrottle.blockedUntil, new Date(now)))))
      .returning({ key: loginThrottle.key })
      .all().length,
  }
}
