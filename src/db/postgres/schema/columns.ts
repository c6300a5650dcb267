// Column types the PostgreSQL schema shares. Each mirrors a SQLite column of
// src/db/schema so a row reads the same whichever engine holds it.
import { timestamp } from 'drizzle-orm/pg-core'

/** An instant to the millisecond, as Date (SQLite keeps epoch ms in an integer). */
export function timestampMs(name: string) {
  return timestamp(name, { withTimezone: true, mode: 'date', precision: 3 })
}

// JSON columns are `json`, not `jsonb`, throughout: they hold the text as
// written, like SQLite's TEXT. jsonb gives keys back in its own order (the
// security chain hashes details as written) and refuses \u0000, which a
// client's claim score or security event may carry (a 500 on PostgreSQL and
// a 200 on SQLite). Nothing queries inside these values.
