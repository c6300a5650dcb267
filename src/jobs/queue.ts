// Durable jobs: enqueued inside the transaction that makes them necessary, so
// the work exists exactly when its cause committed.
import type { Executor } from '../db/client'
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
