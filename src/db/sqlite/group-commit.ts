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
// - Its promise settles only after the batch's COMMIT has returned (with
//   `durability`, after its sync too): a value means the item's writes are
//   durable; a rejection means none of them are, except DurabilityLost (below),
//   whose writes may or may not be on disk.
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
// A work function may await (stores are async so that another engine fits
// behind them), but the batch's transaction stays open until it settles, so
// it must await only storage work: anything slow (hashing, custody, the
// network) belongs before or after the write. Items run strictly one after
// another; the next batch begins only after this one's COMMIT (with
// `durability`, after its sync).
//
// Side effects that must wait for the commit (waking long polls) are
// registered with the item's `afterCommit`: they run after the batch
// committed, only for items that did not roll back, never on failure.
//
// The fsync off the event loop (`durability`): the connection commits with
// synchronous=NORMAL (the WAL frames are written, not synced) and
// `durability.sync` syncs the WAL file on a thread. A batch's items are
// answered and its effects run only once that sync returned; meanwhile the
// loop serves requests, and what arrives forms the next batch, which begins
// once the sync returned: at most one commit at a time is visible and not yet
// durable, and the write lock is never held across the wait (another
// connection's BEGIN in this process would block the loop in SQLite's busy
// handler, and the sync's callback could not run to release it). `beforeCommit` runs just before each such
// COMMIT and `afterSync` just after its sync returned, before anything is
// answered (the storage holds its read connection's snapshot between them:
// docs/decisions.md, "The fsync off the event loop"). A sync that fails
// cannot be taken back (the batch is committed, and after a failed fsync the
// page cache no longer says what is on disk): every item of that batch and
// every later one rejects with DurabilityLost (an SQLITE_IOERR, answered 503),
// the committer refuses all further work, and `onSyncFailure` is told once.
//
// An item is open while its work runs: once the work settled, `afterCommit`
// (and the stores of a storage transaction) refuse to be used, so a store call
// the work forgot to await cannot land in the next item's savepoint or after
// the COMMIT. A work function that never settles (it awaited something that
// never ends, or started another write and waits for it: that one is queued
// behind this batch) would hold the write connection for good: after
// `workTimeoutMs` the batch is rolled back and every item of it fails with
// UnitOfWorkTimeout, and the committer carries on.
import type { Db } from './connection'
import { ClosedUnitOfWorkError } from '../errors'

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
  /** Wall time of the batch, BEGIN to COMMIT (with `durability`: to the end of its sync). */
  ms: number
}

/** Where a batch's COMMIT is made durable off the event loop (see the header). */
export interface Durability {
  /** Makes every commit so far durable (fsync of the WAL on a thread); rejects if it cannot. */
  sync(): Promise<void>
  /** Runs just before a COMMIT that will not be durable until its sync returns. Must not throw. */
  beforeCommit?(): void
  /** Runs once that sync returned, before the batch's items are answered. Must not throw. */
  afterSync?(): void
  /** Told once, with the sync's error, when a sync failed (the process should stop). Must not throw. */
  onSyncFailure?(error: unknown): void
  /**
   * Whether the WAL should be checkpointed before the next batch begins (no
   * commit is pending then and no write transaction open): only then can a
   * checkpoint copy every frame, and the WAL start again from its beginning.
   */
  checkpointDue?(): boolean
  /** Checkpoints the WAL (nothing is pending then). May throw: the batch then fails with its error. */
  checkpoint?(): void
}

/**
 * What every unit of work rejects with once a sync of a committed batch failed:
 * its outcome on disk is unknown, and nothing is stored any more by this
 * process. Its SQLite code maps to StorageUnavailableError (a 503).
 */
export class DurabilityLost extends Error {
  override readonly name = 'DurabilityLost'
  readonly code = 'SQLITE_IOERR_FSYNC'
  constructor(cause: unknown) {
    super('the fsync of a committed batch failed: what it wrote may not be on disk, and this process stores nothing more', { cause })
  }
}

export interface GroupCommitOptions {
  /** Most items one transaction takes; the rest wait for the next batch. Default 256. */
  maxBatch?: number
  /** How long one batch's work may take before the batch is rolled back and fails (default 10 s). */
  workTimeoutMs?: number
  /**
   * When a batch runs after its first item arrived: `immediate` (setImmediate,
   * after the pending I/O callbacks) or `timeout` (setTimeout 0). Default `immediate`.
   */
  schedule?: 'immediate' | 'timeout'
  /** Turns what an item rejects with into what its caller sees (engine errors mapped); identity by default. */
  mapError?: (error: unknown) => unknown
  /** Called after every batch, committed or not (metrics, tests). Must not throw. */
  onBatch?: (report: BatchReport) => void
  /**
   * Commit without waiting for the disk and sync on a thread (see the header).
   * Without it COMMIT itself waits for the disk (synchronous=FULL).
   */
  durability?: Durability
}

/** What a work item is handed besides the connection. */
export interface ItemContext {
  /** Runs `effect` once the batch has committed, if this item did not roll back. Only while the item is open. */
  afterCommit(effect: () => void): void
  /** True while the item's work runs; false once it settled. */
  readonly open: boolean
}

/** A store call or `afterCommit` after the unit of work it belongs to has settled. */
/** A batch whose work did not settle in time; everything in it was rolled back. */
export class UnitOfWorkTimeout extends Error {
  override readonly name = 'UnitOfWorkTimeout'
  constructor(ms: number) {
    super(`a unit of work did not settle within ${ms} ms (did it start another write, or await something slow?); its batch was rolled back`)
  }
}

export const DEFAULT_WORK_TIMEOUT_MS = 10_000

/** One item of work: runs inside the batch's transaction, on the write connection. */
export type Work<T> = (db: Db, item: ItemContext) => T | Promise<T>

export interface GroupCommitStats {
  batches: number
  /** Syncs of `durability` that returned (each covers every commit before it). */
  syncs: number
  commits: number
  failedBatches: number
  items: number
  largestBatch: number
}

export interface GroupCommitter {
  /** Runs `work` in the next batch's transaction; settles once that transaction has committed (or failed). */
  run<T>(work: Work<T>): Promise<T>
  stats(): GroupCommitStats
  /** Resolves once every batch committed so far is answered (its sync, if any, returned or failed). */
  settled(): Promise<void>
}

interface Item extends ItemContext {
  open: boolean
  work: Work<unknown>
  effects: (() => void)[] | undefined
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown }

/** SQLite rolled the whole transaction back while an item ran (e.g. SQLITE_FULL, SQLITE_IOERR). */
class TransactionLost extends Error {
  constructor(readonly reason: unknown) {
    super('group commit: the transaction was rolled back by SQLite')
  }
}

const SAVEPOINT = 'group_commit_item'

export function createGroupCommitter(db: Db, options: GroupCommitOptions = {}): GroupCommitter {
  const sqlite = db.$client
  const maxBatch = Math.max(1, options.maxBatch ?? DEFAULT_MAX_BATCH)
  const defer: (fn: () => void) => void = options.schedule === 'timeout' ? (fn) => setTimeout(fn, 0) : (fn) => setImmediate(fn)
  const stats: GroupCommitStats = { batches: 0, syncs: 0, commits: 0, failedBatches: 0, items: 0, largestBatch: 0 }
  const mapError = options.mapError ?? ((error: unknown) => error)
  let queue: Item[] = []
  let scheduled = false
  // A batch awaits its items; the next one waits for its COMMIT.
  let running = false
  const durability = options.durability
  /** The last committed batch's sync and answers (with `durability`); never rejects. */
  let syncing: Promise<void> = Promise.resolve()
  /** Set for good once a sync failed. */
  let lost: DurabilityLost | undefined

  function schedule(): void {
    if (scheduled || running) return
    scheduled = true
    defer(flush)
  }

  function flush(): void {
    scheduled = false
    if (running || queue.length === 0) return
    running = true
    // With `durability` the next batch begins once the last one's sync
    // returned, and takes everything that arrived meanwhile.
    if (durability) void syncing.then(start)
    else start()
  }

  function start(): void {
    if (queue.length === 0) {
      running = false
      return
    }
    let batch: Item[]
    if (queue.length <= maxBatch) {
      batch = queue
      queue = []
    } else {
      batch = queue.slice(0, maxBatch)
      queue = queue.slice(maxBatch)
    }
    void runBatch(batch).finally(() => {
      running = false
      // What arrived meanwhile (or did not fit) forms the next batch, after the pending I/O.
      if (queue.length > 0) schedule()
    })
  }

  const workTimeoutMs = options.workTimeoutMs ?? DEFAULT_WORK_TIMEOUT_MS

  /** One timer per batch (not per item): its promise rejects when the batch has run too long. */
  function batchTimeout(): { promise: Promise<never>; clear(): void } {
    let fail!: (error: unknown) => void
    const promise = new Promise<never>((_, reject) => {
      fail = reject
    })
    promise.catch(() => {})
    const timer = setTimeout(() => fail(new UnitOfWorkTimeout(workTimeoutMs)), workTimeoutMs)
    return { promise, clear: () => clearTimeout(timer) }
  }

  const begin = sqlite.prepare('BEGIN IMMEDIATE')
  const commit = sqlite.prepare('COMMIT')
  const savepoint = sqlite.prepare(`SAVEPOINT ${SAVEPOINT}`)
  const release = sqlite.prepare(`RELEASE ${SAVEPOINT}`)
  const rollbackTo = sqlite.prepare(`ROLLBACK TO ${SAVEPOINT}`)

  async function runItems(batch: Item[], outcomes: Outcome[], timedOut: Promise<never>): Promise<void> {
    for (const item of batch) {
      savepoint.run()
      item.open = true
      try {
        let value = item.work(db, item)
        if (value instanceof Promise) {
          // A work that never settles must not hold the batch forever.
          value.catch(() => {})
          value = await Promise.race([value, timedOut])
        }
        item.open = false
        release.run()
        outcomes.push({ ok: true, value })
      } catch (error) {
        item.open = false
        if (error instanceof UnitOfWorkTimeout) throw error
        // Some errors (SQLITE_FULL, SQLITE_IOERR, ...) make SQLite roll back the whole transaction.
        if (!sqlite.inTransaction) throw new TransactionLost(error)
        rollbackTo.run()
        release.run()
        item.effects = undefined
        outcomes.push({ ok: false, error })
      }
    }
  }

  async function runBatch(batch: Item[]): Promise<void> {
    const started = performance.now()
    const outcomes: Outcome[] = []
    stats.batches++
    stats.items += batch.length
    stats.largestBatch = Math.max(stats.largestBatch, batch.length)
    const timeout = batchTimeout()
    let committing = false
    try {
      // With `durability` the last batch's sync has returned (flush): nothing is pending.
      if (lost) throw lost
      if (durability?.checkpointDue?.()) durability.checkpoint?.()
      // BEGIN IMMEDIATE ... COMMIT; anything thrown out of here means nothing committed (but see the catch).
      begin.run()
      await runItems(batch, outcomes, timeout.promise)
      durability?.beforeCommit?.()
      committing = true
      commit.run()
    } catch (thrown) {
      // A failed COMMIT can leave the transaction open: close it so the next batch can begin.
      const open = sqlite.inTransaction
      if (open) {
        try {
          sqlite.run('ROLLBACK')
        } catch {
          // Nothing more to do; the next BEGIN will report what is wrong.
        }
      }
      if (durability && committing) {
        // A COMMIT that failed with its transaction closed may have committed
        // (an automatic checkpoint after it failed, SQLITE_IOERR): its items
        // are refused as before, and whatever it wrote is synced like any
        // commit (or the committer stops), so no later commit can be answered
        // on top of frames that never reached the disk.
        if (open) durability.afterSync?.()
        else syncing = syncAfterFailedCommit()
      }
      timeout.clear()
      stats.failedBatches++
      const rolledBackBySqlite = thrown instanceof TransactionLost ? thrown : null
      const error = rolledBackBySqlite ? rolledBackBySqlite.reason : thrown
      // Items that failed on their own while the batch had written nothing yet
      // saw only committed state: their own error stands. From the first item
      // that wrote on, every item shares the batch's error.
      const firstWrite = outcomes.findIndex((o) => o.ok)
      for (const [index, item] of batch.entries()) {
        const outcome = outcomes[index]
        const sawOnlyCommitted = firstWrite === -1 || index < firstWrite
        item.reject(mapError(outcome && !outcome.ok && sawOnlyCommitted ? outcome.error : error))
      }
      report({ size: batch.length, rolledBack: outcomes.filter((o) => !o.ok).length, committed: false, error, ms: performance.now() - started })
      return
    }
    timeout.clear()
    stats.commits++
    if (!durability) {
      answer(batch, outcomes, started)
      return
    }
    // Committed, not yet durable: the next batch may run its work meanwhile (see the header).
    syncing = durability.sync().then(
      () => {
        stats.syncs++
        durability.afterSync?.()
        answer(batch, outcomes, started)
      },
      (error: unknown) => {
        const failure = loseDurability(error)
        stats.failedBatches++
        for (const item of batch) item.reject(mapError(failure))
        report({ size: batch.length, rolledBack: outcomes.filter((o) => !o.ok).length, committed: false, error: failure, ms: performance.now() - started })
      },
    )
  }

  /** The sync after a COMMIT that failed with its transaction closed (see runBatch). Never rejects. */
  function syncAfterFailedCommit(): Promise<void> {
    return durability!.sync().then(
      () => {
        stats.syncs++
        durability!.afterSync?.()
      },
      (error: unknown) => {
        loseDurability(error)
      },
    )
  }

  /** A sync failed: the committer stops for good (see the header). */
  function loseDurability(error: unknown): DurabilityLost {
    if (lost) return lost
    lost = new DurabilityLost(error)
    // What waits for the next batch will never be stored.
    for (const item of queue.splice(0)) item.reject(mapError(lost))
    try {
      durability!.onSyncFailure?.(error)
    } catch {
      // The committer has stopped either way.
    }
    return lost
  }

  /** A committed (and, with `durability`, synced) batch: its answers, then its effects. */
  function answer(batch: Item[], outcomes: Outcome[], started: number): void {
    for (const [index, item] of batch.entries()) {
      const outcome = outcomes[index]!
      if (outcome.ok) item.resolve(outcome.value)
      else item.reject(mapError(outcome.error))
    }
    report({ size: batch.length, rolledBack: outcomes.filter((o) => !o.ok).length, committed: true, ms: performance.now() - started })
    for (const item of batch) if (item.effects) for (const effect of item.effects) runEffect(effect)
  }

  function runEffect(effect: () => void): void {
    try {
      effect()
    } catch {
      // The write is durable and answered; an effect (a wake-up) cannot undo it.
    }
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
    run<T>(work: Work<T>): Promise<T> {
      if (lost) return Promise.reject(mapError(lost))
      return new Promise<T>((resolve, reject) => {
        const item: Item = {
          work,
          effects: undefined,
          open: false,
          afterCommit(effect) {
            if (!item.open) throw new ClosedUnitOfWorkError()
            ;(item.effects ??= []).push(effect)
          },
          resolve: resolve as (value: unknown) => void,
          reject,
        }
        queue.push(item)
        schedule()
      })
    },
    stats: () => ({ ...stats }),
    settled: () => syncing,
  }
}
