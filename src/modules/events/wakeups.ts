// Long-poll wake-ups (cross-request state). A poll of a user's events waits
// on that user; a committed write that appended an event for the user wakes
// it, and the poll reads again. A wake-up is only a hint: the database is the
// source of truth, a poll re-reads on a timer too (events written by another
// process wake no one here), and a spurious wake-up finds nothing and waits on.
//
// In-process today. With several instances this must become cross-instance
// (PostgreSQL LISTEN/NOTIFY), or a poll on instance A would hear of an event
// written on instance B only at its next re-read.

export interface EventWakeups {
  /** Wakes the polls waiting on `userId` (called after the commit that wrote their events). */
  wake(userId: string): void
  /**
   * Resolves after `ms`, on a wake-up for `userId`, or when `signal` aborts;
   * whichever comes first. With the time of the wake-up (performance.now(),
   * taken in the step that woke it: for an append of this process, its
   * commit's), or null when it was not woken.
   */
  wait(userId: string, ms: number, signal?: AbortSignal): Promise<number | null>
  /** Wakes every waiting poll (shutdown: they answer at once instead of holding the stop). */
  wakeAll(): void
  /** Polls waiting now (for /metrics). */
  waiting(): number
  /** Calls `listener` on every wake-up from now on: with the user, or null for wakeAll. */
  observe(listener: (userId: string | null) => void): void
}

export function inProcessWakeups(): EventWakeups {
  const waiters = new Map<string, Set<(at: number | null) => void>>()
  const listeners: ((userId: string | null) => void)[] = []
  let waiting = 0
  return {
    waiting: () => waiting,
    observe(listener) {
      listeners.push(listener)
    },
    wake(userId) {
      for (const listener of listeners) listener(userId)
      const at = performance.now()
      for (const wake of waiters.get(userId) ?? []) wake(at)
    },
    wakeAll() {
      for (const listener of listeners) listener(null)
      for (const set of waiters.values()) for (const wake of [...set]) wake(null)
    },
    wait(userId, ms, signal) {
      return new Promise((resolve) => {
        const set = waiters.get(userId) ?? new Set<(at: number | null) => void>()
        waiters.set(userId, set)
        const done = (at: number | null) => {
          if (!set.delete(done)) return
          waiting--
          clearTimeout(timer)
          if (set.size === 0) waiters.delete(userId)
          signal?.removeEventListener('abort', aborted)
          resolve(at)
        }
        const aborted = () => done(null)
        const timer = setTimeout(aborted, ms)
        set.add(done)
        waiting++
        signal?.addEventListener('abort', aborted)
      })
    },
  }
}
