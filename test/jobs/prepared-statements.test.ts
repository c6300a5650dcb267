// SQLite runs the job queue's insert and lease, and the outbox's newest seq,
// as statements prepared once per connection (hot paths, measured:
// src/db/sqlite/stores/jobs.ts, events.ts); PostgreSQL runs the queries
// written once for both engines (src/db/stores). The invariant: the two say
// the same thing. Here the shared queries run on SQLite beside the prepared
// ones, each in a unit of work that is then rolled back, from the same rows:
// the same rows stored, the same jobs leased in the same order with the same
// attempts, the same newest seq. A prepared statement that drifts from the
// shared query fails here rather than on one engine only.
import { afterAll, expect, test } from 'bun:test'
import { asc } from 'drizzle-orm'
import type { Transaction } from '../../src/db/storage'
import { EventsQueries } from '../../src/db/stores/events'
import { JobsQueries } from '../../src/db/stores/jobs'
import type { QueryScope } from '../../src/db/stores/scope'
import { JOB_KINDS } from '../../src/jobs/queue'
import type { JobsStore } from '../../src/jobs/store'
import type { OutboxEvent } from '../../src/modules/events/store'
import { createTestApp } from '../helpers/app'
import { describeOnEngine } from '../helpers/engine'

const a = await createTestApp()
afterAll(() => a.close())
const { db, tables } = a.peek

const SECOND = 1000

class RolledBack<T> extends Error {
  constructor(readonly value: T) {
    super('rolled back on purpose')
  }
}

/** What `work` returns inside a unit of work that is then rolled back, so the next one starts from the same rows. */
async function andRollBack<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
  try {
    await a.storage.write(async (tx) => {
      throw new RolledBack(await work(tx))
    })
  } catch (error) {
    if (error instanceof RolledBack) return error.value as T
    throw error
  }
  throw new Error('unreachable')
}

/** The queries written once, on the same unit of work as SQLite's store `tx.jobs`. */
function sharedJobs(tx: Transaction): JobsStore {
  return new JobsQueries((tx.jobs as unknown as { scope: QueryScope }).scope)
}

/** Queues jobs due in the past, now and later through `queue`, leases until none is due through `jobs`, and says what happened, ids as their order of queueing. */
async function run(queue: JobsStore, jobs: JobsStore) {
  const now = a.clock.now()
  const at = (s: number) => new Date(now.getTime() + s * SECOND)
  const ids = [
    await queue.enqueue(JOB_KINDS.finalizeTournament, { n: 0 }, now, at(-2)),
    await queue.enqueue(JOB_KINDS.finalizeTournament, { n: 1, nested: { list: [1, 'two'] } }, now),
    await queue.enqueue(JOB_KINDS.finalizeTournament, { n: 2 }, at(-1), at(-1)),
    await queue.enqueue(JOB_KINDS.finalizeTournament, { n: 3 }, now, at(60)),
  ]
  const name = (id: string) => ids.indexOf(id)
  const leased: unknown[] = []
  for (let job = await jobs.leaseDue(now, at(300)); job !== null; job = await jobs.leaseDue(now, at(300))) {
    leased.push({ ...job, id: name(job.id) })
    if (leased.length > ids.length) throw new Error('a job was leased twice')
  }
  const rows = await db.select().from(tables.jobs).orderBy(asc(tables.jobs.createdAt), asc(tables.jobs.runAfter))
  return { leased, rows: rows.map((row) => ({ ...row, id: name(row.id) })) }
}

describeOnEngine('sqlite', "SQLite's prepared statements mean what the queries written once mean", () => {
  test('a job queued and leased: the same rows, the same leases in the same order, the same attempts', async () => {
    const prepared = await andRollBack((tx) => run(tx.jobs, tx.jobs))
    // Three were due, oldest due first; the fourth is for later.
    expect(prepared.leased).toMatchObject([
      { id: 0, attempts: 1, payload: { n: 0 } },
      { id: 2, attempts: 1 },
      { id: 1, attempts: 1, payload: { n: 1, nested: { list: [1, 'two'] } } },
    ])
    expect(await andRollBack((tx) => run(sharedJobs(tx), sharedJobs(tx)))).toEqual(prepared)
    // Each half on its own: what one stores, the other leases alike.
    expect(await andRollBack((tx) => run(tx.jobs, sharedJobs(tx)))).toEqual(prepared)
    expect(await andRollBack((tx) => run(sharedJobs(tx), tx.jobs))).toEqual(prepared)
  })

  test('the newest seq: the same before and after an append', async () => {
    const newest = (tx: Transaction) => Promise.all([tx.events.newestSeq(), EventsQueries.prototype.newestSeq.call(tx.events as EventsQueries)])
    const [before, after] = await andRollBack(async (tx) => {
      const first = await newest(tx)
      await tx.events.append({ userId: null, topic: 'status', type: 'test.newest', data: {} } as unknown as OutboxEvent, a.clock.now())
      return [first, await newest(tx)]
    })
    expect(before[0]).toBe(before[1])
    expect(after[0]).toBe(after[1])
    expect(after[0]).toBeGreaterThan(before[0])
  })
})
