// One SQLite file per data dir, opened with the pragmas every writer relies on:
// WAL so readers never block the writer, FULL sync so a committed write
// survives power loss (money and match results), foreign keys enforced, and a
// busy timeout so a second connection waits instead of failing at once.
import { Database } from 'bun:sqlite'
import { getTableColumns, getTableName } from 'drizzle-orm'
import { drizzle, type BunSQLiteDatabase } from 'drizzle-orm/bun-sqlite'
import type { SQLiteTable } from 'drizzle-orm/sqlite-core'
import { chmodSync } from 'node:fs'
import { join } from 'node:path'
import * as schema from '../schema'

export type Db = BunSQLiteDatabase<typeof schema> & { $client: Database }

export interface DbHandle {
  db: Db
  sqlite: Database
  path: string
  close(): void
}

export const DB_FILE = 'arena.sqlite'
export const BUSY_TIMEOUT_MS = 5000

export function databasePath(dataDir: string): string {
  return join(dataDir, DB_FILE)
}

/** How many compiled statements one connection keeps (distinct SQL texts; `inArray` lists of new lengths add some). */
export const STATEMENT_CACHE_SIZE = 512

/**
 * Drizzle's bun:sqlite driver compiles a new statement for every query it
 * runs, and compiling costs more than running a point lookup. The SQL text a
 * query builder emits depends only on the query's shape (values are bound
 * parameters), so compiled statements are kept by text, least recently used
 * out. An evicted statement is not finalized: a prepared query may still hold
 * it, and the garbage collector finalizes it once nothing does. Statements run
 * synchronously to completion (drizzle never leaves one half-iterated), so
 * sharing one between queries of the same text is safe.
 */
function cacheStatements(sqlite: Database): void {
  const compile = sqlite.prepare.bind(sqlite)
  const cache = new Map<string, ReturnType<Database['prepare']>>()
  sqlite.prepare = ((sql: string, ...rest: unknown[]) => {
    if (rest.length > 0) return (compile as (...a: unknown[]) => ReturnType<Database['prepare']>)(sql, ...rest)
    const hit = cache.get(sql)
    if (hit) {
      cache.delete(sql)
      cache.set(sql, hit)
      return hit
    }
    const statement = compile(sql)
    cache.set(sql, statement)
    if (cache.size > STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!)
    return statement
  }) as Database['prepare']
}

export function openDatabase(path: string): DbHandle {
  const sqlite = new Database(path, { create: true, strict: true })
  // Owner-only before WAL mode creates its side files, which copy this mode.
  chmodSync(path, 0o600)
  sqlite.run(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`)
  // Switching a new file to WAL needs a moment of exclusive access; when
  // several processes open one fresh file together, the loser is told BUSY
  // without the busy timeout being consulted, so it waits and tries again.
  for (let attempt = 1; ; attempt++) {
    try {
      sqlite.run('PRAGMA journal_mode = WAL')
      break
    } catch (error) {
      if ((error as { code?: string }).code !== 'SQLITE_BUSY' || attempt >= 50) throw error
      Bun.sleepSync(20)
    }
  }
  sqlite.run('PRAGMA synchronous = FULL')
  sqlite.run('PRAGMA foreign_keys = ON')
  // Savepoints (one per group-committed item) journal their pages; past 64 KiB
  // that sub-journal went to a temp file, thousands of writes per batch.
  sqlite.run('PRAGMA temp_store = MEMORY')
  cacheStatements(sqlite)
  const db = drizzle({ client: sqlite, schema })
  let closed = false
  return {
    db,
    sqlite,
    path,
    close() {
      if (closed) return
      closed = true
      // Fold the WAL back into the main file so a stopped server leaves one file.
      try {
        sqlite.run('PRAGMA wal_checkpoint(TRUNCATE)')
      } catch {
        // Another connection may hold the WAL; closing is still safe.
      }
      sqlite.close()
    },
  }
}

/**
 * Statements compiled once per connection, on first use: `perConnection(build)`
 * returns a function giving `build(sqlite)` for that connection. Hot paths use
 * these instead of the query builder, whose building cost more than running.
 */
export function perConnection<T>(build: (sqlite: Database) => T): (sqlite: Database) => T {
  const built = new WeakMap<Database, T>()
  return (sqlite) => {
    let found = built.get(sqlite)
    if (found === undefined) {
      found = build(sqlite)
      built.set(sqlite, found)
    }
    return found
  }
}

/**
 * A SELECT list for hand-written SQL, from the Drizzle schema: each named
 * property as `"column_name" AS "property"`, so rows come back keyed as
 * Drizzle's would and no column name is typed twice. `alias` qualifies them.
 */
export function selectList<C extends Record<string, { name: string }>>(columns: C, names: readonly (keyof C & string)[], alias?: string): string {
  const prefix = alias ? `${alias}.` : ''
  return names.map((name) => `${prefix}"${columns[name]!.name}" AS "${name}"`).join(', ')
}

/**
 * An INSERT for hand-prepared statements, from the Drizzle schema: the named
 * properties' columns, each bound to the parameter `$property`. Columns not
 * named take their default (NULL for a nullable one).
 */
export function insertInto<T extends SQLiteTable>(table: T, names: readonly (keyof T['$inferInsert'] & string)[]): string {
  const columns = getTableColumns(table) as Record<string, { name: string }>
  return `INSERT INTO "${getTableName(table)}" (${names.map((name) => `"${columns[name]!.name}"`).join(', ')}) VALUES (${names.map((name) => `$${name}`).join(', ')})`
}
