// Contract §15, rated decisions, end to end: tournaments played through the
// real routes (game-SDK claims, the operator's resolve, the deadline job's
// no_show) move each player's rating exactly as the reference computation
// (test/helpers/ratings.ts: rateMatch per rated match in decision order)
// says; every player's history is one chain and each rated match sends each
// player one rating.updated. Byes, disqualification walkovers, a cancelled
// tournament's undecided matches and a tournament with `rated: false` move
// nothing.
import { afterAll, describe, expect, test } from 'bun:test'
import { postJson } from '../helpers/app'
import { admin, claim, createArenaApp, createGame, playerOf, players, playOut, startedTournament, tournament, type MatchView, type Player, type TournamentView } from '../helpers/arena'
import { expectChain, expectRatings, historyRowsOfMatch, ratingEvents, RatingReference, storedRating } from '../helpers/ratings'
import type { Score } from '../../src/modules/ratings/glicko2'

const ctx = await createArenaApp()
afterAll(() => ctx.close())

const userOf = (t: TournamentView, people: Player[], participantId: string) => playerOf(t, people, participantId).userId

/** Tells the reference that `m` was just decided: `winner` (a participant id) won, or a draw (null). */
function rated(reference: RatingReference, t: TournamentView, people: Player[], m: MatchView, winner: string | null) {
  const scoreA: Score = winner === null ? 0.5 : winner === m.slot1ParticipantId ? 1 : 0
  reference.match(m.id, userOf(t, people, m.slot1ParticipantId!), userOf(t, people, m.slot2ParticipantId!), scoreA, ctx.clock.now())
}

/** Every player's rating, history chain and rating.updated events as the reference has them; answers each one's history. */
async function expectAllAsReference(gameId: string, reference: RatingReference, people: Player[]) {
  const { seasonId } = await ctx.services.ratings.mine(gameId, people[0]!.userId)
  await expectRatings(ctx, gameId, reference, people.map((p) => p.userId))
  const now = ctx.clock.now()
  const histories = new Map<string, Awaited<ReturnType<typeof expectChain>>>()
  for (const { userId } of people) {
    // The stored numbers, not only the rounded view.
    const row = await storedRating(ctx, gameId, userId)
    const want = reference.effective(userId, now)
    if (reference.matches(userId) === 0) expect({ userId, row }).toEqual({ userId, row: null })
    else {
      expect(row!.rating).toBeCloseTo(want.rating, 9)
      expect(row!.deviation).toBeCloseTo(want.deviation, 9)
      expect(row!.volatility).toBeCloseTo(want.volatility, 12)
    }
    const history = await expectChain(ctx, gameId, userId)
    const updates = reference.updatesOf(userId)
    expect({ userId, history: history.map((h) => ({ kind: h.kind, matchId: h.matchId })) }).toEqual({ userId, history: updates.map((u) => ({ kind: u.reason, matchId: u.matchId })) })
    expect({ userId, events: await ratingEvents(ctx, userId) }).toEqual({ userId, events: updates.map((u) => ({ gameId, seasonId, ...u })) })
    histories.set(userId, history)
  }
  return histories
}

describe('rated tournaments played to the end', () => {
  test('a round robin of 4 with draws: every player as the reference, one chain, one event per match', async () => {
    const { game, gameKey } = await createGame(ctx, 'Rated round robin')
    const people = await players(ctx, 4)
    const t = await startedTournament(ctx, game.id, people, { format: 'round_robin' })
    const matches = [...t.matches].sort((x, y) => x.round - y.round || x.position - y.position)
    expect(matches).toHaveLength(6)
    const reference = new RatingReference()
    for (const [i, m] of matches.entries()) {
      // Slot 1 wins, a draw, slot 2 wins, in turn.
      const winner = i % 3 === 0 ? m.slot1ParticipantId! : i % 3 === 1 ? null : m.slot2ParticipantId!
      await playOut(ctx, game.id, gameKey, t, people, m, winner)
      rated(reference, t, people, m, winner)
    }
    await ctx.runJobs()
    expect((await tournament(ctx, t.id)).status).toBe('completed')
    const histories = await expectAllAsReference(game.id, reference, people)
    for (const p of people) {
      const history = histories.get(p.userId)!
      expect(history).toHaveLength(3)
      // Each row says the result from the player's side.
      for (const h of history) {
        const m = matches.find((x) => x.id === h.matchId)!
        const mine = userOf(t, people, m.slot1ParticipantId!) === p.userId ? m.slot1ParticipantId : m.slot2ParticipantId
        const shown = (await tournament(ctx, t.id)).matches.find((x) => x.id === m.id)!
        expect(h.outcome).toBe(shown.outcome === 'DRAW' ? 'draw' : shown.winnerParticipantId === mine ? 'win' : 'loss')
      }
    }
    // Somebody moved: the test would notice a tournament rated as nothing.
    expect(new Set(people.map((p) => reference.view(p.userId, ctx.clock.now()).rating)).size).toBeGreaterThan(1)
  })

  test('single elimination of 6: claims, a resolved dispute, a no_show and the final rated; byes and a disqualification walkover not', async () => {
    const { game, gameKey } = await createGame(ctx, 'Rated cup')
    const people = await players(ctx, 6)
    let t = await startedTournament(ctx, game.id, people, { options: { matchDeadlineS: 300 } })
    const reference = new RatingReference()
    const byes = t.matches.filter((m) => m.status === 'decided')
    expect(byes).toHaveLength(2)
    const [m1, m2] = t.matches.filter((m) => m.status === 'running')

    // Agreed claims.
    await playOut(ctx, game.id, gameKey, t, people, m1!, m1!.slot1ParticipantId!)
    rated(reference, t, people, m1!, m1!.slot1ParticipantId!)
    // Claims that conflict: disputed, then the operator resolves it.
    const [a, b] = [playerOf(t, people, m2!.slot1ParticipantId!), playerOf(t, people, m2!.slot2ParticipantId!)]
    expect((await claim(ctx, game.id, gameKey, a, m2!.id, { outcome: 'WIN', winnerParticipantId: m2!.slot1ParticipantId })).decision).toBe('pending')
    expect((await claim(ctx, game.id, gameKey, b, m2!.id, { outcome: 'WIN', winnerParticipantId: m2!.slot2ParticipantId })).decision).toBe('dispute')
    expect(await storedRating(ctx, game.id, a.userId)).toBeNull()
    const resolved = await ctx.handle(postJson(`/api/v1/admin/matches/${m2!.id}/resolve`, { winnerParticipantId: m2!.slot2ParticipantId }, admin))
    expect(resolved.status).toBe(200)
    rated(reference, t, people, m2!, m2!.slot2ParticipantId!)

    // The semi-finals: the one m2 fed goes to its other player by disqualifying m2's winner (a walkover).
    t = await tournament(ctx, t.id)
    const s2 = t.matches.find((m) => m.id === m2!.nextMatchId)!
    const s1 = t.matches.find((m) => m.id === m1!.nextMatchId)!
    expect([s1.status, s2.status]).toEqual(['running', 'running'])
    const cheat = m2!.slot2ParticipantId!
    expect((await ctx.handle(postJson(`/api/v1/admin/tournaments/${t.id}/participants/${cheat}/disqualify`, { reason: 'aimbot' }, admin))).status).toBe(200)
    // The other: one claim, the deadline passes, the claimant advances (no_show), rated.
    const claimant = s1.slot1ParticipantId!
    expect((await claim(ctx, game.id, gameKey, playerOf(t, people, claimant), s1.id, { outcome: 'WIN', winnerParticipantId: claimant })).decision).toBe('pending')
    ctx.clock.advance(300_000)
    await ctx.runJobs()
    rated(reference, t, people, s1, claimant)

    // The final, by claims; then finalized.
    t = await tournament(ctx, t.id)
    const walkoverWinner = s2.slot1ParticipantId === cheat ? s2.slot2ParticipantId! : s2.slot1ParticipantId!
    expect(t.matches.find((m) => m.id === s2.id)).toMatchObject({ status: 'decided', winnerParticipantId: walkoverWinner })
    expect(t.matches.find((m) => m.id === s1.id)).toMatchObject({ status: 'decided', winnerParticipantId: claimant })
    const final = t.matches.find((m) => m.id === s1.nextMatchId)!
    expect(final.status).toBe('running')
    await playOut(ctx, game.id, gameKey, t, people, final, final.slot2ParticipantId!)
    rated(reference, t, people, final, final.slot2ParticipantId!)
    await ctx.runJobs()
    expect((await tournament(ctx, t.id)).status).toBe('completed')

    await expectAllAsReference(game.id, reference, people)
    // Nothing rated for the byes or the walkover.
    for (const m of [...byes, s2]) expect({ match: m.id, rows: await historyRowsOfMatch(ctx, m.id) }).toEqual({ match: m.id, rows: [] })
    // The walkover's winner played only the final (a bye, then the walkover); the disqualified player only m2.
    expect(reference.matches(userOf(t, people, walkoverWinner))).toBe(1)
    expect(reference.matches(userOf(t, people, cheat))).toBe(1)
    // Four rated matches, two players each.
    expect(people.reduce((n, p) => n + reference.matches(p.userId), 0)).toBe(8)
  })

  test('a cancelled tournament: the decided match rated, the undecided ones not', async () => {
    const { game, gameKey } = await createGame(ctx, 'Cancelled cup')
    const people = await players(ctx, 4)
    const t = await startedTournament(ctx, game.id, people)
    const [m1, m2] = t.matches.filter((m) => m.status === 'running')
    const reference = new RatingReference()
    await playOut(ctx, game.id, gameKey, t, people, m1!, m1!.slot2ParticipantId!)
    rated(reference, t, people, m1!, m1!.slot2ParticipantId!)
    // m2 has a claim in, then the tournament is cancelled.
    await claim(ctx, game.id, gameKey, playerOf(t, people, m2!.slot1ParticipantId!), m2!.id, { outcome: 'WIN', winnerParticipantId: m2!.slot1ParticipantId })
    expect((await ctx.handle(postJson(`/api/v1/admin/tournaments/${t.id}/cancel`, { reason: 'venue flooded' }, admin))).status).toBe(200)
    const after = await tournament(ctx, t.id)
    expect(after.matches.filter((m) => m.status === 'cancelled').map((m) => m.id).sort()).toEqual([m2!.id, m1!.nextMatchId!].sort())
    await expectAllAsReference(game.id, reference, people)
    for (const id of [m2!.slot1ParticipantId!, m2!.slot2ParticipantId!]) {
      expect(await ctx.services.ratings.mine(game.id, userOf(t, people, id))).toMatchObject({ rating: { rating: 1500, deviation: 350, matches: 0, provisional: true } })
    }
  })

  test('options.rated false (POST /admin/tournaments): its results move nobody', async () => {
    const { game, gameKey } = await createGame(ctx, 'Friendly')
    const people = await players(ctx, 3)
    const reference = new RatingReference()
    // The first two are rated already, in a rated tournament of the game.
    const cup = await startedTournament(ctx, game.id, people.slice(0, 2))
    await playOut(ctx, game.id, gameKey, cup, people, cup.matches[0]!, cup.matches[0]!.slot1ParticipantId!)
    rated(reference, cup, people, cup.matches[0]!, cup.matches[0]!.slot1ParticipantId!)

    const friendly = await startedTournament(ctx, game.id, people, { format: 'round_robin', options: { rated: false } })
    expect((friendly as TournamentView & { options: Record<string, unknown> }).options).toEqual({ rated: false })
    for (const [i, m] of friendly.matches.entries()) await playOut(ctx, game.id, gameKey, friendly, people, m, i === 0 ? null : m.slot2ParticipantId!)
    await ctx.runJobs()
    expect((await tournament(ctx, friendly.id)).status).toBe('completed')
    for (const m of friendly.matches) expect(await historyRowsOfMatch(ctx, m.id)).toEqual([])
    await expectAllAsReference(game.id, reference, people)
    expect(await storedRating(ctx, game.id, people[2]!.userId)).toBeNull()
  })
})
