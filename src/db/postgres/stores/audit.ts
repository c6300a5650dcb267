// The operator audit log on PostgreSQL, where several instances append to one
// chain. An append first makes sure the head row exists, then locks it: a
// second append waits there until the first commits. Run READ COMMITTED (a
// unit of work with row locks), it then reads the new head; run SERIALIZABLE,
// the row having changed since its snapshot, it fails to serialize and runs
// again from the start. Either way no two records chain from one link, and
// seq (drawn under the lock) follows the chain.
import { asc, desc, eq, gt, lt } from 'drizzle-orm'
import { auditHead, auditLog } from '../schema'
import type { AuditLink, AuditStore, ChainedAuditRecord, StoredAuditRecord } from '../../../modules/audit/store'
import type { PostgresScope } from '../scope'

const HEAD_ID = 1
const EMPTY: AuditLink = { seq: 0, hash: '0'.repeat(64) }

export class PostgresAuditStore implements AuditStore {
  constructor(private readonly scope: PostgresScope) {}

  private get db() {
    return this.scope.db
  }

  async lockAuditHead(): Promise<AuditLink> {
    await this.db.insert(auditHead).values({ id: HEAD_ID, ...EMPTY }).onConflictDoNothing()
    const [row] = await this.db.select({ seq: auditHead.seq, hash: auditHead.hash }).from(auditHead).where(eq(auditHead.id, HEAD_ID)).for('update')
    return row!
  }

  async appendAudit(record: ChainedAuditRecord): Promise<AuditLink> {
    const [row] = await this.db.insert(auditLog).values(record).returning({ seq: auditLog.seq })
    const head = { seq: row!.seq, hash: record.hash }
    await this.db.update(auditHead).set(head).where(eq(auditHead.id, HEAD_ID))
    return head
  }

  async auditHead(): Promise<AuditLink> {
    const [row] = await this.db.select({ seq: auditHead.seq, hash: auditHead.hash }).from(auditHead).where(eq(auditHead.id, HEAD_ID))
    return row ?? EMPTY
  }

  async auditAfter(seq: number, limit: number): Promise<StoredAuditRecord[]> {
    return this.db.select().from(auditLog).where(gt(auditLog.seq, seq)).orderBy(asc(auditLog.seq)).limit(limit)
  }

  async auditBefore(seq: number | null, limit: number): Promise<StoredAuditRecord[]> {
    const query = this.db.select().from(auditLog)
    return (seq === null ? query : query.where(lt(auditLog.seq, seq))).orderBy(desc(auditLog.seq)).limit(limit)
  }
}
