// Durable jobs: enqueued inside the transaction that makes them necessary, so
// the work exists exactly when its cause committed.
import type { Db, Executor } from '../db/sqlite/connection'
import { jobs } from '../db/schema'
import type { Clock } from '../shared/clock'
import { newId } from '../shared/ids'

export const JOB_KINDS = { finalizeTournament: 'finalize_tournament' } as const
export type JobKind = (typeof JOB_KINDS)[keyof typeof JOB_KINDS]

export function enqueueJob(tx: Executor, clock: Clock, kind: JobKind, payload: Record<string, unknown>): string {
  const now = clock.now()
  const id = newId('job')
  tx.insert(jobs).values({ id, kind, payload, status: 'queued', attempts: 0, runAfter: now, createdAt: now, updatedAt: now }).run()
  return id
}

export type JobEnqueuer = (clock: Clock, kind: JobKind, payload: Record<string, unknown>) => string

/**
 * enqueueJob with its INSERT compiled once (for the result-claim path, where
 * building queries dominated the CPU). Writes the row enqueueJob writes
 * (`payload` as JSON text, times as epoch ms), on `db`'s one connection, so
 * inside whatever transaction is open there.
 */
export function createJobEnqueuer(db: Db): JobEnqueuer {
  const insert = db.$client.prepare<unknown, { id: string; kind: string; payload: string; now: number }>(
    `INSERT INTO jobs (id, kind, payload, status, attempts, run_after, last_error, created_at, updated_at)
     VALUES ($id, $kind, $payload, 'queued', 0, $now, NULL, $now, $now)`,
  )
  return (clock, kind, payload) => {
    const now = clock.now().getTime()
    const id = newId('job')
    insert.run({ id, kind, payload: JSON.stringify(payload), now })
    return id
  }
}
