// The durable job queue on PostgreSQL, shared by every instance: the queries
// of src/db/stores/jobs.ts, with the lease's row lock.
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
import type { PgSelect } from 'drizzle-orm/pg-core'
import { JobsQueries } from '../../stores/jobs'
import type { PostgresScope } from '../scope'

export class PostgresJobsStore extends JobsQueries {
  constructor(protected override readonly scope: PostgresScope) {
    super(scope)
  }

  /** The oldest due job nobody holds, locked: one that another transaction holds is passed over, not waited for. */
  protected override unheld<Q>(due: Q): Q {
    return (due as unknown as PgSelect).for('update', { skipLocked: true }) as Q
  }
}
