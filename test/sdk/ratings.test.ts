// The SDK's ratings client against an in-process app: a player's rating
// before and after a rated match played through the SDK, its history, the
// live leaderboard a page at a time, the `rating.updated` event, a past
// season's final board, and the server's refusals as ApiError codes.
import { afterAll, expect, test } from 'bun:test'
import { isEvent, NotSignedIn } from '@arena/sdk'
import { createArenaApp, createGame, startedTournament } from '../helpers/arena'
import { PASSWORD, registerUser } from '../helpers/auth'
import { testActor } from '../helpers/actors'
import { apiError, sdkClient } from '../helpers/sdk'
import { INITIAL, rateMatch } from '../../src/modules/ratings/glicko2'
import { unratedView, viewOf } from '../../src/modules/ratings/view'

const ctx = await createArenaApp()
afterAll(() => ctx.close())

async function signedIn() {
  const user = await registerUser(ctx)
  const { client, sent } = sdkClient(ctx)
  await client.auth.login(user.username, PASSWORD)
  return { client, sent, user }
}

/** A game whose two players played one rated match through the SDK, `winner` winning. */
async function ratedMatch(name: string) {
  const { game, gameKey } = await createGame(ctx, name)
  const alice = await signedIn()
  const bob = await signedIn()
  const t = await startedTournament(ctx, game.id, [{ userId: alice.user.id }, { userId: bob.user.id }])
  const match = t.matches.find((m) => m.status === 'running')!
  const seatOf = (userId: string) => t.participants.find((p) => p.userId === userId)!.id
  for (const side of [alice, bob]) {
    const play = side.client.game(game.id, gameKey)
    await play.submitResult(await play.openSession(match.id), { outcome: 'WIN', winnerParticipantId: seatOf(alice.user.id) })
  }
  return { gameId: game.id, alice, bob, matchId: match.id }
}

const [aliceAfter, bobAfter] = rateMatch(INITIAL, INITIAL, 1, 0.5)

test('a rated match through the SDK: each player’s rating, history and event; the leaderboard a page at a time', async () => {
  const { gameId, alice, bob, matchId } = await ratedMatch('SDK Rated')
  const seasons = await alice.client.ratings.seasons(gameId)
  expect(seasons).toEqual([expect.objectContaining({ gameId, number: 1, status: 'current', endedAt: null })])
  const seasonId = seasons[0]!.id

  const mine = await alice.client.ratings.me(gameId)
  expect(mine).toEqual({ rating: viewOf(aliceAfter, 1), seasonId })
  expect(mine.rating.rating).toBeGreaterThan(1500)
  expect(await bob.client.ratings.me(gameId)).toEqual({ rating: viewOf(bobAfter, 1), seasonId })
  expect(alice.sent.some((r) => r.method === 'GET' && r.path === `/api/v1/games/${gameId}/ratings/me`)).toBe(true)

  const history = await alice.client.ratings.history(gameId)
  expect(history).toEqual({
    history: [
      {
        seq: 1,
        kind: 'match',
        seasonId,
        matchId,
        opponentUserId: bob.user.id,
        outcome: 'win',
        // As computed, unrounded: the start values, then the match's.
        before: { ...INITIAL },
        after: aliceAfter,
        createdAt: ctx.clock.now().toISOString(),
      },
    ],
    cursor: null,
  })
  expect((await bob.client.ratings.history(gameId, { limit: 1 })).history.map((c) => c.outcome)).toEqual(['loss'])
  expect(bob.sent.some((r) => r.path === `/api/v1/games/${gameId}/ratings/history?limit=1`)).toBe(true)

  // The event carries the move and the rating as `me()` answers it.
  const updated = (await alice.client.events.poll({ topics: ['status'] })).filter((e) => isEvent(e, 'rating.updated'))
  expect(updated.map((e) => e.data)).toEqual([{ gameId, seasonId, matchId, reason: 'match', change: Number((mine.rating.rating - 1500).toFixed(2)), rating: mine.rating }])

  // One entry a page: alice (the winner) first, then bob, the last (no cursor).
  const first = await bob.client.ratings.leaderboard(gameId, { limit: 1 })
  expect(first.season.id).toBe(seasonId)
  expect(first.entries).toEqual([{ rank: 1, userId: alice.user.id, username: alice.user.username, rating: mine.rating }])
  expect(first.cursor).not.toBeNull()
  const second = await bob.client.ratings.leaderboard(gameId, { limit: 1, after: first.cursor! })
  expect(second.entries.map((e) => [e.rank, e.userId])).toEqual([[2, bob.user.id]])
  expect(second.cursor).toBeNull()
  expect(bob.sent.some((r) => r.path === `/api/v1/games/${gameId}/leaderboard?after=${encodeURIComponent(first.cursor!)}&limit=1`)).toBe(true)
})

test('a past season: its final board by id, the new season’s reset ratings', async () => {
  const { gameId, alice, bob } = await ratedMatch('SDK Seasons')
  const [one] = await alice.client.ratings.seasons(gameId)
  ctx.clock.advance(60_000)
  const { season: two } = await ctx.services.ratings.createSeason(gameId, { name: 'Season 2', startsAt: ctx.clock.now().toISOString(), reset: 'hard' }, testActor(ctx.services))
  expect((await alice.client.ratings.seasons(gameId)).map((s) => [s.id, s.status])).toEqual([
    [two.id, 'scheduled'],
    [one!.id, 'current'],
  ])
  expect(await alice.client.ratings.leaderboard(gameId, { season: two.id })).toMatchObject({ season: { id: two.id, status: 'scheduled' }, entries: [], cursor: null })
  await ctx.runJobs()

  expect((await alice.client.ratings.seasons(gameId)).map((s) => [s.id, s.status])).toEqual([
    [two.id, 'current'],
    [one!.id, 'ended'],
  ])
  const past = await bob.client.ratings.leaderboard(gameId, { season: one!.id })
  expect(past.season).toMatchObject({ id: one!.id, status: 'ended', endedAt: ctx.clock.now().toISOString() })
  expect(past.entries).toEqual([
    { rank: 1, userId: alice.user.id, username: alice.user.username, rating: viewOf(aliceAfter, 1) },
    { rank: 2, userId: bob.user.id, username: bob.user.username, rating: viewOf(bobAfter, 1) },
  ])
  expect(bob.sent.some((r) => r.path === `/api/v1/games/${gameId}/leaderboard?season=${one!.id}`)).toBe(true)
  // A hard reset: everyone back to the start, in the new season, on an empty live board.
  expect(await alice.client.ratings.me(gameId)).toEqual({ rating: unratedView(), seasonId: two.id })
  expect((await alice.client.ratings.history(gameId)).history.map((c) => [c.kind, c.seasonId])).toEqual([
    ['match', one!.id],
    ['season_reset', two.id],
  ])
  expect(await alice.client.ratings.leaderboard(gameId)).toMatchObject({ season: { id: two.id }, entries: [], cursor: null })
})

test('before any rated match: the start values; refusals carry the server codes', async () => {
  const { game } = await createGame(ctx, 'SDK Unrated')
  const { game: other } = await createGame(ctx, 'SDK Other')
  const carol = await signedIn()
  const [current] = await carol.client.ratings.seasons(game.id)
  expect(await carol.client.ratings.me(game.id)).toEqual({ rating: unratedView(), seasonId: current!.id })
  expect(unratedView()).toMatchObject({ rating: 1500, deviation: 350, provisional: true, matches: 0 })
  expect(await carol.client.ratings.history(game.id)).toEqual({ history: [], cursor: null })
  expect(await carol.client.ratings.leaderboard(game.id)).toMatchObject({ season: { id: current!.id }, entries: [], cursor: null })

  const missing = 'game_does_not_exist'
  const { ratings } = carol.client
  for (const call of [() => ratings.me(missing), () => ratings.history(missing), () => ratings.leaderboard(missing), () => ratings.seasons(missing)]) {
    expect(await apiError(call())).toMatchObject({ status: 404, code: 'not_found' })
  }
  const [otherSeason] = await carol.client.ratings.seasons(other.id)
  const foreign = await apiError(ratings.leaderboard(game.id, { season: otherSeason!.id }))
  expect([foreign.status, foreign.code]).toEqual([404, 'not_found'])
  for (const call of [() => ratings.leaderboard(game.id, { after: 'not-a-cursor' }), () => ratings.history(game.id, { after: 'x1' })]) {
    const error = await apiError(call())
    expect([400, 422]).toContain(error.status)
    expect(error.code).toBe('validation_failed')
  }
  expect((await apiError(ratings.leaderboard(game.id, { limit: 0 }))).status).toBeGreaterThanOrEqual(400)
  // Signed out, the client sends nothing.
  const { client: anonymous, sent } = sdkClient(ctx)
  expect(await anonymous.ratings.me(game.id).catch((e: unknown) => e)).toBeInstanceOf(NotSignedIn)
  expect(sent).toEqual([])
})
