// The connection pool to PostgreSQL (postgres.js) and Drizzle over it.
//
// postgres.js rather than Bun's built-in SQL client: Bun's has had reported
// bugs delivering one query's rows to another under concurrent load, and a
// money system does not take that on faith (docs/decisions.md, "PostgreSQL").
import postgres from 'postgres'
import { drizzle, type PostgresJsDatabase, type PostgresJsQueryResultHKT } from 'drizzle-orm/postgres-js'
import { PostgresJsSession, PostgresJsTransaction } from 'drizzle-orm/postgres-js/session'
import { PgDialect, type PgDatabase } from 'drizzle-orm/pg-core'

/** Drizzle over the pool or over one transaction: what a store queries through. */
export type PgDb = PgDatabase<PostgresJsQueryResultHKT>

export interface PoolOptions {
  /** Connections this instance may open (ARENA_DATABASE_POOL). */
  max: number
  /** Seconds to wait for a connection before the request is answered 503. */
  connectTimeoutS?: number
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
  const db = drizzle({ client: sql })
  const dialect = new PgDialect()
  return {
    sql,
    db,
    // A transaction's client is a postgres.js TransactionSql: it queries like the pool's (drizzle calls only `unsafe`).
    inTransaction: (tx) => {
      const session = new PostgresJsSession(tx as unknown as postgres.Sql, dialect, undefined)
      return new PostgresJsTransaction(dialect, session as never, undefined) as unknown as PgDb
    },
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
