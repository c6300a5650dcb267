import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'

import { EVENT_TOPICS, type EventTopic } from '../../modules/events/catalogue'

export { EVENT_TOPICS, type EventTopic }

// The event outbox of contract §4. Domains append to it inside the same
// transaction as the change the event reports, so an event exists exactly
// when its change committed. `seq` orders events for the event plane's cursor;
// `id` is the public evt_ id.
export const outboxEvents = sqliteTable(
  'outbox_events',
  {
    seq: integer('seq').primaryKey({ autoIncrement: true }),
    id: text('id').notNull().unique(),
    /** The user the event is addressed to; null for events only operators read. */
    userId: text('user_id'),
    topic: text('topic', { enum: EVENT_TOPICS }).notNull(),
    type: text('type').notNull(),
    data: text('data', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
    createdAt: integer('created_at', { mode: 'timestamp_ms' }).notNull(),
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
    seq: integer('seq').primaryKey({ autoIncrement: true }),
    id: text('id').notNull().unique(),
    userId: text('user_id'),
    source: text('source', { enum: ['client', 'server'] }).notNull(),
    kind: text('kind').notNull(),
    level: text('level', { enum: SECURITY_LEVELS }).notNull(),
    details: text('details', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
    occurredAt: integer('occurred_at', { mode: 'timestamp_ms' }).notNull(),
    receivedAt: integer('received_at', { mode: 'timestamp_ms' }).notNull(),
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
  seq: integer('seq').notNull(),
  hash: text('hash').notNull(),
  prunedSeq: integer('pruned_seq'),
  prunedHash: text('pruned_hash'),
  prunedMac: text('pruned_mac'),
})
