// The durable job queue on SQLite. A lease is the job's `run_after` moved to
// the lease's end: the job stays `queued`, so a runner that dies holding it
// leaves it due again once the lease is over.
import { eq } from 'drizzle-orm'
import { jobs } from '../../schema'
import type { Job, JobQueueStats, JobsStore } from '../../../jobs/store'
import { newId } from '../../../shared/ids'
import { insertInto, perConnection } from '../connection'
import type { SqliteScope } from '../storage'

// The insert is on the result-claim path, where building it cost more CPU
// than running it. The lease runs five times a second whether or not a job
// is due: built by Drizzle each time, in code too cold to be compiled, it
// cost a few per cent of a core under any load (profile of a caught-up poll).
const statements = perConnection((sqlite) => ({
  insert: sqlite.prepare<unknown, { id: string; kind: string; payload: string; status: 'queued'; attempts: 0; runAfter: number; createdAt: number; updatedAt: number }>(
    insertInto(jobs, ['id', 'kind', 'payload', 'status', 'attempts', 'runAfter', 'createdAt', 'updatedAt']),
  ),
  // The oldest due job, leased in the same statement (the unit of work is
  // the write connection's transaction: no one else writes in between).
  lease: sqlite.prepare<{ id: string; kind: string; payload: string; attempts: number }, { now: number; leaseUntil: number }>(
    `UPDATE jobs SET attempts = attempts + 1, run_after = $leaseUntil, updated_at = $now
     WHERE id = (SELECT id FROM jobs WHERE status = 'queued' AND run_after <= $now ORDER BY run_after, created_at LIMIT 1)
     RETURNING id, kind, payload, attempts`,
  ),
}))

export class SqliteJobsStore implements JobsStore {
  constructor(private readonly scope: SqliteScope) {}

  async enqueue(kind: string, payload: Record<string, unknown>, now: Date, dueAt: Date = now): Promise<string> {
    const id = newId('job')
    const at = now.getTime()
    statements(this.scope.handle.sqlite).insert.run({ id, kind, payload: JSON.stringify(payload), status: 'queued', attempts: 0, runAfter: dueAt.getTime(), createdAt: at, updatedAt: at })
    return id
  }

  async leaseDue(now: Date, leaseUntil: Date): Promise<Job | null> {
    const job = statements(this.scope.handle.sqlite).lease.get({ now: now.getTime(), leaseUntil: leaseUntil.getTime() })
    if (!job) return null
    return { id: job.id, kind: job.kind, payload: JSON.parse(job.payload) as Record<string, unknown>, attempts: job.attempts }
  }

  async complete(id: string, now: Date): Promise<void> {
    this.scope.handle.db.update(jobs).set({ status: 'done', updatedAt: now, lastError: null }).where(eq(jobs.id, id)).run()
  }

  async fail(id: string, failure: { attempts: number; error: string; final: boolean; retryAt: Date; now: Date }): Promise<void> {
    this.scope.handle.db
      .update(jobs)
      .set({ status: failure.final ? 'failed' : 'queued', attempts: failure.attempts, lastError: failure.error, runAfter: failure.retryAt, updatedAt: failure.now })
      .where(eq(jobs.id, id))
      .run()
  }

  async queueStats(now: Date): Promise<JobQueueStats> {
    // Both halves walk the (status, run_after) index; done jobs are never read.
    const at = now.getTime()
    const row = this.scope.handle.sqlite
      .query<{ due: number; later: number; failed: number; oldest: number | null }, [number, number, number]>(
        `SELECT (SELECT count(*) FROM jobs WHERE status = 'queued' AND run_after <= ?1) AS due,
                (SELECT count(*) FROM jobs WHERE status = 'queued' AND run_after > ?2) AS later,
                (SELECT count(*) FROM jobs WHERE status = 'failed') AS failed,
                (SELECT min(run_after) FROM jobs WHERE status = 'queued' AND run_after <= ?3) AS oldest`,
      )
      .get(at, at, at)
    return { due: row?.due ?? 0, later: row?.later ?? 0, failed: row?.failed ?? 0, oldestDueAt: row?.oldest == null ? null : new Date(row.oldest) }
  }
}
