// The operator audit log, on either engine. Appends from several instances
// take turns at the head row on PostgreSQL (src/db/postgres/stores/audit.ts
// locks it); on SQLite one writer at a time (the committer's transaction)
// keeps the head read in a write the head until that write advances it.
import { asc, desc, eq, gt, lt } from 'drizzle-orm'
import type { AuditLink, AuditStore, ChainedAuditRecord, StoredAuditRecord } from '../../modules/audit/store'
import { Queries } from './scope'

/** The head is one row. */
export const AUDIT_HEAD_ID = 1
/** The head of an empty chain. */
export const AUDIT_GENESIS: AuditLink = { seq: 0, hash: '0'.repeat(64) }

export class AuditQueries extends Queries implements AuditStore {
  async lockAuditHead(): Promise<AuditLink> {
    return this.auditHead()
  }

  async appendAudit(record: ChainedAuditRecord): Promise<AuditLink> {
    const { auditLog, auditHead } = this.t
    const [row] = await this.db.insert(auditLog).values(record).returning({ seq: auditLog.seq })
    const head = { seq: row!.seq, hash: record.hash }
    await this.db.insert(auditHead).values({ id: AUDIT_HEAD_ID, ...head }).onConflictDoUpdate({ target: auditHead.id, set: head })
    return head
  }

  async auditHead(): Promise<AuditLink> {
    const { auditHead } = this.t
    const [row] = await this.db.select({ seq: auditHead.seq, hash: auditHead.hash }).from(auditHead).where(eq(auditHead.id, AUDIT_HEAD_ID))
    return row ?? AUDIT_GENESIS
  }

  async auditAfter(seq: number, limit: number): Promise<StoredAuditRecord[]> {
    const { auditLog } = this.t
    return this.db.select().from(auditLog).where(gt(auditLog.seq, seq)).orderBy(asc(auditLog.seq)).limit(limit)
  }

  async auditBefore(seq: number | null, limit: number): Promise<StoredAuditRecord[]> {
    const { auditLog } = this.t
    const query = this.db.select().from(auditLog)
    return (seq === null ? query : query.where(lt(auditLog.seq, seq))).orderBy(desc(auditLog.seq)).limit(limit)
  }
}
