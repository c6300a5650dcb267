// PINs, PIN sessions and the security-event log on SQLite.
import { and, asc, desc, eq, gt, lt } from 'drizzle-orm'
import { pinLocks, pinSessions, securityEvents, securityLogHead, userPins } from '../../schema'
import type { ChainedSecurityEvent, ChainLink, PinLock, PinSession, SecurityStore, StoredSecurityEvent } from '../../../modules/security/store'
import type { SqliteScope } from '../storage'
import { toPinSession } from '../../rows'

/** The head is one row. */
const HEAD_ID = 1

export class SqliteSecurityStore implements SecurityStore {
  constructor(private readonly scope: SqliteScope) {}

  private get db() {
    return this.scope.handle.db
  }

  // ---- PINs ----

  async pinHash(userId: string): Promise<string | null> {
    return this.db.select({ pinHash: userPins.pinHash }).from(userPins).where(eq(userPins.userId, userId)).get()?.pinHash ?? null
  }

  async setPinHash(userId: string, pinHash: string, now: Date): Promise<void> {
    this.db.insert(userPins).values({ userId, pinHash, updatedAt: now }).onConflictDoUpdate({ target: userPins.userId, set: { pinHash, updatedAt: now } }).run()
  }

  async pinLock(userId: string): Promise<PinLock | null> {
    return this.db.select({ failures: pinLocks.failures, locks: pinLocks.locks, lockedUntil: pinLocks.lockedUntil }).from(pinLocks).where(eq(pinLocks.userId, userId)).get() ?? null
  }

  async savePinLock(userId: string, lock: PinLock): Promise<void> {
    const state = { failures: lock.failures, locks: lock.locks, lockedUntil: lock.lockedUntil }
    this.db.insert(pinLocks).values({ userId, ...state }).onConflictDoUpdate({ target: pinLocks.userId, set: state }).run()
  }

  async clearPinLock(userId: string): Promise<void> {
    this.db.delete(pinLocks).where(eq(pinLocks.userId, userId)).run()
  }

  // ---- PIN sessions ----

  async addPinSession(session: PinSession): Promise<void> {
    this.db.insert(pinSessions).values(session).run()
  }

  async pinSession(id: string): Promise<PinSession | null> {
    const row = this.db.select().from(pinSessions).where(eq(pinSessions.id, id)).get()
    return row ? toPinSession(row) : null
  }

  async consumePinSession(id: string, now: Date): Promise<void> {
    this.db.update(pinSessions).set({ consumedAt: now }).where(eq(pinSessions.id, id)).run()
  }

  async prunePinSessionsExpiredBefore(cutoff: Date): Promise<number> {
    return this.db.delete(pinSessions).where(lt(pinSessions.expiresAt, cutoff)).returning({ id: pinSessions.id }).all().length
  }

  // ---- account deletion and export ----

  async erasePin(userId: string): Promise<void> {
    this.db.delete(pinSessions).where(eq(pinSessions.userId, userId)).run()
    this.db.delete(pinLocks).where(eq(pinLocks.userId, userId)).run()
    this.db.delete(userPins).where(eq(userPins.userId, userId)).run()
  }

  async reportedBy(userId: string): Promise<StoredSecurityEvent[]> {
    return this.db
      .select()
      .from(securityEvents)
      .where(and(eq(securityEvents.userId, userId), eq(securityEvents.source, 'client')))
      .orderBy(asc(securityEvents.seq))
      .all()
  }

  // ---- the security-event log ----

  async chainHead(): Promise<ChainLink | null> {
    // One writer at a time (the committer's transaction) keeps this the head
    // until the same write advances it; see SecurityStore on several instances.
    return this.db.select({ seq: securityEvents.seq, hash: securityEvents.hash }).from(securityEvents).orderBy(desc(securityEvents.seq)).limit(1).get() ?? null
  }

  async appendChained(events: readonly ChainedSecurityEvent[]): Promise<ChainLink> {
    let head: ChainLink | null = null
    for (const event of events) {
      const { seq } = this.db.insert(securityEvents).values(event).returning({ seq: securityEvents.seq }).get()
      head = { seq, hash: event.hash }
    }
    if (head === null) throw new Error('appendChained: no events')
    const { seq, hash } = head
    this.db.insert(securityLogHead).values({ id: HEAD_ID, seq, hash }).onConflictDoUpdate({ target: securityLogHead.id, set: { seq, hash } }).run()
    return head
  }

  async recordedHead(): Promise<ChainLink | null> {
    return this.db.select({ seq: securityLogHead.seq, hash: securityLogHead.hash }).from(securityLogHead).where(eq(securityLogHead.id, HEAD_ID)).get() ?? null
  }

  async securityEventsAfter(afterSeq: number, limit: number): Promise<StoredSecurityEvent[]> {
    return this.db.select().from(securityEvents).where(gt(securityEvents.seq, afterSeq)).orderBy(asc(securityEvents.seq)).limit(limit).all()
  }

  async securityEventsBefore(beforeSeq: number | null, limit: number): Promise<StoredSecurityEvent[]> {
    const query = this.db.select().from(securityEvents)
    return (beforeSeq === null ? query : query.where(lt(securityEvents.seq, beforeSeq))).orderBy(desc(securityEvents.seq)).limit(limit).all()
  }
}
