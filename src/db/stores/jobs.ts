// The durable job queue (src/jobs/store.ts), on either engine.
//
// A lease is the job's `run_after` moved to the lease's end: the job stays
// `queued`, so a runner that dies holding it (or a lease committed and then
// abandoned) leaves it due again once the lease is over.
//
// What differs stays in the engines' subclasses: SQLite's enqueue and lease
// are prepared statements (the claim path and a five-times-a-second poll,
// measured), and PostgreSQL's lease skips a job another instance holds
// (`unheld`, FOR UPDATE SKIP LOCKED; src/db/postgres/stores/jobs.ts says why
// that makes a job's effects commit exactly once).
import { and, asc, eq, gt, inArray, lte, sql } from 'drizzle-orm'
import type { Job, JobQueueStats, JobsStore } from '../../jobs/store'
import { newId } from '../../shared/ids'
import { Queries } from './scope'

export class JobsQueries extends Queries implements JobsStore {
  async enqueue(kind: string, payload: Record<string, unknown>, now: Date, dueAt: Date = now): Promise<string> {
    const id = newId('job')
    await this.db.insert(this.t.jobs).values({ id, kind, payload, status: 'queued', attempts: 0, runAfter: dueAt, createdAt: now, updatedAt: now })
    return id
  }

  async leaseDue(now: Date, leaseUntil: Date): Promise<Job | null> {
    const { jobs } = this.t
    // One statement: pick the oldest due job, then lease it. `= (subquery)`
    // rather than IN: a scalar subquery runs once, so the UPDATE can never
    // lease more than the one row it picked.
    const due = this.db
      .select({ id: jobs.id })
      .from(jobs)
      .where(and(eq(jobs.status, 'queued'), lte(jobs.runAfter, now)))
      .orderBy(asc(jobs.runAfter), asc(jobs.createdAt))
      .limit(1)
    const [job] = await this.db
      .update(jobs)
      .set({ attempts: sql`${jobs.attempts} + 1`, runAfter: leaseUntil, updatedAt: now })
      .where(sql`${jobs.id} = ${this.unheld(due)}`)
      .returning({ id: jobs.id, kind: jobs.kind, payload: jobs.payload, attempts: jobs.attempts })
    return job ?? null
  }

  /** The due-job query as the lease runs it: on an engine with one writer, as it is; PostgreSQL passes over a job another transaction holds. */
  protected unheld<Q>(due: Q): Q {
    return due
  }

  async complete(id: string, now: Date): Promise<void> {
    const { jobs } = this.t
    await this.db.update(jobs).set({ status: 'done', updatedAt: now, lastError: null }).where(eq(jobs.id, id))
  }

  async fail(id: string, failure: { attempts: number; error: string; final: boolean; retryAt: Date; now: Date }): Promise<void> {
    const { jobs } = this.t
    // Between the failed attempt's rollback and this write the job was due
    // again, so on PostgreSQL another instance may have taken it since:
    // finished it (it is `done`, and stays so: a job is not run again after it
    // succeeded), or failed it too (its count of attempts is not lowered). With
    // one runner (SQLite) neither happens, and this is a plain update.
    await this.db
      .update(jobs)
      .set({
        status: failure.final ? 'failed' : 'queued',
        attempts: sql`CASE WHEN ${jobs.attempts} > ${failure.attempts} THEN ${jobs.attempts} ELSE ${failure.attempts} END`,
        lastError: failure.error,
        runAfter: failure.retryAt,
        updatedAt: failure.now,
      })
      .where(and(eq(jobs.id, id), eq(jobs.status, 'queued')))
  }

  async queueStats(now: Date): Promise<JobQueueStats> {
    const { jobs } = this.t
    // One pass over the (status, run_after) index's queued and failed
    // entries; done jobs are never read. Each instant goes through the
    // column, so each engine gets and gives back its own kind of value.
    const queued = eq(jobs.status, 'queued')
    const due = and(queued, lte(jobs.runAfter, now))
    const [row] = await this.db
      .select({
        due: sql<number>`count(*) filter (where ${due})`.mapWith(Number),
        later: sql<number>`count(*) filter (where ${and(queued, gt(jobs.runAfter, now))})`.mapWith(Number),
        failed: sql<number>`count(*) filter (where ${eq(jobs.status, 'failed')})`.mapWith(Number),
        oldest: sql<Date | null>`min(${jobs.runAfter}) filter (where ${due})`.mapWith(jobs.runAfter),
      })
      .from(jobs)
      .where(inArray(jobs.status, ['queued', 'failed']))
    return { due: row?.due ?? 0, later: row?.later ?? 0, failed: row?.failed ?? 0, oldestDueAt: row?.oldest ?? null }
  }
}
