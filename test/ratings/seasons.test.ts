// Contract §15's seasons and inactivity, through the services on a real
// database with the injected clock: a season scheduled by an operator starts
// by its durable job once the clock passes its start (the old season ended,
// its final board readable as it was, everyone reset soft or hard, matches 0,
// a season_reset history row each); the job run again changes nothing. Each
// whole inactivity period grows a player's deviation on read (capped at 350),
// and the board sweep moves the leaderboard to match.
import { afterAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { createArenaApp, createGame, players, playOut, startedTournament, tournament, type Player } from '../helpers/arena'
import { login } from '../helpers/auth'
import { deleteUser } from '../helpers/accounts'
import { testActor } from '../helpers/actors'
import { expectChain, expectRatings, ratingEvents, RatingReference, seedRatings, storedRating } from '../helpers/ratings'
import { displayOf, idle, type Glicko } from '../../src/modules/ratings/glicko2'
import { JOB_KINDS } from '../../src/jobs/queue'
import type { Score } from '../../src/modules/ratings/glicko2'

const ctx = await createArenaApp()
afterAll(() => ctx.close())

const HOUR = 3600_000
const WEEK = 604_800_000

/** A single elimination among `people` played out through claims (slot 1 always wins), each rated match told to the reference. */
async function playCup(gameId: string, gameKey: string, people: Player[], reference: RatingReference) {
  // Access tokens last 15 minutes; the clock moves by hours here.
  for (const p of people) p.tokens = await login(ctx, p.username)
  let t = await startedTournament(ctx, gameId, people)
  while (t.status === 'running') {
    const running = t.matches.filter((m) => m.status === 'running')
    for (const m of running) {
      await playOut(ctx, gameId, gameKey, t, people, m, m.slot1ParticipantId!)
      const userOf = (id: string) => t.participants.find((p) => p.id === id)!.userId
      reference.match(m.id, userOf(m.slot1ParticipantId!), userOf(m.slot2ParticipantId!), 1 as Score, ctx.clock.now())
    }
    t = await tournament(ctx, t.id)
  }
  await ctx.runJobs()
}

/** Schedules a season `inMs` ahead, checks the job waits for it, moves the clock there and runs the due jobs. */
async function seasonStarting(gameId: string, reset: 'soft' | 'hard', inMs: number) {
  const startsAt = new Date(ctx.clock.now().getTime() + inMs)
  const { season } = await ctx.services.ratings.createSeason(gameId, { name: `Season at ${startsAt.toISOString()}`, startsAt: startsAt.toISOString(), reset }, testActor(ctx.services))
  expect(season).toMatchObject({ status: 'scheduled', reset, startsAt: startsAt.toISOString() })
  // Its job: enqueued now, due at the start.
  const { jobs } = ctx.peek.tables
  const queued = (await ctx.peek.db.select().from(jobs).where(eq(jobs.kind, JOB_KINDS.startSeason))).filter((j) => j.payload.seasonId === season.id)
  expect(queued.map((j) => [j.status, j.createdAt.getTime(), j.runAfter.getTime()])).toEqual([['queued', ctx.clock.now().getTime(), startsAt.getTime()]])
  // A scheduled season's board is empty.
  expect((await ctx.services.ratings.leaderboard(gameId, { season: season.id })).entries).toEqual([])
  ctx.clock.advance(inMs - 1)
  await ctx.runJobs()
  expect((await ctx.storage.read.ratings.season(season.id))!.status).toBe('scheduled')
  ctx.clock.advance(1)
  await ctx.runJobs()
  return season
}

/** Everything a season start writes, for "the job run again changes nothing". */
async function snapshot(gameId: string, userIds: string[], endedSeasonId: string) {
  return {
    rows: await ctx.storage.read.ratings.ratingsOfGame(gameId),
    histories: await Promise.all(userIds.map((id) => ctx.storage.read.ratings.historyOf(gameId, id, 0, 1000))),
    standings: await ctx.storage.read.ratings.standings(endedSeasonId, 0, 1000),
    seasons: await ctx.storage.read.ratings.seasonsOf(gameId),
  }
}

describe('seasons', () => {
  test('soft, then hard: old season ended with its final board, everyone reset, season_reset rows; the job twice changes nothing', async () => {
    const { game, gameKey } = await createGame(ctx, 'Seasonal')
    const people = await players(ctx, 4)
    const reference = new RatingReference()
    await playCup(game.id, gameKey, people, reference)
    // A veteran (many matches, deviation under the soft reset's 200), written in.
    const [veteran] = await players(ctx, 1)
    const seasoned: Glicko = { rating: 1650, deviation: 120, volatility: 0.05 }
    await seedRatings(ctx, game.id, [{ userId: veteran!.userId, glicko: seasoned, matches: 12 }])
    reference.seed(veteran!.userId, seasoned, 12, ctx.clock.now())
    expect((await ctx.services.ratings.mine(game.id, veteran!.userId)).rating.provisional).toBe(false)
    const ids = [...people, veteran!].map((p) => p.userId)
    const first = (await ctx.services.ratings.mine(game.id, ids[0]!)).seasonId
    const liveBefore = await ctx.services.ratings.leaderboard(game.id, {})
    expect(liveBefore.entries).toHaveLength(5)

    // Season 2, soft, an hour ahead: no whole inactivity period passes, so the final board is the live one as it was.
    const second = await seasonStarting(game.id, 'soft', HOUR)
    const startedAt = ctx.clock.now()
    const seasons = (await ctx.services.ratings.seasons(game.id)).seasons
    expect(seasons.map((s) => [s.id, s.number, s.status])).toEqual([
      [second.id, 2, 'current'],
      [first, 1, 'ended'],
    ])
    expect(seasons[0]!.startedAt).toBe(startedAt.toISOString())
    expect(seasons[1]!.endedAt).toBe(startedAt.toISOString())
    const finalBoard = await ctx.services.ratings.leaderboard(game.id, { season: first })
    expect(finalBoard.season.status).toBe('ended')
    expect(finalBoard.entries).toEqual(liveBefore.entries)
    expect(finalBoard.entries.map((e) => [e.rank, e.userId, e.rating])).toEqual(reference.board(startedAt).map((row, i) => [i + 1, row.userId, reference.view(row.userId, startedAt)]))
    // Paged by rank, the same rows.
    const page1 = await ctx.services.ratings.leaderboard(game.id, { season: first, limit: 3 })
    const page2 = await ctx.services.ratings.leaderboard(game.id, { season: first, limit: 3, after: page1.cursor! })
    expect([...page1.entries, ...page2.entries]).toEqual(finalBoard.entries)
    expect(page2.cursor).toBeNull()

    const old = new Map(ids.map((id) => [id, reference.effective(id, startedAt)]))
    reference.seasonStart('soft', startedAt)
    await expectRatings(ctx, game.id, reference, ids)
    for (const id of ids) {
      const row = (await storedRating(ctx, game.id, id))!
      const was = old.get(id)!
      // By the rule itself: half-way to 1500, deviation at least 200, volatility kept; no matches this season.
      expect({ rating: row.rating, deviation: row.deviation, volatility: row.volatility, matches: row.matches, seasonId: row.seasonId }).toEqual({
        rating: (was.rating + 1500) / 2,
        deviation: Math.max(was.deviation, 200),
        volatility: was.volatility,
        matches: 0,
        seasonId: second.id,
      })
      expect((await ctx.services.ratings.mine(game.id, id)).rating.provisional).toBe(true)
      const history = await expectChain(ctx, game.id, id)
      expect(history.at(-1)).toMatchObject({ kind: 'season_reset', seasonId: second.id, matchId: null, opponentUserId: null, outcome: null, before: was, after: { rating: row.rating, deviation: row.deviation, volatility: row.volatility } })
      // A reset sends no rating.updated.
      expect((await ratingEvents(ctx, id)).length).toBe(reference.updatesOf(id).length)
    }
    expect((await storedRating(ctx, game.id, veteran!.userId))!.deviation).toBe(200)
    // Nobody has played this season: the live board is empty.
    expect(await ctx.services.ratings.leaderboard(game.id, {})).toMatchObject({ season: { id: second.id, status: 'current' }, entries: [], cursor: null })

    // The job run again (a second delivery) changes nothing.
    const before = await snapshot(game.id, ids, first)
    await ctx.storage.write((tx) => tx.jobs.enqueue(JOB_KINDS.startSeason, { seasonId: second.id }, ctx.clock.now()).then(() => undefined))
    // It runs, and succeeds doing nothing.
    expect(await ctx.runJobs()).toBe(1)
    expect(await snapshot(game.id, ids, first)).toEqual(before)

    // Two of them play in season 2; then season 3, hard, eight days on (one whole inactivity period: season 2's final board has it applied).
    await playCup(game.id, gameKey, people.slice(0, 2), reference)
    const played = (await ratingEvents(ctx, ids[0]!)).at(-1)!
    expect(played.seasonId).toBe(second.id)
    expect((await ctx.services.ratings.leaderboard(game.id, {})).entries.map((e) => e.userId).sort()).toEqual(ids.slice(0, 2).sort())
    const third = await seasonStarting(game.id, 'hard', 8 * 24 * HOUR)
    const thirdAt = ctx.clock.now()
    expect(reference.idlePeriods(ids[0]!, thirdAt)).toBe(1)
    const board2 = await ctx.services.ratings.leaderboard(game.id, { season: second.id })
    expect(board2.entries.map((e) => [e.rank, e.userId, e.rating])).toEqual(reference.board(thirdAt).map((row, i) => [i + 1, row.userId, reference.view(row.userId, thirdAt)]))
    expect(board2.entries).toHaveLength(2)
    reference.seasonStart('hard', thirdAt)
    await expectRatings(ctx, game.id, reference, ids)
    for (const id of ids) {
      expect((await ctx.services.ratings.mine(game.id, id))).toEqual({ seasonId: third.id, rating: { rating: 1500, deviation: 350, volatility: 0.06, display: 800, provisional: true, matches: 0 } })
      expect((await expectChain(ctx, game.id, id)).at(-1)).toMatchObject({ kind: 'season_reset', seasonId: third.id, after: { rating: 1500, deviation: 350, volatility: 0.06 } })
    }
    // A deleted account keeps its place in past boards, without its name.
    expect((await deleteUser(ctx, ids[0]!)).status).toBe(200)
    const after = await ctx.services.ratings.leaderboard(game.id, { season: second.id })
    expect(after.entries.map((e) => [e.userId, e.username])).toEqual(board2.entries.map((e) => [e.userId, e.userId === ids[0] ? null : e.username]))
  })
})

describe('inactivity', () => {
  test('each whole idle period grows the deviation on read, capped at 350', async () => {
    const { game, gameKey } = await createGame(ctx, 'Idle')
    const people = await players(ctx, 2)
    const reference = new RatingReference()
    await playCup(game.id, gameKey, people, reference)
    const ids = people.map((p) => p.userId)
    const stored = (await storedRating(ctx, game.id, ids[0]!))!

    ctx.clock.advance(3 * WEEK - 1)
    expect(reference.idlePeriods(ids[0]!, ctx.clock.now())).toBe(2)
    await expectRatings(ctx, game.id, reference, ids)
    ctx.clock.advance(1)
    await expectRatings(ctx, game.id, reference, ids)
    const shown = (await ctx.services.ratings.mine(game.id, ids[0]!)).rating
    expect(shown.deviation).toBe(Number(idle(stored, 3).deviation.toFixed(2)))
    expect(shown.deviation).toBeGreaterThan(stored.deviation)
    expect(shown.rating).toBe(Number(stored.rating.toFixed(2)))
    // The stored row is untouched by reading.
    expect(await storedRating(ctx, game.id, ids[0]!)).toEqual(stored)

    // Long enough idle: the cap.
    ctx.clock.advance(2000 * WEEK)
    await expectRatings(ctx, game.id, reference, ids)
    expect((await ctx.services.ratings.mine(game.id, ids[0]!)).rating.deviation).toBe(350)
  })

  test('the board sweep moves an idle player below one who passed them', async () => {
    const { game } = await createGame(ctx, 'Idle board')
    const [x, y] = await players(ctx, 2)
    // X above Y now; X's deviation grows faster (higher volatility), so after four idle periods Y is above.
    const X: Glicko = { rating: 1800, deviation: 60, volatility: 0.2 }
    const Y: Glicko = { rating: 1750, deviation: 50, volatility: 0.03 }
    await seedRatings(ctx, game.id, [
      { userId: x!.userId, glicko: X, matches: 5 },
      { userId: y!.userId, glicko: Y, matches: 5 },
    ])
    const order = async () => (await ctx.services.ratings.leaderboard(game.id, {})).entries.map((e) => [e.rank, e.userId, e.rating.display])
    expect(await order()).toEqual([
      [1, x!.userId, displayOf(X)],
      [2, y!.userId, displayOf(Y)],
    ])
    ctx.clock.advance(4 * WEEK)
    const xNow = Number(displayOf(idle(X, 4)).toFixed(2))
    const yNow = Number(displayOf(idle(Y, 4)).toFixed(2))
    expect(xNow).toBeLessThan(yNow)
    // Before the sweep the order is the old one; each entry's rating is as of now.
    expect(await order()).toEqual([
      [1, x!.userId, xNow],
      [2, y!.userId, yNow],
    ])
    expect(await ctx.services.ratings.sweepBoard()).toBeGreaterThanOrEqual(2)
    expect(await order()).toEqual([
      [1, y!.userId, yNow],
      [2, x!.userId, xNow],
    ])
    // Nothing more is due until the next period ends.
    const rows = await ctx.storage.read.ratings.ratingsOfGame(game.id)
    expect(rows.map((r) => r.boardDecayAt?.getTime())).toEqual(rows.map(() => ctx.clock.now().getTime() + WEEK))
  })
})
