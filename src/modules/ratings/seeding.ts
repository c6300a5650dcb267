// What a `seeding: "rating"` tournament (contract §15) seeds by: each
// player's display rating in the tournament's game at the start, as the
// player would see it then (inactivity applied, rounded as shown), 800 for a
// player never rated in the game (1500 − 2 × 350). Read in the start's unit
// of work, unlocked: a rated decision committing meanwhile is seen or not,
// as it would be a moment earlier or later.
import type { Transaction } from '../../db/storage'
import { effectiveGlicko, unratedView, viewOf } from './view'

/** Each of `userIds`' display rating in the game at `now`. */
export async function displaysAtStart(tx: Transaction, gameId: string, userIds: readonly string[], now: Date): Promise<Map<string, number>> {
  const context = await tx.ratings.ratingContext(gameId)
  if (!context) throw new Error(`game ${gameId}: no current season`)
  const rows = await tx.ratings.ratingsIn(gameId, userIds)
  const displays = new Map(userIds.map((userId) => [userId, unratedView().display]))
  for (const row of rows) displays.set(row.userId, viewOf(effectiveGlicko(row, context.config, now), row.matches).display)
  return displays
}
