// The connection pool to PostgreSQL (postgres.js) and Drizzle over it.
//
// postgres.js rather than Bun's built-in SQL client: Bun's has had reported
// bugs delivering one query's rows to another under concurrent load, and a
// money system does not take that on faith (docs/decisions.md, "PostgreSQL").
import postgres from 'postgres'
import { drizzle, PostgresJsDatabase, type PostgresJsQueryResultHKT } from 'drizzle-orm/postgres-js'
import { PostgresJsSession, PostgresJsTransaction } from 'drizzle-orm/postgres-js/session'
import { PgDialect, type PgDatabase } from 'drizzle-orm/pg-core'

/** Drizzle over the pool or over one transaction: what a store queries through. */
export type PgDb = PgDatabase<PostgresJsQueryResultHKT>

export interface PoolOptions {
  /** Connections this instance may open (ARENA_DATABASE_POOL). */
  max: number
  /** Seconds to wait for a connection before the request is answered 503. */
  connectTimeoutS?: number
  /** Named prepared statements (ARENA_DATABASE_PREPARE); off behind a pooler that cannot keep them. Default on. */
  prepare?: boolean
}

/**
 * A statement with more parameters than this is sent unnamed: its text varies
 * with the length of a list (an IN list, a many-row INSERT), and each length
 * would be one more statement kept by the connection and by its backend.
 */
export const MAX_PREPARED_PARAMETERS = 16

/**
 * Drizzle's postgres.js session, with every statement of up to
 * MAX_PREPARED_PARAMETERS parameters run as a named prepared statement
 * (Drizzle prepares only the queries given a name with `.prepare()`).
 *
 * Unnamed, postgres.js sends a statement with parameters in two round trips,
 * a Parse and Describe and then the Bind and Execute, and PostgreSQL parses
 * and plans it at each run; named, it is described once per connection and
 * then costs one round trip, with the plan kept by the backend. Measured on
 * GET /me (bench/request-cpu.ts, docs/performance.md, "The PostgreSQL path"):
 * 3 763 → 6 764 requests a second, PostgreSQL's CPU 144 → 28 µs a request.
 * postgres.js keeps a connection's statements until it closes (max_lifetime
 * bounds that), and runs a statement again unnamed when its plan was
 * invalidated by a schema change.
 */
class PreparingSession extends PostgresJsSession<postgres.Sql, Record<string, never>, never> {
  override prepareQuery: PostgresJsSession<postgres.Sql, Record<string, never>, never>['prepareQuery'] = (query, fields, name, ...rest) =>
    super.prepareQuery(query, fields, name ?? (query.params.length <= MAX_PREPARED_PARAMETERS ? '' : undefined), ...rest)
}

export interface Pool {
  sql: postgres.Sql
  db: PostgresJsDatabase
  /** Drizzle over one transaction's connection (what drizzle's own `transaction` builds, without its extra SET TRANSACTION round trip). */
  inTransaction(tx: postgres.TransactionSql): PgDb
}

/**
 * postgres.js options for `url`. A unix socket is named the way libpq names
 * it, `postgres://user@localhost/db?host=/run/postgresql`; postgres.js does
 * not read `host` from the query itself (it would dial TCP and send `host`
 * to the server as a setting), so it becomes the socket file's `path`.
 */
export function connectOptions(url: string): { url: string; path?: string } {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return { url }
  }
  const host = parsed.searchParams.get('host')
  if (!host?.startsWith('/')) return { url }
  parsed.searchParams.delete('host')
  return { url: parsed.toString(), path: `${host.replace(/\/$/, '')}/.s.PGSQL.${parsed.port || 5432}` }
}

export function openPool(url: string, options: PoolOptions): Pool {
  const target = connectOptions(url)
  const sql = postgres(target.url, {
    ...(target.path ? { path: target.path } : {}),
    max: options.max,
    prepare: options.prepare !== false,
    connect_timeout: options.connectTimeoutS ?? 5,
    // Idle connections close, so an instance that is quiet does not hold its share of max_connections.
    idle_timeout: 60,
    // A connection is replaced now and then: a failover or a restarted server is picked up.
    max_lifetime: 30 * 60,
    onnotice: () => {},
    connection: {
      application_name: 'arena',
      // A unit of work must not wait on anything but the database (storage.ts);
      // one that does holds its connection and its locks. PostgreSQL ends such a
      // session after 10 s, as SQLite's committer rolls back a batch that hangs.
      idle_in_transaction_session_timeout: 10_000,
    },
  })
  const dialect = new PgDialect()
  const session = (client: postgres.Sql) => (options.prepare === false ? new PostgresJsSession(client, dialect, undefined) : new PreparingSession(client, dialect, undefined))
  // drizzle() sets postgres.js's type parsers as its session expects; the database is then built over a session of ours.
  drizzle({ client: sql })
  const db = new PostgresJsDatabase(dialect, session(sql) as never, undefined) as PostgresJsDatabase
  return {
    sql,
    db,
    // A transaction's client is a postgres.js TransactionSql: it queries like the pool's (drizzle calls only `unsafe`).
    inTransaction: (tx) => new PostgresJsTransaction(dialect, session(tx as unknown as postgres.Sql) as never, undefined) as unknown as PgDb,
  }
}

/** The URL without its password, for logs and `location`. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = '***'
    return parsed.toString()
  } catch {
    return 'postgres://(unparseable URL)'
  }
}
