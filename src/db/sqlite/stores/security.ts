// PINs, PIN sessions and the security-event log on SQLite. The statements
// of a PIN purchase (mint, verify) are compiled once per connection and run
// with parameters, as in wallet.ts; timestamp_ms columns are epoch-ms integers.
import { and, asc, count, desc, eq, getTableColumns, gt, gte, isNull, lt, lte, min } from 'drizzle-orm'
import { pinLocks, pinSessions, securityEvents, securityLogHead, userPins } from '../../schema'
import type { ChainedSecurityEvent, ChainLink, PinLock, PinSession, PrunedAnchor, SecurityStore, StoredSecurityEvent } from '../../../modules/security/store'
import type { SqliteScope } from '../storage'
import { insertInto, perConnection, selectList } from '../connection'

const PIN_SESSION_FIELDS = ['id', 'userId', 'tokenHash', 'expiresAt', 'consumedAt', 'createdAt'] as const satisfies readonly (keyof PinSession)[]
type RawPinSession = Omit<PinSession, 'expiresAt' | 'consumedAt' | 'createdAt'> & { expiresAt: number; consumedAt: number | null; createdAt: number }

const statements = perConnection((sqlite) => ({
  pinHash: sqlite.prepare<{ pinHash: string }, [string]>('SELECT pin_hash AS pinHash FROM user_pins WHERE user_id = ?'),
  pinLock: sqlite.prepare<{ failures: number; locks: number; lockedUntil: number | null }, [string]>(
    `SELECT ${selectList(getTableColumns(pinLocks), ['failures', 'locks', 'lockedUntil'])} FROM pin_locks WHERE user_id = ?`,
  ),
  clearPinLock: sqlite.prepare<unknown, [string]>('DELETE FROM pin_locks WHERE user_id = ?'),
  addPinSession: sqlite.prepare<unknown, RawPinSession>(insertInto(pinSessions, PIN_SESSION_FIELDS)),
  pinSession: sqlite.prepare<RawPinSession, [string]>(`SELECT ${selectList(getTableColumns(pinSessions), PIN_SESSION_FIELDS)} FROM pin_sessions WHERE id = ?`),
  consumePinSession: sqlite.prepare<unknown, { id: string; now: number }>('UPDATE pin_sessions SET consumed_at = $now WHERE id = $id'),
}))

/** The head is one row. */
const HEAD_ID = 1

export class SqliteSecurityStore implements SecurityStore {
  constructor(private readonly scope: SqliteScope) {}

  private get db() {
    return this.scope.handle.db
  }

  private get statements() {
    return statements(this.scope.handle.sqlite)
  }

  // ---- PINs ----

  async pinHash(userId: string): Promise<string | null> {
    return this.statements.pinHash.get(userId)?.pinHash ?? null
  }

  async setPinHash(userId: string, pinHash: string, now: Date): Promise<void> {
    this.db.insert(userPins).values({ userId, pinHash, updatedAt: now }).onConflictDoUpdate({ target: userPins.userId, set: { pinHash, updatedAt: now } }).run()
  }

  async pinLock(userId: string): Promise<PinLock | null> {
    const row = this.statements.pinLock.get(userId)
    return row ? { failures: row.failures, locks: row.locks, lockedUntil: row.lockedUntil === null ? null : new Date(row.lockedUntil) } : null
  }

  async savePinLock(userId: string, lock: PinLock): Promise<void> {
    const state = { failures: lock.failures, locks: lock.locks, lockedUntil: lock.lockedUntil }
    this.db.insert(pinLocks).values({ userId, ...state }).onConflictDoUpdate({ target: pinLocks.userId, set: state }).run()
  }

  async clearPinLock(userId: string): Promise<void> {
    this.statements.clearPinLock.run(userId)
  }

  // ---- PIN sessions ----

  async addPinSession(session: PinSession): Promise<void> {
    this.statements.addPinSession.run({
      ...session,
      expiresAt: session.expiresAt.getTime(),
      consumedAt: session.consumedAt === null ? null : session.consumedAt.getTime(),
      createdAt: session.createdAt.getTime(),
    })
  }

  async pinSession(id: string): Promise<PinSession | null> {
    const row = this.statements.pinSession.get(id)
    return row ? { ...row, expiresAt: new Date(row.expiresAt), consumedAt: row.consumedAt === null ? null : new Date(row.consumedAt), createdAt: new Date(row.createdAt) } : null
  }

  async consumePinSession(id: string, now: Date): Promise<void> {
    this.statements.consumePinSession.run({ id, now: now.getTime() })
  }

  async livePinSessions(userId: string, now: Date): Promise<{ count: number; soonestExpiry: Date | null }> {
    const row = this.db
      .select({ count: count(), soonest: min(pinSessions.expiresAt) })
      .from(pinSessions)
      .where(and(eq(pinSessions.userId, userId), isNull(pinSessions.consumedAt), gt(pinSessions.expiresAt, now)))
      .get()
    return { count: row?.count ?? 0, soonestExpiry: row?.soonest ?? null }
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

  // ---- bounds and retention ----

  async clientReportsSince(userId: string, since: Date): Promise<{ count: number; oldest: Date | null }> {
    const row = this.db
      .select({ count: count(), oldest: min(securityEvents.receivedAt) })
      .from(securityEvents)
      .where(and(eq(securityEvents.userId, userId), gte(securityEvents.receivedAt, since), eq(securityEvents.source, 'client')))
      .get()
    return { count: row?.count ?? 0, oldest: row?.oldest ?? null }
  }

  async oldestLinks(limit: number): Promise<(ChainLink & { receivedAt: Date })[]> {
    return this.db.select({ seq: securityEvents.seq, hash: securityEvents.hash, receivedAt: securityEvents.receivedAt }).from(securityEvents).orderBy(asc(securityEvents.seq)).limit(limit).all()
  }

  async pruneThrough(anchor: PrunedAnchor): Promise<number> {
    const set = { prunedSeq: anchor.seq, prunedHash: anchor.hash, prunedMac: anchor.mac }
    // No head row, no cut: a chain without its head already fails verification.
    if (this.db.update(securityLogHead).set(set).where(eq(securityLogHead.id, HEAD_ID)).returning({ id: securityLogHead.id }).all().length === 0) return 0
    return this.db.delete(securityEvents).where(lte(securityEvents.seq, anchor.seq)).returning({ seq: securityEvents.seq }).all().length
  }

  async prunedAnchor(): Promise<PrunedAnchor | null> {
    const row = this.db
      .select({ seq: securityLogHead.prunedSeq, hash: securityLogHead.prunedHash, mac: securityLogHead.prunedMac })
      .from(securityLogHead)
      .where(eq(securityLogHead.id, HEAD_ID))
      .get()
    return row && row.seq !== null && row.hash !== null && row.mac !== null ? { seq: row.seq, hash: row.hash, mac: row.mac } : null
  }
}
