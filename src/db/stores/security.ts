// PINs, PIN sessions and the security-event log, on either engine.
//
// What differs stays in the engine's subclass: SQLite runs the statements of
// a PIN purchase (mint, verify) as statements compiled once per connection
// (src/db/sqlite/stores/security.ts); PostgreSQL, where several instances
// flush into one chain, locks the chain's head row and numbers a flush's
// events from its sequence (src/db/postgres/stores/security.ts).
//
// On PostgreSQL every write runs in one SERIALIZABLE transaction that the
// engine retries on 40001/40P01 (src/db/postgres/storage.ts). That is what
// keeps a PIN session verified once across instances: two verifies both read
// it unconsumed and both update its row, so one fails to serialize and, run
// again, finds it consumed. PIN failure counts are read then saved the same
// way. On SQLite one writer at a time gives the same.
import { and, asc, count, desc, eq, gt, gte, isNull, lt, lte, min } from 'drizzle-orm'
import type { ChainedSecurityEvent, ChainLink, PinLock, PinSession, PrunedAnchor, SecurityStore, StoredSecurityEvent } from '../../modules/security/store'
import { toPinSession } from '../rows'
import { Queries } from './scope'

/** The head is one row. */
export const SECURITY_HEAD_ID = 1

export class SecurityQueries extends Queries implements SecurityStore {
  // ---- PINs ----

  async pinHash(userId: string): Promise<string | null> {
    const { userPins } = this.t
    const [row] = await this.db.select({ pinHash: userPins.pinHash }).from(userPins).where(eq(userPins.userId, userId))
    return row?.pinHash ?? null
  }

  async setPinHash(userId: string, pinHash: string, now: Date): Promise<void> {
    const { userPins } = this.t
    await this.db.insert(userPins).values({ userId, pinHash, updatedAt: now }).onConflictDoUpdate({ target: userPins.userId, set: { pinHash, updatedAt: now } })
  }

  async pinLock(userId: string): Promise<PinLock | null> {
    const { pinLocks } = this.t
    const [row] = await this.db
      .select({ failures: pinLocks.failures, locks: pinLocks.locks, lockedUntil: pinLocks.lockedUntil })
      .from(pinLocks)
      .where(eq(pinLocks.userId, userId))
    return row ?? null
  }

  async savePinLock(userId: string, lock: PinLock): Promise<void> {
    const { pinLocks } = this.t
    const state = { failures: lock.failures, locks: lock.locks, lockedUntil: lock.lockedUntil }
    await this.db.insert(pinLocks).values({ userId, ...state }).onConflictDoUpdate({ target: pinLocks.userId, set: state })
  }

  async clearPinLock(userId: string): Promise<void> {
    await this.db.delete(this.t.pinLocks).where(eq(this.t.pinLocks.userId, userId))
  }

  // ---- PIN sessions ----

  async addPinSession(session: PinSession): Promise<void> {
    await this.db.insert(this.t.pinSessions).values(session)
  }

  async pinSession(id: string): Promise<PinSession | null> {
    const [row] = await this.db.select().from(this.t.pinSessions).where(eq(this.t.pinSessions.id, id))
    return row ? toPinSession(row) : null
  }

  async consumePinSession(id: string, now: Date): Promise<void> {
    await this.db.update(this.t.pinSessions).set({ consumedAt: now }).where(eq(this.t.pinSessions.id, id))
  }

  async livePinSessions(userId: string, now: Date): Promise<{ count: number; soonestExpiry: Date | null }> {
    const { pinSessions } = this.t
    const [row] = await this.db
      .select({ count: count(), soonest: min(pinSessions.expiresAt) })
      .from(pinSessions)
      .where(and(eq(pinSessions.userId, userId), isNull(pinSessions.consumedAt), gt(pinSessions.expiresAt, now)))
    return { count: row?.count ?? 0, soonestExpiry: row?.soonest ?? null }
  }

  async prunePinSessionsExpiredBefore(cutoff: Date): Promise<number> {
    const { pinSessions } = this.t
    const deleted = await this.db.delete(pinSessions).where(lt(pinSessions.expiresAt, cutoff)).returning({ id: pinSessions.id })
    return deleted.length
  }

  // ---- account deletion and export ----

  async erasePin(userId: string): Promise<void> {
    const { pinSessions, pinLocks, userPins } = this.t
    await this.db.delete(pinSessions).where(eq(pinSessions.userId, userId))
    await this.db.delete(pinLocks).where(eq(pinLocks.userId, userId))
    await this.db.delete(userPins).where(eq(userPins.userId, userId))
  }

  async reportedBy(userId: string): Promise<StoredSecurityEvent[]> {
    const { securityEvents } = this.t
    return this.db
      .select()
      .from(securityEvents)
      .where(and(eq(securityEvents.userId, userId), eq(securityEvents.source, 'client')))
      .orderBy(asc(securityEvents.seq))
  }

  // ---- the security-event log ----

  async chainHead(): Promise<ChainLink | null> {
    await this.lockChainHead()
    // The link is the newest stored event (a head row left past a cut tail
    // is not chained from: verification reports the cut).
    const { securityEvents } = this.t
    const [newest] = await this.db.select({ seq: securityEvents.seq, hash: securityEvents.hash }).from(securityEvents).orderBy(desc(securityEvents.seq)).limit(1)
    return newest ?? null
  }

  /**
   * Makes the head read next stay the head until this write advances it.
   * Nothing to do with one writer at a time (SQLite's committer); PostgreSQL
   * locks the head row (see SecurityStore on several instances).
   */
  protected async lockChainHead(): Promise<void> {}

  async appendChained(events: readonly ChainedSecurityEvent[]): Promise<ChainLink> {
    const last = events.at(-1)
    if (last === undefined) throw new Error('appendChained: no events')
    const head = { seq: await this.insertChained(events), hash: last.hash }
    const { securityLogHead } = this.t
    await this.db.insert(securityLogHead).values({ id: SECURITY_HEAD_ID, ...head }).onConflictDoUpdate({ target: securityLogHead.id, set: head })
    return head
  }

  /**
   * Stores `events` (at least one) in chain order, each with a seq above the
   * one before; answers the last one's seq. Here one INSERT each, the
   * engine's autoincrement numbering them as they come.
   */
  protected async insertChained(events: readonly ChainedSecurityEvent[]): Promise<number> {
    const { securityEvents } = this.t
    let seq = 0
    for (const event of events) {
      const [row] = await this.db.insert(securityEvents).values(event).returning({ seq: securityEvents.seq })
      seq = row!.seq
    }
    return seq
  }

  async recordedHead(): Promise<ChainLink | null> {
    const { securityLogHead } = this.t
    const [row] = await this.db.select({ seq: securityLogHead.seq, hash: securityLogHead.hash }).from(securityLogHead).where(eq(securityLogHead.id, SECURITY_HEAD_ID))
    return row ?? null
  }

  async securityEventsAfter(afterSeq: number, limit: number): Promise<StoredSecurityEvent[]> {
    const { securityEvents } = this.t
    return this.db.select().from(securityEvents).where(gt(securityEvents.seq, afterSeq)).orderBy(asc(securityEvents.seq)).limit(limit)
  }

  async securityEventsBefore(beforeSeq: number | null, limit: number): Promise<StoredSecurityEvent[]> {
    const { securityEvents } = this.t
    const query = this.db.select().from(securityEvents)
    return (beforeSeq === null ? query : query.where(lt(securityEvents.seq, beforeSeq))).orderBy(desc(securityEvents.seq)).limit(limit)
  }

  // ---- bounds and retention ----

  async clientReportsSince(userId: string, since: Date): Promise<{ count: number; oldest: Date | null }> {
    const { securityEvents } = this.t
    const [row] = await this.db
      .select({ count: count(), oldest: min(securityEvents.receivedAt) })
      .from(securityEvents)
      .where(and(eq(securityEvents.userId, userId), gte(securityEvents.receivedAt, since), eq(securityEvents.source, 'client')))
    return { count: row?.count ?? 0, oldest: row?.oldest ?? null }
  }

  async oldestLinks(limit: number): Promise<(ChainLink & { receivedAt: Date })[]> {
    const { securityEvents } = this.t
    return this.db.select({ seq: securityEvents.seq, hash: securityEvents.hash, receivedAt: securityEvents.receivedAt }).from(securityEvents).orderBy(asc(securityEvents.seq)).limit(limit)
  }

  async pruneThrough(anchor: PrunedAnchor): Promise<number> {
    const { securityEvents, securityLogHead } = this.t
    const set = { prunedSeq: anchor.seq, prunedHash: anchor.hash, prunedMac: anchor.mac }
    // No head row, no cut: a chain without its head already fails
    // verification. On PostgreSQL this update of the head row also orders
    // the cut with every flush (they lock that row; see lockChainHead).
    const updated = await this.db.update(securityLogHead).set(set).where(eq(securityLogHead.id, SECURITY_HEAD_ID)).returning({ id: securityLogHead.id })
    if (updated.length === 0) return 0
    const deleted = await this.db.delete(securityEvents).where(lte(securityEvents.seq, anchor.seq)).returning({ seq: securityEvents.seq })
    return deleted.length
  }

  async prunedAnchor(): Promise<PrunedAnchor | null> {
    const { securityLogHead } = this.t
    const [row] = await this.db
      .select({ seq: securityLogHead.prunedSeq, hash: securityLogHead.prunedHash, mac: securityLogHead.prunedMac })
      .from(securityLogHead)
      .where(eq(securityLogHead.id, SECURITY_HEAD_ID))
    return row && row.seq !== null && row.hash !== null && row.mac !== null ? { seq: row.seq, hash: row.hash, mac: row.mac } : null
  }
}
