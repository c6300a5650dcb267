// The integrity signals' reads, their flags and the payouts held for review
// (src/modules/integrity/store.ts), on either engine: the same queries on
// both, none on a hot path (only a decided staked or prize match comes here).
import { and, asc, count, desc, eq, gt, gte, inArray, isNotNull, or, sql } from 'drizzle-orm'
import type { IntegrityFlagRecord, NewIntegrityFlag, NewPayoutHold, PairMatch, PayoutHoldRecord, PayoutHoldRow, PayoutHoldStatus, PayoutsStore } from '../../modules/integrity/store'
import { Queries } from './scope'

export class PayoutsQueries extends Queries implements PayoutsStore {
  /** The decided matches seating both `a` and `b` (either slot): through the slot indexes, one subquery of participants per user. */
  private pairCondition(a: string, b: string) {
    const { matches, participants } = this.t
    const seatsOf = (userId: string) => this.db.select({ id: participants.id }).from(participants).where(eq(participants.userId, userId))
    return and(
      eq(matches.status, 'decided'),
      or(
        and(inArray(matches.slot1ParticipantId, seatsOf(a)), inArray(matches.slot2ParticipantId, seatsOf(b))),
        and(inArray(matches.slot1ParticipantId, seatsOf(b)), inArray(matches.slot2ParticipantId, seatsOf(a))),
      ),
    )
  }

  async pairMatchCount(a: string, b: string, since: Date): Promise<number> {
    const { matches } = this.t
    const [row] = await this.db
      .select({ n: count() })
      .from(matches)
      .where(and(this.pairCondition(a, b), gte(matches.decidedAt, since)))
    return Number(row?.n ?? 0)
  }

  async latestStakedPairMatches(a: string, b: string, limit: number): Promise<PairMatch[]> {
    const { matches, participants } = this.t
    const rows = await this.db
      .select({ id: matches.id, decidedAt: matches.decidedAt, outcome: matches.outcome, winnerUserId: participants.userId })
      .from(matches)
      .leftJoin(participants, eq(participants.id, matches.winnerParticipantId))
      .where(and(this.pairCondition(a, b), isNotNull(matches.stake)))
      .orderBy(desc(matches.decidedAt), desc(matches.id))
      .limit(limit)
    return rows.map((row) => ({ id: row.id, decidedAt: row.decidedAt!, outcome: row.outcome === 'DRAW' ? 'DRAW' : 'WIN', winnerUserId: row.winnerUserId ?? null }))
  }

  async insertFlag(flag: NewIntegrityFlag): Promise<void> {
    await this.db.insert(this.t.integrityFlags).values(flag)
  }

  async flagsIn(tournamentId: string): Promise<IntegrityFlagRecord[]> {
    const { integrityFlags } = this.t
    return this.db.select().from(integrityFlags).where(eq(integrityFlags.tournamentId, tournamentId)).orderBy(asc(integrityFlags.createdAt), asc(integrityFlags.id))
  }

  async insertHold(hold: NewPayoutHold): Promise<void> {
    await this.db.insert(this.t.payoutHolds).values(hold)
  }

  private withUsername() {
    const { payoutHolds, users } = this.t
    return this.db.select({ hold: payoutHolds, username: users.username }).from(payoutHolds).innerJoin(users, eq(users.id, payoutHolds.userId))
  }

  async hold(id: string): Promise<PayoutHoldRow | null> {
    const [row] = await this.withUsername().where(eq(this.t.payoutHolds.id, id))
    return row ? { ...row.hold, username: row.username } : null
  }

  async decideHold(id: string, change: { status: 'released' | 'voided'; decidedAt: Date; decidedBy: string; reason: string }): Promise<PayoutHoldRecord | null> {
    const { payoutHolds } = this.t
    const [row] = await this.db
      .update(payoutHolds)
      .set(change)
      .where(and(eq(payoutHolds.id, id), eq(payoutHolds.status, 'held')))
      .returning()
    return row ?? null
  }

  async holdsPage(status: PayoutHoldStatus, afterId: string | null, limit: number): Promise<PayoutHoldRow[]> {
    const { payoutHolds } = this.t
    const rows = await this.withUsername()
      .where(and(eq(payoutHolds.status, status), afterId === null ? undefined : gt(payoutHolds.id, afterId)))
      .orderBy(asc(payoutHolds.id))
      .limit(limit)
    return rows.map((row) => ({ ...row.hold, username: row.username }))
  }

  async heldOf(userId: string): Promise<PayoutHoldRecord[]> {
    const { payoutHolds } = this.t
    return this.db
      .select()
      .from(payoutHolds)
      .where(and(eq(payoutHolds.userId, userId), eq(payoutHolds.status, 'held')))
      .orderBy(asc(payoutHolds.createdAt), asc(payoutHolds.id))
  }

  async heldCount(): Promise<number> {
    const { payoutHolds } = this.t
    const [row] = await this.db.select({ n: sql<number>`count(*)` }).from(payoutHolds).where(eq(payoutHolds.status, 'held'))
    return Number(row?.n ?? 0)
  }
}
