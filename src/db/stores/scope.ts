// What a store written once for both engines queries through (src/db/stores).
//
// Drizzle's query builder says a query the same way on SQLite and on
// PostgreSQL, and each engine's Drizzle renders it in its own dialect. A
// store here builds its queries on `db`, over the tables in `t`, and awaits
// each one: an awaited query gives its rows as an array on both engines
// (SQLite's synchronous `.get()`, `.all()` and `.run()` are not used here;
// test/platform/one-query-layer.test.ts holds that). The engine hands in its
// own Drizzle and its own tables (PostgreSQL's are built from SQLite's by
// src/db/postgres/schema/mirror.ts, with the same names and value types), so
// one type describes both: PostgreSQL's, whose queries are awaited only.
//
// What differs between the engines for a measured reason stays in the
// engine's subclass of a store: SQLite's prepared statements on the hot
// paths, PostgreSQL's row locks, advisory locks, SKIP LOCKED and NOTIFY
// (docs/architecture.md, "Storage").
import type { PgDb } from '../postgres/connection'
import type * as schema from '../schema'
import type { MirroredSchema } from '../postgres/schema/mirror'
import type { EventWakeups } from '../../modules/events/wakeups'

/** Every table of the one schema, as a store written once sees it. */
export type Tables = MirroredSchema<typeof schema>

/** Drizzle over the engine's connection or unit of work: every query awaited. */
export type Db = PgDb

export interface QueryScope {
  /** Drizzle over this unit of work (or the read connection outside one). */
  readonly db: Db
  /** The engine's tables. */
  readonly t: Tables
  /** Registers an effect for after the commit; absent outside a unit of work. */
  readonly afterCommit?: (effect: () => void) => void
  readonly wakeups: EventWakeups
}

/** What every store written once is built on: its scope, and the scope's Drizzle and tables by their short names. */
export abstract class Queries {
  constructor(protected readonly scope: QueryScope) {}

  protected get db(): Db {
    return this.scope.db
  }

  protected get t(): Tables {
    return this.scope.t
  }
}
