// Integrity signals (contract §17, docs/integrity.md): when a staked match or
// a match of a prize tournament is decided with a win, what the pair's
// history says about it, read in the decision's unit of work (applyDecision,
// games/tournament-operations.ts), before the ratings move:
// - pair_limit: the winner and the loser met (decided, any game) more than
//   ARENA_INTEGRITY_PAIR_LIMIT times in the last 24 hours, this one included;
// - shared_address / shared_device: both signed in from one address, or one
//   device token, within the known-places window (hashes only);
// - alternating: a staked match whose pair's last 4 decided staked matches
//   (this one included) are all wins, won by each in turn;
// - upset: a provisional winner whose loser's display rating exceeded theirs
//   by more than ARENA_INTEGRITY_UPSET_GAP, with more than
//   ARENA_INTEGRITY_STAKE_REVIEW at stake (a stake; a prize tournament's
//   largest prize).
// A raised signal flags the match (one integrity_flags row), records an
// INTEGRITY_SIGNAL security event once committed and counts on
// arena_integrity_signals_total; the caller holds the payout (./holds.ts).
// Signals, never proof: an operator looks and releases or voids.
import type { Transaction } from '../../db/storage'
import type { IntegritySignal, RaisedSignal } from './store'
import { newId } from '../../shared/ids'
import { formatAmount, USDC } from '../../shared/money'
import { KNOWN_PLACES, userSubject } from '../auth/known-places'
import { effectiveGlicko, unratedView, viewOf } from '../ratings/view'
import type { SecurityEventInput } from '../security/event-log'
import type { Config } from '../../config'

/** The studio's tuning (ARENA_INTEGRITY_*) and where the security events go. */
export interface IntegrityPolicy {
  /** The signals switched on (ARENA_INTEGRITY_SIGNALS). */
  signals: readonly IntegritySignal[]
  pairLimit: number
  upsetGap: number
  /** Minor units: `upset` only above it. */
  stakeReview: bigint
  /** The security log: an INTEGRITY_SIGNAL event per flagged match, once committed. */
  onSecurityEvent?: (event: SecurityEventInput) => void
}

/** What a decision needs beyond its match (applyDecision's last parameter). */
export interface DecisionContext {
  integrity: IntegrityPolicy
}

export function integrityPolicy(
  config: Pick<Config, 'integritySignals' | 'integrityPairLimit' | 'integrityUpsetGap' | 'integrityStakeReview'>,
  onSecurityEvent?: (event: SecurityEventInput) => void,
): IntegrityPolicy {
  return { signals: config.integritySignals, pairLimit: config.integrityPairLimit, upsetGap: config.integrityUpsetGap, stakeReview: config.integrityStakeReview ?? 0n, onSecurityEvent }
}

/** How far back pair_limit counts. */
export const PAIR_WINDOW_MS = 86_400_000
/** How many of the pair's staked matches alternating looks at. */
export const ALTERNATING_RUN = 4

/** A decided win under review: who won against whom, in what, and what is at stake. */
export interface ReviewedWin {
  matchId: string
  gameId: string
  tournamentId: string | null
  winner: { participantId: string; userId: string }
  loser: { participantId: string; userId: string }
  /** A staked match (alternating looks at staked matches only). */
  staked: boolean
  /** Minor units: the stake, or the tournament's largest prize. */
  atStake: bigint
}

/** Every switched-on signal `win` raises, in INTEGRITY_SIGNALS order. Reads only. */
export async function evaluateSignals(tx: Transaction, now: Date, win: ReviewedWin, policy: IntegrityPolicy): Promise<RaisedSignal[]> {
  const on = new Set(policy.signals)
  const raised: RaisedSignal[] = []
  const w = win.winner.userId
  const l = win.loser.userId
  if (on.has('pair_limit')) {
    const matches = await tx.payouts.pairMatchCount(w, l, new Date(now.getTime() - PAIR_WINDOW_MS))
    if (matches > policy.pairLimit) raised.push({ signal: 'pair_limit', detail: { matches, limit: policy.pairLimit, windowHours: 24 } })
  }
  if (on.has('shared_address') || on.has('shared_device')) {
    const shared = await tx.auth.sharedPlaces(userSubject(w), userSubject(l), new Date(now.getTime() - KNOWN_PLACES.ttlMs))
    for (const kind of ['address', 'device'] as const) {
      const signal = kind === 'address' ? 'shared_address' : 'shared_device'
      const places = shared.filter((p) => p.kind === kind).length
      if (on.has(signal) && places > 0) raised.push({ signal, detail: { places } })
    }
  }
  if (on.has('alternating') && win.staked) {
    const run = await tx.payouts.latestStakedPairMatches(w, l, ALTERNATING_RUN)
    const alternates = run.length === ALTERNATING_RUN && run.some((m) => m.id === win.matchId) && run.every((m, i) => m.outcome === 'WIN' && m.winnerUserId !== null && (i === 0 || m.winnerUserId !== run[i - 1]!.winnerUserId))
    if (alternates) raised.push({ signal: 'alternating', detail: { matches: ALTERNATING_RUN } })
  }
  if (on.has('upset') && win.atStake > policy.stakeReview) {
    const context = await tx.ratings.ratingContext(win.gameId)
    if (context) {
      const views = new Map([w, l].map((userId) => [userId, unratedView()]))
      for (const row of await tx.ratings.ratingsIn(win.gameId, [w, l])) views.set(row.userId, viewOf(effectiveGlicko(row, context.config, now), row.matches))
      const [winner, loser] = [views.get(w)!, views.get(l)!]
      if (winner.provisional && loser.display - winner.display > policy.upsetGap) {
        raised.push({ signal: 'upset', detail: { winnerDisplay: winner.display, loserDisplay: loser.display, gap: policy.upsetGap, atStake: formatAmount(win.atStake, USDC) } })
      }
    }
  }
  return raised
}

/**
 * Evaluates `win` and, when it raises anything, flags the match (in `tx`),
 * counts the signals and records the security event once committed.
 * Answers the raised signals (none: nothing written).
 */
export async function reviewWin(tx: Transaction, now: Date, win: ReviewedWin, policy: IntegrityPolicy): Promise<RaisedSignal[]> {
  if (policy.signals.length === 0) return []
  const signals = await evaluateSignals(tx, now, win, policy)
  if (signals.length === 0) return signals
  await tx.payouts.insertFlag({
    id: newId('integrityFlag'),
    matchId: win.matchId,
    gameId: win.gameId,
    tournamentId: win.tournamentId,
    userId: win.winner.userId,
    participantId: win.winner.participantId,
    opponentUserId: win.loser.userId,
    signals,
    createdAt: now,
  })
  for (const s of signals) tx.count('integritySignals', s.signal, 1)
  const names = signals.map((s) => s.signal)
  tx.afterCommit(() =>
    policy.onSecurityEvent?.({
      userId: win.winner.userId,
      source: 'server',
      kind: 'INTEGRITY_SIGNAL',
      level: 'WARN',
      details: { matchId: win.matchId, tournamentId: win.tournamentId, opponentUserId: win.loser.userId, signals: names },
    }),
  )
  return signals
}
