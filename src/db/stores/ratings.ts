// Ratings, their history, seasons and final leaderboards, on either engine
// (src/modules/ratings/store.ts says what each does). Written once; the
// PostgreSQL subclass (src/db/postgres/stores/ratings.ts) adds the row lock
// every rated decision takes on its players' rows.
import { and, asc, desc, eq, gt, inArray, isNotNull, isNull, lt, lte, max, or, sql, type SQL } from 'drizzle-orm'
import type { BoardCursor, RatingConfig, RatingHistoryRecord, RatingRecord, RatingsStore, RatingUpdate, SeasonRecord, SeasonStandingRecord, SeasonStatus } from '../../modules/ratings/store'
import { Queries } from './scope'

/** Rows per INSERT: SQLite limits the bound variables of one statement (16 a history row). */
const CHUNK = 50

/** A row of a chain walk: enough to choose which rows to read whole. */
export interface ChainStep {
  id: number
  seq: number
  kind: string
  matchId: string | null
}

/**
 * A player's history in a game, followed back from its last row (the
 * rating's `history_id`) while `more` holds for the row just reached (its
 * columns as `c.seq`, `c.kind`, `c.match_id`). The one recursive query both
 * engines say the same way; Drizzle has no builder for it, so each engine's
 * store runs it (`walk`).
 */
function chainWalk(gameId: string, userId: string, more: SQL): SQL {
  return sql`WITH RECURSIVE chain(id, previous_id, seq, kind, match_id) AS (
      SELECT h.id, h.previous_id, h.seq, h.kind, h.match_id FROM rating_history h
        WHERE h.id = (SELECT r.history_id FROM ratings r WHERE r.game_id = ${gameId} AND r.user_id = ${userId})
      UNION ALL
      SELECT h.id, h.previous_id, h.seq, h.kind, h.match_id FROM rating_history h JOIN chain c ON h.id = c.previous_id WHERE ${more}
    )
    SELECT id, seq, kind, match_id AS "matchId" FROM chain`
}

export class RatingsQueries extends Queries implements RatingsStore {
  /** A read an update is computed from: locked by the PostgreSQL subclass inside a write. */
  protected lockedInWrite<Q>(query: Q): Q {
    return query
  }

  async ratingContext(gameId: string): Promise<{ config: RatingConfig; seasonId: string } | null> {
    const { games, seasons } = this.t
    const [row] = await this.db
      .select({ tau: games.ratingTau, inactivityPeriodS: games.ratingInactivityPeriodS, seasonId: seasons.id })
      .from(games)
      .innerJoin(seasons, and(eq(seasons.gameId, games.id), eq(seasons.status, 'current')))
      .where(eq(games.id, gameId))
    return row ? { config: { tau: row.tau, inactivityPeriodS: row.inactivityPeriodS }, seasonId: row.seasonId } : null
  }

  async setRatingConfig(gameId: string, config: RatingConfig): Promise<boolean> {
    const { games } = this.t
    const rows = await this.db.update(games).set({ ratingTau: config.tau, ratingInactivityPeriodS: config.inactivityPeriodS }).where(eq(games.id, gameId)).returning({ id: games.id })
    return rows.length > 0
  }

  async lockRatings(gameId: string, userIds: readonly string[]): Promise<RatingRecord[]> {
    const { ratings } = this.t
    return this.lockedInWrite(
      this.db
        .select()
        .from(ratings)
        .where(and(eq(ratings.gameId, gameId), inArray(ratings.userId, [...userIds])))
        .orderBy(asc(ratings.userId)),
    )
  }

  async ensureRatings(rows: readonly RatingRecord[]): Promise<void> {
    if (rows.length === 0) return
    await this.db.insert(this.t.ratings).values([...rows]).onConflictDoNothing()
  }

  async saveRatings(rows: readonly RatingRecord[]): Promise<void> {
    const { ratings } = this.t
    for (const row of rows) {
      const { gameId, userId, ...rest } = row
      await this.db.update(ratings).set(rest).where(and(eq(ratings.gameId, gameId), eq(ratings.userId, userId)))
    }
  }

  async recordUpdates(updates: readonly RatingUpdate[]): Promise<void> {
    const { ratingHistory } = this.t
    for (let i = 0; i < updates.length; i += CHUNK) {
      const chunk = updates.slice(i, i + CHUNK)
      const ids = await this.db
        .insert(ratingHistory)
        .values(chunk.map(({ rating, change }) => ({ ...change, previousId: rating.historyId })))
        .returning({ id: ratingHistory.id, userId: ratingHistory.userId, gameId: ratingHistory.gameId })
      // RETURNING's order is the engine's: each id is matched to its update by player and game.
      const idOf = new Map(ids.map((r) => [`${r.gameId} ${r.userId}`, r.id]))
      await this.saveRatings(chunk.map(({ rating }) => ({ ...rating, historyId: idOf.get(`${rating.gameId} ${rating.userId}`)! })))
    }
  }

  /** Runs a chain walk (chainWalk): the engine's raw query. */
  protected walk(query: SQL): Promise<ChainStep[]> {
    void query
    throw new Error("a chain walk is run by the engine's store")
  }

  private async historyRows(ids: readonly number[]): Promise<RatingHistoryRecord[]> {
    if (ids.length === 0) return []
    const { ratingHistory } = this.t
    return this.db.select().from(ratingHistory).where(inArray(ratingHistory.id, [...ids])).orderBy(asc(ratingHistory.seq))
  }

  async historyOfMatch(gameId: string, userIds: readonly string[], matchId: string): Promise<RatingHistoryRecord[]> {
    const ids: number[] = []
    for (const userId of userIds) {
      // Back to the match's own row: the rows after it of this match are its corrections.
      const steps = await this.walk(chainWalk(gameId, userId, sql`NOT (c.kind = 'match' AND c.match_id = ${matchId})`))
      ids.push(...steps.filter((step) => step.matchId === matchId).map((step) => Number(step.id)))
    }
    const rows = await this.historyRows(ids)
    return rows.sort((x, y) => x.createdAt.getTime() - y.createdAt.getTime() || x.seq - y.seq)
  }

  async ratingOf(gameId: string, userId: string): Promise<RatingRecord | null> {
    const { ratings } = this.t
    const [row] = await this.db.select().from(ratings).where(and(eq(ratings.gameId, gameId), eq(ratings.userId, userId)))
    return row ?? null
  }

  async ratingsIn(gameId: string, userIds: readonly string[]): Promise<RatingRecord[]> {
    if (userIds.length === 0) return []
    const { ratings } = this.t
    const rows: RatingRecord[] = []
    // Chunked: SQLite limits a statement's bound variables, and a tournament seats up to 1024.
    for (let i = 0; i < userIds.length; i += 500) {
      rows.push(...(await this.db.select().from(ratings).where(and(eq(ratings.gameId, gameId), inArray(ratings.userId, userIds.slice(i, i + 500))))))
    }
    return rows
  }

  async ratingsOfUser(userId: string): Promise<RatingRecord[]> {
    const { ratings } = this.t
    return this.db.select().from(ratings).where(eq(ratings.userId, userId)).orderBy(asc(ratings.gameId))
  }

  async historyOf(gameId: string, userId: string, afterSeq: number, limit: number): Promise<RatingHistoryRecord[]> {
    // Back from the last row to afterSeq + 1; the page is the oldest `limit` of those.
    const steps = await this.walk(chainWalk(gameId, userId, sql`c.seq > ${afterSeq + 1}`))
    const wanted = steps.map((step) => ({ id: Number(step.id), seq: Number(step.seq) })).filter((step) => step.seq > afterSeq && step.seq <= afterSeq + limit)
    return this.historyRows(wanted.map((step) => step.id))
  }

  async board(gameId: string, after: BoardCursor | null, limit: number): Promise<(RatingRecord & { username: string })[]> {
    const { ratings, users } = this.t
    const rows = await this.db
      .select({ rating: ratings, username: users.username })
      .from(ratings)
      .innerJoin(users, eq(users.id, ratings.userId))
      .where(
        and(
          eq(ratings.gameId, gameId),
          gt(ratings.matches, 0),
          isNull(users.deletedAt),
          after === null ? undefined : or(lt(ratings.boardDisplay, after.display), and(eq(ratings.boardDisplay, after.display), lt(ratings.userId, after.userId))),
        ),
      )
      .orderBy(desc(ratings.boardDisplay), desc(ratings.userId))
      .limit(limit)
    return rows.map((row) => ({ ...row.rating, username: row.username }))
  }

  async standings(seasonId: string, afterRank: number, limit: number): Promise<(SeasonStandingRecord & { username: string | null })[]> {
    const { seasonStandings, users } = this.t
    const rows = await this.db
      .select({ standing: seasonStandings, username: users.username, deletedAt: users.deletedAt })
      .from(seasonStandings)
      .innerJoin(users, eq(users.id, seasonStandings.userId))
      .where(and(eq(seasonStandings.seasonId, seasonId), gt(seasonStandings.rank, afterRank)))
      .orderBy(asc(seasonStandings.rank))
      .limit(limit)
    // A deleted account keeps its place in a past board, without its name.
    return rows.map((row) => ({ ...row.standing, username: row.deletedAt === null ? row.username : null }))
  }

  async insertSeason(season: SeasonRecord): Promise<void> {
    await this.db.insert(this.t.seasons).values(season)
  }

  async season(id: string): Promise<SeasonRecord | null> {
    const { seasons } = this.t
    const [row] = await this.db.select().from(seasons).where(eq(seasons.id, id))
    return row ?? null
  }

  async seasonsOf(gameId: string): Promise<SeasonRecord[]> {
    const { seasons } = this.t
    return this.db.select().from(seasons).where(eq(seasons.gameId, gameId)).orderBy(desc(seasons.number))
  }

  async currentSeason(gameId: string): Promise<SeasonRecord | null> {
    const { seasons } = this.t
    const [row] = await this.db.select().from(seasons).where(and(eq(seasons.gameId, gameId), eq(seasons.status, 'current')))
    return row ?? null
  }

  async lastSeasonNumber(gameId: string): Promise<number> {
    const { seasons } = this.t
    const [row] = await this.db.select({ n: max(seasons.number) }).from(seasons).where(eq(seasons.gameId, gameId))
    return row?.n ?? 0
  }

  async moveSeason(id: string, from: SeasonStatus, to: SeasonStatus, at: Date): Promise<boolean> {
    const { seasons } = this.t
    const stamp = to === 'current' ? { startedAt: at } : to === 'ended' ? { endedAt: at } : {}
    const rows = await this.db
      .update(seasons)
      .set({ status: to, ...stamp })
      .where(and(eq(seasons.id, id), eq(seasons.status, from)))
      .returning({ id: seasons.id })
    return rows.length > 0
  }

  async ratingsOfGame(gameId: string): Promise<RatingRecord[]> {
    const { ratings } = this.t
    return this.lockedInWrite(this.db.select().from(ratings).where(eq(ratings.gameId, gameId)).orderBy(asc(ratings.userId)))
  }

  async insertStandings(rows: readonly SeasonStandingRecord[]): Promise<void> {
    for (let i = 0; i < rows.length; i += CHUNK) await this.db.insert(this.t.seasonStandings).values(rows.slice(i, i + CHUNK))
  }

  async decayDue(now: Date, limit: number): Promise<RatingRecord[]> {
    const { ratings } = this.t
    return this.db
      .select()
      .from(ratings)
      .where(and(isNotNull(ratings.boardDecayAt), lte(ratings.boardDecayAt, now)))
      .orderBy(asc(ratings.boardDecayAt))
      .limit(limit)
  }

  async moveOnBoard(gameId: string, userId: string, expected: Date, boardDisplay: number, boardDecayAt: Date | null): Promise<void> {
    const { ratings } = this.t
    await this.db
      .update(ratings)
      .set({ boardDisplay, boardDecayAt })
      .where(and(eq(ratings.gameId, gameId), eq(ratings.userId, userId), eq(ratings.boardDecayAt, expected)))
  }
}

