import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import { instant, int64, json, serial } from './columns'
import { authSessions } from './auth'

import { EVENT_TOPICS, type EventTopic } from '../../modules/events/catalogue'

export { EVENT_TOPICS, type EventTopic }

// The event outbox of contract §4. Domains append to it inside the same
// transaction as the change the event reports, so an event exists exactly
// when its change committed. `seq` orders events for the event plane's cursor;
// `id` is the public evt_ id.
export const outboxEvents = sqliteTable(
  'outbox_events',
  {
    seq: serial('seq'),
    id: text('id').notNull().unique(),
    /** The user the event is addressed to; null for events only operators read. */
    userId: text('user_id'),
    topic: text('topic', { enum: EVENT_TOPICS }).notNull(),
    type: text('type').notNull(),
    data: json<Record<string, unknown>>('data').notNull(),
    createdAt: instant('created_at').notNull(),
  },
  (table) => [
    index('outbox_events_user_seq').on(table.userId, table.seq),
    index('outbox_events_created_at').on(table.createdAt),
  ],
)

export const SECURITY_LEVELS = ['SAFE', 'WARN', 'COMPROMISED'] as const

// The security-event log (contract §4). Tamper-evident: each row stores the
// hash of the row before it, so editing or deleting a row breaks the chain
// from there on (`arena security verify-log`).
export const securityEvents = sqliteTable(
  'security_events',
  {
    seq: serial('seq'),
    id: text('id').notNull().unique(),
    userId: text('user_id'),
    source: text('source', { enum: ['client', 'server'] }).notNull(),
    kind: text('kind').notNull(),
    level: text('level', { enum: SECURITY_LEVELS }).notNull(),
    details: json<Record<string, unknown>>('details').notNull(),
    occurredAt: instant('occurred_at').notNull(),
    receivedAt: instant('received_at').notNull(),
    prevHash: text('prev_hash').notNull(),
    hash: text('hash').notNull(),
  },
  // (user, received_at): a user's client reports in the last day are counted on every report.
  (table) => [index('security_events_user_received').on(table.userId, table.receivedAt)],
)

/** The newest link of the security-event chain, updated with every flush: a
 *  truncated tail no longer matches it. One row (id 1). The pruned_ columns:
 *  where housekeeping cut the chain's old end (retention), the last removed
 *  link and an HMAC over it, so verification starts there and a forged cut
 *  does not verify. */
export const securityLogHead = sqliteTable('security_log_head', {
  id: integer('id').primaryKey(),
  seq: int64('seq').notNull(),
  hash: text('hash').notNull(),
  prunedSeq: int64('pruned_seq'),
  prunedHash: text('pruned_hash'),
  prunedMac: text('pruned_mac'),
})

// A ticket to open a WebSocket on the event plane (contract §14): minted by
// POST /events/socket-ticket with a bearer, spent by GET /events/socket,
// whose URL carries it (a browser's WebSocket cannot send a header). Only
// its SHA-256 is stored; it is bound to the session that minted it, usable
// once (spending deletes the row) and for 30 s. An ended session takes its
// tickets with it; housekeeping deletes the rest past their expiry.
export const socketTickets = sqliteTable(
  'socket_tickets',
  {
    ticketHash: text('ticket_hash').primaryKey(),
    sessionId: text('session_id')
      .notNull()
      .references(() => authSessions.id, { onDelete: 'cascade' }),
    userId: text('user_id').notNull(),
    expiresAt: instant('expires_at').notNull(),
  },
  (table) => [index('socket_tickets_session').on(table.sessionId), index('socket_tickets_expires').on(table.expiresAt)],
)
