// One SQLite file per data dir, opened with the pragmas every writer relies on:
// WAL so readers never block the writer, FULL sync so a committed write
// survives power loss (money and match results), foreign keys enforced, and a
// busy timeout so a second connection waits instead of failing at once.
import { Database } from 'bun:sqlite'
import { drizzle, type BunSQLiteDatabase } from 'drizzle-orm/bun-sqlite'
import { chmodSync } from 'node:fs'
import { join } from 'node:path'
import * as schema from './schema'

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

/** A Drizzle transaction handle, as passed to db.transaction's callback. */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0]

/** Anything a write can run on: the database itself or an open transaction. */
export type Executor = Db | Tx
