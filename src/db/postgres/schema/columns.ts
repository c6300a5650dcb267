// Column types the PostgreSQL schema shares. Each mirrors a SQLite column of
// src/db/schema so a row reads the same whichever engine holds it.
import { timestamp } from 'drizzle-orm/pg-core'

/** An instant to the millisecond, as Date (SQLite keeps epoch ms in an integer). */
export function timestampMs(name: string) {
  return timestamp(name, { withTimezone: true, mode: 'date', precision: 3 })
}
