// What the ratings module needs from the database, in its own terms (see
// src/db/storage.ts): each game's rating settings and seasons, each player's
// current rating in a game, its append-only history, and the final
// leaderboards of ended seasons. Written once for both engines
// (src/db/stores/ratings.ts); PostgreSQL adds the row locks.
import type { GameRatingSettings } from './model'

export type SeasonStatus = 'scheduled' | 'current' | 'ended'
export type SeasonReset = 'soft' | 'hard'
export type RatingChangeKind = 'match' | 'correction' | 'season_reset'
export type RatedOutcome = 'win' | 'loss' | 'draw'

/** A game's rating settings (contract §15): τ, and the inactivity period in seconds. */
export type RatingConfig = GameRatingSettings

export interface SeasonRecord {
  id: string
  gameId: string
  number: number
  name: string
  reset: SeasonReset
  startsAt: Date
  status: SeasonStatus
  startedAt: Date | null
  endedAt: Date | null
  createdAt: Date
}

/** A player's rating in one game, as stored (no inactivity applied). */
export interface RatingRecord {
  gameId: string
  userId: string
  seasonId: string
  rating: number
  deviation: number
  volatility: number
  matches: number
  seq: number
  lastRatedAt: Date
  boardDisplay: number
  boardDecayAt: Date | null
  /** The player's last history row in this game (seq `seq`); null before the first. */
  historyId: number | null
  updatedAt: Date
}

/** One row of a player's rating chain. */
export interface RatingHistoryRecord {
  id: number
  /** The player's previous row in this game; null for the first. */
  previousId: number | null
  gameId: string
  userId: string
  seq: number
  seasonId: string
  kind: RatingChangeKind
  matchId: string | null
  opponentUserId: string | null
  outcome: RatedOutcome | null
  ratingBefore: number
  deviationBefore: number
  volatilityBefore: number
  ratingAfter: number
  deviationAfter: number
  volatilityAfter: number
  createdAt: Date
}

/** A history row as an update appends it: numbered and chained by the store. */
export type NewRatingChange = Omit<RatingHistoryRecord, 'id' | 'previousId'>

/** An update of a player's rating: the row as it is to be stored, and its history row. */
export interface RatingUpdate {
  /** As read (its `historyId` the chain's last row so far), with the new values. */
  rating: RatingRecord
  change: NewRatingChange
}

/** A row of an ended season's final leaderboard. */
export interface SeasonStandingRecord {
  seasonId: string
  rank: number
  userId: string
  rating: number
  deviation: number
  volatility: number
  display: number
  matches: number
}

/** Where a leaderboard page starts: after this row (board order: display, then user id, both descending). */
export interface BoardCursor {
  display: number
  userId: string
}

export interface RatingsStore {
  /** A game's rating settings and current season (null: no such game). One query: every rated decision reads it. */
  ratingContext(gameId: string): Promise<{ config: RatingConfig; seasonId: string } | null>
  setRatingConfig(gameId: string, config: RatingConfig): Promise<boolean>

  /**
   * The players' ratings in the game, read locked in a write (FOR UPDATE on
   * PostgreSQL, in user id order so two decisions sharing a player never
   * deadlock): what an update is computed from. Missing players: no row.
   */
  lockRatings(gameId: string, userIds: readonly string[]): Promise<RatingRecord[]>
  /** Inserts a starting row for each player without one (taken if another unit of work inserted it first). */
  ensureRatings(rows: readonly RatingRecord[]): Promise<void>
  /** Writes rows read by lockRatings (or ensured) back, whole, without a history row (their place on the board). */
  saveRatings(rows: readonly RatingRecord[]): Promise<void>
  /**
   * Appends each update's history row after the player's last one (the
   * rating's `historyId` as read) and writes the rating back pointing at it:
   * the history stays one chain per player and game.
   */
  recordUpdates(updates: readonly RatingUpdate[]): Promise<void>
  /** The players' history rows of `matchId` (its rating and any corrections since), oldest first: each chain followed back to the match. */
  historyOfMatch(gameId: string, userIds: readonly string[], matchId: string): Promise<RatingHistoryRecord[]>

  ratingOf(gameId: string, userId: string): Promise<RatingRecord | null>
  /** These players' ratings in the game, unlocked (a `rating` seeding reads them at the start). Missing players: no row. */
  ratingsIn(gameId: string, userIds: readonly string[]): Promise<RatingRecord[]>
  /** The user's ratings in every game. */
  ratingsOfUser(userId: string): Promise<RatingRecord[]>
  /** The user's history in the game after `afterSeq`, oldest first: the chain followed back from its last row to `afterSeq + 1`. */
  historyOf(gameId: string, userId: string, afterSeq: number, limit: number): Promise<RatingHistoryRecord[]>
  /** The live leaderboard: this season's players (a rated match at least), not deleted, in board order after `after`. */
  board(gameId: string, after: BoardCursor | null, limit: number): Promise<(RatingRecord & { username: string })[]>
  /** An ended season's final leaderboard after `afterRank`, by rank. */
  standings(seasonId: string, afterRank: number, limit: number): Promise<(SeasonStandingRecord & { username: string | null })[]>

  insertSeason(season: SeasonRecord): Promise<void>
  season(id: string): Promise<SeasonRecord | null>
  /** A game's seasons, newest first. */
  seasonsOf(gameId: string): Promise<SeasonRecord[]>
  currentSeason(gameId: string): Promise<SeasonRecord | null>
  /** The highest season number of the game (0: none). */
  lastSeasonNumber(gameId: string): Promise<number>
  /** Moves a season from `from` to `to`, stamping `at` (startedAt for current, endedAt for ended); false if it was not `from`. */
  moveSeason(id: string, from: SeasonStatus, to: SeasonStatus, at: Date): Promise<boolean>
  /** Every rating row of the game (a season change resets them all). */
  ratingsOfGame(gameId: string): Promise<RatingRecord[]>
  insertStandings(rows: readonly SeasonStandingRecord[]): Promise<void>

  /** Rows whose next inactivity period ended by `now` (the board sweep), at most `limit`. */
  decayDue(now: Date, limit: number): Promise<RatingRecord[]>
  /** Moves a row's board position (the sweep): only if the row still ends a period at `expected` (an update since has placed it anew). */
  moveOnBoard(gameId: string, userId: string, expected: Date, boardDisplay: number, boardDecayAt: Date | null): Promise<void>
}
