// Ratings on SQLite: the queries of src/db/stores/ratings.ts, but the ones
// every rated decision makes inside a claim's unit of work (the game's rating
// settings and current season, the two players' rows, their update and their
// two history rows) are compiled once per connection. Built by Drizzle each
// time, they cost a deciding claim more than the rest of its unit of work
// (docs/performance.md, "Ratings (issue 38)"). The chain walk, the same SQL
// on both engines, runs here through Drizzle's raw `all`.
import { getTableColumns, type SQL } from 'drizzle-orm'
import type { BunSQLiteDatabase } from 'drizzle-orm/bun-sqlite'
import { games, ratingHistory, ratings, seasons } from '../../schema'
import type { NewRatingChange, RatingConfig, RatingRecord, RatingUpdate } from '../../../modules/ratings/store'
import { RatingsQueries, type ChainStep } from '../../stores/ratings'
import { insertInto, perConnection, selectList } from '../connection'
import type { SqliteScope } from '../storage'

const RATING_FIELDS = [
  'gameId', 'userId', 'seasonId', 'rating', 'deviation', 'volatility', 'matches', 'seq', 'lastRatedAt', 'boardDisplay', 'boardDecayAt', 'historyId', 'updatedAt',
] as const satisfies readonly (keyof RatingRecord)[]
const HISTORY_FIELDS = [
  'previousId', 'gameId', 'userId', 'seq', 'seasonId', 'kind', 'matchId', 'opponentUserId', 'outcome',
  'ratingBefore', 'deviationBefore', 'volatilityBefore', 'ratingAfter', 'deviationAfter', 'volatilityAfter', 'createdAt',
] as const satisfies readonly (keyof NewRatingChange | 'previousId')[]
/** What the rating update writes: every column but the key. */
const UPDATED_FIELDS = RATING_FIELDS.filter((f) => f !== 'gameId' && f !== 'userId')
const IN_SEASON_FIELDS = UPDATED_FIELDS.filter((f) => f !== 'seasonId')

type Times = 'lastRatedAt' | 'boardDecayAt' | 'updatedAt'
type RawRating = Omit<RatingRecord, Times> & { lastRatedAt: number; boardDecayAt: number | null; updatedAt: number }
type RatingParams = { [K in keyof RawRating]: RawRating[K] }
type HistoryParams = Omit<NewRatingChange, 'createdAt'> & { previousId: number | null; createdAt: number }

function toRecord(raw: RawRating): RatingRecord {
  return { ...raw, lastRatedAt: new Date(raw.lastRatedAt), boardDecayAt: raw.boardDecayAt === null ? null : new Date(raw.boardDecayAt), updatedAt: new Date(raw.updatedAt) }
}

function toParams(row: RatingRecord): RatingParams {
  return {
    gameId: row.gameId,
    userId: row.userId,
    seasonId: row.seasonId,
    rating: row.rating,
    deviation: row.deviation,
    volatility: row.volatility,
    matches: row.matches,
    seq: row.seq,
    lastRatedAt: row.lastRatedAt.getTime(),
    boardDisplay: row.boardDisplay,
    boardDecayAt: row.boardDecayAt === null ? null : row.boardDecayAt.getTime(),
    historyId: row.historyId,
    updatedAt: row.updatedAt.getTime(),
  }
}

const statements = perConnection((sqlite) => {
  const ratingColumns = getTableColumns(ratings)
  const gameColumns = getTableColumns(games)
  const seasonColumns = getTableColumns(seasons)
  const column = (field: (typeof RATING_FIELDS)[number]) => `"${ratingColumns[field].name}"`
  return {
    // The game's settings and, by a scalar subquery (a JOIN would be compiled
    // again at every run: see stores/matches.ts), its current season through
    // the partial index seasons_game_current, whose condition is written out
    // (bound, SQLite could not know at compile time that the index applies).
    context: sqlite.prepare<{ tau: number; inactivityPeriodS: number; seasonId: string | null }, { gameId: string }>(
      `SELECT "${gameColumns.ratingTau.name}" AS "tau", "${gameColumns.ratingInactivityPeriodS.name}" AS "inactivityPeriodS",
         (SELECT "${seasonColumns.id.name}" FROM seasons WHERE "${seasonColumns.gameId.name}" = $gameId AND "${seasonColumns.status.name}" = 'current') AS "seasonId"
       FROM games WHERE id = $gameId`,
    ),
    // One player's row, by its key: a match's two players are two of these,
    // sorted by user id here. Not `user_id IN ($a, $b)`, whose list SQLite
    // builds into a table at every run, nor with ORDER BY, which SQLite (3.54)
    // compiled again at every run (55 µs instead of 4).
    one: sqlite.prepare<RawRating, { gameId: string; userId: string }>(
      `SELECT ${selectList(ratingColumns, RATING_FIELDS)} FROM ratings WHERE game_id = $gameId AND user_id = $userId`,
    ),
    ensure: sqlite.prepare<unknown, RatingParams>(`${insertInto(ratings, [...RATING_FIELDS])} ON CONFLICT DO NOTHING`),
    save: sqlite.prepare<unknown, RatingParams>(
      `UPDATE ratings SET ${UPDATED_FIELDS.map((f) => `${column(f)} = $${f}`).join(', ')} WHERE game_id = $gameId AND user_id = $userId`,
    ),
    // A match's or a correction's update: the season stays, so it is not written (writing it would check its reference again).
    saveInSeason: sqlite.prepare<unknown, Omit<RatingParams, 'seasonId'>>(
      `UPDATE ratings SET ${IN_SEASON_FIELDS.map((f) => `${column(f)} = $${f}`).join(', ')} WHERE game_id = $gameId AND user_id = $userId`,
    ),
    history: sqlite.prepare<{ id: number }, HistoryParams>(`${insertInto(ratingHistory, [...HISTORY_FIELDS])} RETURNING id`),
  }
})

export class SqliteRatingsStore extends RatingsQueries {
  constructor(protected override readonly scope: SqliteScope) {
    super(scope)
  }

  private get statements() {
    return statements(this.scope.handle.sqlite)
  }

  override async ratingContext(gameId: string): Promise<{ config: RatingConfig; seasonId: string } | null> {
    const row = this.statements.context.get({ gameId })
    return row && row.seasonId !== null ? { config: { tau: row.tau, inactivityPeriodS: row.inactivityPeriodS }, seasonId: row.seasonId } : null
  }

  override async lockRatings(gameId: string, userIds: readonly string[]): Promise<RatingRecord[]> {
    // Other than a match's two players: the query builder's.
    if (userIds.length !== 2 || userIds[0] === userIds[1]) return super.lockRatings(gameId, userIds)
    // Ids are ASCII: JavaScript's order is SQLite's BINARY collation.
    const rows: RawRating[] = []
    for (const userId of userIds) {
      const row = this.statements.one.get({ gameId, userId })
      if (row) rows.push(row)
    }
    return rows.sort((x, y) => (x.userId < y.userId ? -1 : x.userId > y.userId ? 1 : 0)).map(toRecord)
  }

  override async ensureRatings(rows: readonly RatingRecord[]): Promise<void> {
    for (const row of rows) this.statements.ensure.run(toParams(row))
  }

  override async saveRatings(rows: readonly RatingRecord[]): Promise<void> {
    for (const row of rows) this.statements.save.run(toParams(row))
  }

  override async recordUpdates(updates: readonly RatingUpdate[]): Promise<void> {
    // A season's start updates every player: the query builder's chunked INSERTs.
    if (updates.length > 2) return super.recordUpdates(updates)
    for (const { rating, change } of updates) {
      const { id } = this.statements.history.get({ ...change, previousId: rating.historyId, createdAt: change.createdAt.getTime() })!
      const { seasonId, ...params } = toParams({ ...rating, historyId: id })
      if (change.kind === 'season_reset') this.statements.save.run({ ...params, seasonId })
      else this.statements.saveInSeason.run(params)
    }
  }

  protected override async walk(query: SQL): Promise<ChainStep[]> {
    return (this.scope.db as unknown as BunSQLiteDatabase).all<ChainStep>(query)
  }
}
