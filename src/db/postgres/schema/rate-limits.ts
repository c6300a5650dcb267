// PostgreSQL only: the rate limiter's counters (contract §20), shared by every
// instance so a limit holds across them. SQLite has no counterpart table: one
// server serves a data dir and counts in its memory (src/shared/rate-limit.ts).
// A row per (policy, key, window), written by one upsert per limited request
// outside any unit of work, deleted by housekeeping once its window ended:
// the table holds at most the requests of the windows still running.
import { bigint, integer, pgTable, primaryKey, text } from 'drizzle-orm/pg-core'

export const rateLimitCounters = pgTable(
  'rate_limit_counters',
  {
    /** `group.dimension`, e.g. `player-read.account`. */
    policy: text('policy').notNull(),
    /** The client address, account id or game id counted. */
    key: text('key').notNull(),
    /** Epoch milliseconds, aligned to the window's length (the same on every instance). */
    windowStart: bigint('window_start', { mode: 'number' }).notNull(),
    /** Epoch milliseconds the window ends at: housekeeping deletes the row after it. */
    windowEnd: bigint('window_end', { mode: 'number' }).notNull(),
    count: integer('count').notNull(),
  },
  (table) => [primaryKey({ columns: [table.policy, table.key, table.windowStart] })],
)
