// The durable job queue on PostgreSQL, shared by every instance.
//
// As on SQLite, a lease is the job's `run_after` moved to the lease's end:
// the job stays `queued`, so a lease that was committed and then abandoned
// leaves the job due again once it is over. What keeps two instances off one
// job is the row lock: leaseDue takes the oldest due job FOR UPDATE SKIP
// LOCKED, so a job another transaction holds is passed over, not waited for.
//
// The worker (src/jobs/worker.ts) leases, runs and completes a job in one
// unit of work, so on PostgreSQL the lock is held until the job is done:
// - another instance's worker skips it while it runs, and takes the next due
//   job instead;
// - once it committed, the job is `done`: a worker whose snapshot is older
//   and still sees it queued fails to lock it (40001, a concurrent update)
//   and, run again, no longer finds it due;
// - when the instance dies mid-run its connection goes, PostgreSQL rolls the
//   transaction back (lease, attempt and the handler's writes with it) and
//   drops the lock: the job is due as it was, and the next poll of any
//   instance runs it.
// So a job's effects commit exactly once, together with its `done`.
import { and, asc, eq, inArray, lte, sql } from 'drizzle-orm'
import type { Job, JobQueueStats, JobsStore } from '../../../jobs/store'
import { newId } from '../../../shared/ids'
import { jobs } from '../schema'
import type { PostgresScope } from '../scope'

export class PostgresJobsStore implements JobsStore {
  constructor(private readonly scope: PostgresScope) {}

  private get db() {
    return this.scope.db
  }

  async enqueue(kind: string, payload: Record<string, unknown>, now: Date, dueAt: Date = now): Promise<string> {
    const id = newId('job')
    await this.db.insert(jobs).values({ id, kind, payload, status: 'queued', attempts: 0, runAfter: dueAt, createdAt: now, updatedAt: now })
    return id
  }

  async leaseDue(now: Date, leaseUntil: Date): Promise<Job | null> {
    // One statement: pick and lock the oldest due job nobody holds, then
    // lease it. `= (subquery)` rather than IN: a scalar subquery runs once, so
    // the UPDATE can never lease more than the one row it locked.
    const due = this.db
      .select({ id: jobs.id })
      .from(jobs)
      .where(and(eq(jobs.status, 'queued'), lte(jobs.runAfter, now)))
      .orderBy(asc(jobs.runAfter), asc(jobs.createdAt))
      .limit(1)
      .for('update', { skipLocked: true })
    const [job] = await this.db
      .update(jobs)
      .set({ attempts: sql`${jobs.attempts} + 1`, runAfter: leaseUntil, updatedAt: now })
      .where(sql`${jobs.id} = ${due}`)
      .returning({ id: jobs.id, kind: jobs.kind, payload: jobs.payload, attempts: jobs.attempts })
    return job ?? null
  }

  async complete(id: string, now: Date): Promise<void> {
    await this.db.update(jobs).set({ status: 'done', updatedAt: now, lastError: null }).where(eq(jobs.id, id))
  }

  async fail(id: string, failure: { attempts: number; error: string; final: boolean; retryAt: Date; now: Date }): Promise<void> {
    // Between the failed attempt's rollback and this write the job was due
    // again, so another instance may have taken it since: finished it (it is
    // `done`, and stays so: a job is not run again after it succeeded), or
    // failed it too (its count of attempts is not lowered). On one instance
    // neither happens and this is the SQLite store's update.
    await this.db
      .update(jobs)
      .set({
        status: failure.final ? 'failed' : 'queued',
        attempts: sql`greatest(${jobs.attempts}, ${failure.attempts})`,
        lastError: failure.error,
        runAfter: failure.retryAt,
        updatedAt: failure.now,
      })
      .where(and(eq(jobs.id, id), eq(jobs.status, 'queued')))
  }

  async queueStats(now: Date): Promise<JobQueueStats> {
    const at = sql`${now.toISOString()}::timestamptz`
    const [row] = await this.db
      .select({
        due: sql<string>`count(*) filter (where ${jobs.status} = 'queued' and ${jobs.runAfter} <= ${at})`,
        later: sql<string>`count(*) filter (where ${jobs.status} = 'queued' and ${jobs.runAfter} > ${at})`,
        failed: sql<string>`count(*) filter (where ${jobs.status} = 'failed')`,
        oldest: sql<Date | string | null>`min(${jobs.runAfter}) filter (where ${jobs.status} = 'queued' and ${jobs.runAfter} <= ${at})`,
      })
      .from(jobs)
      .where(inArray(jobs.status, ['queued', 'failed']))
    const oldest = row?.oldest ?? null
    return { due: Number(row?.due ?? 0), later: Number(row?.later ?? 0), failed: Number(row?.failed ?? 0), oldestDueAt: oldest === null ? null : new Date(oldest) }
  }
}
