// The fsync off the event loop (src/db/sqlite/group-commit.ts `durability`,
// src/db/sqlite/storage.ts): the writer commits with synchronous=NORMAL and the
// WAL is fsynced on a thread. On the real storage with the WAL's fsync
// injectable:
// - nothing is answered, no afterCommit effect runs, and the read connection
//   does not see a batch, until that batch's fsync returned; the next batch
//   begins only after it (the write lock is not held across the wait: another
//   connection of this process can write meanwhile);
// - the fsync is of the WAL file itself, on a thread (the default), and answers;
// - the committer checkpoints between batches (the read snapshot held at each
//   COMMIT would keep SQLite's automatic checkpoint from ever finishing), so
//   the WAL stays bounded under continuous writes;
// - a failing fsync is never answered as a success: that batch, the one waiting
//   behind it and every later write are refused with a 503 storage error, their
//   effects never run, and onSyncFailure is told once.
import { afterAll, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { fstatSync, statSync } from 'node:fs'
import { SqliteStorage, WAL_CHECKPOINT_FRAMES, fsyncOnThread } from '../../src/db/sqlite/storage'
import { databasePath } from '../../src/db/sqlite/connection'
import { DurabilityLost } from '../../src/db/sqlite/group-commit'
import { StorageUnavailableError } from '../../src/db/errors'
import { inProcessWakeups } from '../../src/modules/events/wakeups'
import { tempDir } from '../helpers/app'
import { describeOnEngine } from '../helpers/engine'

/** An fsync the test releases or fails by hand; `calls` holds the descriptors it was asked to sync. */
function heldSync() {
  const pending: { resolve: () => void; reject: (error: unknown) => void }[] = []
  const calls: number[] = []
  return {
    calls,
    pending,
    sync: (fd: number) => {
      calls.push(fd)
      return new Promise<void>((resolve, reject) => pending.push({ resolve, reject }))
    },
    /** Waits until `n` fsyncs have been asked for. */
    async asked(n: number) {
      for (let i = 0; i < 200 && calls.length < n; i++) await Bun.sleep(5)
      expect(calls.length).toBe(n)
    },
  }
}

const storages: SqliteStorage[] = []
afterAll(async () => {
  for (const s of storages) await s.close().catch(() => {})
})

function open(options: Partial<ConstructorParameters<typeof SqliteStorage>[0]> = {}) {
  const path = databasePath(tempDir('arena-durable-'))
  const storage = new SqliteStorage({ path, wakeups: inProcessWakeups(), ...options })
  storages.push(storage)
  storage.writer.sqlite.run('CREATE TABLE durable_t (v TEXT NOT NULL)')
  // A connection of another process's kind (no snapshot held): sees every commit.
  const outsider = new Database(path, { readonly: true })
  const rows = (db: Database) => db.query<{ v: string }, []>('SELECT v FROM durable_t ORDER BY rowid').all().map((r) => r.v)
  const put = (v: string, effects?: string[]) =>
    storage.commits.run((db, item) => {
      db.$client.run('INSERT INTO durable_t (v) VALUES (?)', [v])
      if (effects) item.afterCommit(() => effects.push(v))
      return v
    })
  return { storage, path, outsider, put, readerRows: () => rows(storage.reader.sqlite), outsiderRows: () => rows(outsider) }
}

/** Whether `promise` has settled after the pending I/O has run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false
  promise.then(
    () => (done = true),
    () => (done = true),
  )
  await Bun.sleep(20)
  return done
}

describeOnEngine('sqlite', 'the fsync off the event loop', () => {
  test('a batch is answered, its effects run and the read connection sees it only after its fsync; the next batch waits for it, not holding the write lock', async () => {
    const fsync = heldSync()
    const { put, readerRows, outsiderRows, path } = open({ syncWal: fsync.sync })
    const writerElsewhere = new Database(path)
    writerElsewhere.run('PRAGMA busy_timeout = 2000')
    const effects: string[] = []
    const first = put('a', effects)
    await fsync.asked(1)
    // Committed (another connection sees it) but not durable: not answered, not woken, not read.
    expect(outsiderRows()).toEqual(['a'])
    expect(await settled(first)).toBe(false)
    expect(effects).toEqual([])
    expect(readerRows()).toEqual([])

    // The next batch waits; the write lock is free meanwhile (another connection writes without waiting).
    let ranSecond = false
    const second = put('b', effects).finally(() => (ranSecond = true))
    await Bun.sleep(20)
    expect(outsiderRows()).toEqual(['a'])
    expect(fsync.calls.length).toBe(1)
    const started = performance.now()
    writerElsewhere.run('BEGIN IMMEDIATE')
    writerElsewhere.run('ROLLBACK')
    expect(performance.now() - started).toBeLessThan(100)

    fsync.pending[0]!.resolve()
    expect(await first).toBe('a')
    expect(effects).toEqual(['a'])
    // The second commits once the first is durable; the reader holds the first's state until the second's fsync.
    await fsync.asked(2)
    expect(outsiderRows()).toEqual(['a', 'b'])
    expect(readerRows()).toEqual(['a'])
    expect(ranSecond).toBe(false)
    fsync.pending[1]!.resolve()
    expect(await second).toBe('b')
    expect(readerRows()).toEqual(['a', 'b'])
    expect(effects).toEqual(['a', 'b'])
  })

  test('the default fsyncs the WAL file on a thread and answers', async () => {
    const fds: number[] = []
    const { storage, path, put, readerRows } = open({ syncWal: (fd) => (fds.push(fd), fsyncOnThread(fd)) })
    expect(await Promise.all([put('x'), put('y')])).toEqual(['x', 'y'])
    expect(fds.length).toBeGreaterThan(0)
    expect(fstatSync(fds[0]!).ino).toBe(statSync(`${path}-wal`).ino)
    expect(readerRows()).toEqual(['x', 'y'])
    expect(storage.writer.sqlite.query<{ synchronous: number }, []>('PRAGMA synchronous').get()!.synchronous).toBe(1) // NORMAL
    expect(storage.commits.stats().syncs).toBeGreaterThan(0)
  })

  test('under continuous writes the WAL is checkpointed and starts again from its beginning: it does not grow', async () => {
    const { storage, path } = open()
    // About five frames a batch: 800 batches would be some 16 MB of WAL if it never started again.
    for (let i = 0; i < 800; i++) {
      await Promise.all(Array.from({ length: 4 }, () => storage.commits.run((db) => db.$client.run('INSERT INTO durable_t (v) VALUES (?)', ['x'.repeat(3000)]))))
    }
    const frameBytes = 24 + 4096
    expect(statSync(`${path}-wal`).size).toBeLessThan((WAL_CHECKPOINT_FRAMES + 100) * frameBytes)
    expect(storage.commits.stats().commits).toBe(800)
  })

  test('a batch whose COMMIT fails releases the read snapshot it took: another process\'s commit is read', async () => {
    const { storage, path, readerRows } = open()
    storage.writer.sqlite.run('CREATE TABLE durable_parents (id INTEGER PRIMARY KEY)')
    // Checked at COMMIT: a real way for a COMMIT to fail with its transaction still open.
    storage.writer.sqlite.run('CREATE TABLE durable_children (parent_id INTEGER NOT NULL REFERENCES durable_parents(id) DEFERRABLE INITIALLY DEFERRED)')
    const orphan = storage.commits.run((db) => db.$client.run('INSERT INTO durable_children (parent_id) VALUES (999)'))
    expect(orphan).rejects.toThrow()
    await orphan.catch(() => {})
    const other = new Database(path)
    other.run('INSERT INTO durable_t (v) VALUES (?)', ['from elsewhere'])
    other.close()
    expect(readerRows()).toEqual(['from elsewhere'])
  })

  test('a failed fsync is never answered as a success: that batch, the one behind it and every later write get a 503; effects never run; onSyncFailure once', async () => {
    const fsync = heldSync()
    const failures: unknown[] = []
    const { put, readerRows } = open({ syncWal: fsync.sync, onSyncFailure: (error) => failures.push(error) })
    const effects: string[] = []
    const first = put('a', effects)
    first.catch(() => {})
    await fsync.asked(1)
    const behind = put('b', effects)
    behind.catch(() => {})
    await Bun.sleep(20)
    const eio = Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' })
    fsync.pending[0]!.reject(eio)

    for (const write of [first, behind, put('later', effects)]) {
      const error = await write.then(
        () => null,
        (e: unknown) => e,
      )
      expect(error).toBeInstanceOf(StorageUnavailableError)
      expect((error as StorageUnavailableError).cause).toBeInstanceOf(DurabilityLost)
    }
    expect(effects).toEqual([])
    expect(failures).toEqual([eio])
    // Only the one fsync was asked for: nothing after the failure was committed.
    expect(fsync.calls.length).toBe(1)
    // The read connection never saw the batch whose fsync failed.
    expect(readerRows()).toEqual([])
  })
})
