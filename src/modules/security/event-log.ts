// The best-effort security-event log (contract §4). Requests only append to a
// bounded in-memory buffer; a timer writes batches to the database, chaining
// each row to the one before by hash. When the buffer is full, new events are
// shed and counted rather than slowing anything down.
import type { Storage, Transaction } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import { toIso } from '../../shared/clock'
import { constantTimeEqual } from '../../shared/crypto'
import { AppError } from '../../shared/errors'
import { newId } from '../../shared/ids'
import type { Logger } from '../../shared/logger'
import type { ChainedSecurityEvent, ChainLink, PrunedAnchor, SecurityEvent, SecurityLevel, SecurityStore, StoredSecurityEvent } from './store'

export type { SecurityLevel }

export interface SecurityEventInput {
  userId: string | null
  source: 'client' | 'server'
  kind: string
  level: SecurityLevel
  details: Record<string, unknown>
  occurredAt?: Date
}

export const GENESIS_HASH = '0'.repeat(64)

/**
 * What one account's client reports may grow to (docs/operations.md, "How
 * the database's growth is bounded"): at most this many stored per rolling
 * day; more are refused with 429 at the route and, if several raced past
 * that check, shed at the flush, which counts inside its write.
 */
export const CLIENT_REPORTS_PER_DAY = 20
export const CLIENT_REPORT_WINDOW_MS = 86_400_000
/** Retention removes at most this many events per housekeeping run (one unit of work stays short). */
export const PRUNE_BATCH = 50_000

/** The HMAC that authenticates a retention cut: only the chain key's holder can say where the chain may start. */
export function anchorMac(key: string, link: ChainLink): string {
  return new Bun.CryptoHasher('sha256', key).update(JSON.stringify(['pruned', link.seq, link.hash])).digest('hex')
}

/** The HMAC that chains a row: over the previous hash and every field but seq. */
export function chainHash(key: string, prevHash: string, row: SecurityEvent): string {
  return new Bun.CryptoHasher('sha256', key).update(
    JSON.stringify([
      prevHash,
      row.id,
      row.userId,
      row.source,
      row.kind,
      row.level,
      row.details,
      row.occurredAt.getTime(),
      row.receivedAt.getTime(),
    ]),
  ).digest('hex')
}

export interface SecurityLogOptions {
  /** Events held in memory at most; beyond it new ones are shed. */
  capacity?: number
  /** Flush when this many are buffered, or on the timer. */
  batchSize?: number
  flushMs?: number
  /** Days an event is kept before housekeeping removes it from the chain's old end (ARENA_SECURITY_LOG_RETENTION_DAYS). */
  retentionDays?: number
}

export class SecurityEventLog {
  private buffer: SecurityEvent[] = []
  /** The batch a flush is writing: no longer buffered, not yet committed; the per-account bound counts it too. */
  private writing: readonly SecurityEvent[] = []
  private shedCount = 0
  private closed = false
  private timer: ReturnType<typeof setInterval> | undefined
  /** The flush running or last run: flushes run one after another, so batches are chained in the order they were recorded. */
  private flushing: Promise<unknown> = Promise.resolve()
  readonly capacity: number
  private readonly batchSize: number
  readonly retentionDays: number

  constructor(
    private readonly deps: { storage: Storage; clock: Clock; logger: Logger; key: string },
    options: SecurityLogOptions = {},
  ) {
    this.capacity = options.capacity ?? 10_000
    this.batchSize = options.batchSize ?? 500
    this.retentionDays = options.retentionDays ?? 90
    this.timer = setInterval(() => void this.flushSafely(), options.flushMs ?? 250)
    // A flush timer must not keep a CLI or a test process alive.
    ;(this.timer as { unref?: () => void }).unref?.()
  }

  /** Never waits on the disk. Returns false when the event was shed. */
  record(event: SecurityEventInput): boolean {
    // After close nothing would write it (the storage is closing): shed, and counted.
    if (this.closed || this.buffer.length >= this.capacity) {
      this.shedCount++
      return false
    }
    const now = this.deps.clock.now()
    this.buffer.push({
      id: newId('event'),
      userId: event.userId,
      source: event.source,
      kind: event.kind,
      level: event.level,
      details: event.details,
      occurredAt: event.occurredAt ?? now,
      receivedAt: now,
    })
    if (this.buffer.length >= this.batchSize) queueMicrotask(() => void this.flushSafely())
    return true
  }

  /**
   * A client's report (POST /security/events): refused with 429 once the
   * account has CLIENT_REPORTS_PER_DAY stored or buffered in the last day,
   * with Retry-After until the oldest of them leaves the window; otherwise
   * recorded as `record` does (false: shed).
   */
  async report(event: Omit<SecurityEventInput, 'source' | 'userId'> & { userId: string }): Promise<boolean> {
    const now = this.deps.clock.now()
    const since = new Date(now.getTime() - CLIENT_REPORT_WINDOW_MS)
    const stored = await this.deps.storage.read.security.clientReportsSince(event.userId, since)
    const buffered = [...this.writing, ...this.buffer].filter((e) => e.source === 'client' && e.userId === event.userId)
    if (stored.count + buffered.length >= CLIENT_REPORTS_PER_DAY) {
      const oldest = stored.oldest ?? buffered[0]?.receivedAt ?? now
      const retryAfter = Math.max(1, Math.ceil((oldest.getTime() + CLIENT_REPORT_WINDOW_MS - now.getTime()) / 1000))
      throw new AppError('rate_limited', `At most ${CLIENT_REPORTS_PER_DAY} security reports per account per day`, { headers: { 'retry-after': String(retryAfter) } })
    }
    return this.record({ ...event, source: 'client' })
  }

  /**
   * Retention, in housekeeping's unit of work: removes the chain's old end,
   * every event received before `retentionDays` ago up to the first that was
   * not (never the newest: the next flush chains from it), and records the
   * last removed link with its HMAC, where verification then starts. How many.
   */
  async prune(tx: Transaction): Promise<number> {
    const cutoff = this.deps.clock.now().getTime() - this.retentionDays * 86_400_000
    // On PostgreSQL this locks the head row: a flush and a cut take turns.
    const newest = await tx.security.chainHead()
    if (!newest) return 0
    let last: ChainLink | null = null
    for (const link of await tx.security.oldestLinks(PRUNE_BATCH)) {
      if (link.receivedAt.getTime() >= cutoff || link.seq >= newest.seq) break
      last = { seq: link.seq, hash: link.hash }
    }
    return last ? tx.security.pruneThrough({ ...last, mac: anchorMac(this.deps.key, last) }) : 0
  }

  /** The events the user reported (source `client`), oldest first (the account export). */
  async reportedBy(userId: string) {
    return (await this.deps.storage.read.security.reportedBy(userId)).map((row) => {
      const { id, kind, level, details, occurredAt, receivedAt } = toSecurityEvent(row)
      return { id, kind, level, details, occurredAt, receivedAt }
    })
  }

  /** A page of the stored log, newest first, before `before` (a seq; from the newest when null): the console's pages. */
  async newest(before: number | null, limit: number) {
    const rows = await this.deps.storage.read.security.securityEventsBefore(before, limit)
    return { events: rows.map((row) => ({ seq: row.seq, ...toSecurityEvent(row) })), before: rows.length === limit ? rows.at(-1)!.seq : null }
  }

  /** Walks the whole stored chain under the log's own key (the console's "Verify now"; `arena db verify` does the same). */
  verify() {
    return verifySecurityLog(this.deps.storage.read.security, this.deps.key)
  }

  /** The log's clock, so callers judge event times against the same now. */
  now(): Date {
    return this.deps.clock.now()
  }

  stats() {
    return { buffered: this.buffer.length, shed: this.shedCount, capacity: this.capacity }
  }

  /**
   * Writes everything buffered, chained, in one write; resolves with how many
   * once they are stored. A flush called while another runs waits for it.
   */
  flush(): Promise<number> {
    const run = this.flushing.then(() => this.writeBuffered())
    this.flushing = run.catch(() => {})
    return run
  }

  private async writeBuffered(): Promise<number> {
    if (this.buffer.length === 0) return 0
    const batch = this.buffer
    this.buffer = []
    this.writing = batch
    const { key } = this.deps
    let written = 0
    try {
      written = await this.deps.storage.write(async (tx) => {
        // The head is read inside the write that advances it (see SecurityStore).
        let prev = (await tx.security.chainHead())?.hash ?? GENESIS_HASH
        const admitted = await this.withinAccountBounds(tx, batch)
        if (admitted.length === 0) return 0
        const chained: ChainedSecurityEvent[] = admitted.map((event) => {
          const hash = chainHash(key, prev, event)
          const link = { ...event, prevHash: prev, hash }
          prev = hash
          return link
        })
        await tx.security.appendChained(chained)
        return chained.length
      })
    } catch (error) {
      // Put them back in front (within capacity) for the next attempt; what no
      // longer fits is shed, and counted as such.
      const merged = [...batch, ...this.buffer]
      this.shedCount += Math.max(0, merged.length - this.capacity)
      this.buffer = merged.slice(0, this.capacity)
      throw error
    } finally {
      this.writing = []
    }
    return written
  }

  /**
   * The batch without the client reports that would take their account past
   * CLIENT_REPORTS_PER_DAY (reports that raced past the route's check, or
   * came through another instance): shed, and counted. Counted inside the
   * flush's write, after the head lock, so flushes on every instance agree.
   * Runs again with the write when it is retried: it only reads.
   */
  private async withinAccountBounds(tx: Transaction, batch: readonly SecurityEvent[]): Promise<SecurityEvent[]> {
    const used = new Map<string, number>()
    const admitted: SecurityEvent[] = []
    let shed = 0
    for (const event of batch) {
      if (event.source !== 'client' || event.userId === null) {
        admitted.push(event)
        continue
      }
      let count = used.get(event.userId)
      if (count === undefined) {
        count = (await tx.security.clientReportsSince(event.userId, new Date(event.receivedAt.getTime() - CLIENT_REPORT_WINDOW_MS))).count
      }
      if (count >= CLIENT_REPORTS_PER_DAY) shed++
      else {
        admitted.push(event)
        count++
      }
      used.set(event.userId, count)
    }
    tx.afterCommit(() => {
      this.shedCount += shed
    })
    return admitted
  }

  private async flushSafely(): Promise<void> {
    try {
      await this.flush()
    } catch (error) {
      this.deps.logger.error('security event flush failed', { error: String(error) })
    }
  }

  /** On shutdown: stop the timer and write what is left; resolves once written (close the storage after). */
  async close(): Promise<void> {
    this.closed = true
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
    await this.flushSafely()
  }
}

export function toSecurityEvent(row: StoredSecurityEvent) {
  return {
    id: row.id,
    userId: row.userId,
    source: row.source,
    kind: row.kind,
    level: row.level,
    details: row.details,
    occurredAt: toIso(row.occurredAt),
    receivedAt: toIso(row.receivedAt),
  }
}

/** Oldest first after the cursor (the previous page's last seq, opaque to callers). */
export async function listSecurityEvents(store: SecurityStore, after: number, limit: number) {
  const rows = await store.securityEventsAfter(after, limit)
  return { events: rows.map(toSecurityEvent), cursor: String(rows.at(-1)?.seq ?? after) }
}

/** Walks the chain; reports the first row whose links do not hold, or a tail that was cut. */
export async function verifySecurityLog(
  store: SecurityStore,
  key: string,
): Promise<{ ok: true; rows: number } | { ok: false; rows: number; brokenAt: number; reason: string }> {
  let prev = GENESIS_HASH
  let rows = 0
  let lastSeq = 0
  let head: ChainLink | null = null
  // Retention cut the old end: the walk starts at the last removed link, if the cut is authentic.
  const anchor: PrunedAnchor | null = await store.prunedAnchor()
  if (anchor) {
    if (!constantTimeEqual(anchor.mac, anchorMac(key, anchor))) return { ok: false, rows, brokenAt: anchor.seq, reason: 'the retention cut is not authentic (its anchor does not match its HMAC)' }
    prev = anchor.hash
    lastSeq = anchor.seq
  }
  for (;;) {
    // Page through the table instead of loading it whole.
    for (;;) {
      const page = await store.securityEventsAfter(lastSeq, 1000)
      if (page.length === 0) break
      for (const row of page) {
        rows++
        if (row.prevHash !== prev) return { ok: false, rows, brokenAt: row.seq, reason: 'previous hash does not match (a row was removed or reordered)' }
        if (chainHash(key, prev, row) !== row.hash) return { ok: false, rows, brokenAt: row.seq, reason: 'row content does not match its hash (a row was edited)' }
        prev = row.hash
        lastSeq = row.seq
      }
    }
    head = await store.recordedHead()
    // A flush stores its rows and the head together: a head past the walked
    // end was written by a flush that committed during the walk, whose rows
    // the walk has not read yet. Only a head the walk reached is judged.
    if (!head || head.seq <= lastSeq || (await store.securityEventsAfter(lastSeq, 1)).length === 0) break
  }
  if (head && (head.seq !== lastSeq || head.hash !== prev)) {
    return { ok: false, rows, brokenAt: head.seq, reason: 'the newest events were removed (the chain ends before its recorded head)' }
  }
  if (!head && rows > 0) return { ok: false, rows, brokenAt: lastSeq, reason: 'the chain head record is missing' }
  return { ok: true, rows }
}
