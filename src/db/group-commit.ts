// Group commit: many small write transactions share one fsync.
//
// With synchronous=FULL every COMMIT waits for the disk, so one transaction
// per request caps writes at the disk's fsync rate. A committer collects the
// work items submitted while the event loop is busy and runs them on the next
// macrotask in ONE `BEGIN IMMEDIATE` transaction, each inside its own
// savepoint, then commits once. Requests that arrive while a batch's COMMIT
// is waiting for the disk are read by the event loop afterwards and form the
// next batch, so the batch grows with the load by itself.
//
// What holds for every item:
// - Its promise settles only after the batch's COMMIT has returned: a value
//   means the item's writes are durable; a rejection means none of them are.
// - It sees the writes of the items before it in the batch (same transaction),
//   so running items in a batch decides exactly what running them one after
//   another would.
// - An item that throws rolls back its own savepoint and rejects alone with its
//   own error; the other items of the batch are unaffected.
// - If the transaction itself fails (BEGIN or COMMIT: SQLITE_BUSY beyond the
//   busy timeout, a full disk, an I/O error, a deferred constraint; or SQLite
//   rolling the whole transaction back under an item), the transaction is
//   rolled back and every item of the batch rejects with that error, SQLite
//   code intact, including an item that had failed on its own after an
//   earlier item's writes: it may have failed BECAUSE of them ("match is
//   decided" by a claim that is now rolled back), so its own answer would
//   describe a state that never existed. Only items that failed before any
//   item of the batch wrote keep their own error. The next batch starts afresh.
//
// A work function must be synchronous (bun:sqlite is): it runs inside the
// batch's transaction, and anything after an `await` would run after the
// COMMIT, outside any transaction. Returning a promise (an async function) is a
// type error, and at run time rolls the item back and rejects it.
//
// Side effects that must wait for the commit (waking long polls) are
// scheduled with setTimeout(0) by the work: the whole batch, COMMIT included,
// runs synchronously in one macrotask, so they fire after it.
import type { Db, Tx } from './client'

export const DEFAULT_MAX_BATCH = 256

export interface BatchReport {
  /** Items in the batch. */
  size: number
  /** Items whose savepoint was rolled back (they threw); the rest committed, if `committed`. */
  rolledBack: number
  /** Whether the batch's COMMIT succeeded. */
  committed: boolean
  /** The error that failed the whole batch, when not committed. */
  error?: unknown
  /** Wall time of the batch, BEGIN to COMMIT. */
  ms: number
}

export interface GroupCommitOptions {
  /** Most items one transaction takes; the rest wait for the next batch. Default 256. */
  maxBatch?: number
  /**
   * When a batch runs after its first item arrived: `immediate` (setImmediate,
   * after the pending I/O callbacks) or `timeout` (setTimeout 0). Default `immediate`.
   */
  schedule?: 'immediate' | 'timeout'
  /** Called after every batch, committed or not (metrics, tests). Must not throw. */
  onBatch?: (report: BatchReport) => void
}

/** A work function's result, refused at compile time when it is a promise. */
export type SyncResult<T> = T extends PromiseLike<unknown> ? never : T

export interface GroupCommitStats {
  batches: number
  commits: number
  failedBatches: number
  items: number
  largestBatch: number
}

export interface GroupCommitter {
  /** Runs `work` in the next batch's transaction; settles once that transaction has committed (or failed). */
  run<T>(work: (tx: Tx) => SyncResult<T>): Promise<T>
  stats(): GroupCommitStats
}

interface Item {
  work: (tx: Tx) => unknown
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown }

export class AsyncWorkError extends Error {
  constructor() {
    super('group commit: a work function returned a promise; it must be synchronous and must not await')
    this.name = 'AsyncWorkError'
  }
}

/** SQLite rolled the whole transaction back while an item ran (e.g. SQLITE_FULL, SQLITE_IOERR). */
class TransactionLost extends Error {
  constructor(readonly reason: unknown) {
    super('group commit: the transaction was rolled back by SQLite')
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function'
}

const SAVEPOINT = 'group_commit_item'

export function createGroupCommitter(db: Db, options: GroupCommitOptions = {}): GroupCommitter {
  const sqlite = db.$client
  const maxBatch = Math.max(1, options.maxBatch ?? DEFAULT_MAX_BATCH)
  const defer: (fn: () => void) => void = options.schedule === 'timeout' ? (fn) => setTimeout(fn, 0) : (fn) => setImmediate(fn)
  const stats: GroupCommitStats = { batches: 0, commits: 0, failedBatches: 0, items: 0, largestBatch: 0 }
  let queue: Item[] = []
  let scheduled = false

  function schedule(): void {
    if (scheduled) return
    scheduled = true
    defer(flush)
  }

  function flush(): void {
    scheduled = false
    let batch: Item[]
    if (queue.length <= maxBatch) {
      batch = queue
      queue = []
    } else {
      batch = queue.slice(0, maxBatch)
      queue = queue.slice(maxBatch)
      // The rest form the next batch, after the I/O that arrives meanwhile.
      schedule()
    }
    if (batch.length > 0) runBatch(batch)
  }

  const savepoint = sqlite.prepare(`SAVEPOINT ${SAVEPOINT}`)
  const release = sqlite.prepare(`RELEASE ${SAVEPOINT}`)
  const rollbackTo = sqlite.prepare(`ROLLBACK TO ${SAVEPOINT}`)

  function runItems(tx: Tx, batch: Item[], outcomes: Outcome[]): void {
    for (const item of batch) {
      savepoint.run()
      try {
        const value = item.work(tx)
        if (isThenable(value)) {
          // Whatever it does after its first await is outside any transaction; we can only refuse its result.
          Promise.resolve(value).catch(() => {})
          throw new AsyncWorkError()
        }
        release.run()
        outcomes.push({ ok: true, value })
      } catch (error) {
        // Some errors (SQLITE_FULL, SQLITE_IOERR, ...) make SQLite roll back the whole transaction.
        if (!sqlite.inTransaction) throw new TransactionLost(error)
        rollbackTo.run()
        release.run()
        outcomes.push({ ok: false, error })
      }
    }
  }

  function runBatch(batch: Item[]): void {
    const started = performance.now()
    const outcomes: Outcome[] = []
    stats.batches++
    stats.items += batch.length
    stats.largestBatch = Math.max(stats.largestBatch, batch.length)
    try {
      // BEGIN IMMEDIATE ... COMMIT; anything thrown out of here means nothing committed.
      db.transaction((tx) => runItems(tx, batch, outcomes), { behavior: 'immediate' })
    } catch (thrown) {
      // A failed COMMIT can leave the transaction open: close it so the next batch can begin.
      if (sqlite.inTransaction) {
        try {
          sqlite.run('ROLLBACK')
        } catch {
          // Nothing more to do; the next BEGIN will report what is wrong.
        }
      }
      stats.failedBatches++
      const lost = thrown instanceof TransactionLost ? thrown : null
      const error = lost ? lost.reason : thrown
      // Items that failed on their own while the batch had written nothing yet
      // saw only committed state: their own error stands. From the first item
      // that wrote on, every item shares the batch's error.
      const firstWrite = outcomes.findIndex((o) => o.ok)
      for (const [index, item] of batch.entries()) {
        const outcome = outcomes[index]
        const sawOnlyCommitted = firstWrite === -1 || index < firstWrite
        item.reject(outcome && !outcome.ok && sawOnlyCommitted ? outcome.error : error)
      }
      report({ size: batch.length, rolledBack: outcomes.filter((o) => !o.ok).length, committed: false, error, ms: performance.now() - started })
      return
    }
    stats.commits++
    for (const [index, item] of batch.entries()) {
      const outcome = outcomes[index]!
      if (outcome.ok) item.resolve(outcome.value)
      else item.reject(outcome.error)
    }
    report({ size: batch.length, rolledBack: outcomes.filter((o) => !o.ok).length, committed: true, ms: performance.now() - started })
  }

  function report(batchReport: BatchReport): void {
    if (!options.onBatch) return
    try {
      options.onBatch(batchReport)
    } catch {
      // A metrics hook never breaks the committer.
    }
  }

  return {
    run<T>(work: (tx: Tx) => SyncResult<T>): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        queue.push({ work, resolve: resolve as (value: unknown) => void, reject })
        schedule()
      })
    },
    stats: () => ({ ...stats }),
  }
}
