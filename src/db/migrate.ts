import type { MigrationConfig, MigrationMeta } from 'drizzle-orm/migrator'
import type { Database } from 'bun:sqlite'
import type { Db } from './client'
import { embeddedMigrations } from './embedded-migrations' with { type: 'macro' }

// Inlined at build time: the binary carries its migrations (see embedded-migrations.ts).
export const EMBEDDED_MIGRATIONS: readonly MigrationMeta[] = embeddedMigrations()

interface DrizzleInternals {
  dialect: { migrate(migrations: readonly MigrationMeta[], session: unknown, config: MigrationConfig): void }
  session: unknown
}

export const MIGRATIONS_TABLE = '__drizzle_migrations'

export interface MigrationReport {
  /** Migrations applied by this call, oldest first, by their creation time in ms. */
  applied: number[]
  /** Migrations embedded in this build. */
  known: number
}

/** The same function runs at server start, in `arena migrate` and in every test database. */
export function runMigrations(db: Db, migrations: readonly MigrationMeta[] = EMBEDDED_MIGRATIONS): MigrationReport {
  const lastApplied = lastAppliedAt(db.$client)
  const pending = migrations.filter((m) => lastApplied === undefined || m.folderMillis > lastApplied)
  if (pending.length > 0) {
    // Drizzle's own migrator (what drizzle-orm/bun-sqlite/migrator calls after
    // reading files from disk): one transaction for all pending migrations and
    // the bookkeeping table drizzle-kit expects. dialect and session are marked
    // internal in the typings, hence the cast.
    const internal = db as unknown as DrizzleInternals
    internal.dialect.migrate(migrations, internal.session, { migrationsFolder: '', migrationsTable: MIGRATIONS_TABLE })
  }
  return { applied: pending.map((m) => m.folderMillis), known: migrations.length }
}

function lastAppliedAt(sqlite: Database): number | undefined {
  const table = sqlite
    .query<{ name: string }, [string]>("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?")
    .get(MIGRATIONS_TABLE)
  if (!table) return undefined
  const row = sqlite
    .query<{ created_at: number | null }, []>(`SELECT MAX(created_at) AS created_at FROM "${MIGRATIONS_TABLE}"`)
    .get()
  return row?.created_at == null ? undefined : Number(row.created_at)
}
