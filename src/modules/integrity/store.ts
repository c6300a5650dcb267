// What the integrity signals and the held payouts (docs/integrity.md) need
// from a database: the pair's past matches the signals read (their shared
// sign-in places are the auth store's sharedPlaces), the flags they raise, and the holds an operator decides.
export const INTEGRITY_SIGNALS = ['pair_limit', 'shared_address', 'shared_device', 'alternating', 'upset'] as const
export type IntegritySignal = (typeof INTEGRITY_SIGNALS)[number]
/** A signal as it was raised: which, and the figures it was raised on (counts, ratings; never an address or a device token). */
export interface RaisedSignal {
  signal: IntegritySignal
  detail: Record<string, string | number | boolean>
}

export const PAYOUT_HOLD_KINDS = ['stake', 'prize'] as const
export const PAYOUT_HOLD_STATUSES = ['held', 'released', 'voided'] as const
export type PayoutHoldStatus = (typeof PAYOUT_HOLD_STATUSES)[number]

/** The signals a decided staked or prize match raised against its winner (integrity_flags). */
export interface IntegrityFlagRecord {
  id: string
  matchId: string
  gameId: string
  tournamentId: string | null
  userId: string
  participantId: string
  opponentUserId: string
  signals: RaisedSignal[]
  createdAt: Date
}
export type NewIntegrityFlag = IntegrityFlagRecord

/** A payout kept in escrow until an operator releases or voids it (payout_holds); `amount` in minor units. */
export interface PayoutHoldRecord {
  id: string
  kind: (typeof PAYOUT_HOLD_KINDS)[number]
  matchId: string
  tournamentId: string | null
  rank: number | null
  userId: string
  participantId: string
  amount: string
  asset: string
  signals: RaisedSignal[]
  status: PayoutHoldStatus
  createdAt: Date
  decidedAt: Date | null
  decidedBy: string | null
  reason: string | null
}
export type NewPayoutHold = PayoutHoldRecord

/** A decided match both players of a pair were seated in, and whom it went to (null: a draw). */
export interface PairMatch {
  id: string
  decidedAt: Date
  outcome: 'WIN' | 'DRAW'
  winnerUserId: string | null
}

/** A hold as an operator lists it: with its winner's username. */
export type PayoutHoldRow = PayoutHoldRecord & { username: string }

export interface PayoutsStore {
  /** How many decided matches (any game, any kind) seated both `a` and `b`, decided at `since` or later. */
  pairMatchCount(a: string, b: string, since: Date): Promise<number>
  /** The pair's `limit` latest decided staked matches, newest first. */
  latestStakedPairMatches(a: string, b: string, limit: number): Promise<PairMatch[]>

  insertFlag(flag: NewIntegrityFlag): Promise<void>
  /** The flags raised in a tournament's matches. */
  flagsIn(tournamentId: string): Promise<IntegrityFlagRecord[]>

  insertHold(hold: NewPayoutHold): Promise<void>
  hold(id: string): Promise<PayoutHoldRow | null>
  /**
   * Decides a hold that is still `held` (release or void) and answers it as
   * decided; null when it is not held any more. One conditional UPDATE: on
   * PostgreSQL the row lock orders two instances deciding one hold, and the
   * second finds it decided (READ COMMITTED re-reads it; SERIALIZABLE runs
   * the unit of work again).
   */
  decideHold(id: string, change: { status: 'released' | 'voided'; decidedAt: Date; decidedBy: string; reason: string }): Promise<PayoutHoldRecord | null>
  /** A page of holds in `status`, oldest first (by id: ids are time-ordered), after the hold `afterId`. */
  holdsPage(status: PayoutHoldStatus, afterId: string | null, limit: number): Promise<PayoutHoldRow[]>
  /** The user's holds still held, oldest first (the wallet history's `held`). */
  heldOf(userId: string): Promise<PayoutHoldRecord[]>
  /** How many holds are held now (the `arena_payouts_held` gauge, the console's dashboard). */
  heldCount(): Promise<number>
}
