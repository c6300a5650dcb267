// The operator audit log on PostgreSQL, where several instances append to one
// chain. An append first makes sure the head row exists, then locks it: a
// second append waits there until the first commits. Run READ COMMITTED (a
// unit of work with row locks), it then reads the new head; run SERIALIZABLE,
// the row having changed since its snapshot, it fails to serialize and runs
// again from the start. Either way no two records chain from one link, and
// seq (drawn under the lock) follows the chain. The rest is AuditQueries'
// (src/db/stores/audit.ts): appendAudit's upsert of the head finds the row
// this made and this write holds, and updates it.
import { eq } from 'drizzle-orm'
import type { AuditLink } from '../../../modules/audit/store'
import { AUDIT_GENESIS, AUDIT_HEAD_ID, AuditQueries } from '../../stores/audit'
import type { PostgresScope } from '../scope'

export class PostgresAuditStore extends AuditQueries {
  constructor(protected override readonly scope: PostgresScope) {
    super(scope)
  }

  override async lockAuditHead(): Promise<AuditLink> {
    const { auditHead } = this.t
    await this.db.insert(auditHead).values({ id: AUDIT_HEAD_ID, ...AUDIT_GENESIS }).onConflictDoNothing()
    const [row] = await this.db.select({ seq: auditHead.seq, hash: auditHead.hash }).from(auditHead).where(eq(auditHead.id, AUDIT_HEAD_ID)).for('update')
    return row!
  }
}
