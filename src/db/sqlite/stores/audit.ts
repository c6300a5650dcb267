// The operator audit log on SQLite: one writer at a time (the committer's
// transaction), so the head read in a write stays the head until that write
// advances it.
import { asc, desc, eq, gt, lt } from 'drizzle-orm'
import { auditHead, auditLog } from '../../schema'
import type { AuditLink, AuditStore, ChainedAuditRecord, StoredAuditRecord } from '../../../modules/audit/store'
import type { SqliteScope } from '../storage'

const HEAD_ID = 1
const EMPTY: AuditLink = { seq: 0, hash: '0'.repeat(64) }

export class SqliteAuditStore implements AuditStore {
  constructor(private readonly scope: SqliteScope) {}

  private get db() {
    return this.scope.handle.db
  }

  async lockAuditHead(): Promise<AuditLink> {
    return this.auditHead()
  }

  async appendAudit(record: ChainedAuditRecord): Promise<AuditLink> {
    const { seq } = this.db.insert(auditLog).values(record).returning({ seq: auditLog.seq }).get()
    const head = { seq, hash: record.hash }
    this.db.insert(auditHead).values({ id: HEAD_ID, ...head }).onConflictDoUpdate({ target: auditHead.id, set: head }).run()
    return head
  }

  async auditHead(): Promise<AuditLink> {
    return this.db.select({ seq: auditHead.seq, hash: auditHead.hash }).from(auditHead).where(eq(auditHead.id, HEAD_ID)).get() ?? EMPTY
  }

  async auditAfter(seq: number, limit: number): Promise<StoredAuditRecord[]> {
    return this.db.select().from(auditLog).where(gt(auditLog.seq, seq)).orderBy(asc(auditLog.seq)).limit(limit).all()
  }

  async auditBefore(seq: number | null, limit: number): Promise<StoredAuditRecord[]> {
    const query = this.db.select().from(auditLog)
    return (seq === null ? query : query.where(lt(auditLog.seq, seq))).orderBy(desc(auditLog.seq)).limit(limit).all()
  }
}
