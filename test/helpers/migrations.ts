// Upgrade tests (test/platform/*-migration.test.ts): a new database of the
// test engine migrated up to an older schema, rows of that schema written
// into it with foreign keys off (the rows under test, without their
// parents), then the rest of the migrations, and the result handed to the
// test's check for that engine.
import { Database } from 'bun:sqlite'
import { join } from 'node:path'
import postgres from 'postgres'
import { readMigrationFiles } from 'drizzle-orm/migrator'
import { runMigrations as migrateSqlite } from '../../src/db/sqlite/migrate'
import { runMigrations as migratePostgres } from '../../src/db/postgres/migrate'
import { postgresConnectOptions } from './postgres'
import { TEST_ENGINE, emptyDatabaseEnv, tempDir } from './app'

type Migrations = ReturnType<typeof readMigrationFiles>

/** The test engine's migrations, in order. */
export function engineMigrations(): Migrations {
  return readMigrationFiles({ migrationsFolder: join(import.meta.dir, '..', '..', TEST_ENGINE === 'sqlite' ? 'drizzle' : 'drizzle-postgres') })
}

/** The migrations before the first one whose SQL contains `marker` (`inclusive`: up to and including it). */
export function migrationsBefore(all: Migrations, marker: string, inclusive = false): Migrations {
  const at = all.findIndex((m) => m.sql.some((s) => s.includes(marker)))
  if (at === -1) throw new Error(`no migration contains ${marker}`)
  return all.slice(0, inclusive ? at + 1 : at)
}

export interface UpgradeChecks {
  sqlite(db: Database): void | Promise<void>
  postgres(sql: postgres.Sql): Promise<void>
}

/**
 * Migrates a new database up to `before`, runs `seed(now)` (the engine's
 * SQL for "now" in the older schema's time columns) with foreign keys off,
 * migrates the rest of `all`, then runs the engine's check.
 */
export async function upgradeSeeded(before: Migrations, all: Migrations, seed: (now: string) => string[], check: UpgradeChecks): Promise<void> {
  if (TEST_ENGINE === 'sqlite') {
    const db = new Database(join(tempDir(), 'arena.sqlite'))
    try {
      migrateSqlite(db, before)
      db.run('PRAGMA foreign_keys = OFF')
      for (const statement of seed(String(Date.now()))) db.run(statement)
      db.run('PRAGMA foreign_keys = ON')
      migrateSqlite(db, all)
      await check.sqlite(db)
    } finally {
      db.close()
    }
    return
  }
  const { ARENA_DATABASE_URL: url } = await emptyDatabaseEnv()
  const { url: connect, ...options } = postgresConnectOptions(url!)
  const sql = postgres(connect, { ...options, max: 1, onnotice: () => {} })
  try {
    await migratePostgres(sql, before)
    await sql.begin(async (tx) => {
      await tx.unsafe(`SET LOCAL session_replication_role = replica`)
      for (const statement of seed('now()')) await tx.unsafe(statement)
    })
    await migratePostgres(sql, all)
    await check.postgres(sql)
  } finally {
    await sql.end()
  }
}
