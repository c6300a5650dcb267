// What the job queue needs from the database (see src/db/storage.ts).

export interface Job {
  id: string
  kind: string
  payload: Record<string, unknown>
  /** Attempts so far, counting the one this lease is for. */
  attempts: number
}

export interface JobsStore {
  /**
   * Queues a job inside the current unit of work: it exists exactly when its
   * cause committed. Due at once, or at `runAfter` (a match deadline).
   */
  enqueue(kind: string, payload: Record<string, unknown>, now: Date, runAfter?: Date): Promise<string>
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
}
