// The wire shapes of ratings, leaderboards and seasons (contract §15).
import { t, type Static } from 'elysia'

export const RatingView = t.Object(
  {
    rating: t.Number({ description: 'Glicko-2 rating (2 decimals); 1500 to start' }),
    deviation: t.Number({ description: 'rating deviation (2 decimals): 350 to start, shrinks with play, grows with inactivity (each whole inactivityPeriodS, up to 350)' }),
    volatility: t.Number({ description: 'Glicko-2 volatility (6 decimals); 0.06 to start' }),
    display: t.Number({ description: 'rating − 2 × deviation (2 decimals): what the leaderboard ranks by' }),
    provisional: t.Boolean({ description: 'fewer than 10 rated matches this season' }),
    matches: t.Integer({ description: 'rated matches this season' }),
  },
  { $id: 'RatingView' },
)
export type RatingView = Static<typeof RatingView>

export const GameRatingSettings = t.Object(
  {
    tau: t.Number({ minimum: 0.1, maximum: 2, description: 'Glicko-2\'s system constant τ: how much a surprising result moves volatility (0.3–1.2 usual); default 0.5' }),
    inactivityPeriodS: t.Integer({ minimum: 3600, maximum: 31_536_000, description: 'each whole period this long without a rated match grows the deviation; default 604800 (a week)' }),
  },
  { $id: 'GameRatingSettings' },
)
export type GameRatingSettings = Static<typeof GameRatingSettings>

export const SeasonReset = t.Union([t.Literal('soft'), t.Literal('hard')], {
  description: '`soft`: each player half-way between their rating and 1500, deviation at least 200; `hard`: everyone at 1500/350/0.06',
})

export const Season = t.Object(
  {
    id: t.String(),
    gameId: t.String(),
    number: t.Integer({ description: '1 for the season a game is created with' }),
    name: t.String(),
    reset: SeasonReset,
    status: t.Union([t.Literal('scheduled'), t.Literal('current'), t.Literal('ended')]),
    startsAt: t.String(),
    startedAt: t.Nullable(t.String()),
    endedAt: t.Nullable(t.String()),
    createdAt: t.String(),
  },
  { $id: 'Season' },
)
export type Season = Static<typeof Season>

export const CreateSeasonBody = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 100 }),
    startsAt: t.String({ format: 'date-time', description: 'when the start job starts it: now or later, after every other season of the game starts, at most a year ahead' }),
    reset: SeasonReset,
  },
  { $id: 'CreateSeasonBody' },
)
export type CreateSeasonBody = Static<typeof CreateSeasonBody>

export const LeaderboardEntry = t.Object(
  {
    rank: t.Integer({ description: '1 the top; distinct, ties broken by user id (descending)' }),
    userId: t.String(),
    username: t.Nullable(t.String({ description: 'null in a past season\'s board for an account deleted since' })),
    rating: RatingView,
  },
  { $id: 'LeaderboardEntry' },
)

export const LeaderboardQuery = t.Object({
  season: t.Optional(t.String({ maxLength: 64, description: 'a season id of the game; default the current season' })),
  after: t.Optional(t.String({ maxLength: 256, description: 'the `cursor` of the previous page' })),
  limit: t.Optional(t.Numeric({ minimum: 1, maximum: 100, description: '1 to 100, default 50' })),
})

export const Leaderboard = t.Object(
  {
    season: Season,
    entries: t.Array(LeaderboardEntry),
    cursor: t.Nullable(t.String({ description: 'pass as `after` for the next page; null at the end' })),
  },
  { $id: 'Leaderboard' },
)
export type Leaderboard = Static<typeof Leaderboard>

export const RatingChange = t.Object(
  {
    seq: t.Integer({ description: '1, 2, 3… per player and game, without a gap' }),
    kind: t.Union([t.Literal('match'), t.Literal('correction'), t.Literal('season_reset')]),
    seasonId: t.String(),
    matchId: t.Nullable(t.String()),
    opponentUserId: t.Nullable(t.String()),
    outcome: t.Nullable(t.Union([t.Literal('win'), t.Literal('loss'), t.Literal('draw')], { description: 'the player\'s result (as corrected, for a correction)' })),
    before: t.Object({ rating: t.Number(), deviation: t.Number(), volatility: t.Number() }, { description: 'just before the update, inactivity applied' }),
    after: t.Object({ rating: t.Number(), deviation: t.Number(), volatility: t.Number() }),
    createdAt: t.String(),
  },
  { $id: 'RatingChange' },
)

export const HistoryQuery = t.Object({
  after: t.Optional(t.String({ maxLength: 32, description: 'the `cursor` of the previous page' })),
  limit: t.Optional(t.Numeric({ minimum: 1, maximum: 100, description: '1 to 100, default 50' })),
})

export const RatingHistoryPage = t.Object(
  {
    history: t.Array(RatingChange),
    cursor: t.Nullable(t.String({ description: 'pass as `after` for the next page; null at the end' })),
  },
  { $id: 'RatingHistoryPage' },
)
export type RatingHistoryPage = Static<typeof RatingHistoryPage>
