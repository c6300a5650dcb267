// The database is opened with the pragmas durability depends on, migrations
// are the embedded copy of ./drizzle (./drizzle-postgres) and apply exactly
// once, and the outbox shares the fate of the transaction that writes it.
// The SQLite connection, its migrator and its read connection are checked on
// SQLite runs only, the PostgreSQL migrator on PostgreSQL runs only; the rest
// runs on the engine of the run.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { eq } from 'drizzle-orm'
import { databasePath, openDatabase } from '../../src/db/sqlite/connection'
import { EMBEDDED_MIGRATIONS, MIGRATIONS_TABLE, runMigrations } from '../../src/db/sqlite/migrate'
import { openPool } from '../../src/db/postgres/connection'
import * as postgresMigrations from '../../src/db/postgres/migrate'
import type { SqliteStorage } from '../../src/db/sqlite/storage'
import { ClosedUnitOfWorkError } from '../../src/db/errors'
import type { Transaction } from '../../src/db/storage'
import { ManualClock } from '../../src/shared/clock'
import { isId, newId } from '../../src/shared/ids'
import { createTestApp, emptyDatabaseEnv, tempDir, type TestApp } from '../helpers/app'
import { describeOnEngine, testOnEngine } from '../helpers/engine'
import { run, SOURCE_COMMAND } from '../helpers/process'

const dir = tempDir()
const handle = openDatabase(databasePath(dir))
afterAll(() => handle.close())

/** The hashes of the migration files drizzle-kit wrote into `folder`, in order. */
function migrationFileHashes(folder: string): string[] {
  const journal = JSON.parse(readFileSync(join(import.meta.dir, '../..', folder, 'meta/_journal.json'), 'utf8')) as { entries: { tag: string }[] }
  return journal.entries.map((entry) => createHash('sha256').update(readFileSync(join(import.meta.dir, '../..', folder, `${entry.tag}.sql`))).digest('hex'))
}

// SQLite's connection settings: no counterpart on PostgreSQL (the server's own configuration).
describeOnEngine('sqlite', 'database client', () => {
  test('uses WAL, synchronous=FULL, foreign keys and a busy timeout', () => {
    const pragma = (name: string) => Object.values(handle.sqlite.query(`PRAGMA ${name}`).get() as object)[0]
    expect(pragma('journal_mode')).toBe('wal')
    expect(pragma('synchronous')).toBe(2) // FULL
    expect(pragma('foreign_keys')).toBe(1)
    expect(pragma('busy_timeout')).toBe(5000)
  })
})

// SQLite's migrator on a file of its own.
describeOnEngine('sqlite', 'migrations', () => {
  test('apply once, then report nothing to do', () => {
    const first = runMigrations(handle.sqlite)
    expect(first.known).toBeGreaterThan(0)
    expect(first.applied.length).toBe(first.known)
    const second = runMigrations(handle.sqlite)
    expect(second.applied).toEqual([])
    const rows = handle.sqlite.query(`SELECT hash FROM "${MIGRATIONS_TABLE}"`).all()
    expect(rows.length).toBe(first.known)
  })

  test('the embedded migrations are exactly the files drizzle-kit wrote', () => {
    const onDisk = migrationFileHashes('drizzle')
    const applied = handle.sqlite.query(`SELECT hash FROM "${MIGRATIONS_TABLE}" ORDER BY created_at`).all() as { hash: string }[]
    expect(applied.map((row) => row.hash)).toEqual(onDisk)
  })

  test('a later migration in a new build applies on top, alone', () => {
    const later = { sql: ['CREATE TABLE probe_later (id integer primary key)'], bps: true, folderMillis: Date.now() + 1000, hash: 'probe' }
    const report = runMigrations(handle.sqlite, [...EMBEDDED_MIGRATIONS, later])
    expect(report.applied).toEqual([later.folderMillis])
    expect(handle.sqlite.query("SELECT name FROM sqlite_master WHERE name = 'probe_later'").get()).not.toBeNull()
  })
})

// PostgreSQL's migrator on an empty database of its own.
describeOnEngine('postgres', 'migrations on PostgreSQL', () => {
  let pool: ReturnType<typeof openPool> | undefined
  beforeAll(async () => {
    pool = openPool((await emptyDatabaseEnv()).ARENA_DATABASE_URL!, { max: 1 })
  })
  afterAll(() => pool?.sql.end())
  const table = `"${postgresMigrations.MIGRATIONS_SCHEMA}"."${postgresMigrations.MIGRATIONS_TABLE}"`

  test('apply once, then report nothing to do', async () => {
    const sql = pool!.sql
    const first = await postgresMigrations.runMigrations(sql)
    expect(first.known).toBeGreaterThan(0)
    expect(first.applied.length).toBe(first.known)
    const second = await postgresMigrations.runMigrations(sql)
    expect(second.applied).toEqual([])
    const rows = await sql.unsafe(`SELECT hash FROM ${table}`)
    expect(rows.length).toBe(first.known)
  })

  test('the embedded migrations are exactly the files drizzle-kit wrote', async () => {
    const applied = await pool!.sql.unsafe<{ hash: string }[]>(`SELECT hash FROM ${table} ORDER BY created_at`)
    expect(applied.map((row) => row.hash)).toEqual(migrationFileHashes('drizzle-postgres'))
  })

  test('a later migration in a new build applies on top, alone', async () => {
    const sql = pool!.sql
    const later = { sql: ['CREATE TABLE probe_later (id integer primary key)'], bps: true, folderMillis: Date.now() + 1000, hash: 'probe' }
    const report = await postgresMigrations.runMigrations(sql, [...postgresMigrations.EMBEDDED_MIGRATIONS, later])
    expect(report.applied).toEqual([later.folderMillis])
    const [found] = await sql<{ table: string | null }[]>`SELECT to_regclass('probe_later')::text AS table`
    expect(found!.table).toBe('probe_later')
  })
})

/** Rows in the migrations table of the database `env` names (the data dir's SQLite file, or ARENA_DATABASE_URL's). */
async function appliedMigrationRows(env: Record<string, string>): Promise<number> {
  if (env.ARENA_DATABASE_URL === undefined) {
    const check = openDatabase(databasePath(env.ARENA_DATA_DIR!))
    try {
      return (check.sqlite.query(`SELECT count(*) AS n FROM "${MIGRATIONS_TABLE}"`).get() as { n: number }).n
    } finally {
      check.close()
    }
  }
  const pool = openPool(env.ARENA_DATABASE_URL, { max: 1 })
  try {
    const [row] = await pool.sql.unsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM "${postgresMigrations.MIGRATIONS_SCHEMA}"."${postgresMigrations.MIGRATIONS_TABLE}"`)
    return row!.n
  } finally {
    await pool.sql.end()
  }
}

describe('migrations across processes', () => {
  test('several processes migrating one fresh database apply each migration exactly once', async () => {
    for (let round = 0; round < 3; round++) {
      const env = { ARENA_DATA_DIR: tempDir('arena-migrate-race-'), ...(await emptyDatabaseEnv()) }
      const results = await Promise.all(Array.from({ length: 4 }, () => run([...SOURCE_COMMAND, 'migrate', '--json'], env)))
      for (const result of results) expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' })
      const reports = results.map((r) => JSON.parse(r.stdout) as { applied: number; known: number })
      expect(reports.reduce((sum, r) => sum + r.applied, 0)).toBe(reports[0]!.known)
      expect(await appliedMigrationRows(env)).toBe(reports[0]!.known)
    }
  }, 30_000)
})

describe('outbox', () => {
  const clock = new ManualClock('2026-11-22T10:00:00.000Z')
  let app!: TestApp
  beforeAll(async () => {
    app = await createTestApp()
  })
  afterAll(() => app.close())

  test('an event appended in a committed transaction is stored', async () => {
    const { storage } = app
    const { outboxEvents } = app.peek.tables
    const id = await storage.write((tx) => tx.events.append({ userId: 'usr_a', topic: 'session', type: 'session.login', data: { sessionId: 'ses_1', newDevice: true } }, clock.now()))
    const [row] = await app.peek.db.select().from(outboxEvents).where(eq(outboxEvents.id, id))
    expect(row).toMatchObject({ userId: 'usr_a', topic: 'session', type: 'session.login', data: { sessionId: 'ses_1' } })
    expect(row!.createdAt.toISOString()).toBe('2026-11-22T10:00:00.000Z')
  })

  test('a unit of work is over once its work settled: its stores are refused after that', async () => {
    let kept: Transaction | undefined
    await app.storage.write(async (tx) => {
      kept = tx
    })
    expect(() => kept!.events).toThrow(ClosedUnitOfWorkError)
    expect(() => kept!.afterCommit(() => {})).toThrow(ClosedUnitOfWorkError)
  })

  // SQLite's read connection; PostgreSQL reads on its pool.
  testOnEngine('sqlite', 'reads outside a write use their own connection: it refuses writes and maps the file', () => {
    const sqlite = app.storage as SqliteStorage
    const reader = sqlite.reader.sqlite
    expect(reader).not.toBe(sqlite.writer.sqlite)
    expect(() => reader.run("INSERT INTO jobs (id, kind, payload, status, attempts, run_after, created_at, updated_at) VALUES ('job_x', 'k', '{}', 'queued', 0, 0, 0, 0)")).toThrow()
    expect(Object.values(reader.query('PRAGMA mmap_size').get() as object)[0]).toBe(256 * 1024 * 1024)
  })

  test('an event appended in a rolled-back transaction never appears', async () => {
    const { outboxEvents } = app.peek.tables
    let id = ''
    await expect(
      app.storage.write(async (tx) => {
        id = await tx.events.append({ userId: 'usr_b', topic: 'wallet', type: 'wallet.credited', data: { asset: 'USDC', amount: '1', reference: 'r', balance: '1' } }, clock.now())
        throw new Error('the change failed')
      }),
    ).rejects.toThrow('the change failed')
    expect(id).not.toBe('')
    expect(await app.peek.db.select().from(outboxEvents).where(eq(outboxEvents.id, id))).toEqual([])
  })
})

describe('ids', () => {
  test('carry their type prefix and sort by creation time', async () => {
    const ids: string[] = []
    for (let i = 0; i < 50; i++) {
      ids.push(newId('user'))
      if (i % 10 === 0) await Bun.sleep(2)
    }
    for (const id of ids) expect(isId('user', id)).toBe(true)
    expect(isId('match', ids[0]!)).toBe(false)
    expect([...ids].sort()).toEqual(ids)
    expect(new Set(ids).size).toBe(ids.length)
  })
})
