// The durable job queue on SQLite: the queries of src/db/stores/jobs.ts, with
// the two on hot paths as statements prepared once per connection.
import { jobs } from '../../schema'
import type { Job } from '../../../jobs/store'
import { newId } from '../../../shared/ids'
import { JobsQueries } from '../../stores/jobs'
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

export class SqliteJobsStore extends JobsQueries {
  constructor(protected override readonly scope: SqliteScope) {
    super(scope)
  }

  override async enqueue(kind: string, payload: Record<string, unknown>, now: Date, dueAt: Date = now): Promise<string> {
    const id = newId('job')
    const at = now.getTime()
    statements(this.scope.handle.sqlite).insert.run({ id, kind, payload: JSON.stringify(payload), status: 'queued', attempts: 0, runAfter: dueAt.getTime(), createdAt: at, updatedAt: at })
    return id
  }

  override async leaseDue(now: Date, leaseUntil: Date): Promise<Job | null> {
    const job = statements(this.scope.handle.sqlite).lease.get({ now: now.getTime(), leaseUntil: leaseUntil.getTime() })
    if (!job) return null
    return { id: job.id, kind: job.kind, payload: JSON.parse(job.payload) as Record<string, unknown>, attempts: job.attempts }
  }
}
