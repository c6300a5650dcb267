// PINs, PIN sessions and the security-event log on PostgreSQL.
//
// Every write runs in one SERIALIZABLE transaction that the engine retries on
// 40001/40P01 (see ../storage.ts). That is what keeps a PIN session verified
// once across instances: two verifies both read it unconsumed and both update
// its row, so one fails to serialize and, run again, finds it consumed. PIN
// failure counts are read then saved the same way.
import { and, asc, count, desc, eq, gt, gte, isNull, lt, lte, min } from 'drizzle-orm'
import { pinLocks, pinSessions, securityEvents, securityLogHead, userPins } from '../schema'
import type { ChainedSecurityEvent, ChainLink, PinLock, PinSession, PrunedAnchor, SecurityStore, StoredSecurityEvent } from '../../../modules/security/store'
import type { PostgresScope } from '../scope'
import { toPinSession } from '../../rows'

/** The head is one row. */
const HEAD_ID = 1

/** Events per INSERT: a flush may carry a whole buffer (10 000 events), and one statement takes at most 65 535 parameters. */
const INSERT_CHUNK = 1000

export class PostgresSecurityStore implements SecurityStore {
  constructor(private readonly scope: PostgresScope) {}

  private get db() {
    return this.scope.db
  }

  // ---- PINs ----

  async pinHash(userId: string): Promise<string | null> {
    const [row] = await this.db.select({ pinHash: userPins.pinHash }).from(userPins).where(eq(userPins.userId, userId))
    return row?.pinHash ?? null
  }

  async setPinHash(userId: string, pinHash: string, now: Date): Promise<void> {
    await this.db.insert(userPins).values({ userId, pinHash, updatedAt: now }).onConflictDoUpdate({ target: userPins.userId, set: { pinHash, updatedAt: now } })
  }

  async pinLock(userId: string): Promise<PinLock | null> {
    const [row] = await this.db
      .select({ failures: pinLocks.failures, locks: pinLocks.locks, lockedUntil: pinLocks.lockedUntil })
      .from(pinLocks)
      .where(eq(pinLocks.userId, userId))
    return row ?? null
  }

  async savePinLock(userId: string, lock: PinLock): Promise<void> {
    const state = { failures: lock.failures, locks: lock.locks, lockedUntil: lock.lockedUntil }
    await this.db.insert(pinLocks).values({ userId, ...state }).onConflictDoUpdate({ target: pinLocks.userId, set: state })
  }

  async clearPinLock(userId: string): Promise<void> {
    await this.db.delete(pinLocks).where(eq(pinLocks.userId, userId))
  }

  // ---- PIN sessions ----

  async addPinSession(session: PinSession): Promise<void> {
    await this.db.insert(pinSessions).values(session)
  }

  async pinSession(id: string): Promise<PinSession | null> {
    const [row] = await this.db.select().from(pinSessions).where(eq(pinSessions.id, id))
    return row ? toPinSession(row) : null
  }

  async consumePinSession(id: string, now: Date): Promise<void> {
    await this.db.update(pinSessions).set({ consumedAt: now }).where(eq(pinSessions.id, id))
  }

  async livePinSessions(userId: string, now: Date): Promise<{ count: number; soonestExpiry: Date | null }> {
    const [row] = await this.db
      .select({ count: count(), soonest: min(pinSessions.expiresAt) })
      .from(pinSessions)
      .where(and(eq(pinSessions.userId, userId), isNull(pinSessions.consumedAt), gt(pinSessions.expiresAt, now)))
    return { count: row?.count ?? 0, soonestExpiry: row?.soonest ?? null }
  }

  async prunePinSessionsExpiredBefore(cutoff: Date): Promise<number> {
    const deleted = await this.db.delete(pinSessions).where(lt(pinSessions.expiresAt, cutoff)).returning({ id: pinSessions.id })
    return deleted.length
  }

  // ---- account deletion and export ----

  async erasePin(userId: string): Promise<void> {
    await this.db.delete(pinSessions).where(eq(pinSessions.userId, userId))
    await this.db.delete(pinLocks).where(eq(pinLocks.userId, userId))
    await this.db.delete(userPins).where(eq(userPins.userId, userId))
  }

  async reportedBy(userId: string): Promise<StoredSecurityEvent[]> {
    return this.db
      .select()
      .from(securityEvents)
      .where(and(eq(securityEvents.userId, userId), eq(securityEvents.source, 'client')))
      .orderBy(asc(securityEvents.seq))
  }

  // ---- the security-event log ----

  async chainHead(): Promise<ChainLink | null> {
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
    //
    // The link itself is the newest stored event, as on SQLite (a head row
    // left past a cut tail is not chained from: verification reports the cut).
    await this.db.select({ id: securityLogHead.id }).from(securityLogHead).where(eq(securityLogHead.id, HEAD_ID)).for('update')
    const [newest] = await this.db
      .select({ seq: securityEvents.seq, hash: securityEvents.hash })
      .from(securityEvents)
      .orderBy(desc(securityEvents.seq))
      .limit(1)
    return newest ?? null
  }

  async appendChained(events: readonly ChainedSecurityEvent[]): Promise<ChainLink> {
    const last = events.at(-1)
    if (last === undefined) throw new Error('appendChained: no events')
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
      await this.db.insert(securityEvents).values(numbered.slice(start, start + INSERT_CHUNK))
    }
    const head = { seq: numbered.at(-1)!.seq, hash: last.hash }
    await this.db.insert(securityLogHead).values({ id: HEAD_ID, ...head }).onConflictDoUpdate({ target: securityLogHead.id, set: head })
    return head
  }

  async recordedHead(): Promise<ChainLink | null> {
    const [row] = await this.db.select({ seq: securityLogHead.seq, hash: securityLogHead.hash }).from(securityLogHead).where(eq(securityLogHead.id, HEAD_ID))
    return row ?? null
  }

  async securityEventsAfter(afterSeq: number, limit: number): Promise<StoredSecurityEvent[]> {
    return this.db.select().from(securityEvents).where(gt(securityEvents.seq, afterSeq)).orderBy(asc(securityEvents.seq)).limit(limit)
  }

  async securityEventsBefore(beforeSeq: number | null, limit: number): Promise<StoredSecurityEvent[]> {
    const query = this.db.select().from(securityEvents)
    return (beforeSeq === null ? query : query.where(lt(securityEvents.seq, beforeSeq))).orderBy(desc(securityEvents.seq)).limit(limit)
  }

  // ---- bounds and retention ----

  async clientReportsSince(userId: string, since: Date): Promise<{ count: number; oldest: Date | null }> {
    const [row] = await this.db
      .select({ count: count(), oldest: min(securityEvents.receivedAt) })
      .from(securityEvents)
      .where(and(eq(securityEvents.userId, userId), gte(securityEvents.receivedAt, since), eq(securityEvents.source, 'client')))
    return { count: row?.count ?? 0, oldest: row?.oldest ?? null }
  }

  async oldestLinks(limit: number): Promise<(ChainLink & { receivedAt: Date })[]> {
    return this.db.select({ seq: securityEvents.seq, hash: securityEvents.hash, receivedAt: securityEvents.receivedAt }).from(securityEvents).orderBy(asc(securityEvents.seq)).limit(limit)
  }

  async pruneThrough(anchor: PrunedAnchor): Promise<number> {
    const set = { prunedSeq: anchor.seq, prunedHash: anchor.hash, prunedMac: anchor.mac }
    // The head row's update also orders this cut with every flush (they lock that row; see chainHead).
    const updated = await this.db.update(securityLogHead).set(set).where(eq(securityLogHead.id, HEAD_ID)).returning({ id: securityLogHead.id })
    if (updated.length === 0) return 0
    const deleted = await this.db.delete(securityEvents).where(lte(securityEvents.seq, anchor.seq)).returning({ seq: securityEvents.seq })
    return deleted.length
  }

  async prunedAnchor(): Promise<PrunedAnchor | null> {
    const [row] = await this.db
      .select({ seq: securityLogHead.prunedSeq, hash: securityLogHead.prunedHash, mac: securityLogHead.prunedMac })
      .from(securityLogHead)
      .where(eq(securityLogHead.id, HEAD_ID))
    return row && row.seq !== null && row.hash !== null && row.mac !== null ? { seq: row.seq, hash: row.hash, mac: row.mac } : null
  }
}
