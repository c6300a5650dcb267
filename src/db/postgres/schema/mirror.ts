// PostgreSQL's tables, built from the one schema (src/db/schema): the same
// table and column names, nullability, defaults, keys, indexes (partial ones
// with their condition) and foreign keys, each column of the PostgreSQL type
// its kind names (src/db/schema/columns.ts). Nothing here names a table: a
// table or column added to src/db/schema reaches PostgreSQL (and its
// generated migration) without a line written for it.
//
// A declaration this cannot carry over (a column type or a table option it
// does not know) throws when the module loads, so it is found by the first
// test, not by a migration that silently differs.
import { Column, getTableColumns, is, SQL, type ColumnBaseConfig, type ColumnDataType } from 'drizzle-orm'
import {
  bigint,
  boolean,
  customType,
  doublePrecision,
  foreignKey,
  index,
  integer,
  json,
  numeric,
  pgTable,
  primaryKey,
  text,
  timestamp,
  unique,
  uniqueIndex,
  type BuildAliasTable,
  type PgColumn,
  type PgColumnBuilderBase,
  type PgTable,
  type PgTableWithColumns,
} from 'drizzle-orm/pg-core'
import { getTableConfig, SQLiteTable, type SQLiteColumn } from 'drizzle-orm/sqlite-core'
import { markedKind } from '../../schema/columns'

/** A SQLite column's PostgreSQL counterpart: the same name, value type and nullability. */
type MirroredColumn<C extends SQLiteColumn> = PgColumn<{
  name: C['_']['name']
  tableName: C['_']['tableName']
  dataType: C['_']['dataType']
  columnType: string
  data: C['_']['data']
  driverParam: unknown
  notNull: C['_']['notNull']
  hasDefault: C['_']['hasDefault']
  isPrimaryKey: C['_']['isPrimaryKey']
  isAutoincrement: C['_']['isAutoincrement']
  hasRuntimeDefault: C['_']['hasRuntimeDefault']
  enumValues: C['_']['enumValues']
  baseColumn: never
  identity: undefined
  generated: undefined
} & ColumnBaseConfig<ColumnDataType, string>>

/** A SQLite table's PostgreSQL counterpart, as Drizzle types it. */
export type MirroredTable<T extends SQLiteTable> = PgTableWithColumns<{
  name: T['_']['name']
  schema: undefined
  dialect: 'pg'
  columns: { [K in keyof T['_']['columns']]: MirroredColumn<T['_']['columns'][K]> }
}>

/** Every table of `schema` (a module's exports; other exports are skipped), built for PostgreSQL. */
export type MirroredSchema<S> = { [K in keyof S as S[K] extends SQLiteTable ? K : never]: S[K] extends SQLiteTable ? MirroredTable<S[K]> : never }

/** A mirrored table under another name in one query (a self-join), as Drizzle types an alias: what drizzle-orm's aliasedTable gives on either engine. */
export type AliasedTable<T extends PgTable, A extends string> = BuildAliasTable<T, A>

/** An instant to the millisecond, as Date: what an `instant` column is on PostgreSQL. */
export function timestampMs(name: string) {
  return timestamp(name, { withTimezone: true, mode: 'date', precision: 3 })
}

/** Bytes: what a `bytes` column (a SQLite BLOB) is on PostgreSQL; postgres.js reads bytea as a Buffer. */
const bytea = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => 'bytea' })

function columnFor(column: SQLiteColumn): PgColumnBuilderBase {
  const name = column.name
  const kind = markedKind(column)
  let built: ReturnType<typeof text> | ReturnType<typeof integer> | ReturnType<typeof bigint> | ReturnType<typeof numeric> | ReturnType<typeof json> | ReturnType<typeof boolean> | ReturnType<typeof timestamp> | ReturnType<typeof doublePrecision>
  switch (column.columnType) {
    case 'SQLiteText':
      built = kind === 'amount' ? numeric(name, { mode: 'string' }) : column.enumValues ? text(name, { enum: column.enumValues as [string, ...string[]] }) : text(name)
      break
    case 'SQLiteTextJson':
      built = json(name)
      break
    case 'SQLiteInteger':
      built = kind === 'int64' ? bigint(name, { mode: 'number' }) : integer(name)
      break
    case 'SQLiteTimestamp':
      built = timestampMs(name)
      break
    case 'SQLiteBoolean':
      built = boolean(name)
      break
    case 'SQLiteReal':
      built = doublePrecision(name)
      break
    case 'SQLiteBlobBuffer':
      built = bytea(name) as unknown as typeof built
      break
    default:
      throw new Error(`column ${name}: no PostgreSQL type for ${column.columnType} (src/db/postgres/schema/mirror.ts)`)
  }
  const b = built as unknown as {
    primaryKey(): typeof b
    generatedByDefaultAsIdentity(): typeof b
    notNull(): typeof b
    default(value: unknown): typeof b
    unique(): typeof b
  }
  let out = b
  if (column.primary) {
    out = out.primaryKey()
    if ((column as unknown as { autoIncrement?: boolean }).autoIncrement) out = out.generatedByDefaultAsIdentity()
  }
  if (column.notNull && !column.primary) out = out.notNull()
  if (column.hasDefault && column.default !== undefined) out = out.default(column.default)
  if (column.defaultFn || column.onUpdateFn || column.generated) throw new Error(`column ${name}: a runtime default or generated column is not mirrored yet`)
  if (column.isUnique) out = out.unique()
  return out as unknown as PgColumnBuilderBase
}

/**
 * Builds every table of `schema` for PostgreSQL. Foreign keys and index
 * conditions are resolved when Drizzle first reads a table's options, after
 * all tables exist, so the order of declaration does not matter.
 */
export function mirrorSchema<S extends Record<string, unknown>>(schema: S): MirroredSchema<S> {
  const sqliteTables = Object.entries(schema).filter((entry): entry is [string, SQLiteTable] => isSqliteTable(entry[1]))
  const mirrored = new Map<SQLiteTable, PgTableWithColumns<never>>()
  const keyOf = (column: Column): string => {
    const key = Object.entries(getTableColumns(column.table as SQLiteTable)).find(([, c]) => c === column)?.[0]
    if (key === undefined) throw new Error(`column ${column.name}: not found in its table`)
    return key
  }
  const counterpart = (column: Column): PgColumn => {
    const table = mirrored.get(column.table as SQLiteTable)
    if (!table) throw new Error(`column ${column.name}: its table is not in the schema`)
    return (table as unknown as Record<string, PgColumn>)[keyOf(column)]!
  }
  const rewrite = (condition: SQL): SQL => new SQL(condition.queryChunks.map((chunk) => (is(chunk, Column) ? counterpart(chunk) : chunk)))

  const out: Record<string, unknown> = {}
  for (const [exportName, table] of sqliteTables) {
    const config = getTableConfig(table)
    if (config.checks.length > 0) throw new Error(`table ${config.name}: CHECK constraints are not mirrored yet`)
    const columns = Object.fromEntries(Object.entries(getTableColumns(table)).map(([key, column]) => [key, columnFor(column as SQLiteColumn)]))
    const pg = pgTable(config.name, columns, (self) => {
      // Within its own table, an index or key names the columns Drizzle hands to this function.
      const own = (column: Column) => (self as unknown as Record<string, PgColumn>)[keyOf(column)]!
      return [
      ...config.primaryKeys.map((key) => primaryKey({ columns: key.columns.map(own) as [PgColumn, ...PgColumn[]] })),
      ...config.uniqueConstraints.map((constraint) => unique(constraint.name).on(...(constraint.columns.map(own) as [PgColumn, ...PgColumn[]]))),
      ...config.foreignKeys.map((key) => {
        const reference = key.reference()
        let built = foreignKey({ columns: reference.columns.map(own) as [PgColumn, ...PgColumn[]], foreignColumns: reference.foreignColumns.map(counterpart) as [PgColumn, ...PgColumn[]] })
        if (key.onDelete) built = built.onDelete(key.onDelete)
        if (key.onUpdate) built = built.onUpdate(key.onUpdate)
        return built
      }),
      ...config.indexes.map((ix) => {
        const on = (ix.config.unique ? uniqueIndex : index)(ix.config.name).on(...(ix.config.columns.map((c) => own(c as Column)) as [PgColumn, ...PgColumn[]]))
        return ix.config.where ? on.where(rewrite(ix.config.where)) : on
      }),
    ]
    })
    mirrored.set(table, pg as unknown as PgTableWithColumns<never>)
    out[exportName] = pg
  }
  return out as MirroredSchema<S>
}

function isSqliteTable(value: unknown): value is SQLiteTable {
  return is(value, SQLiteTable)
}
