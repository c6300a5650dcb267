// Rated decisions (contract §15): a match's result moves both players'
// ratings exactly once, inside the unit of work that decides it (a claim's,
// an operator's resolve, the deadline job's no-show: applyDecision in
// games/tournament-operations.ts), and a correction takes the corrected
// update back and applies the new result. Byes, walkovers by disqualification
// and cancelled matches never reach here.
//
// Each update reads the players' rows locked (PostgreSQL: FOR UPDATE in user
// id order), computes from them with inactivity applied, writes them back and
// appends one history row per player, numbered on from the row's `seq`: the
// history is one unbroken chain per player and game.
import type { Transaction } from '../../db/storage'
import type { MatchRecord } from '../games/store'
import type { WebhookEvent } from '../webhooks/catalogue'
import { publishWebhooks } from '../webhooks/publish'
import { MAX_DEVIATION, rateMatch, type Glicko, type Score } from './glicko2'
import type { NewRatingChange, RatedOutcome, RatingConfig, RatingRecord } from './store'
import { boardPlace, effectiveGlicko, INITIAL_ROW, viewOf } from './view'

export interface RatedDecision {
  gameId: string
  match: Pick<MatchRecord, 'id' | 'slot1ParticipantId' | 'slot2ParticipantId'>
  outcome: 'WIN' | 'DRAW'
  winnerParticipantId: string | null
  /** The match's two seats when the caller has read them (applyDecision); read here otherwise. */
  seats?: readonly { participantId: string; userId: string }[] | null
}

/** The two players of a decided match, slot 1 first, and slot 1's score. */
async function playersOf(tx: Transaction, decision: RatedDecision): Promise<{ a: string; b: string; scoreA: Score }> {
  const { slot1ParticipantId: one, slot2ParticipantId: two } = decision.match
  if (one === null || two === null) throw new Error(`match ${decision.match.id}: a rated decision needs both players`)
  const seats = decision.seats ?? (await tx.games.seatsOf([one, two]))
  const userOf = (participantId: string) => {
    const seat = seats.find((s) => s.participantId === participantId)
    if (!seat) throw new Error(`participant ${participantId}: no such seat`)
    return seat.userId
  }
  const scoreA: Score = decision.outcome === 'DRAW' ? 0.5 : decision.winnerParticipantId === one ? 1 : 0
  return { a: userOf(one), b: userOf(two), scoreA }
}

function outcomeOf(score: Score): RatedOutcome {
  return score === 1 ? 'win' : score === 0 ? 'loss' : 'draw'
}

/** The game's rating settings and current season; a game always has one (created with it). */
async function contextOf(tx: Transaction, gameId: string) {
  const context = await tx.ratings.ratingContext(gameId)
  if (!context) throw new Error(`game ${gameId}: no current season`)
  return context
}

/** The two players' rows, locked, each created at the start values first if it was missing. */
async function lockedPair(tx: Transaction, gameId: string, seasonId: string, a: string, b: string, now: Date): Promise<[RatingRecord, RatingRecord]> {
  let rows = await tx.ratings.lockRatings(gameId, [a, b])
  if (rows.length < 2) {
    // In user id order, as the locks are taken: two first matches sharing two new players never deadlock on the inserts.
    const missing = [a, b].filter((userId) => !rows.some((row) => row.userId === userId)).sort()
    await tx.ratings.ensureRatings(missing.map((userId) => ({ ...INITIAL_ROW(now), gameId, userId, seasonId })))
    rows = await tx.ratings.lockRatings(gameId, [a, b])
  }
  const rowOf = (userId: string) => rows.find((row) => row.userId === userId)!
  return [rowOf(a), rowOf(b)]
}

/** `row` moved to `stored` (as stored: no inactivity on top), the board place recomputed. */
function moved(row: RatingRecord, stored: Glicko, config: RatingConfig, now: Date, changes: Partial<RatingRecord>): RatingRecord {
  const next = { ...row, ...stored, ...changes, seq: row.seq + 1, updatedAt: now }
  return { ...next, ...boardPlace(next, config, now) }
}

function historyRow(row: RatingRecord, kind: NewRatingChange['kind'], matchId: string, opponentUserId: string, outcome: RatedOutcome, before: Glicko, after: Glicko, now: Date): NewRatingChange {
  return {
    gameId: row.gameId,
    userId: row.userId,
    seq: row.seq + 1,
    seasonId: row.seasonId,
    kind,
    matchId,
    opponentUserId,
    outcome,
    ratingBefore: before.rating,
    deviationBefore: before.deviation,
    volatilityBefore: before.volatility,
    ratingAfter: after.rating,
    deviationAfter: after.deviation,
    volatilityAfter: after.volatility,
    createdAt: now,
  }
}

/**
 * A player's rating moved: `rating.updated` to them, and the studio's
 * webhook fact of it (what `publishWebhooks` is handed, once for the change's
 * players: one read of the subscribers).
 */
async function tell(tx: Transaction, now: Date, row: RatingRecord, matchId: string, reason: 'match' | 'correction', before: Glicko, after: Glicko): Promise<WebhookEvent<'rating.updated'>> {
  const change = Number((after.rating - before.rating).toFixed(2))
  const rating = viewOf(after, row.matches)
  await tx.events.append({ userId: row.userId, topic: 'status', type: 'rating.updated', data: { gameId: row.gameId, seasonId: row.seasonId, matchId, reason, change, rating } }, now)
  const { rating: value, deviation, display, provisional } = rating
  return { type: 'rating.updated', data: { userId: row.userId, gameId: row.gameId, seasonId: row.seasonId, matchId, reason, change, rating: value, deviation, display, provisional } }
}

/** Rates a decided match (a result both players get): both rows, two history rows, two events. */
export async function rateDecision(tx: Transaction, now: Date, decision: RatedDecision): Promise<void> {
  const { gameId } = decision
  const { a, b, scoreA } = await playersOf(tx, decision)
  const { config, seasonId } = await contextOf(tx, gameId)
  const [rowA, rowB] = await lockedPair(tx, gameId, seasonId, a, b, now)
  const beforeA = effectiveGlicko(rowA, config, now)
  const beforeB = effectiveGlicko(rowB, config, now)
  const [afterA, afterB] = rateMatch(beforeA, beforeB, scoreA, config.tau)
  // A rated match restarts the inactivity count: stored as computed.
  const nextA = moved(rowA, afterA, config, now, { matches: rowA.matches + 1, lastRatedAt: now })
  const nextB = moved(rowB, afterB, config, now, { matches: rowB.matches + 1, lastRatedAt: now })
  await tx.ratings.recordUpdates([
    { rating: nextA, change: historyRow(rowA, 'match', decision.match.id, b, outcomeOf(scoreA), beforeA, afterA, now) },
    { rating: nextB, change: historyRow(rowB, 'match', decision.match.id, a, outcomeOf((1 - scoreA) as Score), beforeB, afterB, now) },
  ])
  const facts = [await tell(tx, now, nextA, decision.match.id, 'match', beforeA, afterA), await tell(tx, now, nextB, decision.match.id, 'match', beforeB, afterB)]
  await publishWebhooks(tx, facts, now)
  tx.count('ratingUpdates', 'match', 2)
}

const minus = (x: Glicko, y: Glicko): Glicko => ({ rating: x.rating - y.rating, deviation: x.deviation - y.deviation, volatility: x.volatility - y.volatility })
const plus = (x: Glicko, y: Glicko): Glicko => ({ rating: x.rating + y.rating, deviation: x.deviation + y.deviation, volatility: x.volatility + y.volatility })
/** Deviation within (0, 350], volatility above 0: a taken-back change can never leave a rating Glicko-2 cannot compute from. */
function bounded(g: Glicko): Glicko {
  return { rating: g.rating, deviation: Math.min(MAX_DEVIATION, Math.max(1, g.deviation)), volatility: Math.max(1e-6, g.volatility) }
}

/**
 * A correction (contract §9, §15) of a rated match: for each player, the
 * change the match's rating (and any earlier correction) made is taken back
 * and the new result's applied, computed from the ratings both had before
 * the match (its `match` history rows keep them). Later updates are not
 * recomputed. A match that was not rated (an unrated tournament) has no
 * history: nothing to correct.
 */
export async function rateCorrection(tx: Transaction, now: Date, decision: RatedDecision): Promise<void> {
  const { gameId } = decision
  const { a, b, scoreA } = await playersOf(tx, decision)
  const rows = await tx.ratings.historyOfMatch(gameId, [a, b], decision.match.id)
  if (rows.length === 0) return
  const { config, seasonId } = await contextOf(tx, gameId)
  const original = (userId: string) => {
    const row = rows.find((r) => r.userId === userId && r.kind === 'match')
    if (!row) throw new Error(`match ${decision.match.id}: no rating of ${userId} to correct`)
    return { rating: row.ratingBefore, deviation: row.deviationBefore, volatility: row.volatilityBefore }
  }
  /** What the match has changed so far for `userId`: its rating and the corrections since. */
  const applied = (userId: string) =>
    rows.filter((r) => r.userId === userId).reduce<Glicko>((sum, r) => plus(sum, minus({ rating: r.ratingAfter, deviation: r.deviationAfter, volatility: r.volatilityAfter }, { rating: r.ratingBefore, deviation: r.deviationBefore, volatility: r.volatilityBefore })), { rating: 0, deviation: 0, volatility: 0 })
  const preA = original(a)
  const preB = original(b)
  const [resultA, resultB] = rateMatch(preA, preB, scoreA, config.tau)
  const [rowA, rowB] = await lockedPair(tx, gameId, seasonId, a, b, now)
  const correct = async (row: RatingRecord, pre: Glicko, result: Glicko, opponent: string, score: Score) => {
    // Stored values move by (new result − what was applied); the inactivity count is not restarted by a correction.
    const stored = bounded(plus({ rating: row.rating, deviation: row.deviation, volatility: row.volatility }, minus(minus(result, pre), applied(row.userId))))
    const next = moved(row, stored, config, now, {})
    const before = effectiveGlicko(row, config, now)
    const after = effectiveGlicko(next, config, now)
    await tx.ratings.recordUpdates([{ rating: next, change: historyRow(row, 'correction', decision.match.id, opponent, outcomeOf(score), before, after, now) }])
    tx.count('ratingUpdates', 'correction', 1)
    return tell(tx, now, next, decision.match.id, 'correction', before, after)
  }
  const facts = [await correct(rowA, preA, resultA, b, scoreA), await correct(rowB, preB, resultB, a, (1 - scoreA) as Score)]
  await publishWebhooks(tx, facts, now)
}
