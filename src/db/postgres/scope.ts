// What every PostgreSQL store is built on.
import type postgres from 'postgres'
import type { QueryScope } from '../stores/scope'
import type { PgDb } from './connection'
import type { SessionWithUser } from '../../modules/auth/store'
import type { StoredEvent } from '../../modules/events/store'
import type { PageRequest } from './stores/events'

export interface PostgresScope extends QueryScope {
  /** Drizzle over this unit of work's transaction, or over the pool for reads outside one. */
  db: PgDb
  /**
   * postgres.js on the same connection (the transaction's, or the pool), for
   * what Drizzle does not say (advisory locks, NOTIFY, FOR UPDATE SKIP LOCKED).
   * Note: Drizzle has told postgres.js to hand timestamps over as strings
   * (it parses them itself); a raw query converts them with `new Date(...)`.
   */
  sql: postgres.Sql | postgres.TransactionSql
  /**
   * The statements the pool runs once for all the requests of an event-loop
   * turn (src/shared/batch.ts): on the scope of reads outside a unit of work
   * only; a unit of work runs its statements on its own transaction.
   */
  batches?: PoolBatches
  /** The unit of work runs READ COMMITTED on row locks (WriteOptions.rowLocks): a read it updates from must lock its row. */
  rowLocks?: boolean
}

/** Transaction-level advisory lock keys (pg_advisory_xact_lock), one per thing serialized by a lock rather than by a row. */
export const ADVISORY_LOCKS = {
  /** Appending to the event outbox: seq is allocated under it, so seq order is commit order and a cursor never skips an event committed later with a lower seq. */
  outbox: 0x61_72_65_6e_61_00_65_76n, // "arena\0ev"
} as const

/** The NOTIFY channel of long-poll wake-ups: the payload is the user whose events changed. */
export const EVENTS_CHANNEL = 'arena_events'

/** The pool's batched reads (PostgresScope.batches). */
export interface PoolBatches {
  sessionWithUser(sessionId: string): Promise<SessionWithUser | null>
  eventsPage(request: PageRequest): Promise<StoredEvent[]>
}
