// Hourly housekeeping: what has no use any more is deleted. Outbox events
// past their retention; game and PIN sessions a day after they expired (a
// consumed one was already useless; the day keeps recent ones for support);
// throttle rows (logins, mailed codes) whose window and block have both
// ended; mailed one-time codes past their expiry (only hashes, but worth
// nothing any more); mail sent, failed or kept (the dev mailbox) as old as
// the events it went with, never queued mail (it is still to be sent); the
// security-event log's old end past its retention (the chain keeps an
// authenticated anchor where it was cut). One unit of work: a
// failure deletes nothing, and the next run tries again.
import type { Storage } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import type { SecurityEventLog } from '../security/event-log'
import { LONGEST_THROTTLE_WINDOW_MS } from '../auth/throttle'
import { retentionCutoff } from './service'

const DAY_MS = 86_400_000

export interface HousekeepingReport {
  events: number
  gameSessions: number
  pinSessions: number
  throttleRows: number
  accountCodes: number
  mail: number
  securityEvents: number
}

export function housekeeping(storage: Storage, clock: Clock, eventRetentionDays: number, securityLog?: SecurityEventLog): Promise<HousekeepingReport> {
  const now = clock.now()
  const sessionCutoff = new Date(now.getTime() - DAY_MS)
  const windowCutoff = new Date(now.getTime() - LONGEST_THROTTLE_WINDOW_MS)
  const retention = retentionCutoff(now, eventRetentionDays)
  return storage.write(async (tx) => ({
    events: await tx.events.pruneCreatedBefore(retention),
    gameSessions: await tx.matches.pruneGameSessionsExpiredBefore(sessionCutoff),
    pinSessions: await tx.security.prunePinSessionsExpiredBefore(sessionCutoff),
    throttleRows: await tx.auth.pruneThrottleRows(windowCutoff, now),
    accountCodes: await tx.auth.pruneExpiredAccountCodes(now),
    mail: await tx.mail.prune(retention),
    securityEvents: securityLog ? await securityLog.prune(tx) : 0,
  }))
}
