// Seasons (contract §15): a game is created with its first season, current
// at once; an operator schedules the next ones, each started at its
// `startsAt` by a durable job (`start_season`). The start, one unit of work:
// the current season ends with its final leaderboard written
// (season_standings: every player with a rated match in it, ranked by
// display with inactivity applied at that moment), every rating row of the
// game is reset (`soft`: half-way back to 1500, deviation at least 200;
// `hard`: 1500/350/0.06), counts no match in the new season and restarts its
// inactivity count, with a `season_reset` history row; the new season
// becomes current. A job run again finds the season started and does nothing.
import type { Transaction } from '../../db/storage'
import { newId } from '../../shared/ids'
import { displayOf, INITIAL, type Glicko } from './glicko2'
import type { RatingUpdate, SeasonRecord, SeasonReset, SeasonStandingRecord } from './store'
import { boardPlace, effectiveGlicko } from './view'

/** The least deviation a soft reset leaves (contract §15). */
export const SOFT_RESET_MIN_DEVIATION = 200

/** The season a game starts with, current from its creation. */
export function firstSeason(gameId: string, now: Date): SeasonRecord {
  return { id: newId('season'), gameId, number: 1, name: 'Season 1', reset: 'hard', startsAt: now, status: 'current', startedAt: now, endedAt: null, createdAt: now }
}

/** A rating as a season's reset leaves it. */
export function resetGlicko(current: Glicko, reset: SeasonReset): Glicko {
  if (reset === 'hard') return { ...INITIAL }
  return { rating: (current.rating + INITIAL.rating) / 2, deviation: Math.max(current.deviation, SOFT_RESET_MIN_DEVIATION), volatility: current.volatility }
}

/** Board order: display, then user id, both descending (the live board's, src/db/stores/ratings.ts). */
function boardOrder(x: { display: number; userId: string }, y: { display: number; userId: string }): number {
  if (x.display !== y.display) return y.display - x.display
  return x.userId < y.userId ? 1 : x.userId > y.userId ? -1 : 0
}

/** Starts `seasonId` if it is still scheduled (the job's work; see above). */
export async function startSeason(tx: Transaction, seasonId: string, now: Date): Promise<void> {
  const season = await tx.ratings.season(seasonId)
  if (!season || season.status !== 'scheduled') return
  const context = await tx.ratings.ratingContext(season.gameId)
  if (!context) throw new Error(`game ${season.gameId}: no current season`)
  const { config } = context
  const rows = await tx.ratings.ratingsOfGame(season.gameId)
  const current = rows.map((row) => ({ row, glicko: effectiveGlicko(row, config, now) }))

  // The ending season's final board: its players, ranked as the live board ranked them at this moment.
  const played = current
    .filter(({ row }) => row.matches > 0)
    .map(({ row, glicko }) => ({ row, glicko, display: displayOf(glicko), userId: row.userId }))
    .sort(boardOrder)
  const standings: SeasonStandingRecord[] = played.map(({ row, glicko, display }, i) => ({
    seasonId: context.seasonId,
    rank: i + 1,
    userId: row.userId,
    rating: glicko.rating,
    deviation: glicko.deviation,
    volatility: glicko.volatility,
    display,
    matches: row.matches,
  }))
  await tx.ratings.insertStandings(standings)

  const updates: RatingUpdate[] = []
  for (const { row, glicko } of current) {
    const after = resetGlicko(glicko, season.reset)
    const next = { ...row, ...after, seasonId: season.id, matches: 0, seq: row.seq + 1, lastRatedAt: now, updatedAt: now }
    updates.push({ rating: { ...next, ...boardPlace(next, config, now) }, change: {
      gameId: row.gameId,
      userId: row.userId,
      seq: row.seq + 1,
      seasonId: season.id,
      kind: 'season_reset',
      matchId: null,
      opponentUserId: null,
      outcome: null,
      ratingBefore: glicko.rating,
      deviationBefore: glicko.deviation,
      volatilityBefore: glicko.volatility,
      ratingAfter: after.rating,
      deviationAfter: after.deviation,
      volatilityAfter: after.volatility,
      createdAt: now,
    } })
  }
  // The ending season first: one current season per game at any moment (a unique index holds it).
  await tx.ratings.moveSeason(context.seasonId, 'current', 'ended', now)
  if (!(await tx.ratings.moveSeason(season.id, 'scheduled', 'current', now))) throw new Error(`season ${season.id}: moved while starting`)
  await tx.ratings.recordUpdates(updates)
  tx.count('ratingUpdates', 'season_reset', updates.length)
}
