import type postgres from 'postgres'
import type { MigrationMeta } from 'drizzle-orm/migrator'
import type { MigrationReport } from '../sqlite/migrate'
import { embeddedMigrations } from './embedded-migrations' with { type: 'macro' }

// Inlined at build time: the binary carries its migrations (see embedded-migrations.ts).
export const EMBEDDED_MIGRATIONS: readonly MigrationMeta[] = embeddedMigrations()

/** drizzle-kit's bookkeeping table on PostgreSQL, in its own schema and layout, so `drizzle-kit` tooling agrees with us. */
export const MIGRATIONS_SCHEMA = 'drizzle'
export const MIGRATIONS_TABLE = '__drizzle_migrations'

/** The advisory lock every instance takes to migrate: two starting at once migrate once. */
export const MIGRATION_LOCK = 0x61_72_65_6e_61_00_6d_67n // "arena\0mg"

/**
 * Applies pending migrations, the same function at server start, in `arena
 * migrate` and for test databases. One transaction: it first takes a
 * transaction-level advisory lock, so a second instance starting at the same
 * moment waits, then reads what the first applied and finds nothing left to
 * do; the report says what this call really applied. DDL is transactional on
 * PostgreSQL: a migration that fails leaves nothing half-applied.
 */
export async function runMigrations(sql: postgres.Sql, migrations: readonly MigrationMeta[] = EMBEDDED_MIGRATIONS): Promise<MigrationReport> {
  const applied = await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK.toString()}::bigint)`
    await tx.unsafe(`CREATE SCHEMA IF NOT EXISTS "${MIGRATIONS_SCHEMA}"`)
    await tx.unsafe(`CREATE TABLE IF NOT EXISTS "${MIGRATIONS_SCHEMA}"."${MIGRATIONS_TABLE}" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)`)
    const [last] = await tx.unsafe<{ created_at: string | null }[]>(`SELECT max(created_at)::text AS created_at FROM "${MIGRATIONS_SCHEMA}"."${MIGRATIONS_TABLE}"`)
    const lastApplied = last?.created_at == null ? undefined : Number(last.created_at)
    const pending = migrations.filter((m) => lastApplied === undefined || m.folderMillis > lastApplied)
    for (const migration of pending) {
      for (const statement of migration.sql) {
        if (statement.trim() !== '') await tx.unsafe(statement)
      }
      await tx.unsafe(`INSERT INTO "${MIGRATIONS_SCHEMA}"."${MIGRATIONS_TABLE}" (hash, created_at) VALUES ($1, $2)`, [migration.hash, migration.folderMillis])
    }
    return pending.map((m) => m.folderMillis)
  })
  return { applied, known: migrations.length }
}
