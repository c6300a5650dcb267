// Contract §15 with §9's corrections, end to end: an operator's correction of
// a rated match takes back the change it made to each player and applies the
// new result computed from the ratings both had before it (its `match`
// history rows keep them); later updates are not recomputed. Checked against
// the reference computation (test/helpers/ratings.ts), with `correction`
// history rows and rating.updated events of reason `correction`; correcting
// back restores the values; correcting an unrated tournament's match moves
// nothing.
import { afterAll, describe, expect, test } from 'bun:test'
import { postJson } from '../helpers/app'
import { admin, createArenaApp, createGame, playerOf, players, playOut, startedTournament, type MatchView, type Player, type TournamentView } from '../helpers/arena'
import { expectChain, expectRatings, historyRowsOfMatch, ratingEvents, RatingReference, storedRating } from '../helpers/ratings'
import type { Score } from '../../src/modules/ratings/glicko2'

const ctx = await createArenaApp()
afterAll(() => ctx.close())

const userOf = (t: TournamentView, people: Player[], participantId: string) => playerOf(t, people, participantId).userId

async function correct(m: MatchView, winnerParticipantId: string) {
  const res = await ctx.handle(postJson(`/api/v1/admin/matches/${m.id}/correct`, { winnerParticipantId, reason: 'entered wrongly' }, admin))
  expect(res.status).toBe(200)
}

/** A running round robin of 4, each match found by its two players' indexes in `people`. */
async function roundRobin(options?: Record<string, unknown>) {
  const { game, gameKey } = await createGame(ctx, 'Corrected league')
  const people = await players(ctx, 4)
  const t = await startedTournament(ctx, game.id, people, { format: 'round_robin', ...(options ? { options } : {}) })
  const between = (i: number, j: number) => {
    const pair = new Set([people[i]!.userId, people[j]!.userId])
    return t.matches.find((m) => pair.has(userOf(t, people, m.slot1ParticipantId!)) && pair.has(userOf(t, people, m.slot2ParticipantId!)))!
  }
  const reference = new RatingReference()
  /** Plays `m` out through claims (winner a participant id, or null: a draw) and tells the reference. */
  const play = async (m: MatchView, winner: string | null) => {
    await playOut(ctx, game.id, gameKey, t, people, m, winner)
    const scoreA: Score = winner === null ? 0.5 : winner === m.slot1ParticipantId ? 1 : 0
    if (options?.rated !== false) reference.match(m.id, userOf(t, people, m.slot1ParticipantId!), userOf(t, people, m.slot2ParticipantId!), scoreA, ctx.clock.now())
  }
  return { gameId: game.id, people, t, between, reference, play }
}

describe('correcting a rated match', () => {
  test('the corrected change taken back, the new result applied from the pre-match values; later updates kept; back again restores', async () => {
    const { gameId, people, t, between, reference, play } = await roundRobin()
    const ids = people.map((p) => p.userId)
    const [a, b, c, d] = ids
    const ab = between(0, 1)
    const ac = between(0, 2)
    const cd = between(2, 3)
    const winnerOf = (m: MatchView, userId: string) => (userOf(t, people, m.slot1ParticipantId!) === userId ? m.slot1ParticipantId! : m.slot2ParticipantId!)

    await play(ab, winnerOf(ab, a!))
    await play(cd, null)
    // A later update for both of ab's players: not recomputed by the correction.
    await play(ac, winnerOf(ac, c!))
    await expectRatings(ctx, gameId, reference, ids)
    const beforeCorrection = await Promise.all(ids.map((id) => storedRating(ctx, gameId, id)))

    ctx.clock.advance(5_000)
    await correct(ab, winnerOf(ab, b!))
    reference.correct(ab.id, b!, ctx.clock.now())
    await expectRatings(ctx, gameId, reference, ids)
    // A won, now lost: A is lower than before the correction, B higher; C and D untouched.
    const corrected = await Promise.all(ids.map((id) => storedRating(ctx, gameId, id)))
    expect(corrected[0]!.rating).toBeLessThan(beforeCorrection[0]!.rating)
    expect(corrected[1]!.rating).toBeGreaterThan(beforeCorrection[1]!.rating)
    expect(corrected.slice(2)).toEqual(beforeCorrection.slice(2))
    // Matches are still counted once; the inactivity count is not restarted.
    expect(corrected.map((r) => [r!.matches, r!.lastRatedAt.getTime()])).toEqual(beforeCorrection.map((r) => [r!.matches, r!.lastRatedAt.getTime()]))

    // A draw corrected to a win, too.
    await correct(cd, winnerOf(cd, d!))
    reference.correct(cd.id, d!, ctx.clock.now())
    await expectRatings(ctx, gameId, reference, ids)

    // Back to the original result: A and B as they were before the first correction.
    await correct(ab, winnerOf(ab, a!))
    reference.correct(ab.id, a!, ctx.clock.now())
    await expectRatings(ctx, gameId, reference, ids)
    const restored = await Promise.all(ids.slice(0, 2).map((id) => storedRating(ctx, gameId, id)))
    for (const [i, row] of restored.entries()) {
      expect(row!.rating).toBeCloseTo(beforeCorrection[i]!.rating, 9)
      expect(row!.deviation).toBeCloseTo(beforeCorrection[i]!.deviation, 9)
      expect(row!.volatility).toBeCloseTo(beforeCorrection[i]!.volatility, 12)
    }

    // The history: the match rows, then a correction row per correction, one chain each; the events say the same.
    const { seasonId } = await ctx.services.ratings.mine(gameId, a!)
    for (const userId of ids) {
      const history = await expectChain(ctx, gameId, userId)
      const updates = reference.updatesOf(userId)
      expect({ userId, history: history.map((h) => ({ kind: h.kind, matchId: h.matchId })) }).toEqual({ userId, history: updates.map((u) => ({ kind: u.reason, matchId: u.matchId })) })
      expect({ userId, events: await ratingEvents(ctx, userId) }).toEqual({ userId, events: updates.map((u) => ({ gameId, seasonId, ...u })) })
    }
    const aHistory = await expectChain(ctx, gameId, a!)
    expect(aHistory.map((h) => [h.kind, h.matchId, h.outcome])).toEqual([
      ['match', ab.id, 'win'],
      ['match', ac.id, 'loss'],
      ['correction', ab.id, 'loss'],
      ['correction', ab.id, 'win'],
    ])
    // The correction rows' values are what the player had just before and after each.
    expect(aHistory[2]!.before.rating).toBe(aHistory[1]!.after.rating)
    expect(aHistory[2]!.after.rating).toBeCloseTo(corrected[0]!.rating, 9)
  })

  test('corrected twice two idle periods on: the inactivity count not restarted, back to the original result restores the stored values', async () => {
    const { gameId, people, t, between, reference, play } = await roundRobin()
    const ids = people.map((p) => p.userId)
    const ab = between(0, 1)
    await play(ab, ab.slot1ParticipantId!)
    const original = await Promise.all(ids.slice(0, 2).map((id) => storedRating(ctx, gameId, id)))
    // Two whole inactivity periods later (the league still running), corrected, then corrected back.
    ctx.clock.advance(2 * 604_800_000 + 1000)
    const slot1User = userOf(t, people, ab.slot1ParticipantId!)
    const slot2User = userOf(t, people, ab.slot2ParticipantId!)
    await correct(ab, ab.slot2ParticipantId!)
    reference.correct(ab.id, slot2User, ctx.clock.now())
    await expectRatings(ctx, gameId, reference, ids)
    await correct(ab, ab.slot1ParticipantId!)
    reference.correct(ab.id, slot1User, ctx.clock.now())
    await expectRatings(ctx, gameId, reference, ids)
    const restored = await Promise.all(ids.slice(0, 2).map((id) => storedRating(ctx, gameId, id)))
    for (const [i, row] of restored.entries()) {
      expect(row!.rating).toBeCloseTo(original[i]!.rating, 9)
      expect(row!.deviation).toBeCloseTo(original[i]!.deviation, 9)
      expect(row!.volatility).toBeCloseTo(original[i]!.volatility, 12)
    }
  })

  test("an unrated tournament's match corrected: nothing moves, no history, no event", async () => {
    const { gameId, people, t, between, play } = await roundRobin({ rated: false })
    const m = between(0, 1)
    await play(m, m.slot1ParticipantId!)
    await correct(m, m.slot2ParticipantId!)
    expect((await ctx.handle(postJson(`/api/v1/admin/tournaments/${t.id}/cancel`, { reason: 'done' }, admin))).status).toBe(200)
    for (const p of people) {
      expect(await storedRating(ctx, gameId, p.userId)).toBeNull()
      expect(await ratingEvents(ctx, p.userId)).toEqual([])
      expect((await ctx.services.ratings.mine(gameId, p.userId)).rating).toMatchObject({ rating: 1500, deviation: 350, matches: 0 })
    }
    expect(await historyRowsOfMatch(ctx, m.id)).toEqual([])
  })
})
