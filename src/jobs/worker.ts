// Runs due jobs. Each job runs in one unit of work (storage.write) that leases
// it, runs its handler with the same `tx` and marks it done, so a process that
// dies mid-job leaves nothing of that attempt: the next start (or the next
// poll) runs it again at once. Handlers must therefore be idempotent, and do
// storage work only (they run inside a transaction: nothing slow).
//
// A handler that throws rolls its unit of work back (lease, attempt, its own
// writes); a second write then records the failed attempt: retried with
// backoff (1 s, 2 s, 4 s, ...), failed for good after MAX_JOB_ATTEMPTS.
//
// What the lease is for: inside one unit of work it is never seen by anyone
// else. It matters once a job is taken outside the transaction that runs it:
// a handler that must run outside a transaction (a network call: lease and
// commit, call, then complete in a second write), or several instances
// polling one database (PostgreSQL), where a leased job is not due to the
// others and a runner that died holding it leaves it due again when the
// lease ends, instead of stuck forever.
import type { Storage, Transaction, WriteOptions } from '../db/storage'
import type { Clock } from '../shared/clock'
import { describeError } from '../shared/errors'
import type { Logger } from '../shared/logger'
import type { JobKind } from './queue'
import type { Job } from './store'

export type JobHandler = (tx: Transaction, payload: Record<string, unknown>) => Promise<void>

export const MAX_JOB_ATTEMPTS = 5

/** How long a runner holds a job it took; longer than any handler runs. */
export const JOB_LEASE_MS = 5 * 60_000

/**
 * How a job's unit of work runs: with row locks (READ COMMITTED on
 * PostgreSQL). Every job reads what it decides on locked (the tournament, the
 * match) and then fresh, so it sees a claim that committed while it waited; a
 * SERIALIZABLE snapshot taken before the lock would miss it (a settle job
 * disputing a match with one claim; a last decision of a round robin unseen by
 * another, the tournament left running).
 */
export const JOB_WRITE_OPTIONS: WriteOptions = { rowLocks: true }

/** Most jobs one runDue runs, so a flood of jobs cannot hold the worker forever. */
const MAX_JOBS_PER_RUN = 100

/** An error as the log shows it: a storage error with the engine's own words, the operator's clue (disk full, I/O error). */

export interface JobWorker {
  /** Runs every job that is due now; resolves with how many succeeded. */
  runDue(): Promise<number>
}

export function createJobWorker(deps: { storage: Storage; clock: Clock; logger: Logger; handlers: Record<JobKind, JobHandler> }): JobWorker {
  const { storage, clock, logger } = deps

  const runOne = async (): Promise<'done' | 'failed' | 'none'> => {
    // The job this attempt leased, known here even when its unit of work rolled back.
    let leased: Job | null = null
    try {
      const job = await storage.write(async (tx) => {
        const now = clock.now()
        leased = await tx.jobs.leaseDue(now, new Date(now.getTime() + JOB_LEASE_MS))
        if (!leased) return null
        const handler = deps.handlers[leased.kind as JobKind]
        if (!handler) throw new Error(`no handler for job kind ${leased.kind}`)
        await handler(tx, leased.payload)
        await tx.jobs.complete(leased.id, clock.now())
        return leased
      }, JOB_WRITE_OPTIONS)
      if (!job) return 'none'
      logger.info('job done', { jobId: job.id, kind: job.kind })
      return 'done'
    } catch (error) {
      const job = leased as Job | null
      if (!job) throw error
      const { attempts } = job
      const final = attempts >= MAX_JOB_ATTEMPTS
      const now = clock.now()
      await storage.write((tx) =>
        tx.jobs.fail(job.id, {
          attempts,
          error: error instanceof Error ? error.message : String(error),
          final,
          // Back off 1 s, 2 s, 4 s, ... between attempts.
          retryAt: new Date(now.getTime() + 1000 * 2 ** (attempts - 1)),
          now,
        }),
      )
      logger.error('job failed', { jobId: job.id, kind: job.kind, attempts, final, error: describeError(error) })
      return 'failed'
    }
  }

  const runDue = async () => {
    let done = 0
    for (let i = 0; i < MAX_JOBS_PER_RUN; i++) {
      const outcome = await runOne()
      if (outcome === 'none') break
      if (outcome === 'done') done++
    }
    return done
  }

  return { runDue }
}
