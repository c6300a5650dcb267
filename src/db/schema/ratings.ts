// Ratings, leaderboards and seasons (contract §15; docs/ratings.md).
//
// A game's players are rated with Glicko-2 (src/modules/ratings/glicko2.ts).
// `ratings` holds each player's current rating in one game, updated in the
// unit of work of each rated decision; `rating_history` is its append-only
// chain (one row per update, numbered per player and game); `seasons` are a
// game's seasons, one of them current; `season_standings` is the final
// leaderboard of each season that ended, written once by the job that starts
// the next one.
import { sql } from 'drizzle-orm'
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { instant, int64, serial } from './columns'
import { users } from './auth'
import { games } from './games'

export const SEASON_STATUSES = ['scheduled', 'current', 'ended'] as const
export const SEASON_RESETS = ['soft', 'hard'] as const
export const RATING_CHANGE_KINDS = ['match', 'correction', 'season_reset'] as const
export const RATED_OUTCOMES = ['win', 'loss', 'draw'] as const

export const seasons = sqliteTable(
  'seasons',
  {
    id: text('id').primaryKey(),
    gameId: text('game_id')
      .notNull()
      .references(() => games.id),
    /** 1 for the season a game is created with, then one more per season created. */
    number: integer('number').notNull(),
    name: text('name').notNull(),
    reset: text('reset', { enum: SEASON_RESETS }).notNull(),
    startsAt: instant('starts_at').notNull(),
    status: text('status', { enum: SEASON_STATUSES }).notNull(),
    startedAt: instant('started_at'),
    endedAt: instant('ended_at'),
    createdAt: instant('created_at').notNull(),
  },
  (table) => [
    uniqueIndex('seasons_game_number').on(table.gameId, table.number),
    // One current season per game: the backstop of the start job's check.
    uniqueIndex('seasons_game_current').on(table.gameId).where(sql`${table.status} = 'current'`),
  ],
)

export const ratings = sqliteTable(
  'ratings',
  {
    gameId: text('game_id')
      .notNull()
      .references(() => games.id),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    /** The season `matches` counts in. */
    seasonId: text('season_id')
      .notNull()
      .references(() => seasons.id),
    /** As of the last update; inactivity grows the deviation on read. */
    rating: real('rating').notNull(),
    deviation: real('deviation').notNull(),
    volatility: real('volatility').notNull(),
    /** Rated matches this season. */
    matches: integer('matches').notNull(),
    /** The number of this player's last rating_history row in this game. */
    seq: integer('seq').notNull(),
    /** The last rated match's decision: inactivity counts whole periods from here. */
    lastRatedAt: instant('last_rated_at').notNull(),
    /** The display rating the leaderboard orders by: with inactivity applied as of boardDecayAt's last passing. */
    boardDisplay: real('board_display').notNull(),
    /** When the next inactivity period ends (boardDisplay falls then); null once the deviation is at its cap. */
    boardDecayAt: instant('board_decay_at'),
    /** The id of this player's last rating_history row in this game (seq `seq`); null before the first. */
    historyId: int64('history_id'),
    updatedAt: instant('updated_at').notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.gameId, table.userId] }),
    // The leaderboard: this season's players (one rated match at least), read backwards (display, then user id, descending).
    index('ratings_board').on(table.gameId, table.boardDisplay, table.userId).where(sql`${table.matches} > 0`),
    // The inactivity sweep: rows whose next period has ended.
    index('ratings_decay').on(table.boardDecayAt).where(sql`${table.boardDecayAt} IS NOT NULL`),
    index('ratings_user').on(table.userId),
  ],
)

// The history is appended in commit order and indexed by nothing but its id:
// each row points at the same player's previous row in the game
// (`previous_id`) and the player's `ratings` row at the last one
// (`history_id`). A per-player index would put each decision's two rows on
// two random index pages, the largest share of what rating a match cost the
// claim that decides it (docs/performance.md, "Ratings (issue 38)"); a
// player's history is read by following the chain back instead.
export const ratingHistory = sqliteTable('rating_history', {
  id: serial('id'),
  /** This player's previous row in this game (seq − 1); null for the first. */
  previousId: int64('previous_id'),
  // No foreign keys here: a row is written only from the player's `ratings` row (whose game, user and season are checked), and checking them again at every append cost a rated decision six lookups.
  gameId: text('game_id').notNull(),
  userId: text('user_id').notNull(),
  /** 1, 2, 3… per player and game: the chain has no gap. */
  seq: integer('seq').notNull(),
  seasonId: text('season_id').notNull(),
  kind: text('kind', { enum: RATING_CHANGE_KINDS }).notNull(),
  /** The match rated or corrected; null for a season reset. (Had it a foreign key, a Swiss re-pairing's delete of undecided matches would scan this unindexed table.) */
  matchId: text('match_id'),
  opponentUserId: text('opponent_user_id'),
  /** This player's result (as corrected, for a correction); null for a season reset. */
  outcome: text('outcome', { enum: RATED_OUTCOMES }),
  /** The rating just before this update (inactivity applied), and after it. */
  ratingBefore: real('rating_before').notNull(),
  deviationBefore: real('deviation_before').notNull(),
  volatilityBefore: real('volatility_before').notNull(),
  ratingAfter: real('rating_after').notNull(),
  deviationAfter: real('deviation_after').notNull(),
  volatilityAfter: real('volatility_after').notNull(),
  createdAt: instant('created_at').notNull(),
})

export const seasonStandings = sqliteTable(
  'season_standings',
  {
    seasonId: text('season_id')
      .notNull()
      .references(() => seasons.id),
    /** 1 the top; distinct (ties broken as the live board breaks them). */
    rank: integer('rank').notNull(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    rating: real('rating').notNull(),
    deviation: real('deviation').notNull(),
    volatility: real('volatility').notNull(),
    display: real('display').notNull(),
    matches: integer('matches').notNull(),
  },
  (table) => [primaryKey({ columns: [table.seasonId, table.rank] }), uniqueIndex('season_standings_user').on(table.seasonId, table.userId), index('season_standings_of_user').on(table.userId)],
)
