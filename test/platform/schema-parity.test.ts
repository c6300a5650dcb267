// The two engines' schemas are one schema (src/db/schema; PostgreSQL's tables
// are built from it by src/db/postgres/schema/mirror.ts), and their migrations
// are fresh (migrations-fresh.test.ts). This checks what that gives on real
// databases: the migrations embedded for SQLite (./drizzle) and for PostgreSQL
// (./drizzle-postgres), each applied, must give the same tables, columns,
// nullability, primary keys, unique and plain indexes, and foreign keys. A
// column kind the mirror mapped wrong, or a migration of one engine edited by
// hand, fails here before `arena db copy` or a store finds out in production.
import { describe, expect, test } from 'bun:test'
import { openDatabase } from '../../src/db/sqlite/connection'
import { runMigrations as migrateSqlite } from '../../src/db/sqlite/migrate'
import { openPool } from '../../src/db/postgres/connection'
import { runMigrations as migratePostgres } from '../../src/db/postgres/migrate'
import { tempDir, TEST_ENGINE } from '../helpers/app'
import { findPostgresBinaries, freshDatabaseUrl } from '../helpers/postgres'
import { join } from 'node:path'
import { rmSync } from 'node:fs'

/** Tables only one engine has, on purpose. */
const ENGINE_ONLY = {
  // drizzle-kit's bookkeeping (SQLite keeps it beside the tables, PostgreSQL in its own schema).
  sqlite: ['__drizzle_migrations', 'sqlite_sequence'],
  // The sealed secrets every instance shares; SQLite keeps its secrets in the data dir.
  // The rate limiter's counters every instance shares; SQLite's one server counts in memory.
  postgres: ['server_secrets', 'rate_limit_counters'],
}

interface Shape {
  /** table → column → 'null' | 'not null' (+ ' pk') */
  columns: Record<string, Record<string, string>>
  /** `table: [unique ]name(columns)` for every index but the primary key's */
  indexes: string[]
  /** `table(columns) → table(columns) on delete <action>` */
  foreignKeys: string[]
}

function sqliteShape(): Shape {
  const dir = tempDir('arena-parity-')
  const handle = openDatabase(join(dir, 'parity.sqlite'))
  try {
    migrateSqlite(handle.sqlite)
    const db = handle.sqlite
    const tables = db.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all().map((t) => t.name).filter((t) => !ENGINE_ONLY.sqlite.includes(t))
    const shape: Shape = { columns: {}, indexes: [], foreignKeys: [] }
    for (const table of tables) {
      shape.columns[table] = {}
      for (const c of db.query<{ name: string; notnull: number; pk: number }, []>(`PRAGMA table_info("${table}")`).all()) {
        // SQLite lets an INTEGER PRIMARY KEY be null in its catalogue; it never is.
        shape.columns[table]![c.name] = `${c.notnull || c.pk ? 'not null' : 'null'}${c.pk ? ' pk' : ''}`
      }
      for (const index of db.query<{ name: string; unique: number; origin: string }, []>(`PRAGMA index_list("${table}")`).all()) {
        if (index.origin === 'pk') continue
        const columns = db.query<{ name: string }, []>(`PRAGMA index_info("${index.name}")`).all().map((c) => c.name)
        shape.indexes.push(`${table}: ${index.unique ? 'unique ' : ''}${index.name}(${columns.join(', ')})`)
      }
      const fks = new Map<number, { table: string; from: string[]; to: string[]; onDelete: string }>()
      for (const fk of db.query<{ id: number; table: string; from: string; to: string; on_delete: string }, []>(`PRAGMA foreign_key_list("${table}")`).all()) {
        const entry = fks.get(fk.id) ?? { table: fk.table, from: [], to: [], onDelete: fk.on_delete.toLowerCase() }
        entry.from.push(fk.from)
        entry.to.push(fk.to)
        fks.set(fk.id, entry)
      }
      for (const fk of fks.values()) shape.foreignKeys.push(`${table}(${fk.from.join(', ')}) → ${fk.table}(${fk.to.join(', ')}) on delete ${fk.onDelete}`)
    }
    return normalise(shape)
  } finally {
    handle.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

async function postgresShape(): Promise<Shape> {
  const pool = openPool(await freshDatabaseUrl({ empty: true }), { max: 1 })
  const { sql } = pool
  try {
    await migratePostgres(sql)
    const shape: Shape = { columns: {}, indexes: [], foreignKeys: [] }
    const columns = await sql<{ table_name: string; column_name: string; is_nullable: string; pk: boolean }[]>`
      SELECT c.table_name, c.column_name, c.is_nullable,
             EXISTS (SELECT 1 FROM information_schema.key_column_usage k JOIN information_schema.table_constraints t USING (constraint_schema, constraint_name)
                     WHERE t.constraint_type = 'PRIMARY KEY' AND k.table_schema = c.table_schema AND k.table_name = c.table_name AND k.column_name = c.column_name) AS pk
      FROM information_schema.columns c WHERE c.table_schema = 'public' ORDER BY c.table_name, c.ordinal_position`
    for (const c of columns) {
      if (ENGINE_ONLY.postgres.includes(c.table_name)) continue
      ;(shape.columns[c.table_name] ??= {})[c.column_name] = `${c.is_nullable === 'NO' ? 'not null' : 'null'}${c.pk ? ' pk' : ''}`
    }
    const indexes = await sql<{ table: string; name: string; unique: boolean; columns: string[] }[]>`
      SELECT t.relname AS table, i.relname AS name, x.indisunique AS unique,
             array(SELECT a.attname FROM unnest(x.indkey) WITH ORDINALITY k(attnum, n) JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum ORDER BY k.n)::text[] AS columns
      FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid JOIN pg_namespace n ON n.oid = t.relnamespace
      WHERE n.nspname = 'public' AND NOT x.indisprimary`
    for (const index of indexes) {
      if (ENGINE_ONLY.postgres.includes(index.table)) continue
      shape.indexes.push(`${index.table}: ${index.unique ? 'unique ' : ''}${index.name}(${index.columns.join(', ')})`)
    }
    const fks = await sql<{ table: string; columns: string[]; target: string; target_columns: string[]; on_delete: string }[]>`
      SELECT c.conrelid::regclass::text AS table, c.confrelid::regclass::text AS target,
             array(SELECT a.attname FROM unnest(c.conkey) WITH ORDINALITY k(attnum, n) JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum ORDER BY k.n)::text[] AS columns,
             array(SELECT a.attname FROM unnest(c.confkey) WITH ORDINALITY k(attnum, n) JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.attnum ORDER BY k.n)::text[] AS target_columns,
             CASE c.confdeltype WHEN 'c' THEN 'cascade' WHEN 'n' THEN 'set null' WHEN 'r' THEN 'restrict' WHEN 'd' THEN 'set default' ELSE 'no action' END AS on_delete
      FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace WHERE c.contype = 'f' AND n.nspname = 'public'`
    for (const fk of fks) shape.foreignKeys.push(`${fk.table}(${fk.columns.join(', ')}) → ${fk.target}(${fk.target_columns.join(', ')}) on delete ${fk.on_delete}`)
    return normalise(shape)
  } finally {
    await sql.end()
  }
}

function normalise(shape: Shape): Shape {
  return { columns: shape.columns, indexes: [...shape.indexes].sort(), foreignKeys: [...shape.foreignKeys].sort() }
}

const skip = TEST_ENGINE !== 'postgres' && findPostgresBinaries() === null
if (skip) console.log('schema parity skipped: no PostgreSQL >= 15 under /usr/lib/postgresql (Debian package postgresql)')

describe.skipIf(skip)('the SQLite and PostgreSQL migrations', () => {
  test('give the same tables, columns, nullability, primary keys, indexes and foreign keys', async () => {
    const [lite, pg] = [sqliteShape(), await postgresShape()]
    expect(Object.keys(lite.columns).length).toBeGreaterThan(15)
    expect(pg.columns).toEqual(lite.columns)
    expect(pg.indexes).toEqual(lite.indexes)
    expect(pg.foreignKeys).toEqual(lite.foreignKeys)
  }, 30_000)
})
