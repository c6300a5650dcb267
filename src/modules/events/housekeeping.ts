// Hourly housekeeping: what has no use any more is deleted. Outbox events
// past their retention; game and PIN sessions a day after they expired (a
// consumed one was already useless; the day keeps recent ones for support);
// throttle rows (logins, mailed codes) whose window and block have both
// ended; rate-limit counters whose window ended (after the unit of work); mailed one-time codes past their expiry (only hashes, but worth
// nothing any more); mail sent, failed or kept (the dev mailbox) as old as
// the events it went with, never queued mail (it is still to be sent); known
// sign-in places not used for KNOWN_PLACES.ttlMs; OpenID Connect web
// sign-ins and their one-time exchange codes past their expiry; device codes
// past their expiry (a device polling one later hears expired_token either way); event-socket
// tickets never spent, past their 30 s; evidence files of matches not
// disputed any more past their retention, and the bytes no file references; game servers'
// accepted signatures a window after theirs ended; the
// security-event log's old end past its retention (the chain keeps an
// authenticated anchor where it was cut); webhook deliveries delivered 3 days
// ago, failed ones 30 days after they were created, and the pending ones of a
// disabled endpoint given up (failed, `expired`) after the 3 days a delivery
// is retried for. One unit of work: a
// failure deletes nothing, and the next run tries again.
import type { Storage, Transaction } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import { KNOWN_PLACES } from '../auth/known-places'
import type { SecurityEventLog } from '../security/event-log'
import { LONGEST_THROTTLE_WINDOW_MS } from '../auth/throttle'
import { retentionCutoff } from './service'
import { SIGNATURE_WINDOW_S } from '../games/game-servers'
import { WEBHOOK_GIVE_UP_MS } from '../webhooks/delivery'

const DAY_MS = 86_400_000

export interface HousekeepingReport {
  events: number
  gameSessions: number
  pinSessions: number
  throttleRows: number
  accountCodes: number
  mail: number
  /** Known sign-in places not signed in from for KNOWN_PLACES.ttlMs. */
  knownPlaces: number
  /** Rate-limit counters whose window ended (PostgreSQL's; SQLite's live in memory and sweep themselves). */
  rateLimitCounters: number
  /** OpenID Connect web sign-ins never finished, past their 10 minutes. */
  oidcFlows: number
  /** One-time exchange codes of the web sign-in never traded, past their 60 s. */
  exchangeCodes: number
  /** Security-event log rows past their retention (the chain's old end). */
  securityEvents: number
  /** Device codes (contract §13) past their expiry: answered or not, worth nothing any more. */
  deviceCodes: number
  /** Event-socket tickets (contract §14) never spent, past their 30 s. */
  socketTickets: number
  /** Queue tickets (contract §16) closed (matched, left, cancelled) longer ago than the event retention. */
  tickets: number
  /** Challenges (contract §16) closed (accepted, declined, expired, cancelled) longer ago than the event retention. */
  challenges: number
  /** Evidence files (contract §17) of matches not disputed any more, attached longer ago than the evidence retention. */
  evidence: number
  /** Evidence bytes (one per SHA-256) no file references any more. */
  evidenceBlobs: number
  /** Game servers' accepted signatures (contract §17) whose ±60 s window ended a window ago (a replay fails on the clock by then). */
  serverSignatures: number
  /** Webhook deliveries delivered 3 days ago or more, and failed ones created 30 days ago or more. */
  webhookDeliveries: number
  /** Pending webhook deliveries of disabled endpoints, older than 3 days, given up (failed, `expired`). */
  webhookExpired: number
}

/** ARENA_EVIDENCE_RETENTION_DAYS's default. */
export const DEFAULT_EVIDENCE_RETENTION_DAYS = 180

/** How long a delivered webhook delivery is kept (its attempts with it), and a failed one (an operator may still resend it). */
export const WEBHOOK_DELIVERED_KEPT_MS = 3 * DAY_MS
export const WEBHOOK_FAILED_KEPT_MS = 30 * DAY_MS

export async function housekeeping(
  storage: Storage,
  clock: Clock,
  eventRetentionDays: number,
  securityLog?: SecurityEventLog,
  evidenceRetentionDays = DEFAULT_EVIDENCE_RETENTION_DAYS,
): Promise<HousekeepingReport> {
  const now = clock.now()
  const sessionCutoff = new Date(now.getTime() - DAY_MS)
  const windowCutoff = new Date(now.getTime() - LONGEST_THROTTLE_WINDOW_MS)
  const retention = retentionCutoff(now, eventRetentionDays)
  const removed = await storage.write(async (tx) => ({
    ...(await tx.matchmaking.pruneClosed(retention)),
    events: await tx.events.pruneCreatedBefore(retention),
    gameSessions: await tx.matches.pruneGameSessionsExpiredBefore(sessionCutoff),
    pinSessions: await tx.security.prunePinSessionsExpiredBefore(sessionCutoff),
    throttleRows: await tx.auth.pruneThrottleRows(windowCutoff, now),
    accountCodes: await tx.auth.pruneExpiredAccountCodes(now),
    mail: await tx.mail.prune(retention),
    knownPlaces: await tx.auth.pruneKnownPlaces(new Date(now.getTime() - KNOWN_PLACES.ttlMs)),
    oidcFlows: await tx.oidc.pruneExpiredFlows(now),
    exchangeCodes: await tx.oidc.pruneExpiredExchangeCodes(now),
    securityEvents: securityLog ? await securityLog.prune(tx) : 0,
    deviceCodes: await tx.deviceCodes.pruneExpired(now),
    socketTickets: await tx.events.pruneSocketTickets(now),
    // A window past their end: an instance whose clock runs behind still finds them.
    serverSignatures: await tx.games.pruneServerSignatures(new Date(now.getTime() - SIGNATURE_WINDOW_S * 1000)),
    ...(await tx.evidence.prune(new Date(now.getTime() - evidenceRetentionDays * DAY_MS))),
    ...(await pruneWebhookDeliveries(tx, now)),
  }))
  // Outside the unit of work: the counters are written in autocommit, never in a transaction.
  return { ...removed, rateLimitCounters: (await storage.rateLimits?.prune(now.getTime())) ?? 0 }
}

/** Webhook deliveries: the old delivered and failed ones deleted, the stale pending ones of disabled endpoints given up (counted as failed). */
async function pruneWebhookDeliveries(tx: Transaction, now: Date): Promise<Pick<HousekeepingReport, 'webhookDeliveries' | 'webhookExpired'>> {
  const webhookExpired = await tx.webhooks.expireDisabled(new Date(now.getTime() - WEBHOOK_GIVE_UP_MS))
  if (webhookExpired > 0) tx.count('webhookDeliveries', 'failed', webhookExpired)
  const webhookDeliveries = await tx.webhooks.prune(new Date(now.getTime() - WEBHOOK_DELIVERED_KEPT_MS), new Date(now.getTime() - WEBHOOK_FAILED_KEPT_MS))
  return { webhookDeliveries, webhookExpired }
}
