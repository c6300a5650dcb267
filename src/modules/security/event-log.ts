// The best-effort security-event log (contract §4). Requests only append to a
// bounded in-memory buffer; a timer writes batches to SQLite, chaining each
// row to the one before by hash. When the buffer is full, new events are shed
// and counted rather than slowing anything down.
import { asc, desc, eq, gt } from 'drizzle-orm'
import type { Db, Executor } from '../../db/sqlite/connection'
import { securityEvents, securityLogHead, SECURITY_LEVELS } from '../../db/schema'
import type { Clock } from '../../shared/clock'
import { toIso } from '../../shared/clock'
import { newId } from '../../shared/ids'
import type { Logger } from '../../shared/logger'

export type SecurityLevel = (typeof SECURITY_LEVELS)[number]

export interface SecurityEventInput {
  userId: string | null
  source: 'client' | 'server'
  kind: string
  level: SecurityLevel
  details: Record<string, unknown>
  occurredAt?: Date
}

type Row = typeof securityEvents.$inferSelect

export const GENESIS_HASH = '0'.repeat(64)

/** The HMAC that chains a row: over the previous hash and every field but seq. */
export function chainHash(key: string, prevHash: string, row: Omit<Row, 'seq' | 'hash' | 'prevHash'>): string {
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
}

export class SecurityEventLog {
  private buffer: Row[] = []
  private shedCount = 0
  private timer: ReturnType<typeof setInterval> | undefined
  readonly capacity: number
  private readonly batchSize: number

  constructor(
    private readonly deps: { db: Db; clock: Clock; logger: Logger; key: string },
    options: SecurityLogOptions = {},
  ) {
    this.capacity = options.capacity ?? 10_000
    this.batchSize = options.batchSize ?? 500
    this.timer = setInterval(() => this.flushSafely(), options.flushMs ?? 250)
    // A flush timer must not keep a CLI or a test process alive.
    ;(this.timer as { unref?: () => void }).unref?.()
  }

  /** Never waits on the disk. Returns false when the event was shed. */
  record(event: SecurityEventInput): boolean {
    if (this.buffer.length >= this.capacity) {
      this.shedCount++
      return false
    }
    const now = this.deps.clock.now()
    this.buffer.push({
      seq: 0,
      id: newId('event'),
      userId: event.userId,
      source: event.source,
      kind: event.kind,
      level: event.level,
      details: event.details,
      occurredAt: event.occurredAt ?? now,
      receivedAt: now,
      prevHash: '',
      hash: '',
    })
    if (this.buffer.length >= this.batchSize) queueMicrotask(() => this.flushSafely())
    return true
  }

  /** The log's clock, so callers judge event times against the same now. */
  now(): Date {
    return this.deps.clock.now()
  }

  stats() {
    return { buffered: this.buffer.length, shed: this.shedCount, capacity: this.capacity }
  }

  /** Writes everything buffered, chained, in one transaction. */
  flush(): number {
    if (this.buffer.length === 0) return 0
    const batch = this.buffer
    this.buffer = []
    try {
      this.deps.db.transaction(
        (tx) => {
          let prev = lastHash(tx)
          let seq = 0
          for (const event of batch) {
            const hash = chainHash(this.deps.key, prev, event)
            const { seq: _seq, ...values } = event
            seq = tx.insert(securityEvents).values({ ...values, prevHash: prev, hash }).returning({ seq: securityEvents.seq }).get().seq
            prev = hash
          }
          tx.insert(securityLogHead).values({ id: 1, seq, hash: prev }).onConflictDoUpdate({ target: securityLogHead.id, set: { seq, hash: prev } }).run()
        },
        { behavior: 'immediate' },
      )
    } catch (error) {
      // Put them back in front (within capacity) for the next attempt; what no
      // longer fits is shed, and counted as such.
      const merged = [...batch, ...this.buffer]
      this.shedCount += Math.max(0, merged.length - this.capacity)
      this.buffer = merged.slice(0, this.capacity)
      throw error
    }
    return batch.length
  }

  private flushSafely(): void {
    try {
      this.flush()
    } catch (error) {
      this.deps.logger.error('security event flush failed', { error: String(error) })
    }
  }

  /** On shutdown: stop the timer and write what is left. */
  close(): void {
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
    this.flushSafely()
  }
}

function lastHash(db: Executor): string {
  return db.select({ hash: securityEvents.hash }).from(securityEvents).orderBy(desc(securityEvents.seq)).limit(1).get()?.hash ?? GENESIS_HASH
}

export function toSecurityEvent(row: Row) {
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
export function listSecurityEvents(db: Executor, after: number, limit: number) {
  const rows = db.select().from(securityEvents).where(gt(securityEvents.seq, after)).orderBy(asc(securityEvents.seq)).limit(limit).all()
  return { events: rows.map(toSecurityEvent), cursor: String(rows.at(-1)?.seq ?? after) }
}

/** Walks the chain; reports the first row whose links do not hold, or a tail that was cut. */
export function verifySecurityLog(db: Executor, key: string): { ok: true; rows: number } | { ok: false; rows: number; brokenAt: number; reason: string } {
  let prev = GENESIS_HASH
  let rows = 0
  let lastSeq = 0
  // Page through the table instead of loading it whole.
  for (;;) {
    const page = db.select().from(securityEvents).where(gt(securityEvents.seq, lastSeq)).orderBy(asc(securityEvents.seq)).limit(1000).all()
    if (page.length === 0) break
    for (const row of page) {
      rows++
      if (row.prevHash !== prev) return { ok: false, rows, brokenAt: row.seq, reason: 'previous hash does not match (a row was removed or reordered)' }
      if (chainHash(key, prev, row) !== row.hash) return { ok: false, rows, brokenAt: row.seq, reason: 'row content does not match its hash (a row was edited)' }
      prev = row.hash
      lastSeq = row.seq
    }
  }
  const head = db.select().from(securityLogHead).where(eq(securityLogHead.id, 1)).get()
  if (head && (head.seq !== lastSeq || head.hash !== prev)) {
    return { ok: false, rows, brokenAt: head.seq, reason: 'the newest events were removed (the chain ends before its recorded head)' }
  }
  if (!head && rows > 0) return { ok: false, rows, brokenAt: lastSeq, reason: 'the chain head record is missing' }
  return { ok: true, rows }
}
