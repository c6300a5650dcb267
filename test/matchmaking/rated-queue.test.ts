// Contract §16's pairing by rating through HTTP, on both engines: a ticket's
// window is centred on its player's display and widens with waiting time, so
// two players far apart pair only once both windows reach; the rematch
// cooldown keeps two players apart after their match; a rated queue's match
// moves both ratings exactly as the reference computation says (contract
// §15), an unrated one moves nothing.
import { afterAll, describe, expect, test } from 'bun:test'
import { admin, createArenaApp, createGame, players, type Player } from '../helpers/arena'
import { eventsOf } from '../helpers/account'
import { agree, createQueue, joined, matchOf, ready } from '../helpers/matchmaking'
import { expectRatings, RatingReference, seedRatings, storedRating } from '../helpers/ratings'

const ctx = await createArenaApp()
afterAll(() => ctx.close())

/** The match a player was found for last (its match.found event). */
async function foundFor(player: Player): Promise<string | null> {
  const found = (await eventsOf(ctx, player.userId, 'match.found')) as { data: { matchId: string } }[]
  return found.at(-1)?.data.matchId ?? null
}

describe('pairing by rating', () => {
  test('windows widen with waiting time: far apart pair only once each lies in the other\'s window', async () => {
    const { game } = await createGame(ctx, 'Windows')
    // Displays (rating − 2 × deviation): 1500 − 100 = 1400 and 1800 − 100 = 1700, 300 apart.
    await createQueue(ctx, game.id, { window: { initial: 100, widenPerSecond: 10, max: 1000 } })
    const [low, high] = (await players(ctx, 2)) as [Player, Player]
    await seedRatings(ctx, game.id, [
      { userId: low.userId, glicko: { rating: 1500, deviation: 50, volatility: 0.06 }, matches: 20 },
      { userId: high.userId, glicko: { rating: 1800, deviation: 50, volatility: 0.06 }, matches: 20 },
    ])
    expect((await joined(ctx, game.id, 'ranked', low)).display).toBe(1400)
    ctx.clock.advance(10_000)
    expect((await joined(ctx, game.id, 'ranked', high)).display).toBe(1700)
    // low's window 100 + 10 × 10 = 200, high's 100: not yet.
    expect(await ctx.services.matchmaking.matchTick()).toBe(0)
    // At +19 s low's window is 290, high's 190: still not.
    ctx.clock.advance(9_000)
    expect(await ctx.services.matchmaking.matchTick()).toBe(0)
    // At +30 s: low 400, high 300: each lies in the other's.
    ctx.clock.advance(11_000)
    expect(await ctx.services.matchmaking.matchTick()).toBe(1)
    expect(await foundFor(low)).toBe(await foundFor(high))
  })

  test('the rematch cooldown keeps two players apart after their match; a third is taken instead', async () => {
    const { game, gameKey } = await createGame(ctx, 'Cooldown')
    await createQueue(ctx, game.id, { rematchCooldownS: 600 })
    const people = (await players(ctx, 3)) as [Player, Player, Player]
    const [a, b, c] = people
    await joined(ctx, game.id, 'ranked', a)
    await joined(ctx, game.id, 'ranked', b)
    expect(await ctx.services.matchmaking.matchTick()).toBe(1)
    const first = (await foundFor(a))!
    for (const p of [a, b]) expect((await ready(ctx, first, p)).status).toBe(200)
    await agree(ctx, game.id, gameKey, await matchOf(ctx, first), people, a)

    ctx.clock.advance(60_000)
    await joined(ctx, game.id, 'ranked', a)
    await joined(ctx, game.id, 'ranked', b)
    expect(await ctx.services.matchmaking.matchTick()).toBe(0)
    await joined(ctx, game.id, 'ranked', c)
    expect(await ctx.services.matchmaking.matchTick()).toBe(1)
    // The oldest ticket (a's) takes c, the one it may meet; b waits.
    const second = (await foundFor(c))!
    expect((await matchOf(ctx, second)).players.map((p) => p.userId).sort()).toEqual([a.userId, c.userId].sort())
    // Past the cooldown, a and b meet again.
    ctx.clock.advance(600_000)
    expect(await ctx.services.matchmaking.matchTick()).toBe(0)
    await ctx.handle(new Request(`http://localhost/api/v1/games/${game.id}/queues/ranked/tickets/current`, { method: 'DELETE', headers: { authorization: `Bearer ${c.tokens.accessToken}` } }))
    const again = await ctx.handle(new Request(`http://localhost/api/v1/games/${game.id}/queues/ranked/tickets`, { method: 'POST', headers: { authorization: `Bearer ${a.tokens.accessToken}` } }))
    // a's ticket made a match: a may join again.
    expect(again.status).toBe(201)
    expect(await ctx.services.matchmaking.matchTick()).toBe(1)
    expect(await foundFor(b)).toBe(await foundFor(a))
  })

  test('a rated queue\'s match moves both ratings as the reference says; an unrated one moves nothing', async () => {
    const { game, gameKey } = await createGame(ctx, 'Rated')
    // Windows wide enough for the two, whatever their ratings become.
    const window = { initial: 2000, widenPerSecond: 0, max: 2000 }
    await createQueue(ctx, game.id, { name: 'rated', rated: true, draws: 'result', window })
    await createQueue(ctx, game.id, { name: 'casual', rated: false, window })
    const people = (await players(ctx, 2)) as [Player, Player]
    const [a, b] = people
    const reference = new RatingReference()
    for (const [queue, winner] of [['rated', a], ['casual', b], ['rated', null]] as const) {
      for (const p of people) await joined(ctx, game.id, queue, p)
      expect(await ctx.services.matchmaking.matchTick()).toBe(1)
      const id = (await foundFor(a))!
      for (const p of people) expect((await ready(ctx, id, p)).status).toBe(200)
      const match = await matchOf(ctx, id)
      expect(match.rated).toBe(queue === 'rated')
      const decision = await agree(ctx, game.id, gameKey, match, people, winner)
      expect(decision.decision).toBe('game_advance')
      if (queue === 'rated') {
        const [first, second] = match.players.map((p) => p.userId)
        const scoreFirst = winner === null ? 0.5 : winner.userId === first ? 1 : 0
        reference.match(id, first!, second!, scoreFirst, ctx.clock.now())
      }
      await expectRatings(ctx, game.id, reference, [a.userId, b.userId])
      ctx.clock.advance(1_000)
    }
    expect((await storedRating(ctx, game.id, a.userId))!.matches).toBe(2)
  })
})

describe('a correction of a queue match', () => {
  test('an unstaked rated match is corrected as a tournament\'s: the result changes, the ratings move again (a staked one is refused: queue-flow.test.ts)', async () => {
    const { game, gameKey } = await createGame(ctx, 'Corrected')
    await createQueue(ctx, game.id, { name: 'rated', rated: true })
    const people = (await players(ctx, 2)) as [Player, Player]
    const [a, b] = people
    for (const p of people) await joined(ctx, game.id, 'rated', p)
    expect(await ctx.services.matchmaking.matchTick()).toBe(1)
    const id = (await foundFor(a))!
    for (const p of people) expect((await ready(ctx, id, p)).status).toBe(200)
    const match = await matchOf(ctx, id)
    await agree(ctx, game.id, gameKey, match, people, a)
    const reference = new RatingReference()
    const [first, second] = match.players.map((p) => p.userId) as [string, string]
    reference.match(id, first, second, first === a.userId ? 1 : 0, ctx.clock.now())
    await expectRatings(ctx, game.id, reference, [a.userId, b.userId])

    ctx.clock.advance(5_000)
    const bSeat = match.players.find((p) => p.userId === b.userId)!.participantId
    const res = await ctx.handle(new Request(`http://localhost/api/v1/admin/matches/${id}/correct`, { method: 'POST', headers: { 'content-type': 'application/json', ...admin }, body: JSON.stringify({ winnerParticipantId: bSeat, reason: 'misreported' }) }))
    expect(res.status).toBe(200)
    reference.correct(id, b.userId, ctx.clock.now())
    await expectRatings(ctx, game.id, reference, [a.userId, b.userId])
    expect((await matchOf(ctx, id)).decision?.winnerParticipantId).toBe(bSeat)
    expect(await eventsOf(ctx, a.userId, 'match.corrected')).toHaveLength(1)
  })
})
