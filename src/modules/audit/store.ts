// What the operator audit log needs from a database (contract §11).
import type { OperatorRole } from '../operators/roles'

/** Where an operator action came from. */
export type AuditVia = 'api' | 'console' | 'cli'

/** One operator action, as recorded, before it is chained. */
export interface AuditRecord {
  id: string
  at: Date
  /** Null for the admin token (name `token`) and the command line without an operator. */
  operatorId: string | null
  operatorName: string
  role: OperatorRole
  via: AuditVia
  /** What was done, `domain.verb`: `match.resolve`, `withdrawal.approve`, … */
  action: string
  /** The id it was done to (a match, a user, a withdrawal), when there is one. */
  target: string | null
  reason: string | null
  requestId: string | null
  details: Record<string, unknown>
}

export interface ChainedAuditRecord extends AuditRecord {
  prevHash: string
  hash: string
}

export interface StoredAuditRecord extends ChainedAuditRecord {
  seq: number
}

/** Where the chain ends: seq 0 and the genesis hash while it is empty. */
export interface AuditLink {
  seq: number
  hash: string
}

export interface AuditStore {
  /**
   * Inside a write: the link the next record chains from, held until the
   * write ends (PostgreSQL locks the head row, so appends from several
   * instances take turns and never fork the chain; SQLite has one writer).
   */
  lockAuditHead(): Promise<AuditLink>
  /** Inside a write, after lockAuditHead: stores the record and moves the head to it; answers its link. */
  appendAudit(record: ChainedAuditRecord): Promise<AuditLink>
  /** The head as recorded: a tail cut with the head row left alone no longer matches it (the row is not keyed: see docs/operators.md). */
  auditHead(): Promise<AuditLink>
  /** Records after `seq`, oldest first. */
  auditAfter(seq: number, limit: number): Promise<StoredAuditRecord[]>
  /** Records before `seq` (all when null), newest first: the console's pages. */
  auditBefore(seq: number | null, limit: number): Promise<StoredAuditRecord[]>
}
