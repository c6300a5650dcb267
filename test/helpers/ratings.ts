// The ratings tests' reference computation (contract §15) and readers.
//
// RatingReference recomputes what every player's rating should be from the
// pure Glicko-2 module alone (src/modules/ratings/glicko2.ts), following the
// rule rather than the service's code: each rated match is its own rating
// period, computed with rateMatch from both players' ratings as they were
// just before it (inactivity applied: `idle` for each whole period since the
// player's last rated match), in the order the matches were decided; a
// correction takes back what the match changed so far and applies the new
// result computed from the pre-match values (later matches not recomputed);
// a season start resets everyone (soft: half-way to 1500, deviation at least
// 200, volatility kept; hard: 1500/350/0.06). A test feeds it each rated
// decision as it makes it and compares the app's answers with it.
import { expect } from 'bun:test'
import { displayOf, idle, INITIAL, MAX_DEVIATION, rateMatch, type Glicko, type Score } from '../../src/modules/ratings/glicko2'
import type { RatingHistoryPage, RatingView } from '../../src/modules/ratings/model'
import type { RatingHistoryRecord, RatingRecord } from '../../src/modules/ratings/store'
import { eq } from 'drizzle-orm'
import { boardPlace, INITIAL_ROW } from '../../src/modules/ratings/view'
import type { TestApp } from './app'
import { eventsOf } from './accounts'
import type { GameRatingSettings } from '../../src/modules/ratings/model'

/** A game's rating settings: the model's own type (one type per answer). */
export type RatingConfig = GameRatingSettings

/** A game's settings when created without any (contract §15). */
export const DEFAULT_RATING_CONFIG: RatingConfig = { tau: 0.5, inactivityPeriodS: 604_800 }

interface Entry {
  stored: Glicko
  matches: number
  /** Where inactivity counts from: the last rated match, or the season's start. */
  since: Date
}

interface RatedMatch {
  users: [string, string]
  /** Both players' ratings just before the match (inactivity applied). */
  pre: [Glicko, Glicko]
  /** What the match (and its corrections) changed so far, per player. */
  applied: [Glicko, Glicko]
}

const ZERO: Glicko = { rating: 0, deviation: 0, volatility: 0 }
const plus = (x: Glicko, y: Glicko): Glicko => ({ rating: x.rating + y.rating, deviation: x.deviation + y.deviation, volatility: x.volatility + y.volatility })
const minus = (x: Glicko, y: Glicko): Glicko => ({ rating: x.rating - y.rating, deviation: x.deviation - y.deviation, volatility: x.volatility - y.volatility })
const round = (value: number, digits: number) => Number(value.toFixed(digits))

/** What a `rating.updated` event should say (besides the game and season). */
export interface ExpectedUpdate {
  matchId: string
  reason: 'match' | 'correction'
  change: number
  rating: RatingView
}

export class RatingReference {
  private readonly entries = new Map<string, Entry>()
  private readonly rated = new Map<string, RatedMatch>()
  private readonly updates = new Map<string, ExpectedUpdate[]>()

  constructor(readonly config: RatingConfig = DEFAULT_RATING_CONFIG) {}

  /** Whole inactivity periods of `userId` at `now`. */
  idlePeriods(userId: string, now: Date): number {
    const entry = this.entries.get(userId)
    if (!entry) return 0
    const elapsed = now.getTime() - entry.since.getTime()
    return elapsed <= 0 ? 0 : Math.floor(elapsed / (this.config.inactivityPeriodS * 1000))
  }

  /** The rating as of `now` (the start values for a player never rated). */
  effective(userId: string, now: Date): Glicko {
    const entry = this.entries.get(userId)
    return entry ? idle(entry.stored, this.idlePeriods(userId, now)) : { ...INITIAL }
  }

  matches(userId: string): number {
    return this.entries.get(userId)?.matches ?? 0
  }

  /** Players the reference has seen (rated at least once), in no order. */
  users(): string[] {
    return [...this.entries.keys()]
  }

  /** A player whose row a test wrote straight in (seedRatings): `glicko` as stored, last rated at `since`. */
  seed(userId: string, glicko: Glicko, matches: number, since: Date): void {
    this.entries.set(userId, { stored: { ...glicko }, matches, since })
  }

  /** A rated match decided at `now`: `a` scored `scoreA` against `b`. */
  match(matchId: string, a: string, b: string, scoreA: Score, now: Date): void {
    const pre: [Glicko, Glicko] = [this.effective(a, now), this.effective(b, now)]
    const [afterA, afterB] = rateMatch(pre[0], pre[1], scoreA, this.config.tau)
    this.entries.set(a, { stored: afterA, matches: this.matches(a) + 1, since: now })
    this.entries.set(b, { stored: afterB, matches: this.matches(b) + 1, since: now })
    this.rated.set(matchId, { users: [a, b], pre, applied: [minus(afterA, pre[0]), minus(afterB, pre[1])] })
    this.tell(a, matchId, 'match', pre[0], now)
    this.tell(b, matchId, 'match', pre[1], now)
  }

  private tell(userId: string, matchId: string, reason: 'match' | 'correction', before: Glicko, now: Date): void {
    const after = this.effective(userId, now)
    const list = this.updates.get(userId) ?? []
    list.push({ matchId, reason, change: round(after.rating - before.rating, 2), rating: this.view(userId, now) })
    this.updates.set(userId, list)
  }

  /** The `rating.updated` events `userId` should have had, oldest first. */
  updatesOf(userId: string): ExpectedUpdate[] {
    return this.updates.get(userId) ?? []
  }

  /** A correction of `matchId` at `now`: `winner` (a user id) now won it. Inactivity and match counts untouched. */
  correct(matchId: string, winner: string, now: Date): void {
    const m = this.rated.get(matchId)
    if (!m) throw new Error(`reference: match ${matchId} was not rated`)
    const scoreA: Score = winner === m.users[0] ? 1 : 0
    const results = rateMatch(m.pre[0], m.pre[1], scoreA, this.config.tau)
    for (const i of [0, 1] as const) {
      const entry = this.entries.get(m.users[i])!
      const before = this.effective(m.users[i], now)
      const change = minus(results[i], m.pre[i])
      const next = plus(entry.stored, minus(change, m.applied[i]))
      // Kept computable (as the rule's implementation must): deviation in [1, 350], volatility > 0.
      const stored = { rating: next.rating, deviation: Math.min(MAX_DEVIATION, Math.max(1, next.deviation)), volatility: Math.max(1e-6, next.volatility) }
      m.applied[i] = plus(m.applied[i], minus(stored, entry.stored))
      this.entries.set(m.users[i], { ...entry, stored })
      this.tell(m.users[i], matchId, 'correction', before, now)
    }
  }

  /** A season starting at `now`: everyone's rating reset, no matches, inactivity counted from now. */
  seasonStart(reset: 'soft' | 'hard', now: Date): void {
    for (const [userId, entry] of this.entries) {
      const current = this.effective(userId, now)
      const stored =
        reset === 'hard' ? { ...INITIAL } : { rating: (current.rating + INITIAL.rating) / 2, deviation: Math.max(current.deviation, 200), volatility: current.volatility }
      this.entries.set(userId, { ...entry, stored, matches: 0, since: now })
    }
  }

  /** The rating view the API should answer for `userId` at `now`. */
  view(userId: string, now: Date): RatingView {
    const g = this.effective(userId, now)
    const matches = this.matches(userId)
    return {
      rating: round(g.rating, 2),
      deviation: round(g.deviation, 2),
      volatility: round(g.volatility, 6),
      display: round(g.rating - 2 * g.deviation, 2),
      provisional: matches < 10,
      matches,
    }
  }

  /** The board at `now` by the rule: players with a rated match this season, by display then user id, both descending. */
  board(now: Date): { userId: string; display: number }[] {
    return this.users()
      .filter((userId) => this.matches(userId) > 0)
      .map((userId) => ({ userId, display: displayOf(this.effective(userId, now)) }))
      .sort((x, y) => (x.display !== y.display ? y.display - x.display : x.userId < y.userId ? 1 : -1))
  }
}

/** Every one of the player's history rows in the game, oldest first, read page by page through the service. */
export async function ratingHistory(app: TestApp, gameId: string, userId: string): Promise<RatingHistoryPage['history']> {
  const out: RatingHistoryPage['history'] = []
  let after: string | undefined
  for (;;) {
    const page = await app.services.ratings.history(gameId, userId, { ...(after === undefined ? {} : { after }), limit: 4 })
    out.push(...page.history)
    if (page.cursor === null) return out
    after = page.cursor
  }
}

/** Checks the player's history is one chain (seq 1..n, each rating before = the previous rating after); answers it. */
export async function expectChain(app: TestApp, gameId: string, userId: string): Promise<RatingHistoryPage['history']> {
  const history = await ratingHistory(app, gameId, userId)
  expect(history.map((h) => h.seq)).toEqual(history.map((_, i) => i + 1))
  for (let i = 1; i < history.length; i++) {
    expect({ userId, seq: history[i]!.seq, before: history[i]!.before.rating }).toEqual({ userId, seq: history[i]!.seq, before: history[i - 1]!.after.rating })
  }
  return history
}

/** The player's `rating.updated` events, oldest first. */
export function ratingEvents(app: TestApp, userId: string) {
  return eventsOf(app, userId, 'rating.updated') as Promise<{ gameId: string; seasonId: string; matchId: string; reason: string; change: number; rating: RatingView }[]>
}

/** The stored row, or null. */
export function storedRating(app: TestApp, gameId: string, userId: string): Promise<RatingRecord | null> {
  return app.storage.read.ratings.ratingOf(gameId, userId)
}

/** Expects the app's view of each player to be the reference's at the app's now (the unrated start values for one it never rated). */
export async function expectRatings(app: TestApp, gameId: string, reference: RatingReference, userIds: readonly string[]): Promise<void> {
  const now = app.clock.now()
  for (const userId of userIds) {
    const { rating } = await app.services.ratings.mine(gameId, userId)
    expect({ userId, rating }).toEqual({ userId, rating: reference.view(userId, now) })
  }
}

/**
 * Writes rating rows straight into the game's current season (a test that
 * needs many rated players, or exact values, fast): each at `glicko` with
 * `matches` this season, last rated at `lastRatedAt` (default now), its board
 * place as a rated update would leave it.
 */
export async function seedRatings(app: TestApp, gameId: string, rows: { userId: string; glicko: Glicko; matches: number; lastRatedAt?: Date }[]): Promise<void> {
  const now = app.clock.now()
  await app.storage.write(async (tx) => {
    const context = (await tx.ratings.ratingContext(gameId))!
    await tx.ratings.ensureRatings(
      rows.map(({ userId, glicko, matches, lastRatedAt }) => {
        const row = { ...INITIAL_ROW(now), ...glicko, gameId, userId, seasonId: context.seasonId, matches, lastRatedAt: lastRatedAt ?? now }
        return { ...row, ...boardPlace(row, context.config, now) }
      }),
    )
  })
}

/** Every history row naming `matchId`, whoever's chain it is in (read from the table, not by following a chain). */
export async function historyRowsOfMatch(app: TestApp, matchId: string): Promise<RatingHistoryRecord[]> {
  const { db, tables } = app.peek
  return (await db.select().from(tables.ratingHistory).where(eq(tables.ratingHistory.matchId, matchId))) as RatingHistoryRecord[]
}
