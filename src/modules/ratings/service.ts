// Ratings, leaderboards and seasons as players and operators read and run
// them (contract §15; docs/ratings.md). The updates themselves happen in the
// decisions' units of work (rate.ts); seasons start by their job
// (seasons.ts). Knows nothing of HTTP.
import type { Storage, Transaction } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import { toIso } from '../../shared/clock'
import { AppError } from '../../shared/errors'
import { newId } from '../../shared/ids'
import { JOB_KINDS } from '../../jobs/queue'
import type { Actor } from '../audit/log'
import { invalid } from '../games/registration'
import type { CreateSeasonBody, GameRatingSettings, Leaderboard, RatingHistoryPage, RatingView, Season } from './model'
import type { RatingConfig, RatingHistoryRecord, RatingRecord, SeasonRecord } from './store'
import { boardPlace, effectiveGlicko, unratedView, viewOf } from './view'

export const PAGE_DEFAULT = 50
/** Seasons scheduled (not started yet) per game at once. */
export const MAX_SCHEDULED_SEASONS = 10
/** The furthest ahead a season may start. */
export const MAX_SEASON_AHEAD_MS = 366 * 24 * 3600_000
/** History rows the account export reads at a time. */
const EXPORT_PAGE = 1000
/** Rows the inactivity sweep moves per pass. */
export const SWEEP_BATCH = 500

export interface RatingsServiceDeps {
  storage: Storage
  clock: Clock
}

export function toSeason(season: SeasonRecord): Season {
  return {
    id: season.id,
    gameId: season.gameId,
    number: season.number,
    name: season.name,
    reset: season.reset,
    status: season.status,
    startsAt: toIso(season.startsAt),
    startedAt: season.startedAt === null ? null : toIso(season.startedAt),
    endedAt: season.endedAt === null ? null : toIso(season.endedAt),
    createdAt: toIso(season.createdAt),
  }
}

function toChange(row: RatingHistoryRecord) {
  return {
    seq: row.seq,
    kind: row.kind,
    seasonId: row.seasonId,
    matchId: row.matchId,
    opponentUserId: row.opponentUserId,
    outcome: row.outcome,
    before: { rating: row.ratingBefore, deviation: row.deviationBefore, volatility: row.volatilityBefore },
    after: { rating: row.ratingAfter, deviation: row.deviationAfter, volatility: row.volatilityAfter },
    createdAt: toIso(row.createdAt),
  }
}

/** A live board's cursor: the last row's place (rank, display, user id), opaque to clients. */
function encodeCursor(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url')
}

function badCursor(): AppError {
  return invalid([{ path: 'query/after', message: 'Not a cursor of this board' }])
}

function decodeLiveCursor(after: string): { rank: number; display: number; userId: string } {
  try {
    const value = JSON.parse(Buffer.from(after, 'base64url').toString('utf8')) as unknown
    if (Array.isArray(value) && value.length === 3 && Number.isInteger(value[0]) && value[0] >= 1 && Number.isFinite(value[1]) && typeof value[2] === 'string') {
      return { rank: value[0] as number, display: value[1] as number, userId: value[2] as string }
    }
  } catch {
    // Not base64url JSON: the same answer as any other foreign cursor.
  }
  throw badCursor()
}

function decodeRankCursor(after: string): number {
  try {
    const value = JSON.parse(Buffer.from(after, 'base64url').toString('utf8')) as unknown
    if (Array.isArray(value) && value.length === 1 && Number.isInteger(value[0]) && value[0] >= 0) return value[0] as number
  } catch {
    // As above.
  }
  throw badCursor()
}

export class RatingsService {
  constructor(private readonly deps: RatingsServiceDeps) {}

  private async configOf(gameId: string): Promise<{ config: RatingConfig; seasonId: string }> {
    const context = await this.deps.storage.read.ratings.ratingContext(gameId)
    if (!context) throw new AppError('not_found', 'No such game')
    return context
  }

  /** The caller's rating in the game now (the start values before their first rated match). */
  async mine(gameId: string, userId: string): Promise<{ rating: RatingView; seasonId: string }> {
    const { config, seasonId } = await this.configOf(gameId)
    const row = await this.deps.storage.read.ratings.ratingOf(gameId, userId)
    return { rating: row === null ? unratedView() : this.view(row, config), seasonId }
  }

  private view(row: RatingRecord, config: RatingConfig): RatingView {
    return viewOf(effectiveGlicko(row, config, this.deps.clock.now()), row.matches)
  }

  /** The caller's own rating changes in the game, oldest first. */
  async history(gameId: string, userId: string, query: { after?: string; limit?: number }): Promise<RatingHistoryPage> {
    await this.configOf(gameId)
    const afterSeq = query.after === undefined ? 0 : Number(query.after)
    if (!Number.isSafeInteger(afterSeq) || afterSeq < 0 || (query.after !== undefined && !/^\d+$/.test(query.after))) throw badCursor()
    const limit = query.limit ?? PAGE_DEFAULT
    const rows = await this.deps.storage.read.ratings.historyOf(gameId, userId, afterSeq, limit + 1)
    const page = rows.slice(0, limit)
    return { history: page.map(toChange), cursor: rows.length > limit ? String(page.at(-1)!.seq) : null }
  }

  /**
   * A player's latest `limit` rating changes in the game, newest first
   * (operators: the user page). The rating row's `seq` is the chain's last,
   * so this reads only those rows.
   */
  async latestHistory(gameId: string, userId: string, limit: number): Promise<RatingHistoryPage['history']> {
    const row = await this.deps.storage.read.ratings.ratingOf(gameId, userId)
    if (row === null) return []
    const rows = await this.deps.storage.read.ratings.historyOf(gameId, userId, Math.max(0, row.seq - limit), limit)
    return rows.map(toChange).reverse()
  }

  /** A game's seasons, newest first. */
  async seasons(gameId: string): Promise<{ seasons: Season[] }> {
    await this.configOf(gameId)
    return { seasons: (await this.deps.storage.read.ratings.seasonsOf(gameId)).map(toSeason) }
  }

  /**
   * A season's leaderboard: the current one live (ranked by display, with
   * inactivity as of the board sweep; each entry's rating as of now), an
   * ended one as its final board. Paged by cursor: a page starts strictly
   * after the last row of the one before, so no row appears twice unless its
   * rating moved in between.
   */
  async leaderboard(gameId: string, query: { season?: string; after?: string; limit?: number }): Promise<Leaderboard> {
    const { storage } = this.deps
    const { config, seasonId: currentId } = await this.configOf(gameId)
    const seasonId = query.season ?? currentId
    const season = await storage.read.ratings.season(seasonId)
    if (!season || season.gameId !== gameId) throw new AppError('not_found', 'No such season of this game')
    const limit = query.limit ?? PAGE_DEFAULT
    if (season.status === 'scheduled') return { season: toSeason(season), entries: [], cursor: null }
    if (season.status === 'ended') {
      const afterRank = query.after === undefined ? 0 : decodeRankCursor(query.after)
      const rows = await storage.read.ratings.standings(season.id, afterRank, limit + 1)
      const page = rows.slice(0, limit)
      return {
        season: toSeason(season),
        entries: page.map((row) => ({
          rank: row.rank,
          userId: row.userId,
          username: row.username,
          rating: viewOf({ rating: row.rating, deviation: row.deviation, volatility: row.volatility }, row.matches),
        })),
        cursor: rows.length > limit ? encodeCursor([page.at(-1)!.rank]) : null,
      }
    }
    const after = query.after === undefined ? null : decodeLiveCursor(query.after)
    const rows = await storage.read.ratings.board(gameId, after, limit + 1)
    const page = rows.slice(0, limit)
    const first = after === null ? 1 : after.rank + 1
    const last = page.at(-1)
    return {
      season: toSeason(season),
      entries: page.map((row, i) => ({ rank: first + i, userId: row.userId, username: row.username, rating: this.view(row, config) })),
      cursor: rows.length > limit && last ? encodeCursor([first + page.length - 1, last.boardDisplay, last.userId]) : null,
    }
  }

  /** Schedules a season of the game (contract §15): started by its job at startsAt. */
  async createSeason(gameId: string, input: CreateSeasonBody, by: Actor): Promise<{ season: Season }> {
    const { storage, clock } = this.deps
    const startsAt = new Date(input.startsAt)
    if (Number.isNaN(startsAt.getTime())) throw invalid([{ path: 'body/startsAt', message: 'Expected an ISO-8601 date-time' }])
    return storage.write(async (tx) => {
      const now = clock.now()
      const seasons = await tx.ratings.seasonsOf(gameId)
      if (seasons.length === 0) throw new AppError('not_found', 'No such game')
      const problems: { path: string; message: string }[] = []
      // A season starting "now" from a client whose clock runs a little behind is taken: it starts at once.
      if (startsAt.getTime() < now.getTime() - 60_000) problems.push({ path: 'body/startsAt', message: 'Must not be in the past' })
      if (startsAt.getTime() > now.getTime() + MAX_SEASON_AHEAD_MS) problems.push({ path: 'body/startsAt', message: 'At most a year ahead' })
      const latest = seasons.reduce((at, s) => Math.max(at, s.startsAt.getTime()), 0)
      if (startsAt.getTime() <= latest) problems.push({ path: 'body/startsAt', message: 'Must be after the start of every other season of the game' })
      if (problems.length > 0) throw invalid(problems)
      if (seasons.filter((s) => s.status === 'scheduled').length >= MAX_SCHEDULED_SEASONS) {
        throw new AppError('conflict', `A game has at most ${MAX_SCHEDULED_SEASONS} seasons scheduled at once`)
      }
      const season: SeasonRecord = {
        id: newId('season'),
        gameId,
        number: seasons[0]!.number + 1,
        name: input.name,
        reset: input.reset,
        startsAt,
        status: 'scheduled',
        startedAt: null,
        endedAt: null,
        createdAt: now,
      }
      await tx.ratings.insertSeason(season)
      await tx.jobs.enqueue(JOB_KINDS.startSeason, { seasonId: season.id }, now, startsAt.getTime() < now.getTime() ? now : startsAt)
      await by.record(tx, { action: 'season.create', target: season.id, details: { gameId, name: input.name, startsAt: toIso(startsAt), reset: input.reset } })
      return { season: toSeason(season) }
    })
  }

  /** A game's rating settings. */
  async settings(gameId: string): Promise<GameRatingSettings> {
    return (await this.configOf(gameId)).config
  }

  /**
   * Changes a game's rating settings in the unit of work `tx` (the game's
   * PATCH): τ applies from the next rated match; a new inactivity period
   * moves every player of the game on the board at once.
   */
  async applySettings(tx: Transaction, gameId: string, settings: GameRatingSettings): Promise<boolean> {
    const context = await tx.ratings.ratingContext(gameId)
    if (!context) return false
    await tx.ratings.setRatingConfig(gameId, settings)
    if (settings.inactivityPeriodS !== context.config.inactivityPeriodS) {
      const now = this.deps.clock.now()
      const rows = await tx.ratings.ratingsOfGame(gameId)
      await tx.ratings.saveRatings(rows.map((row) => ({ ...row, ...boardPlace(row, settings, now) })))
    }
    return true
  }

  /** A player's ratings in every game (operators: the user page). */
  async ofUser(userId: string): Promise<{ ratings: (RatingView & { gameId: string; seasonId: string })[] }> {
    const rows = await this.deps.storage.read.ratings.ratingsOfUser(userId)
    const out = []
    for (const row of rows) {
      const { config } = await this.configOf(row.gameId)
      out.push({ gameId: row.gameId, seasonId: row.seasonId, ...this.view(row, config) })
    }
    return { ratings: out }
  }

  /**
   * The user's ratings in every game they were rated in, each with its whole
   * history (the account export, contract §8): what `mine` and `history`
   * answer, all at once.
   */
  async exportOf(userId: string): Promise<{ gameId: string; seasonId: string; rating: RatingView; history: ReturnType<typeof toChange>[] }[]> {
    const { ratings } = this.deps.storage.read
    const out = []
    for (const row of await ratings.ratingsOfUser(userId)) {
      const { config } = await this.configOf(row.gameId)
      const history: ReturnType<typeof toChange>[] = []
      for (let afterSeq = 0; ; ) {
        const page = await ratings.historyOf(row.gameId, userId, afterSeq, EXPORT_PAGE)
        history.push(...page.map(toChange))
        if (page.length < EXPORT_PAGE) break
        afterSeq = page.at(-1)!.seq
      }
      out.push({ gameId: row.gameId, seasonId: row.seasonId, rating: this.view(row, config), history })
    }
    return out
  }

  /**
   * The board sweep (housekeeping): rows whose next inactivity period has
   * ended move down the board. Answers how many moved.
   */
  async sweepBoard(): Promise<number> {
    const { storage, clock } = this.deps
    return storage.write(async (tx) => {
      const now = clock.now()
      const due = await tx.ratings.decayDue(now, SWEEP_BATCH)
      const configs = new Map<string, RatingConfig>()
      for (const row of due) {
        let config = configs.get(row.gameId)
        if (!config) {
          config = (await tx.ratings.ratingContext(row.gameId))!.config
          configs.set(row.gameId, config)
        }
        const place = boardPlace(row, config, now)
        await tx.ratings.moveOnBoard(row.gameId, row.userId, row.boardDecayAt!, place.boardDisplay, place.boardDecayAt)
      }
      return due.length
    })
  }
}
