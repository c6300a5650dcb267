// The security store on PostgreSQL, where several instances flush into one
// security-event chain: the chain's head row is locked before the head is
// read, and a flush's events are numbered from the sequence in chain order
// and inserted a thousand to a statement. Everything else is
// SecurityQueries' (src/db/stores/security.ts).
import { eq } from 'drizzle-orm'
import type { ChainedSecurityEvent } from '../../../modules/security/store'
import { SECURITY_HEAD_ID, SecurityQueries } from '../../stores/security'
import type { PostgresScope } from '../scope'

/** Events per INSERT: a flush may carry a whole buffer (10 000 events), and one statement takes at most 65 535 parameters. */
const INSERT_CHUNK = 1000

export class PostgresSecurityStore extends SecurityQueries {
  constructor(protected override readonly scope: PostgresScope) {
    super(scope)
  }

  protected override async lockChainHead(): Promise<void> {
    // Several instances flush into one chain, so the head is read under a
    // lock on the head row: a second flush waits here until the first
    // commits, then, the row having changed since its snapshot, fails to
    // serialize (40001) before it has chained anything; run again, it reads
    // the new head. Two flushes never chain from the same link. SSI alone
    // would catch the fork too, but only at the head's update, after the
    // loser had written its batch; the lock makes the loser wait, not work.
    // (A lock on the newest event row would not serialize: a flush commits
    // without changing that row, so the waiter would go on from its stale
    // snapshot until SSI stopped it.) While the log has no head row yet,
    // there is nothing to lock: two first flushes both insert the head row
    // in appendChained, and the second fails to serialize there.
    const { securityLogHead } = this.t
    await this.db.select({ id: securityLogHead.id }).from(securityLogHead).where(eq(securityLogHead.id, SECURITY_HEAD_ID)).for('update')
  }

  protected override async insertChained(events: readonly ChainedSecurityEvent[]): Promise<number> {
    // seq orders the chain, so it is allocated explicitly, in chain order:
    // the sequence hands out increasing numbers, sorted here, and the events
    // take them one by one (a multi-row INSERT's defaults carry no order
    // PostgreSQL promises). The sequence is never rolled back: a flush that
    // fails to serialize leaves a gap, never a reused seq.
    // (bigint arrives as a decimal string; it is sorted as a number, in SQL.)
    const seqs = await this.scope.sql<{ seq: string }[]>`
      SELECT nextval(pg_get_serial_sequence('security_events', 'seq')) AS seq
      FROM generate_series(1, ${events.length}) ORDER BY seq`
    const numbered = events.map((event, i) => ({ ...event, seq: Number(seqs[i]!.seq) }))
    for (let start = 0; start < numbered.length; start += INSERT_CHUNK) {
      await this.db.insert(this.t.securityEvents).values(numbered.slice(start, start + INSERT_CHUNK))
    }
    return numbered.at(-1)!.seq
  }
}
