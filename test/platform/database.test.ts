// The database is opened with the pragmas durability depends on, migrations
// are the embedded copy of ./drizzle and apply exactly once, and the outbox
// shares the fate of the transaction that writes it.
import { afterAll, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { eq } from 'drizzle-orm'
import { databasePath, openDatabase } from '../../src/db/sqlite/connection'
import { EMBEDDED_MIGRATIONS, MIGRATIONS_TABLE, runMigrations } from '../../src/db/sqlite/migrate'
import { outboxEvents } from '../../src/db/schema'
import { SqliteStorage } from '../../src/db/sqlite/storage'
import { ClosedUnitOfWorkError } from '../../src/db/errors'
import type { Transaction } from '../../src/db/storage'
import { inProcessWakeups } from '../../src/modules/events/wakeups'
import { ManualClock } from '../../src/shared/clock'
import { isId, newId } from '../../src/shared/ids'
import { tempDir } from '../helpers/app'
import { run, SOURCE_COMMAND } from '../helpers/process'

const dir = tempDir()
const handle = openDatabase(databasePath(dir))
afterAll(() => handle.close())

describe('database client', () => {
  test('uses WAL, synchronous=FULL, foreign keys and a busy timeout', () => {
    const pragma = (name: string) => Object.values(handle.sqlite.query(`PRAGMA ${name}`).get() as object)[0]
    expect(pragma('journal_mode')).toBe('wal')
    expect(pragma('synchronous')).toBe(2) // FULL
    expect(pragma('foreign_keys')).toBe(1)
    expect(pragma('busy_timeout')).toBe(5000)
  })
})

describe('migrations', () => {
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
    const journal = JSON.parse(readFileSync(join(import.meta.dir, '../../drizzle/meta/_journal.json'), 'utf8')) as {
      entries: { tag: string }[]
    }
    const onDisk = journal.entries.map((entry) =>
      createHash('sha256').update(readFileSync(join(import.meta.dir, '../../drizzle', `${entry.tag}.sql`))).digest('hex'),
    )
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

describe('migrations across processes', () => {
  test('several processes migrating one fresh data dir apply each migration exactly once', async () => {
    for (let round = 0; round < 3; round++) {
      const dataDir = tempDir('arena-migrate-race-')
      const results = await Promise.all(
        Array.from({ length: 4 }, () => run([...SOURCE_COMMAND, 'migrate', '--json'], { ARENA_DATA_DIR: dataDir })),
      )
      for (const result of results) expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' })
      const reports = results.map((r) => JSON.parse(r.stdout) as { applied: number; known: number })
      expect(reports.reduce((sum, r) => sum + r.applied, 0)).toBe(reports[0]!.known)
      const check = openDatabase(databasePath(dataDir))
      try {
        expect(check.sqlite.query(`SELECT count(*) AS n FROM "${MIGRATIONS_TABLE}"`).get()).toEqual({ n: reports[0]!.known })
      } finally {
        check.close()
      }
    }
  }, 30_000)
})

describe('outbox', () => {
  const clock = new ManualClock('2026-11-22T10:00:00.000Z')
  const storage = new SqliteStorage({ path: databasePath(tempDir()), wakeups: inProcessWakeups() })
  afterAll(() => storage.close())
  const db = storage.writer.db

  test('an event appended in a committed transaction is stored', async () => {
    const id = await storage.write((tx) => tx.events.append({ userId: 'usr_a', topic: 'session', type: 'session.login', data: { sessionId: 'ses_1' } }, clock.now()))
    const row = db.select().from(outboxEvents).where(eq(outboxEvents.id, id)).get()
    expect(row).toMatchObject({ userId: 'usr_a', topic: 'session', type: 'session.login', data: { sessionId: 'ses_1' } })
    expect(row!.createdAt.toISOString()).toBe('2026-11-22T10:00:00.000Z')
  })

  test('a unit of work is over once its work settled: its stores are refused after that', async () => {
    let kept: Transaction | undefined
    await storage.write(async (tx) => {
      kept = tx
    })
    expect(() => kept!.events).toThrow(ClosedUnitOfWorkError)
    expect(() => kept!.afterCommit(() => {})).toThrow(ClosedUnitOfWorkError)
  })

  test('reads outside a write use their own connection: it refuses writes and maps the file', () => {
    const reader = storage.reader.sqlite
    expect(reader).not.toBe(storage.writer.sqlite)
    expect(() => reader.run("INSERT INTO jobs (id, kind, payload, status, attempts, run_after, created_at, updated_at) VALUES ('job_x', 'k', '{}', 'queued', 0, 0, 0, 0)")).toThrow()
    expect(Object.values(reader.query('PRAGMA mmap_size').get() as object)[0]).toBe(256 * 1024 * 1024)
  })

  test('an event appended in a rolled-back transaction never appears', async () => {
    let id = ''
    await expect(
      storage.write(async (tx) => {
        id = await tx.events.append({ userId: 'usr_b', topic: 'wallet', type: 'wallet.credited', data: { asset: 'USDC', amount: '1', reference: 'r', balance: '1' } }, clock.now())
        throw new Error('the change failed')
      }),
    ).rejects.toThrow('the change failed')
    expect(id).not.toBe('')
    expect(db.select().from(outboxEvents).where(eq(outboxEvents.id, id)).get()).toBeUndefined()
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
