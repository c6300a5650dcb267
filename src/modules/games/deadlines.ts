// Match deadlines (contract §9): a tournament created with
// `options.matchDeadlineS` gives each match that deadline when it starts
// running, and a durable job due at that time settles it if it still runs
// (src/modules/matches/deadlines.ts). The job is enqueued in the unit of work
// that makes the match running, so it exists exactly when the match does.
import type { Transaction } from '../../db/storage'
import { JOB_KINDS } from '../../jobs/queue'

/** The deadline of a match starting at `now`, or null without `seconds`. */
export function deadlineFrom(now: Date, seconds: number | null | undefined): Date | null {
  return seconds ? new Date(now.getTime() + seconds * 1000) : null
}

/**
 * Queues the settle job of a match that runs until `deadline`. The payload
 * names the deadline: a job whose match has another deadline by then (a
 * correction seated a new player and restarted the clock) does nothing.
 */
export async function scheduleSettle(tx: Transaction, matchId: string, deadline: Date | null, now: Date): Promise<void> {
  if (deadline === null) return
  await tx.jobs.enqueue(JOB_KINDS.settleMatchDeadline, { matchId, deadline: deadline.getTime() }, now, deadline)
}
