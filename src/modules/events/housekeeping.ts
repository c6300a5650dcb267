// Hourly housekeeping: what has no use any more is deleted. Outbox events
// past their retention; game and PIN sessions a day after they expired (a
// consumed one was already useless; the day keeps recent ones for support);
// login-throttle rows whose window and block have both ended; mail sent,
// failed or kept (the dev mailbox) as old as the events it went with, never
// queued mail (it is still to be sent). One unit of work: a failure deletes
// nothing, and the next run tries again.
import type { Storage } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import { LOGIN_LIMITS } from '../auth/throttle'
import { retentionCutoff } from './service'

const DAY_MS = 86_400_000

export interface HousekeepingReport {
  events: number
  gameSessions: number
  pinSessions: number
  throttleRows: number
  mail: number
}

export function housekeeping(storage: Storage, clock: Clock, eventRetentionDays: number): Promise<HousekeepingReport> {
  const now = clock.now()
  const sessionCutoff = new Date(now.getTime() - DAY_MS)
  const longestWindow = Math.max(LOGIN_LIMITS.account.windowMs, LOGIN_LIMITS.address.windowMs)
  const windowCutoff = new Date(now.getTime() - longestWindow)
  const retention = retentionCutoff(now, eventRetentionDays)
  return storage.write(async (tx) => ({
    events: await tx.events.pruneCreatedBefore(retention),
    gameSessions: await tx.matches.pruneGameSessionsExpiredBefore(sessionCutoff),
    pinSessions: await tx.security.prunePinSessionsExpiredBefore(sessionCutoff),
    throttleRows: await tx.auth.pruneThrottleRows(windowCutoff, now),
    mail: await tx.mail.prune(retention),
  }))
}
