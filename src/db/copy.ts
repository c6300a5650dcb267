// `arena db copy`: a data dir's SQLite database into an empty PostgreSQL
// database, for a studio moving from one machine to several instances. The
// one place besides the engines that names both: it reads every table through
// the SQLite schema and writes it through the PostgreSQL one.
//
// The tables and their order come from the schemas, not from a list here: a
// table added to both schemas is copied without touching this file, and one
// added to SQLite only stops the copy before it writes anything. Rows keep
// their keys, sequence numbers included (event cursors that clients hold,
// security-chain positions, posting ids), and each identity sequence is moved
// past the highest number SQLite ever issued, so the next event continues
// where the data dir stopped.
//
// The data dir's secrets (signing keys, chain key, custody shares) go into
// the target's vault in the same transaction, handed over already sealed
// under the target's master key: this file never sees one in the clear.
//
// Everything is one transaction on PostgreSQL: a copy that fails leaves the
// target as empty as it found it, and the target's tables are locked for its
// duration, so nothing (a second copy, an instance started too early and
// generating its own secrets) writes in between the emptiness check and the
// commit.
import type postgres from 'postgres'
import { getTableColumns, getTableName, is, sql } from 'drizzle-orm'
import { getTableConfig as pgTableConfig, PgTable } from 'drizzle-orm/pg-core'
import { SQLiteTable } from 'drizzle-orm/sqlite-core'
import { holdsDatabase } from './open'
import * as sqliteSchema from './schema'
import * as postgresSchema from './postgres/schema'
import { databasePath } from './sqlite/connection'
import { SqliteStorage } from './sqlite/storage'
import { openPool, redactUrl, type PgDb } from './postgres/connection'
import { runMigrations } from './postgres/migrate'
import { serverSecrets } from './postgres/schema'
import { inProcessWakeups } from '../modules/events/wakeups'
import type { SealedSecret } from '../vault/store'

/** Rows per INSERT: few round trips, and far below PostgreSQL's 65535 parameters per statement. */
export const COPY_BATCH_ROWS = 500

const MAX_PARAMETERS = 65_535

/** The target already holds arena data: copying would mix two histories (and clash on keys). */
export class TargetNotEmptyError extends Error {
  constructor(readonly tables: readonly string[]) {
    super(`the target database is not empty (rows in ${tables.join(', ')}): db copy fills only an empty database`)
    this.name = 'TargetNotEmptyError'
  }
}

/** The two schemas disagree: a table or column the copy could not carry over. */
export class SchemaMismatchError extends Error {
  constructor(message: string) {
    super(`cannot copy: ${message}`)
    this.name = 'SchemaMismatchError'
  }
}

export interface TableCopy {
  table: string
  rows: number
}

export interface CopyResult {
  /** The SQLite file read. */
  source: string
  /** The PostgreSQL URL written to, without its password. */
  target: string
  /** Every table, in the order it was written (parents before children), the vault's last. */
  tables: TableCopy[]
}

interface TablePair {
  name: string
  sqlite: SQLiteTable
  postgres: PgTable
  /** The PostgreSQL identity column, whose sequence must continue after the copied rows. */
  identity?: string
}

/** Every table a schema module exports, by SQL name. */
function sqliteTablesOf(schema: Record<string, unknown>): Map<string, SQLiteTable> {
  return new Map(Object.values(schema).flatMap((value) => (is(value, SQLiteTable) ? [[getTableName(value), value] as const] : [])))
}

function postgresTablesOf(schema: Record<string, unknown>): Map<string, PgTable> {
  return new Map(Object.values(schema).flatMap((value) => (is(value, PgTable) ? [[getTableName(value), value] as const] : [])))
}

/**
 * Every SQLite table with its PostgreSQL twin, parents before children (by
 * the PostgreSQL foreign keys, which are what refuse a child inserted first).
 * Fails on a table or column one side lacks: the copy would otherwise drop
 * data without a word. PostgreSQL-only tables are not in the plan: the
 * vault (server_secrets) is filled from the data dir's files, not its database.
 */
export function copyPlan(
  sqliteTables: Map<string, SQLiteTable> = sqliteTablesOf(sqliteSchema),
  postgresTables: Map<string, PgTable> = postgresTablesOf(postgresSchema),
): TablePair[] {
  const pairs = new Map<string, TablePair>()
  for (const [name, sqliteTable] of sqliteTables) {
    const postgresTable = postgresTables.get(name)
    if (!postgresTable) throw new SchemaMismatchError(`SQLite table ${name} has no PostgreSQL twin in src/db/postgres/schema`)
    const from = columnNames(getTableColumns(sqliteTable))
    const to = columnNames(getTableColumns(postgresTable))
    if (from !== to) throw new SchemaMismatchError(`table ${name} has columns ${from} on SQLite but ${to} on PostgreSQL`)
    const identity = pgTableConfig(postgresTable).columns.find((column) => column.generatedIdentity !== undefined)
    pairs.set(name, { name, sqlite: sqliteTable, postgres: postgresTable, ...(identity ? { identity: identity.name } : {}) })
  }

  // Depth-first: a table is placed once every table it references is.
  const ordered: TablePair[] = []
  const state = new Map<string, 'visiting' | 'placed'>()
  const visit = (name: string, path: string[]) => {
    if (state.get(name) === 'placed') return
    if (state.get(name) === 'visiting') throw new SchemaMismatchError(`foreign keys form a cycle (${[...path, name].join(' → ')}); the copy inserts parents first and cannot order these`)
    const pair = pairs.get(name)
    if (!pair) throw new SchemaMismatchError(`${path.at(-1)} references ${name}, which SQLite does not have`)
    state.set(name, 'visiting')
    for (const fk of pgTableConfig(pair.postgres).foreignKeys) visit(getTableName(fk.reference().foreignTable), [...path, name])
    state.set(name, 'placed')
    ordered.push(pair)
  }
  for (const name of [...pairs.keys()].sort()) visit(name, [])
  return ordered
}

/** `key:sql_name` of every column, sorted: the rows carry over as they are only if both sides agree on both. */
function columnNames(columns: Record<string, { name: string }>): string {
  return Object.entries(columns)
    .map(([key, column]) => `${key}:${column.name}`)
    .sort()
    .join(', ')
}

const quote = (identifier: string) => `"${identifier.replaceAll('"', '""')}"`

export interface CopyOptions {
  /** The data dir holding the SQLite database (ARENA_DATA_DIR). */
  dataDir: string
  /** The PostgreSQL database to fill (postgres://...). */
  url: string
  /** The data dir's secrets, each sealed under the target's master key with its name (src/vault/import.ts, MasterKey.seal). */
  sealedSecrets: readonly SealedSecret[]
  /** Rows per INSERT (tests make it small to cross batch boundaries). */
  batchRows?: number
}

/**
 * Copies every table of the data dir's database, and its sealed secrets, into
 * the PostgreSQL database at `url`, migrating that first. Throws
 * TargetNotEmptyError, with nothing written, when any of arena's tables there
 * (the vault included) holds a row.
 */
export async function copySqliteToPostgres(options: CopyOptions): Promise<CopyResult> {
  const plan = copyPlan()
  if (!holdsDatabase(options.dataDir)) throw new Error(`no database in the data dir ${options.dataDir} (nothing to copy)`)
  // The SQLite engine as every command opens it: pending migrations applied,
  // so its rows have the shape of the current schema. The copy reads through
  // its query_only connection.
  const source = new SqliteStorage({ path: databasePath(options.dataDir), wakeups: inProcessWakeups() })
  const pool = openPool(options.url, { max: 1 })
  try {
    await runMigrations(pool.sql)
    const reader = source.reader
    // One read transaction: every table from the same committed state, even if a server still writes the file.
    reader.sqlite.run('BEGIN')
    try {
      const issued = highestIssued(reader.sqlite)
      const tables = await pool.sql.begin(async (tx) => {
        const db = pool.inTransaction(tx)
        await claimEmptyTarget(tx)
        const batchRows = options.batchRows ?? COPY_BATCH_ROWS
        const copied: TableCopy[] = []
        for (const pair of plan) {
          copied.push({ table: pair.name, rows: await copyTable(reader.db, db, pair, batchRows) })
          if (pair.identity) await continueSequence(tx, pair, issued.get(pair.name) ?? 0)
        }
        copied.push({ table: getTableName(serverSecrets), rows: await storeSecrets(db, options.sealedSecrets, batchRows) })
        return copied
      })
      return { source: source.location, target: redactUrl(options.url), tables }
    } finally {
      reader.sqlite.run('COMMIT')
    }
  } finally {
    await pool.sql.end({ timeout: 5 })
    await source.close()
  }
}

/**
 * Locks every arena table of the target against writers until the copy
 * commits, then checks that none holds a row. A second copy racing this one
 * waits on the lock and then finds this one's rows.
 */
async function claimEmptyTarget(tx: postgres.TransactionSql): Promise<void> {
  const names = [...postgresTablesOf(postgresSchema).keys()].sort()
  await tx.unsafe(`LOCK TABLE ${names.map(quote).join(', ')} IN EXCLUSIVE MODE`)
  const occupied = await tx.unsafe<{ name: string }[]>(
    names.map((name, i) => `SELECT $${i + 1}::text AS name WHERE EXISTS (SELECT 1 FROM ${quote(name)})`).join(' UNION ALL '),
    names,
  )
  if (occupied.length > 0) throw new TargetNotEmptyError(occupied.map((row) => row.name).sort())
}

/** Copies one table in pages of the SQLite rowid (stable, and each page an index range, not an OFFSET scan). */
async function copyTable(from: SqliteStorage['reader']['db'], to: PgDb, pair: TablePair, batchRows: number): Promise<number> {
  const columns = getTableColumns(pair.sqlite)
  const perInsert = Math.max(1, Math.min(batchRows, Math.floor(MAX_PARAMETERS / Object.keys(columns).length)))
  let after = 0
  let rows = 0
  for (;;) {
    // Drizzle maps SQLite's values to the row type both schemas share: epoch
    // ms to Date, JSON text to objects, decimal text amounts stay strings,
    // and the PostgreSQL columns take those as they are.
    const page = from
      .select({ ...columns, rowid: sql<number>`rowid` })
      .from(pair.sqlite)
      .where(sql`rowid > ${after}`)
      .orderBy(sql`rowid`)
      .limit(perInsert)
      .all() as (Record<string, unknown> & { rowid: number })[]
    if (page.length === 0) return rows
    after = page.at(-1)!.rowid
    const values = page.map(({ rowid: _rowid, ...row }) => row)
    await to.insert(pair.postgres).values(values as never)
    rows += values.length
  }
}

/** Writes the vault's rows as its store does (src/db/postgres/stores/vault.ts), the target being empty: no conflict to settle. */
async function storeSecrets(to: PgDb, secrets: readonly SealedSecret[], batchRows: number): Promise<number> {
  const createdAt = new Date()
  for (let start = 0; start < secrets.length; start += batchRows) {
    await to.insert(serverSecrets).values(secrets.slice(start, start + batchRows).map((secret) => ({ name: secret.name, sealed: secret.sealed, createdAt })))
  }
  return secrets.length
}

/**
 * The highest number each AUTOINCREMENT table ever issued. It can be above
 * the largest left in the table (pruned events): the copy's sequences start
 * after it, so a number a client saw is never issued again.
 */
function highestIssued(sqlite: SqliteStorage['reader']['sqlite']): Map<string, number> {
  const rows = sqlite.query<{ name: string; seq: number }, []>('SELECT name, seq FROM sqlite_sequence').all()
  return new Map(rows.map((row) => [row.name, Number(row.seq)]))
}

/** Moves the table's identity sequence past its copied rows and whatever SQLite issued before them. */
async function continueSequence(tx: postgres.TransactionSql, pair: TablePair, issued: number): Promise<void> {
  const table = quote(pair.name)
  const column = quote(pair.identity!)
  const [row] = await tx.unsafe<{ next: string | null }[]>(`SELECT GREATEST(max(${column}), $1::bigint)::text AS next FROM ${table}`, [issued])
  const last = Number(row?.next ?? 0)
  // setval(seq, n) makes the next value n + 1; a sequence never set starts at 1 anyway.
  if (last > 0) await tx.unsafe(`SELECT setval(pg_get_serial_sequence($1, $2), $3::bigint)`, [table, pair.identity!, last])
}
