// What the job queue needs from the database (see src/db/storage.ts).

export interface Job {
  id: string
  kind: string
  payload: Record<string, unknown>
  /** Attempts so far, counting the one this lease is for. */
  attempts: number
}

/** The queue at one instant (for /metrics). */
export interface JobQueueStats {
  /** Queued and due now, waiting for a worker. */
  due: number
  /** Queued for later: retries after a failure, deadlines, and jobs leased right now (a lease moves run_after forward). */
  later: number
  /** Failed for good (kept for the operator). */
  failed: number
  /** When the job that has waited longest became due; null when none is due. */
  oldestDueAt: Date | null
}

export interface JobsStore {
  /** Queues a job, due at `dueAt` (default at once), inside the current unit of work: it exists exactly when its cause committed. */
  enqueue(kind: string, payload: Record<string, unknown>, now: Date, dueAt?: Date): Promise<string>
  /**
   * Leases the oldest due job until `leaseUntil` and counts the attempt; null
   * when none is due. A leased job is not due again before its lease ends, so
   * a runner that died with it leaves it to the next runner after the lease.
   */
  leaseDue(now: Date, leaseUntil: Date): Promise<Job | null>
  /** Marks a leased job done. */
  complete(id: string, now: Date): Promise<void>
  /**
   * Records a failed attempt (the `attempts`-th): queued again at `retryAt`,
   * or failed for good when `final`. Written in its own unit of work, after
   * the failed one rolled back.
   */
  fail(id: string, failure: { attempts: number; error: string; final: boolean; retryAt: Date; now: Date }): Promise<void>
  /** How many jobs are due, queued for later and failed, and since when the oldest due one waits (one indexed query). */
  queueStats(now: Date): Promise<JobQueueStats>
}
