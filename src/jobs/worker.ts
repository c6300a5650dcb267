// Runs due jobs. Each job runs inside one IMMEDIATE transaction together with
// the row change that marks it done, so a process that dies mid-job leaves it
// queued, and the next start (or the next poll) runs it again. Handlers must
// therefore be idempotent and synchronous (SQLite work only).
import { and, asc, eq, lte } from 'drizzle-orm'
import type { Db, Tx } from '../db/sqlite/connection'
import { jobs } from '../db/schema'
import type { Clock } from '../shared/clock'
import type { Logger } from '../shared/logger'
import type { JobKind } from './queue'

export type JobHandler = (tx: Tx, payload: Record<string, unknown>) => void

export const MAX_JOB_ATTEMPTS = 5

export interface JobWorker {
  /** Runs every job that is due now; returns how many succeeded. */
  runDue(): number
  start(pollMs: number): void
  stop(): void
}

export function createJobWorker(deps: { db: Db; clock: Clock; logger: Logger; handlers: Record<JobKind, JobHandler> }): JobWorker {
  const { db, clock, logger } = deps
  let timer: ReturnType<typeof setInterval> | undefined

  const runOne = (): 'done' | 'failed' | 'none' => {
    const job = db
      .select()
      .from(jobs)
      .where(and(eq(jobs.status, 'queued'), lte(jobs.runAfter, clock.now())))
      .orderBy(asc(jobs.runAfter), asc(jobs.createdAt))
      .limit(1)
      .get()
    if (!job) return 'none'
    const handler = deps.handlers[job.kind as JobKind]
    try {
      if (!handler) throw new Error(`no handler for job kind ${job.kind}`)
      db.transaction(
        (tx) => {
          handler(tx, job.payload)
          tx.update(jobs)
            .set({ status: 'done', attempts: job.attempts + 1, updatedAt: clock.now(), lastError: null })
            .where(eq(jobs.id, job.id))
            .run()
        },
        { behavior: 'immediate' },
      )
      logger.info('job done', { jobId: job.id, kind: job.kind })
      return 'done'
    } catch (error) {
      const attempts = job.attempts + 1
      const failed = attempts >= MAX_JOB_ATTEMPTS
      const now = clock.now()
      db.update(jobs)
        .set({
          status: failed ? 'failed' : 'queued',
          attempts,
          lastError: error instanceof Error ? error.message : String(error),
          // Back off 1 s, 2 s, 4 s, ... between attempts.
          runAfter: new Date(now.getTime() + 1000 * 2 ** (attempts - 1)),
          updatedAt: now,
        })
        .where(eq(jobs.id, job.id))
        .run()
      logger.error('job failed', { jobId: job.id, kind: job.kind, attempts, final: failed, error: String(error) })
      return 'failed'
    }
  }

  const runDue = () => {
    let done = 0
    for (let i = 0; i < 100; i++) {
      const outcome = runOne()
      if (outcome === 'none') break
      if (outcome === 'done') done++
    }
    return done
  }

  return {
    runDue,
    start(pollMs) {
      timer ??= setInterval(() => {
        try {
          runDue()
        } catch (error) {
          logger.error('job worker error', { error: String(error) })
        }
      }, pollMs)
    },
    stop() {
      if (timer) clearInterval(timer)
      timer = undefined
    },
  }
}
