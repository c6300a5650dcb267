// The durable job queue (src/jobs): what a lease means on either engine, and
// on PostgreSQL, with two instances polling one database, that a job is run
// by one of them at a time, that a job whose instance died is run by the
// other, and that whatever happens, its effects commit exactly once.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import { JOB_KINDS } from '../../src/jobs/queue'
import { createJobWorker, type JobHandler } from '../../src/jobs/worker'
import { jobHandlers } from '../../src/jobs/handlers'
import type { Transaction } from '../../src/db/storage'
import type { OutboxEvent } from '../../src/modules/events/store'
import { inProcessWakeups } from '../../src/modules/events/wakeups'
import { openPool } from '../../src/db/postgres/connection'
import * as postgresTables from '../../src/db/postgres/schema'
import { PostgresEventsStore } from '../../src/db/postgres/stores/events'
import { PostgresJobsStore } from '../../src/db/postgres/stores/jobs'
import type { Job } from '../../src/jobs/store'
import { createLogger } from '../../src/shared/logger'
import { createTestApp, type TestApp } from '../helpers/app'
import { describeOnEngine } from '../helpers/engine'

const a = await createTestApp()
afterAll(() => a.close())
const { db, tables } = a.peek

const KIND = JOB_KINDS.finalizeTournament
const LEASE_MS = 60_000

/** Each test's jobs carry its own marker, so a test only ever finds its own. */
let marker = 0
const nextMarker = () => `m${++marker}`

async function enqueue(app: TestApp, payload: Record<string, unknown>, at = app.clock.now()): Promise<string> {
  return app.storage.write((tx) => tx.jobs.enqueue(KIND, payload, at))
}

async function jobRow(id: string) {
  const [row] = await db.select().from(tables.jobs).where(eq(tables.jobs.id, id))
  return row!
}

/** Leases the oldest due job in a unit of work of its own, as a runner that runs it outside the transaction would. */
function lease(app: TestApp, now = app.clock.now()) {
  return app.storage.write((tx) => tx.jobs.leaseDue(now, new Date(now.getTime() + LEASE_MS)))
}

/** A handler whose one effect is a row: an event addressed to nobody, carrying the job's marker. */
const recordRun: JobHandler = async (tx, payload) => {
  // A type of its own, so that the rows it finds are this file's: not a catalogued event, hence the cast.
  await tx.events.append({ userId: null, topic: 'status', type: 'test.job_ran', data: { marker: payload.marker } } as unknown as OutboxEvent, new Date())
}

async function runsOf(mark: string): Promise<number> {
  const rows = await db.select().from(tables.outboxEvents).where(eq(tables.outboxEvents.type, 'test.job_ran'))
  return rows.filter((r) => (r.data as { marker?: string }).marker === mark).length
}

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 3000): Promise<void> {
  const deadline = performance.now() + timeoutMs
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error('condition not met in time')
    await Bun.sleep(10)
  }
}

function worker(app: TestApp, handler: JobHandler = recordRun) {
  return createJobWorker({ storage: app.storage, clock: app.clock, logger: createLogger('silent'), handlers: { ...jobHandlers(app.clock, app.services), [KIND]: handler } })
}

describe('leases', () => {
  test('the oldest due job is leased with its attempt counted; leased, it is not due again before the lease ends', async () => {
    const mark = nextMarker()
    const now = a.clock.now()
    const older = await enqueue(a, { marker: mark, n: 1 }, new Date(now.getTime() - 2000))
    const newer = await enqueue(a, { marker: mark, n: 2 }, new Date(now.getTime() - 1000))
    const first = await lease(a)
    expect(first).toEqual({ id: older, kind: KIND, payload: { marker: mark, n: 1 }, attempts: 1 })
    expect((await lease(a))?.id).toBe(newer)
    expect(await lease(a)).toBeNull()
    // A runner that died holding them: both due again once the lease is over.
    const after = new Date(now.getTime() + LEASE_MS)
    const again = await lease(a, after)
    expect(again).toMatchObject({ id: older, attempts: 2 })
    await a.storage.write(async (tx) => {
      await tx.jobs.complete(older, after)
      await tx.jobs.complete(newer, after)
    })
    expect(await lease(a, new Date(after.getTime() + 10 * LEASE_MS))).toBeNull()
    expect(await jobRow(older)).toMatchObject({ status: 'done', attempts: 2, lastError: null })
  })

  test('a failed attempt is queued again at its retry time; the last one fails the job for good', async () => {
    const now = a.clock.now()
    const id = await enqueue(a, { marker: nextMarker() })
    const leased = (await lease(a))!
    expect(leased.id).toBe(id)
    const retryAt = new Date(now.getTime() + 4000)
    await a.storage.write((tx) => tx.jobs.fail(id, { attempts: leased.attempts, error: 'boom', final: false, retryAt, now }))
    expect(await jobRow(id)).toMatchObject({ status: 'queued', attempts: 1, lastError: 'boom', runAfter: retryAt })
    expect(await lease(a, new Date(retryAt.getTime() - 1))).toBeNull()
    const second = (await lease(a, retryAt))!
    expect(second).toMatchObject({ id, attempts: 2 })
    await a.storage.write((tx) => tx.jobs.fail(id, { attempts: second.attempts, error: 'boom again', final: true, retryAt, now }))
    expect(await jobRow(id)).toMatchObject({ status: 'failed', attempts: 2, lastError: 'boom again' })
    expect(await lease(a, new Date(retryAt.getTime() + 100 * LEASE_MS))).toBeNull()
  })
})

describeOnEngine('postgres', 'two instances on one PostgreSQL database', () => {
  // Instance B: an app of its own (pool, clock, worker) on instance A's database.
  let b: TestApp
  beforeAll(async () => {
    b = await createTestApp({ env: a.databaseEnv })
  })
  afterAll(() => b.close())

  /** Runs `work` in a unit of work of `app` that holds it open until `release` is called. */
  function holding<T>(app: TestApp, work: (tx: Transaction) => Promise<T>) {
    let release!: () => void
    const released = new Promise<void>((resolve) => (release = resolve))
    let held!: (value: T) => void
    const taken = new Promise<T>((resolve) => (held = resolve))
    const done = app.storage.write(async (tx) => {
      const value = await work(tx)
      held(value)
      await released
      return value
    })
    return { taken, release, done }
  }

  test('a job one instance is running is passed over by the other, which takes the next due job', async () => {
    const mark = nextMarker()
    const now = a.clock.now()
    const first = await enqueue(a, { marker: mark }, new Date(now.getTime() - 2000))
    const second = await enqueue(a, { marker: mark }, new Date(now.getTime() - 1000))
    const runner = holding(a, async (tx) => {
      const job = await tx.jobs.leaseDue(now, new Date(now.getTime() + LEASE_MS))
      await tx.jobs.complete(job!.id, now)
      return job
    })
    expect((await runner.taken)?.id).toBe(first)
    const other = await b.storage.write(async (tx) => {
      const job = await tx.jobs.leaseDue(now, new Date(now.getTime() + LEASE_MS))
      if (job) await tx.jobs.complete(job.id, now)
      return job
    })
    expect(other?.id).toBe(second)
    // The running one is not due to B, even long after its lease would have ended.
    expect(await lease(b, new Date(now.getTime() + 10 * LEASE_MS))).toBeNull()
    runner.release()
    await runner.done
    expect((await jobRow(first)).status).toBe('done')
    expect((await jobRow(second)).status).toBe('done')
  })

  test('a job whose instance died mid-run is run by the other instance, once', async () => {
    const mark = nextMarker()
    const id = await enqueue(a, { marker: mark })
    // Instance C, which will die: its own pool, a unit of work as the engine
    // opens one, the job leased and its handler's write done, never committed.
    const pool = openPool(a.config.databaseUrl!, { max: 1 })
    let leased!: (job: Job | null) => void
    const taken = new Promise<Job | null>((resolve) => (leased = resolve))
    void pool.sql
      .begin('isolation level serializable', async (sql) => {
        const scope = { db: pool.inTransaction(sql), t: postgresTables, sql, afterCommit: () => {}, wakeups: inProcessWakeups() }
        const now = a.clock.now()
        const job = await new PostgresJobsStore(scope).leaseDue(now, new Date(now.getTime() + LEASE_MS))
        await new PostgresEventsStore(scope).append({ userId: null, topic: 'status', type: 'test.job_ran', data: { marker: job?.payload.marker } } as unknown as OutboxEvent, now)
        leased(job)
        await new Promise(() => {})
      })
      .catch(() => {})
    expect((await taken)?.id).toBe(id)
    expect(await worker(b).runDue()).toBe(0)
    // C's process is gone: its connection closes, and PostgreSQL rolls its transaction back.
    await pool.sql.end({ timeout: 0 })
    await waitFor(async () => (await b.postgres.sql`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle in transaction'`).length === 0)
    expect(await jobRow(id)).toMatchObject({ status: 'queued', attempts: 0 })
    expect(await runsOf(mark)).toBe(0)
    expect(await worker(b).runDue()).toBe(1)
    expect(await jobRow(id)).toMatchObject({ status: 'done', attempts: 1 })
    expect(await runsOf(mark)).toBe(1)
    expect(await worker(a).runDue()).toBe(0)
    expect(await runsOf(mark)).toBe(1)
  })

  test('an instance whose snapshot predates the other\'s commit does not run the job again', async () => {
    const mark = nextMarker()
    const id = await enqueue(a, { marker: mark })
    // B's unit of work reads (its snapshot is taken) before A runs and commits the job.
    let attempts = 0
    let resume!: () => void
    const resumed = new Promise<void>((resolve) => (resume = resolve))
    let started!: () => void
    const snapshotTaken = new Promise<void>((resolve) => (started = resolve))
    const late = b.storage.write(async (tx) => {
      attempts++
      await tx.games.keyHashOf('gam_none')
      started()
      await resumed
      const job = await tx.jobs.leaseDue(b.clock.now(), new Date(b.clock.now().getTime() + LEASE_MS))
      if (job) await recordRun(tx, job.payload)
      if (job) await tx.jobs.complete(job.id, b.clock.now())
      return job
    })
    await snapshotTaken
    expect(await worker(a).runDue()).toBe(1)
    resume()
    // B's lock on the row A changed fails (40001); run again, B finds nothing due.
    expect(await late).toBeNull()
    expect(attempts).toBe(2)
    expect(await runsOf(mark)).toBe(1)
    expect(await jobRow(id)).toMatchObject({ status: 'done', attempts: 1 })
  })

  test('two workers draining one queue run every job exactly once', async () => {
    const mark = nextMarker()
    const ids = await Promise.all(Array.from({ length: 30 }, (_, n) => enqueue(n % 2 ? a : b, { marker: `${mark}-${n}` })))
    const [doneA, doneB] = await Promise.all([worker(a).runDue(), worker(b).runDue()])
    expect(doneA + doneB).toBe(30)
    for (let n = 0; n < 30; n++) expect(await runsOf(`${mark}-${n}`)).toBe(1)
    const rows = await db.select().from(tables.jobs).where(and(eq(tables.jobs.status, 'done'), eq(tables.jobs.attempts, 1)))
    expect(rows.filter((r) => ids.includes(r.id))).toHaveLength(30)
  })

  test('a failure recorded late leaves a job the other instance finished done, and never lowers its attempts', async () => {
    const now = a.clock.now()
    const finished = await enqueue(a, { marker: nextMarker() })
    expect(await worker(b).runDue()).toBe(1)
    // A's attempt at it failed and rolled back before B ran it; A records that failure now.
    await a.storage.write((tx) => tx.jobs.fail(finished, { attempts: 1, error: 'late', final: false, retryAt: now, now }))
    expect(await jobRow(finished)).toMatchObject({ status: 'done', lastError: null })

    const failing = await enqueue(a, { marker: nextMarker() })
    await b.storage.write((tx) => tx.jobs.fail(failing, { attempts: 3, error: 'third', final: false, retryAt: now, now }))
    await a.storage.write((tx) => tx.jobs.fail(failing, { attempts: 2, error: 'second, recorded late', final: false, retryAt: now, now }))
    expect(await jobRow(failing)).toMatchObject({ status: 'queued', attempts: 3 })
  })
})
