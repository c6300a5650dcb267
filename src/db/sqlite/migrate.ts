import type { Database } from 'bun:sqlite'
import type { MigrationMeta } from 'drizzle-orm/migrator'
import { embeddedMigrations } from './embedded-migrations' with { type: 'macro' }

// Inlined at build time: the binary carries its migrations (see embedded-migrations.ts).
export const EMBEDDED_MIGRATIONS: readonly MigrationMeta[] = embeddedMigrations()

/** drizzle-kit's bookkeeping table, in its own layout, so `drizzle-kit` tooling agrees with us. */
export const MIGRATIONS_TABLE = '__drizzle_migrations'

export interface MigrationReport {
  /** Migrations applied by this call, oldest first, by their creation time in ms. */
  applied: number[]
  /** Migrations embedded in this build. */
  known: number
}

/**
 * Applies pending migrations: the same function runs at server start, in
 * `arena migrate` and for every test database.
 *
 * Unlike drizzle's own migrator, which reads the last applied migration before
 * its (deferred) transaction begins, the read and the writes happen in one
 * IMMEDIATE transaction: two processes starting on the same data dir never
 * apply a migration twice, and the report says what this call really applied.
 * `beforeApplying` sees the pending migrations inside that transaction and may
 * throw to refuse them (nothing is written then).
 */
export function runMigrations(
  sqlite: Database,
  migrations: readonly MigrationMeta[] = EMBEDDED_MIGRATIONS,
  beforeApplying?: (pending: readonly number[]) => void,
): MigrationReport {
  const apply = sqlite.transaction(() => {
    sqlite.run(`CREATE TABLE IF NOT EXISTS "${MIGRATIONS_TABLE}" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric)`)
    const last = sqlite
      .query<{ created_at: number | null }, []>(`SELECT MAX(created_at) AS created_at FROM "${MIGRATIONS_TABLE}"`)
      .get()
    const lastApplied = last?.created_at == null ? undefined : Number(last.created_at)
    const pending = migrations.filter((m) => lastApplied === undefined || m.folderMillis > lastApplied)
    if (pending.length > 0) beforeApplying?.(pending.map((m) => m.folderMillis))
    // References already broken before (a file written with foreign keys off) are not this migration's doing.
    const brokenBefore = pending.length > 0 ? new Set(brokenReferences(sqlite)) : new Set<string>()
    const record = sqlite.prepare(`INSERT INTO "${MIGRATIONS_TABLE}" (hash, created_at) VALUES (?, ?)`)
    for (const migration of pending) {
      for (const statement of migration.sql) {
        if (statement.trim() !== '') sqlite.run(statement)
      }
      record.run(migration.hash, migration.folderMillis)
    }
    const broken = pending.length > 0 ? brokenReferences(sqlite).filter((row) => !brokenBefore.has(row)) : []
    if (broken.length > 0) throw new Error(`a migration left ${broken.length} rows referring to nothing (first: ${broken[0]}); nothing was applied`)
    return pending.map((m) => m.folderMillis)
  })
  // A migration that rebuilds a table others refer to (drizzle-kit writes
  // CREATE __new_t, copy, DROP t, RENAME for a column SQLite cannot alter)
  // must run with foreign keys off, or the DROP's implicit DELETE would
  // cascade into (or be refused by) every referring row. The pragma is a no-op
  // inside a transaction, so it is set around it (SQLite's "making other kinds
  // of table schema changes", steps 1 and 12), and the transaction checks
  // every reference still holds before it commits (step 10).
  const enforced = sqlite.query<{ foreign_keys: number }, []>('PRAGMA foreign_keys').get()?.foreign_keys === 1
  sqlite.run('PRAGMA foreign_keys = OFF')
  try {
    return { applied: apply.immediate(), known: migrations.length }
  } finally {
    if (enforced) sqlite.run('PRAGMA foreign_keys = ON')
  }
}

/** Every row whose reference points nowhere, as `table rowid → parent`. */
function brokenReferences(sqlite: Database): string[] {
  return sqlite
    .query<{ table: string; rowid: number | null; parent: string }, []>('PRAGMA foreign_key_check')
    .all()
    .map((row) => `${row.table} ${row.rowid} → ${row.parent}`)
}
