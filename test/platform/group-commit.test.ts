// The group committer on a real SQLite file (WAL, synchronous=FULL): concurrent
// work shares one transaction, each item in its own savepoint; nothing is
// answered before its COMMIT; a failed transaction fails its whole batch and
// the committer carries on.
import { afterAll, beforeEach, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { count } from 'drizzle-orm'
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import { databasePath, openDatabase, type Db } from '../../src/db/sqlite/connection'
import { ClosedUnitOfWorkError } from '../../src/db/errors'
import { createGroupCommitter, UnitOfWorkTimeout, type BatchReport, type GroupCommitOptions } from '../../src/db/sqlite/group-commit'
import { tempDir } from '../helpers/app'
import { describeOnEngine } from '../helpers/engine'

const dir = tempDir()
const handle = openDatabase(databasePath(dir))
handle.sqlite.run('CREATE TABLE items (id INTEGER PRIMARY KEY, v TEXT NOT NULL UNIQUE)')
handle.sqlite.run('CREATE TABLE parents (id INTEGER PRIMARY KEY)')
// Checked at COMMIT, not per statement: a real way for a COMMIT to fail.
handle.sqlite.run('CREATE TABLE children (id INTEGER PRIMARY KEY, parent_id INTEGER NOT NULL REFERENCES parents(id) DEFERRABLE INITIALLY DEFERRED)')
const items = sqliteTable('items', { id: integer('id').primaryKey(), v: text('v').notNull().unique() })
const children = sqliteTable('children', { id: integer('id').primaryKey(), parentId: integer('parent_id').notNull() })
/** Inserts an item row and returns `value` (what the work answers). */
function put<T>(tx: Db, v: string, value: T): T {
  tx.insert(items).values({ v }).run()
  return value
}
// A second connection sees only what is committed.
const reader = new Database(databasePath(dir), { readonly: true })
afterAll(() => {
  reader.close()
  handle.close()
})

// Every batch is one BEGIN IMMEDIATE ... COMMIT: count the BEGINs independently of the hook.
let transactions = 0
const originalPrepare = handle.sqlite.prepare.bind(handle.sqlite)
handle.sqlite.prepare = ((sql: string) => {
  const statement = originalPrepare(sql)
  if (sql !== 'BEGIN IMMEDIATE') return statement
  return {
    run: () => {
      transactions++
      return statement.run()
    },
  }
}) as typeof handle.sqlite.prepare

beforeEach(() => {
  handle.sqlite.run('DELETE FROM items')
  handle.sqlite.run('DELETE FROM children')
  transactions = 0
})

function committer(options: GroupCommitOptions = {}) {
  const reports: BatchReport[] = []
  const commits = createGroupCommitter(handle.db, { ...options, onBatch: (r) => reports.push(r) })
  return { commits, reports }
}

const committed = (v: string) => reader.query('SELECT v FROM items WHERE v = ?').get(v) !== null
const allCommitted = () => (reader.query('SELECT v FROM items ORDER BY id').all() as { v: string }[]).map((r) => r.v)

// SQLite's own batching of units of work: PostgreSQL runs each in a
// transaction of its own, so a PostgreSQL run has nothing here to test.
describeOnEngine('sqlite', 'group commit', () => {
  test('concurrent items share one transaction, each gets its own value, and is visible to another connection when it resolves', async () => {
    const { commits, reports } = committer()
    const seenAtResolve: boolean[] = []
    const runs = Array.from({ length: 100 }, (_, i) =>
      commits
        .run((tx) => {
          return put(tx, `v${i}`, { i })
        })
        .then((value) => {
          // Resolved means committed: the reader connection sees the row already.
          seenAtResolve.push(committed(`v${i}`))
          return value
        }),
    )
    // Nothing has run yet: the batch waits for the next macrotask.
    await Promise.resolve()
    expect(seenAtResolve).toEqual([])
    expect(allCommitted()).toEqual([])
    const values = await Promise.all(runs)
    expect(values.map((v) => v.i)).toEqual(Array.from({ length: 100 }, (_, i) => i))
    expect(seenAtResolve).toEqual(Array(100).fill(true))
    expect(transactions).toBe(1)
    expect(reports).toMatchObject([{ size: 100, committed: true, rolledBack: 0 }])
    expect(commits.stats()).toMatchObject({ batches: 1, commits: 1, failedBatches: 0, items: 100, largestBatch: 100 })
  })

  test('items of a batch run in order and see the writes of the ones before them', async () => {
    const { commits } = committer()
    const counts = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        commits.run((tx) => {
          tx.insert(items).values({ v: `o${i}` }).run()
          return tx.select({ n: count() }).from(items).get()!.n
        }),
      ),
    )
    expect(counts).toEqual([1, 2, 3, 4, 5])
  })

  test('an item that throws rejects alone: its writes are rolled back, the others commit', async () => {
    const { commits, reports } = committer()
    class Refused extends Error {}
    const results = await Promise.allSettled([
      commits.run((tx) => put(tx, 'a', 'a')),
      commits.run((tx) => {
        // Writes first, then refuses: the savepoint takes both writes back.
        put(tx, 'b1', null)
        put(tx, 'b2', null)
        throw new Refused('no')
      }),
      // A constraint error of a statement: also this item's alone.
      commits.run((tx) => put(tx, 'a', 'dup')),
      commits.run((tx) => put(tx, 'c', 'c')),
    ])
    expect(results[0]).toEqual({ status: 'fulfilled', value: 'a' })
    expect(results[1].status).toBe('rejected')
    expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(Refused)
    expect(results[2].status).toBe('rejected')
    expect(((results[2] as PromiseRejectedResult).reason as { code: string }).code).toBe('SQLITE_CONSTRAINT_UNIQUE')
    expect(results[3]).toEqual({ status: 'fulfilled', value: 'c' })
    expect(allCommitted()).toEqual(['a', 'c'])
    expect(transactions).toBe(1)
    expect(reports).toMatchObject([{ size: 4, committed: true, rolledBack: 2 }])
  })

  test('a failing COMMIT (deferred foreign key) rejects the whole batch, writes nothing, and the next batch works', async () => {
    const { commits, reports } = committer()
    const batch = await Promise.allSettled([
      commits.run((tx) => put(tx, 'before', 1)),
      commits.run((tx) => (tx.insert(children).values({ parentId: 999 }).run(), 2)),
      commits.run((tx) => put(tx, 'after', 3)),
    ])
    for (const result of batch) {
      expect(result.status).toBe('rejected')
      expect(((result as PromiseRejectedResult).reason as { code: string }).code).toBe('SQLITE_CONSTRAINT_FOREIGNKEY')
    }
    expect(allCommitted()).toEqual([])
    expect(reader.query('SELECT count(*) AS n FROM children').get()).toEqual({ n: 0 })
    expect(handle.sqlite.inTransaction).toBe(false)
    expect(reports).toMatchObject([{ size: 3, committed: false }])

    expect(await Promise.all([commits.run((tx) => put(tx, 'next', 'ok'))])).toEqual(['ok'])
    expect(allCommitted()).toEqual(['next'])
    expect(commits.stats()).toMatchObject({ batches: 2, commits: 1, failedBatches: 1 })
  })

  test('when the COMMIT fails, an item that failed after an earlier item wrote gets the batch error, not an answer about rolled-back state', async () => {
    const { commits } = committer()
    const refuseIfDecided = (tx: Db) => {
      if (tx.select().from(items).all().some((r) => r.v === 'decided')) throw new Error('already decided')
      return 'open'
    }
    const batch = await Promise.allSettled([
      // Fails on its own before anything in the batch wrote: what it saw was committed state.
      commits.run(() => {
        throw new Error('own failure')
      }),
      commits.run((tx) => put(tx, 'decided', 1)),
      // Refused because of the write just before it, which the failed COMMIT undoes.
      commits.run(refuseIfDecided),
      commits.run((tx) => (tx.insert(children).values({ parentId: 999 }).run(), 3)),
    ])
    const reasons = batch.map((r) => ((r as PromiseRejectedResult).reason as { code?: string; message: string }))
    expect(batch.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected', 'rejected'])
    expect(reasons[0]!.message).toBe('own failure')
    expect(reasons.slice(1).map((r) => r.code)).toEqual(['SQLITE_CONSTRAINT_FOREIGNKEY', 'SQLITE_CONSTRAINT_FOREIGNKEY', 'SQLITE_CONSTRAINT_FOREIGNKEY'])
    // Retried, it answers from what is really stored.
    expect(allCommitted()).toEqual([])
    expect(await commits.run(refuseIfDecided)).toBe('open')
  })

  test('an item that makes SQLite roll back the whole transaction fails the batch, including the items before it', async () => {
    const { commits } = committer()
    await commits.run((tx) => put(tx, 'taken', null))
    const batch = await Promise.allSettled([
      commits.run((tx) => put(tx, 'x1', 1)),
      // OR ROLLBACK: a constraint violation ends the whole transaction, not just the statement.
      commits.run(() => (handle.sqlite.query("INSERT OR ROLLBACK INTO items (v) VALUES ('taken')").run(), 2)),
      commits.run((tx) => put(tx, 'x3', 3)),
    ])
    expect(batch.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected'])
    for (const result of batch) expect(((result as PromiseRejectedResult).reason as { code: string }).code).toBe('SQLITE_CONSTRAINT_UNIQUE')
    expect(allCommitted()).toEqual(['taken'])
    expect(await commits.run((tx) => put(tx, 'x4', 'ok'))).toBe('ok')
    expect(allCommitted()).toEqual(['taken', 'x4'])
  })

  test('a failing BEGIN (another connection holds the write lock past the busy timeout) rejects the batch; the next one works', async () => {
    const { commits } = committer()
    const other = new Database(databasePath(dir))
    other.run('PRAGMA busy_timeout = 0')
    handle.sqlite.run('PRAGMA busy_timeout = 50')
    other.run('BEGIN IMMEDIATE')
    try {
      const batch = await Promise.allSettled([
        commits.run((tx) => put(tx, 'busy1', 1)),
        commits.run((tx) => put(tx, 'busy2', 2)),
      ])
      for (const result of batch) {
        expect(result.status).toBe('rejected')
        expect(((result as PromiseRejectedResult).reason as { code: string }).code).toBe('SQLITE_BUSY')
      }
    } finally {
      other.run('ROLLBACK')
      other.close()
      handle.sqlite.run('PRAGMA busy_timeout = 5000')
    }
    expect(handle.sqlite.inTransaction).toBe(false)
    expect(await commits.run((tx) => put(tx, 'free', 'ok'))).toBe('ok')
    expect(allCommitted()).toEqual(['free'])
  })

  test('the batch size is capped; the rest wait for the next batches, in order', async () => {
    const { commits, reports } = committer({ maxBatch: 10 })
    const order: number[] = []
    const values = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        commits.run((tx) => {
          order.push(i)
          return put(tx, `cap${i}`, i)
        }),
      ),
    )
    expect(values).toEqual(Array.from({ length: 25 }, (_, i) => i))
    expect(order).toEqual(values)
    expect(reports.map((r) => r.size)).toEqual([10, 10, 5])
    expect(transactions).toBe(3)
    expect(allCommitted().length).toBe(25)
  })

  test('items submitted while a batch runs (from inside a work function) go to the next batch', async () => {
    const { commits, reports } = committer()
    let inner: Promise<string> | undefined
    const outer = await commits.run((tx) => {
      put(tx, 'outer', null)
      inner = commits.run((t) => put(t, 'inner', 'inner'))
      return 'outer'
    })
    expect(outer).toBe('outer')
    expect(await inner!).toBe('inner')
    expect(reports.map((r) => r.size)).toEqual([1, 1])
  })

  test('a work function may await: what it writes after an await is in the batch, committed with it', async () => {
    const { commits, reports } = committer()
    const seenBeforeResolve: boolean[] = []
    const results = await Promise.allSettled([
      commits.run(async (tx) => {
        await Promise.resolve()
        put(tx, 'async-1', null)
        await Bun.sleep(1)
        // Not yet committed: another connection does not see it.
        seenBeforeResolve.push(committed('async-1'))
        return put(tx, 'async-2', 1)
      }),
      commits.run(async (tx) => {
        await Bun.sleep(1)
        put(tx, 'async-3', null)
        throw new Error('refused after an await')
      }),
      commits.run((tx) => put(tx, 'sync', 2)),
    ])
    expect(results[0]).toEqual({ status: 'fulfilled', value: 1 })
    expect(results[1].status).toBe('rejected')
    expect(results[2]).toEqual({ status: 'fulfilled', value: 2 })
    expect(seenBeforeResolve).toEqual([false])
    expect(allCommitted()).toEqual(['async-1', 'async-2', 'sync'])
    expect(reports).toMatchObject([{ size: 3, rolledBack: 1, committed: true }])
  })

  test('effects registered with afterCommit run after the COMMIT, only for items that committed', async () => {
    const { commits } = committer()
    const ran: string[] = []
    const results = await Promise.allSettled([
      commits.run((tx, item) => {
        item.afterCommit(() => ran.push(`kept:${committed('kept')}`))
        return put(tx, 'kept', 1)
      }),
      commits.run((tx, item) => {
        item.afterCommit(() => ran.push('rolled back'))
        put(tx, 'dropped', null)
        throw new Error('no')
      }),
    ])
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected'])
    // It ran once, and saw the row committed.
    expect(ran).toEqual(['kept:true'])

    // A batch whose COMMIT fails runs none of its effects.
    ran.length = 0
    const failed = await Promise.allSettled([
      commits.run((tx, item) => {
        item.afterCommit(() => ran.push('orphan'))
        tx.insert(children).values({ parentId: 999 }).run()
        return 1
      }),
    ])
    expect(failed[0].status).toBe('rejected')
    expect(ran).toEqual([])
  })

  test('an item is closed once its work settled: a late afterCommit is refused and never runs', async () => {
    const { commits } = committer()
    let late: ((effect: () => void) => void) | undefined
    const ran: string[] = []
    await commits.run((tx, item) => {
      late = (effect) => item.afterCommit(effect)
      return put(tx, 'closed', 1)
    })
    expect(() => late!(() => ran.push('late'))).toThrow(ClosedUnitOfWorkError)
    await commits.run((tx) => put(tx, 'after', 2))
    expect(ran).toEqual([])
  })

  test('a work that never settles (it waits for a write queued behind it) fails its batch after the timeout; the committer carries on', async () => {
    const { commits } = committer({ workTimeoutMs: 200 })
    let inner: Promise<string> | undefined
    const started = performance.now()
    const outer = commits.run(async (tx) => {
      put(tx, 'outer', null)
      inner = commits.run((t) => put(t, 'inner', 'inner'))
      return await inner
    })
    await expect(outer).rejects.toBeInstanceOf(UnitOfWorkTimeout)
    expect(performance.now() - started).toBeLessThan(2000)
    // The inner write ran in the next batch; the outer one's rows were rolled back.
    expect(await inner!).toBe('inner')
    expect(await commits.run((tx) => put(tx, 'next', 'next'))).toBe('next')
    expect(allCommitted()).toEqual(['inner', 'next'])
  })

  test('schedule: timeout batches the same way', async () => {
    const { commits, reports } = committer({ schedule: 'timeout' })
    const values = await Promise.all(Array.from({ length: 20 }, (_, i) => commits.run((tx) => put(tx, `t${i}`, i))))
    expect(values.length).toBe(20)
    expect(reports).toMatchObject([{ size: 20, committed: true }])
  })
})
