// What concurrent rated decisions must leave behind (contract §15), checked
// from the rows: every player's history is one chain (seq 1..n, each row
// starting where the one before ended), the stored rating is the chain's
// end, and the whole history replays, through the sequential reference of
// ./ratings.ts, in an order consistent with every chain at once: each unit
// of work (a match's two rows, a correction's two, a season start's row of
// every player) is next in every chain it wrote to, and its rows are what
// the reference computes from the values just before it. A lost update, a
// decision computed from a stale rating or two decisions that saw each
// other's old values break one of these. Used by
// test/ratings/concurrent-ratings.test.ts and test/scale/ratings.test.ts.
import { expect } from 'bun:test'
import { readFileSync } from 'node:fs'
import { asc, eq } from 'drizzle-orm'
import { INITIAL, type Glicko, type Score } from '../../src/modules/ratings/glicko2'
import type { RatingHistoryRecord, RatingRecord, SeasonReset } from '../../src/modules/ratings/store'
import type { Handler, TestApp } from './app'
import { databaseNameOf, startPostgres } from './postgres'
import { DEFAULT_RATING_CONFIG, RatingReference } from './ratings'
import { openSession, playerOf, submit, type MatchView, type Player, type TournamentView } from './arena'

/** A decided rated match: its two players (user ids) and a's score. */
export interface RatedMatch {
  matchId: string
  a: string
  b: string
  scoreA: Score
}

/** The game's rating rows and every history row, as stored. */
export async function ratingRows(peek: TestApp['peek'], gameId: string): Promise<{ ratings: RatingRecord[]; history: RatingHistoryRecord[] }> {
  const { db, tables } = peek
  const ratings = (await db.select().from(tables.ratings).where(eq(tables.ratings.gameId, gameId))) as RatingRecord[]
  const history = (await db
    .select()
    .from(tables.ratingHistory)
    .where(eq(tables.ratingHistory.gameId, gameId))
    .orderBy(asc(tables.ratingHistory.userId), asc(tables.ratingHistory.seq))) as RatingHistoryRecord[]
  return { ratings, history }
}

const before = (r: RatingHistoryRecord): Glicko => ({ rating: r.ratingBefore, deviation: r.deviationBefore, volatility: r.volatilityBefore })
const after = (r: RatingHistoryRecord): Glicko => ({ rating: r.ratingAfter, deviation: r.deviationAfter, volatility: r.volatilityAfter })
const SCORE: Record<string, Score> = { win: 1, draw: 0.5, loss: 0 }
const OUTCOME: Record<Score, string> = { 1: 'win', 0.5: 'draw', 0: 'loss' }

export interface ChainCheck {
  ratings: RatingRecord[]
  history: RatingHistoryRecord[]
  /** Every rated match decided (each must have exactly its two `match` rows; no other match may have any). */
  decided: readonly RatedMatch[]
  tau: number
  /** Matches corrected once each, with the new score of their `a` (each must have exactly two `correction` rows more). */
  corrected?: readonly { matchId: string; scoreA: Score }[]
  /** The reset of each season a `season_reset` row may start (none: no row may be one). */
  resets?: ReadonlyMap<string, SeasonReset>
}

/**
 * Checks the chains, the stored ratings and the replay (see the top);
 * answers the order the replay found (`match:<id>`, `correction:<id>`,
 * `reset:<season id>`), one serial order of the units of work the database
 * committed.
 */
export function checkChains({ ratings, history, decided, tau, corrected = [], resets = new Map() }: ChainCheck): string[] {
  const chains = new Map<string, RatingHistoryRecord[]>()
  for (const row of history) chains.set(row.userId, [...(chains.get(row.userId) ?? []), row])
  for (const rows of chains.values()) rows.sort((x, y) => x.seq - y.seq)

  // One chain per player: seq 1..n, each row starting where the previous ended, from the start values.
  for (const [userId, rows] of chains) {
    expect({ userId, seqs: rows.map((r) => r.seq) }).toEqual({ userId, seqs: rows.map((_, i) => i + 1) })
    // Linked as numbered: each row points at the one before it (what a history page follows back).
    expect({ userId, links: rows.map((r) => r.previousId) }).toEqual({ userId, links: rows.map((_, i) => (i === 0 ? null : rows[i - 1]!.id)) })
    rows.forEach((row, i) => {
      const expected = i === 0 ? { ...INITIAL } : after(rows[i - 1]!)
      expect({ userId, seq: row.seq, before: before(row) }).toEqual({ userId, seq: row.seq, before: expected })
    })
  }

  // The stored row is the chain's end: values, seq, season, and the matches rated since the last reset.
  expect(ratings.map((r) => r.userId).sort()).toEqual([...chains.keys()].sort())
  for (const row of ratings) {
    const rows = chains.get(row.userId)!
    const last = rows.at(-1)!
    const lastReset = rows.findLastIndex((r) => r.kind === 'season_reset')
    const matches = rows.slice(lastReset + 1).filter((r) => r.kind === 'match').length
    expect({ userId: row.userId, seq: row.seq, historyId: row.historyId, stored: { rating: row.rating, deviation: row.deviation, volatility: row.volatility }, seasonId: row.seasonId, matches: row.matches }).toEqual({
      userId: row.userId,
      seq: last.seq,
      historyId: last.id,
      stored: after(last),
      seasonId: last.seasonId,
      matches,
    })
    // Seasons only move forward along a chain, at a reset row.
    rows.forEach((r, i) => {
      if (i > 0 && r.seasonId !== rows[i - 1]!.seasonId) expect({ userId: row.userId, seq: r.seq, kind: r.kind }).toEqual({ userId: row.userId, seq: r.seq, kind: 'season_reset' })
    })
  }

  // Each decided match rated exactly once: its two rows, one per player, each
  // naming the other, with their results; a corrected one two more, with the new results.
  const wanted = new Map(decided.map((m) => [m.matchId, m]))
  const fixes = new Map(corrected.map((c) => [c.matchId, c.scoreA]))
  const ofMatch = new Map<string, RatingHistoryRecord[]>()
  for (const row of history) {
    if (row.kind === 'season_reset') {
      expect(resets.has(row.seasonId)).toBe(true)
      continue
    }
    ofMatch.set(row.matchId!, [...(ofMatch.get(row.matchId!) ?? []), row])
  }
  expect([...ofMatch.keys()].sort()).toEqual([...wanted.keys()].sort())
  const shape = (rows: RatingHistoryRecord[]) => rows.map((r) => ({ kind: r.kind, userId: r.userId, opponentUserId: r.opponentUserId, outcome: r.outcome })).sort((x, y) => (x.kind + x.userId).localeCompare(y.kind + y.userId))
  for (const [matchId, rows] of ofMatch) {
    const m = wanted.get(matchId)!
    const pair = (kind: string, scoreA: Score) => [
      { kind, userId: m.a, opponentUserId: m.b, outcome: OUTCOME[scoreA] },
      { kind, userId: m.b, opponentUserId: m.a, outcome: OUTCOME[(1 - scoreA) as Score] },
    ]
    const fix = fixes.get(matchId)
    const expected = [...pair('match', m.scoreA), ...(fix === undefined ? [] : pair('correction', fix))]
    expect({ matchId, rows: shape(rows) }).toEqual({ matchId, rows: shape(expected as RatingHistoryRecord[]) })
    // A match's rows are in one season.
    expect({ matchId, seasons: [...new Set(rows.map((r) => r.seasonId))].length }).toEqual({ matchId, seasons: 1 })
  }

  // The replay, through the sequential reference (./ratings.ts): take whatever
  // unit of work is next in every chain it wrote to (a match's or a
  // correction's two rows, a season start's row of every player); a state
  // where none is means no serial order exists.
  const reference = new RatingReference({ ...DEFAULT_RATING_CONFIG, tau })
  const next = new Map([...chains.keys()].map((u) => [u, 0]))
  const order: string[] = []
  const head = (u: string) => chains.get(u)![next.get(u)!]
  const expectAfter = (row: RatingHistoryRecord) =>
    expect({ userId: row.userId, seq: row.seq, kind: row.kind, after: after(row) }).toEqual({ userId: row.userId, seq: row.seq, kind: row.kind, after: reference.effective(row.userId, row.createdAt) })
  const advance = (rows: RatingHistoryRecord[], step: string) => {
    for (const row of rows) {
      expectAfter(row)
      next.set(row.userId, next.get(row.userId)! + 1)
    }
    order.push(step)
    remaining -= rows.length
  }
  let remaining = history.length
  while (remaining > 0) {
    let progressed = false
    for (const u of chains.keys()) {
      const row = head(u)
      if (!row) continue
      if (row.kind === 'season_reset') {
        // One unit of work resets every player of the game.
        const heads = [...chains.keys()].map(head)
        if (!heads.every((h) => h?.kind === 'season_reset' && h.seasonId === row.seasonId)) continue
        reference.seasonStart(resets.get(row.seasonId)!, row.createdAt)
        advance(heads as RatingHistoryRecord[], `reset:${row.seasonId}`)
        progressed = true
        continue
      }
      const theirs = head(row.opponentUserId!)
      if (!theirs || theirs.matchId !== row.matchId || theirs.kind !== row.kind) continue
      if (row.kind === 'match') reference.match(row.matchId!, u, row.opponentUserId!, SCORE[row.outcome!]!, row.createdAt)
      else reference.correct(row.matchId!, row.outcome === 'win' ? u : row.opponentUserId!, row.createdAt)
      advance([row, theirs], `${row.kind}:${row.matchId}`)
      progressed = true
    }
    if (!progressed) {
      const stuck = [...chains.keys()].filter((u) => head(u)).map((u) => `${u}#${head(u)!.seq} ${head(u)!.kind} ${head(u)!.matchId}`)
      throw new Error(`the history has no serial order: every chain waits on another (${stuck.join(', ')})`)
    }
  }
  return order
}

/** One result per match, drawn from `random`: slot 1 wins, slot 2 wins, or a draw. */
function drawResult(random: () => number, m: MatchView): { body: { outcome: 'WIN'; winnerParticipantId: string } | { outcome: 'DRAW' }; scoreA: Score } {
  const r = random()
  if (r < 1 / 3) return { body: { outcome: 'WIN', winnerParticipantId: m.slot1ParticipantId! }, scoreA: 1 }
  if (r < 2 / 3) return { body: { outcome: 'WIN', winnerParticipantId: m.slot2ParticipantId! }, scoreA: 0 }
  return { body: { outcome: 'DRAW' }, scoreA: 0.5 }
}

/**
 * Decides every running match of `tournaments`, a round at a time (a round
 * robin's rounds give each player one match per tournament: at most
 * MAX_OPEN_GAME_SESSIONS open sessions each): in each round both players of
 * every match open a session, the first claims go out together, then every
 * deciding (second) claim together (Promise.all), each match's two claims on
 * different instances of `via` (taken in turn). Results come from `random`.
 * `hooks.before` runs before each round's claims, `hooks.alongside` (given
 * the round, and the matches decided before it) together with its deciding
 * claims. Answers the matches decided (as RatedMatch, slot 1 as `a`) and
 * each deciding claim's answer.
 */
export async function decideAllAtOnce(
  via: readonly Handler[],
  game: { id: string; gameKey: string },
  people: readonly Player[],
  tournaments: readonly TournamentView[],
  random: () => number,
  hooks: { before?: (round: number) => Promise<unknown>; alongside?: (round: number, before: readonly (RatedMatch & { m: MatchView })[]) => Promise<unknown> } = {},
): Promise<{ decided: (RatedMatch & { m: MatchView })[]; answers: { status: number; body: unknown }[] }> {
  const all = tournaments.flatMap((t) => t.matches.filter((m) => m.status === 'running').map((m) => ({ t, m, result: drawResult(random, m) })))
  const rounds = [...new Set(all.map(({ m }) => m.round))].sort((x, y) => x - y)
  const decided: (RatedMatch & { m: MatchView })[] = []
  const answers: { status: number; body: unknown }[] = []
  let turn = 0
  for (const round of rounds) {
    const running = all.filter(({ m }) => m.round === round)
    const on = (i: number) => via[(turn + i) % via.length]!
    turn++
    const sessions: { seats: readonly [Player, Player]; tokens: string[] }[] = await Promise.all(
      running.map(async ({ t, m }, i) => {
        const seats = [playerOf(t, [...people], m.slot1ParticipantId!), playerOf(t, [...people], m.slot2ParticipantId!)] as const
        const tokens = await Promise.all(
          seats.map(async (player, k) => {
            const res = await openSession(on(i + k), game.id, game.gameKey, player, m.id)
            expect(res.status).toBe(201)
            return ((await res.json()) as { token: string }).token as string
          }),
        )
        return { seats, tokens }
      }),
    )
    await hooks.before?.(round)
    const first = await Promise.all(running.map(({ result }, i) => submit(on(i), game.id, game.gameKey, sessions[i]!.seats[0], sessions[i]!.tokens[0]!, result.body)))
    for (const res of first) expect({ status: res.status, body: await res.json() }).toMatchObject({ status: 200, body: { decision: 'pending' } })
    const [second] = await Promise.all([
      Promise.all(running.map(({ result }, i) => submit(on(i + 1), game.id, game.gameKey, sessions[i]!.seats[1], sessions[i]!.tokens[1]!, result.body))),
      hooks.alongside?.(round, [...decided]),
    ])
    answers.push(...(await Promise.all(second.map(async (res) => ({ status: res.status, body: await res.json() })))))
    decided.push(...running.map(({ m, result }, i) => ({ m, matchId: m.id, a: sessions[i]!.seats[0].userId, b: sessions[i]!.seats[1].userId, scoreA: result.scoreA })))
  }
  return { decided, answers }
}

/**
 * How many deadlocks the test PostgreSQL server logged for the database of
 * `databaseUrl` so far. A unit of work that deadlocks is retried (40P01) and
 * answers as if nothing happened: its log line is the only trace.
 */
export async function deadlocksLogged(databaseUrl: string): Promise<number> {
  const { logFile } = await startPostgres()
  const database = databaseNameOf(databaseUrl)
  return readFileSync(logFile, 'utf8')
    .split('\n')
    .filter((line) => line.includes(` ${database} `) && line.includes('deadlock detected')).length
}
