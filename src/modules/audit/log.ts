// The operator audit log (contract §11). Every operator action, from the
// admin API, the console or the command line, is recorded by the service
// that performs it, inside the unit of work that performs it: the record
// exists exactly when the action committed. Each record is HMAC-chained to
// the one before under the chain key (the security log's key: it never
// rotates with the access-token keys), so an edited, removed or reordered
// record is found by `arena audit verify`.
import type { Transaction } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import { toIso } from '../../shared/clock'
import { newId } from '../../shared/ids'
import type { OperatorRole } from '../operators/roles'
import type { AuditLink, AuditRecord, AuditStore, AuditVia, StoredAuditRecord } from './store'

export const AUDIT_GENESIS_HASH = '0'.repeat(64)

/** Who acts: a named operator, or the admin token (`token`, admin, no id). */
export interface OperatorIdentity {
  id: string | null
  name: string
  role: OperatorRole
}

/** What an action records besides who did it. */
export interface AuditEntry {
  action: string
  target?: string | null
  reason?: string | null
  details?: Record<string, unknown>
}

/**
 * An operator acting through one request or command: services take it as
 * `by` and call `by.record(tx, …)` in the unit of work of the action.
 */
export class Actor {
  constructor(
    private readonly log: AuditLog,
    readonly operator: OperatorIdentity,
    readonly via: AuditVia,
    readonly requestId: string | null,
  ) {}

  /**
   * Appends this action to the audit log, in `tx` (it commits or rolls back
   * with the action). Called last among the unit of work's writes: on
   * PostgreSQL it locks the chain's head until the commit, so every unit of
   * work takes that lock after its own rows (and the events' seq lock), in
   * one order, and holds it as briefly as it can.
   */
  record(tx: Transaction, entry: AuditEntry): Promise<void> {
    return this.log.append(tx, this, entry)
  }
}

/** The HMAC that chains a record: over the previous hash and every field but seq. */
export function auditHash(key: string, prevHash: string, record: AuditRecord): string {
  return new Bun.CryptoHasher('sha256', key)
    .update(
      JSON.stringify([
        prevHash,
        record.id,
        record.at.getTime(),
        record.operatorId,
        record.operatorName,
        record.role,
        record.via,
        record.action,
        record.target,
        record.reason,
        record.requestId,
        record.details,
      ]),
    )
    .digest('hex')
}

export type AuditVerification = { ok: true; rows: number } | { ok: false; rows: number; brokenAt: number; reason: string }

export class AuditLog {
  constructor(private readonly deps: { key: string; clock: Clock }) {}

  /** An actor for one request or command. */
  actor(operator: OperatorIdentity, via: AuditVia, requestId: string | null = null): Actor {
    return new Actor(this, operator, via, requestId)
  }

  async append(tx: Transaction, actor: Actor, entry: AuditEntry): Promise<void> {
    const head = await tx.audit.lockAuditHead()
    // Text is made well-formed before it is hashed: a lone surrogate (which
    // JSON lets a client send) is stored as U+FFFD, so hashing it as given
    // would make the stored record fail its own hash.
    const record: AuditRecord = {
      id: newId('audit'),
      at: this.deps.clock.now(),
      operatorId: actor.operator.id,
      operatorName: actor.operator.name.toWellFormed(),
      role: actor.operator.role,
      via: actor.via,
      action: entry.action,
      target: entry.target?.toWellFormed() ?? null,
      reason: entry.reason?.toWellFormed() ?? null,
      requestId: actor.requestId,
      details: wellFormed(entry.details ?? {}) as Record<string, unknown>,
    }
    await tx.audit.appendAudit({ ...record, prevHash: head.hash, hash: auditHash(this.deps.key, head.hash, record) })
  }

  /** GET /admin/audit: records after the cursor, oldest first; the cursor of the last one. */
  async page(store: AuditStore, after: number, limit: number) {
    const rows = await store.auditAfter(after, limit)
    return { records: rows.map(auditView), cursor: String(rows.at(-1)?.seq ?? after) }
  }

  /** Walks the whole chain: every link, every hash, and the recorded head. */
  async verify(store: AuditStore): Promise<AuditVerification> {
    let prev = AUDIT_GENESIS_HASH
    let rows = 0
    let lastSeq = 0
    let head: AuditLink
    for (;;) {
      for (;;) {
        const page = await store.auditAfter(lastSeq, 1000)
        if (page.length === 0) break
        for (const row of page) {
          rows++
          if (row.prevHash !== prev) return { ok: false, rows, brokenAt: row.seq, reason: 'previous hash does not match (a record was removed or reordered)' }
          if (auditHash(this.deps.key, prev, row) !== row.hash) return { ok: false, rows, brokenAt: row.seq, reason: 'record content does not match its hash (a record was edited)' }
          prev = row.hash
          lastSeq = row.seq
        }
      }
      head = await store.auditHead()
      // An append that committed during the walk moved the head past it: walk on.
      if (head.seq <= lastSeq || (await store.auditAfter(lastSeq, 1)).length === 0) break
    }
    if (head.seq !== lastSeq || head.hash !== prev) {
      return { ok: false, rows, brokenAt: head.seq, reason: 'the newest records were removed (the chain ends before its recorded head)' }
    }
    return { ok: true, rows }
  }
}

/** `value` with every string in it well-formed (lone surrogates become U+FFFD, as the database stores them). */
function wellFormed(value: unknown): unknown {
  if (typeof value === 'string') return value.toWellFormed()
  if (Array.isArray(value)) return value.map(wellFormed)
  if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key.toWellFormed(), wellFormed(inner)]))
  }
  return value
}

/** A record as the API shows it. */
export function auditView(row: StoredAuditRecord) {
  return {
    seq: String(row.seq),
    id: row.id,
    at: toIso(row.at),
    operator: { id: row.operatorId, name: row.operatorName, role: row.role },
    via: row.via,
    action: row.action,
    target: row.target,
    reason: row.reason,
    requestId: row.requestId,
    details: row.details,
  }
}
