// The routes of ratings, leaderboards and seasons (contract §15), through the
// real app on either engine: the players' leaderboard, own rating, own
// history and seasons; the operators' game settings (POST and PATCH
// /admin/games), seasons and a user's ratings. Each answers its shape, the
// refusals are 4xx envelopes (a bad cursor of any kind is a 422, never a
// 500), and a season scheduled here starts by its job and leaves its final
// board readable.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { postJson, req } from '../helpers/app'
import { admin, createArenaApp, createGame, players, playOut, startedTournament, type Player } from '../helpers/arena'
import { bearer as playerBearer } from '../helpers/auth'
import { bearer as operatorBearer, signedInOperator } from '../helpers/operators'
import { acting } from '../audit/support'
import type { Leaderboard, RatingHistoryPage, RatingView, Season } from '../../src/modules/ratings/model'
import type { Game } from '../../src/modules/games/model'

const ctx = await createArenaApp()
afterAll(() => ctx.close())

const API = '/api/v1'
const get = (path: string, headers: Record<string, string>) => ctx.handle(req(`${API}${path}`, { headers }))
const patch = (path: string, body: unknown, headers: Record<string, string> = admin) =>
  req(`${API}${path}`, { method: 'PATCH', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
const inMinutes = (minutes: number) => new Date(ctx.clock.now().getTime() + minutes * 60_000).toISOString()
const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')

async function json<T>(res: Response | Promise<Response>, status: number): Promise<T> {
  const answer = await res
  const body = (await answer.json()) as T
  expect({ status: answer.status, body }).toMatchObject({ status })
  return body
}

/** A refusal: the error envelope with this status and code. */
async function refused(res: Response | Promise<Response>, status: number, code: string): Promise<void> {
  const body = await json<{ error: { code: string; message: string; status: number } }>(res, status)
  expect(body.error).toMatchObject({ code, status })
  expect(body.error.message.length).toBeGreaterThan(0)
}

// A game whose final was played: `winner` beat `loser` in one rated match.
let gameId: string
let otherGameId: string
let winner: Player
let loser: Player
let outsider: Player
let firstSeason: Season

beforeAll(async () => {
  const { game, gameKey } = await createGame(ctx, 'Rated Duel')
  gameId = game.id
  otherGameId = (await createGame(ctx, 'Other Duel')).game.id
  const people = await players(ctx, 3)
  const [a, b] = people
  outsider = people[2]!
  const t = await startedTournament(ctx, gameId, [a!, b!])
  const final = t.matches[0]!
  const winnerParticipant = t.participants.find((p) => p.userId === a!.userId)!
  expect((await playOut(ctx, gameId, gameKey, t, [a!, b!], final, winnerParticipant.id)).decision).toStartWith('game_advance')
  winner = a!
  loser = b!
  firstSeason = (await json<{ seasons: Season[] }>(get(`/games/${gameId}/seasons`, playerBearer(winner.tokens.accessToken)), 200)).seasons[0]!
})

describe('player routes', () => {
  test('the leaderboard: both players ranked by display, the winner first, paged by cursor', async () => {
    const me = playerBearer(outsider.tokens.accessToken)
    const board = await json<Leaderboard>(get(`/games/${gameId}/leaderboard`, me), 200)
    expect(board.season).toMatchObject({ id: firstSeason.id, gameId, number: 1, status: 'current' })
    expect(board.entries.map((e) => [e.rank, e.userId, e.username])).toEqual([
      [1, winner.userId, winner.username],
      [2, loser.userId, loser.username],
    ])
    const top = board.entries[0]!.rating
    expect(top.rating).toBeGreaterThan(1500)
    expect(top.display).toBeCloseTo(top.rating - 2 * top.deviation, 1)
    expect(top).toMatchObject({ matches: 1, provisional: true })
    expect(board.entries[1]!.rating.rating).toBeLessThan(1500)
    expect(board.cursor).toBeNull()

    const first = await json<Leaderboard>(get(`/games/${gameId}/leaderboard?limit=1`, me), 200)
    expect(first.entries.map((e) => [e.rank, e.userId])).toEqual([[1, winner.userId]])
    expect(first.cursor).toBeString()
    const second = await json<Leaderboard>(get(`/games/${gameId}/leaderboard?limit=1&after=${first.cursor}`, me), 200)
    expect(second.entries.map((e) => [e.rank, e.userId])).toEqual([[2, loser.userId]])
    expect(second.cursor).toBeNull()
    // The season named explicitly is the same board.
    expect((await json<Leaderboard>(get(`/games/${gameId}/leaderboard?season=${firstSeason.id}`, me), 200)).entries).toEqual(board.entries)
  })

  test('ratings/me: the caller\'s own rating and the current season; the start values before any rated match', async () => {
    const mine = await json<{ rating: RatingView; seasonId: string }>(get(`/games/${gameId}/ratings/me`, playerBearer(winner.tokens.accessToken)), 200)
    expect(mine.seasonId).toBe(firstSeason.id)
    const board = await json<Leaderboard>(get(`/games/${gameId}/leaderboard`, playerBearer(winner.tokens.accessToken)), 200)
    expect(mine.rating).toEqual(board.entries[0]!.rating)
    const fresh = await json<{ rating: RatingView; seasonId: string }>(get(`/games/${gameId}/ratings/me`, playerBearer(outsider.tokens.accessToken)), 200)
    expect(fresh.rating).toEqual({ rating: 1500, deviation: 350, volatility: 0.06, display: 800, provisional: true, matches: 0 })
  })

  test('ratings/history: the caller\'s own changes only, oldest first, paged', async () => {
    const page = await json<RatingHistoryPage>(get(`/games/${gameId}/ratings/history`, playerBearer(loser.tokens.accessToken)), 200)
    expect(page.history).toHaveLength(1)
    expect(page.history[0]).toMatchObject({ seq: 1, kind: 'match', seasonId: firstSeason.id, opponentUserId: winner.userId, outcome: 'loss', before: { rating: 1500, deviation: 350, volatility: 0.06 } })
    expect(page.history[0]!.after.rating).toBeLessThan(1500)
    expect(page.cursor).toBeNull()
    // Paged: a page of one after seq 0 is that row; after it, nothing.
    const first = await json<RatingHistoryPage>(get(`/games/${gameId}/ratings/history?limit=1&after=0`, playerBearer(loser.tokens.accessToken)), 200)
    expect(first.history.map((h) => h.seq)).toEqual([1])
    expect((await json<RatingHistoryPage>(get(`/games/${gameId}/ratings/history?after=1`, playerBearer(loser.tokens.accessToken)), 200)).history).toEqual([])
    // Someone who never played has none.
    expect(await json<RatingHistoryPage>(get(`/games/${gameId}/ratings/history`, playerBearer(outsider.tokens.accessToken)), 200)).toEqual({ history: [], cursor: null })
  })

  test('seasons: the game\'s seasons, the one it was created with current', async () => {
    const { seasons } = await json<{ seasons: Season[] }>(get(`/games/${otherGameId}/seasons`, playerBearer(outsider.tokens.accessToken)), 200)
    expect(seasons).toHaveLength(1)
    expect(seasons[0]).toMatchObject({ gameId: otherGameId, number: 1, status: 'current', endedAt: null })
  })

  test('without a bearer: 401 on every player route', async () => {
    for (const path of [`/games/${gameId}/leaderboard`, `/games/${gameId}/ratings/me`, `/games/${gameId}/ratings/history`, `/games/${gameId}/seasons`]) {
      await refused(get(path, {}), 401, 'unauthorized')
      await refused(get(path, { authorization: 'Bearer not-a-token' }), 401, 'unauthorized')
    }
  })

  test('an unknown game, a season of another game or of none: 404 not_found', async () => {
    const me = playerBearer(outsider.tokens.accessToken)
    for (const path of ['/leaderboard', '/ratings/me', '/ratings/history', '/seasons']) await refused(get(`/games/gam_nosuchgame${path}`, me), 404, 'not_found')
    const otherSeason = (await json<{ seasons: Season[] }>(get(`/games/${otherGameId}/seasons`, me), 200)).seasons[0]!.id
    await refused(get(`/games/${gameId}/leaderboard?season=${otherSeason}`, me), 404, 'not_found')
    await refused(get(`/games/${gameId}/leaderboard?season=ssn_nosuchseason`, me), 404, 'not_found')
  })

  test('bad cursors and limits: 422 validation_failed, never a 500', async () => {
    const me = playerBearer(winner.tokens.accessToken)
    const first = await json<Leaderboard>(get(`/games/${gameId}/leaderboard?limit=1`, me), 200)
    const boardCursors = ['garbage', '1', '0', '-1', '%00', base64url([0, 1, 'x']), base64url([-1, 100, winner.userId]), base64url([1, 'NaN', winner.userId]), base64url({ rank: 1 }), base64url([1]), 'x'.repeat(256)]
    for (const after of boardCursors) await refused(get(`/games/${gameId}/leaderboard?after=${encodeURIComponent(after)}`, me), 422, 'validation_failed')
    const historyCursors = ['garbage', '-1', '1.5', '1e3', ' 1', first.cursor!, '99999999999999999999', 'x'.repeat(32)]
    for (const after of historyCursors) await refused(get(`/games/${gameId}/ratings/history?after=${encodeURIComponent(after)}`, me), 422, 'validation_failed')
    for (const limit of ['0', '-1', '1.5', '101', 'x']) {
      await refused(get(`/games/${gameId}/leaderboard?limit=${limit}`, me), 422, 'validation_failed')
      await refused(get(`/games/${gameId}/ratings/history?limit=${limit}`, me), 422, 'validation_failed')
    }
    // Too long for the query's schema.
    await refused(get(`/games/${gameId}/leaderboard?after=${'x'.repeat(257)}`, me), 422, 'validation_failed')
    await refused(get(`/games/${gameId}/leaderboard?season=${'x'.repeat(65)}`, me), 422, 'validation_failed')
  })
})

describe('operator routes: games', () => {
  test('POST /admin/games: the rating settings given, the defaults for the rest, the bounds enforced', async () => {
    const plain = await json<{ game: Game; gameKey: string }>(ctx.handle(postJson(`${API}/admin/games`, { name: 'Plain' }, admin)), 201)
    expect(plain.game).toMatchObject({ name: 'Plain', rating: { tau: 0.5, inactivityPeriodS: 604800 } })
    const tuned = await json<{ game: Game }>(ctx.handle(postJson(`${API}/admin/games`, { name: 'Tuned', rating: { tau: 0.9 } }, admin)), 201)
    expect(tuned.game.rating).toEqual({ tau: 0.9, inactivityPeriodS: 604800 })
    expect(await ctx.services.ratings.settings(tuned.game.id)).toEqual({ tau: 0.9, inactivityPeriodS: 604800 })
    const both = await json<{ game: Game }>(ctx.handle(postJson(`${API}/admin/games`, { name: 'Both', rating: { tau: 1.2, inactivityPeriodS: 3600 } }, admin)), 201)
    expect(await ctx.services.ratings.settings(both.game.id)).toEqual({ tau: 1.2, inactivityPeriodS: 3600 })
    for (const rating of [{ tau: 0.05 }, { tau: 2.5 }, { tau: 'x' }, { inactivityPeriodS: 60 }, { inactivityPeriodS: 3600.5 }, { inactivityPeriodS: 31_536_001 }, 5]) {
      await refused(ctx.handle(postJson(`${API}/admin/games`, { name: 'Bad', rating }, admin)), 422, 'validation_failed')
    }
    await refused(ctx.handle(postJson(`${API}/admin/games`, { name: 'Nobody' })), 401, 'unauthorized')
  })

  test('PATCH /admin/games/{id}: a name, τ, the inactivity period; each change audited with what it was', async () => {
    const { game } = await createGame(ctx, 'Before')
    const renamed = await acting(ctx, patch(`/admin/games/${game.id}`, { name: 'After' }), 200)
    expect(renamed.body.game).toEqual({ id: game.id, name: 'After', createdAt: expect.any(String), rating: { tau: 0.5, inactivityPeriodS: 604800 }, challengeRake: '0', results: 'claims' })
    expect(renamed.records).toHaveLength(1)
    expect(renamed.records[0]).toMatchObject({ action: 'game.update', target: game.id, operatorName: 'token', details: { name: { from: 'Before', to: 'After' } } })

    const tau = await acting(ctx, patch(`/admin/games/${game.id}`, { rating: { tau: 0.3 } }), 200)
    expect(tau.body.game).toMatchObject({ name: 'After', rating: { tau: 0.3, inactivityPeriodS: 604800 } })
    expect(tau.records[0]!.details).toEqual({ tau: { from: 0.5, to: 0.3 } })
    expect(await ctx.services.ratings.settings(game.id)).toEqual({ tau: 0.3, inactivityPeriodS: 604800 })

    const both = await acting(ctx, patch(`/admin/games/${game.id}`, { name: 'Again', rating: { inactivityPeriodS: 86400 } }), 200)
    expect(both.records[0]!.details).toEqual({ name: { from: 'After', to: 'Again' }, inactivityPeriodS: { from: 604800, to: 86400 } })
    expect(await ctx.services.ratings.settings(game.id)).toEqual({ tau: 0.3, inactivityPeriodS: 86400 })
  })

  test('PATCH /admin/games/{id}: nothing to change is 422, an unknown game 404, out of bounds 422; none recorded', async () => {
    const { game } = await createGame(ctx, 'Untouched')
    for (const body of [{}, { rating: {} }, { name: '' }, { rating: { tau: 3 } }, { rating: { inactivityPeriodS: 10 } }, { name: 'x'.repeat(101) }]) {
      const result = await acting(ctx, patch(`/admin/games/${game.id}`, body), 422)
      expect(result.body.error.code).toBe('validation_failed')
      expect(result.records).toEqual([])
    }
    const unknown = await acting(ctx, patch('/admin/games/gam_nosuchgame', { name: 'x' }), 404)
    expect(unknown.body.error.code).toBe('not_found')
    expect(unknown.records).toEqual([])
    await refused(ctx.handle(patch(`/admin/games/${game.id}`, { name: 'x' }, {})), 401, 'unauthorized')
    expect(await ctx.services.games.getGame(game.id)).toMatchObject({ name: 'Untouched', rating: { tau: 0.5, inactivityPeriodS: 604800 } })
  })

  test('roles: a moderator may not change a game; a viewer reads seasons and a user\'s ratings but may not create a season', async () => {
    const moderator = operatorBearer((await signedInOperator(ctx, 'moderator')).token)
    await refused(ctx.handle(patch(`/admin/games/${gameId}`, { name: 'Hijacked' }, moderator)), 403, 'forbidden')
    const viewer = operatorBearer((await signedInOperator(ctx, 'viewer')).token)
    await refused(ctx.handle(postJson(`${API}/admin/games/${gameId}/seasons`, { name: 'S', startsAt: inMinutes(10), reset: 'soft' }, viewer)), 403, 'forbidden')
    await refused(ctx.handle(postJson(`${API}/admin/games/${gameId}/seasons`, { name: 'S', startsAt: inMinutes(10), reset: 'soft' }, moderator)), 403, 'forbidden')
    expect((await json<{ seasons: Season[] }>(get(`/admin/games/${gameId}/seasons`, viewer), 200)).seasons.map((s) => s.id)).toContain(firstSeason.id)
    const { ratings } = await json<{ ratings: (RatingView & { gameId: string; seasonId: string })[] }>(get(`/admin/users/${winner.userId}/ratings`, viewer), 200)
    expect(ratings).toHaveLength(1)
    expect(ratings[0]).toMatchObject({ gameId, seasonId: firstSeason.id, matches: 1 })
    expect(ratings[0]!.rating).toBeGreaterThan(1500)
  })

  test('GET /admin/users/{id}/ratings: by id or username, none for a player never rated, 404 for nobody', async () => {
    const byId = await json<{ ratings: unknown[] }>(get(`/admin/users/${loser.userId}/ratings`, admin), 200)
    expect(await json(get(`/admin/users/${loser.username}/ratings`, admin), 200)).toEqual(byId)
    expect(await json(get(`/admin/users/${outsider.userId}/ratings`, admin), 200)).toEqual({ ratings: [] })
    await refused(get('/admin/users/usr_nosuchuser/ratings', admin), 404, 'not_found')
    await refused(get(`/admin/users/${loser.userId}/ratings`, {}), 401, 'unauthorized')
  })
})

describe('operator routes: seasons', () => {
  test('scheduling: 201 with the season, audited; refused in the past, past a year, not after every other season; 404 for no game', async () => {
    const { game } = await createGame(ctx, 'Seasonal')
    const created = await acting(ctx, postJson(`${API}/admin/games/${game.id}/seasons`, { name: 'Winter', startsAt: inMinutes(60), reset: 'soft' }, admin), 201)
    const season = created.body.season as Season
    expect(season).toMatchObject({ gameId: game.id, number: 2, name: 'Winter', reset: 'soft', status: 'scheduled', startsAt: inMinutes(60), startedAt: null, endedAt: null })
    expect(created.records).toHaveLength(1)
    expect(created.records[0]).toMatchObject({ action: 'season.create', target: season.id, details: { gameId: game.id, name: 'Winter', reset: 'soft' } })
    const listed = await json<{ seasons: Season[] }>(get(`/admin/games/${game.id}/seasons`, admin), 200)
    expect(listed.seasons.map((s) => [s.number, s.status])).toEqual([[2, 'scheduled'], [1, 'current']])
    // A scheduled season's board is empty.
    expect(await json(get(`/games/${game.id}/leaderboard?season=${season.id}`, playerBearer(outsider.tokens.accessToken)), 200)).toMatchObject({ season: { id: season.id }, entries: [], cursor: null })

    const bad = async (startsAt: string, message: string) => {
      const result = await acting(ctx, postJson(`${API}/admin/games/${game.id}/seasons`, { name: 'Bad', startsAt, reset: 'hard' }, admin), 422)
      expect(result.body.error).toMatchObject({ code: 'validation_failed', status: 422 })
      expect(JSON.stringify(result.body.error.details)).toContain(message)
      expect(result.records).toEqual([])
    }
    await bad(inMinutes(-5), 'in the past')
    await bad(inMinutes(367 * 24 * 60), 'year')
    await bad(inMinutes(60), 'after the start of every other season')
    await bad(inMinutes(30), 'after the start of every other season')
    await bad('not a date', 'date-time')
    await refused(ctx.handle(postJson(`${API}/admin/games/${game.id}/seasons`, { name: 'Bad', startsAt: inMinutes(90), reset: 'medium' }, admin)), 422, 'validation_failed')
    await refused(ctx.handle(postJson(`${API}/admin/games/${game.id}/seasons`, { name: '', startsAt: inMinutes(90), reset: 'soft' }, admin)), 422, 'validation_failed')
    await refused(ctx.handle(postJson(`${API}/admin/games/gam_nosuchgame/seasons`, { name: 'S', startsAt: inMinutes(90), reset: 'soft' }, admin)), 404, 'not_found')
    await refused(get('/admin/games/gam_nosuchgame/seasons', admin), 404, 'not_found')
    await refused(ctx.handle(postJson(`${API}/admin/games/${game.id}/seasons`, { name: 'S', startsAt: inMinutes(90), reset: 'soft' })), 401, 'unauthorized')
  })

  test('at most 10 scheduled at once: the 11th is 409 conflict', async () => {
    const { game } = await createGame(ctx, 'Many Seasons')
    for (let i = 1; i <= 10; i++) await json(ctx.handle(postJson(`${API}/admin/games/${game.id}/seasons`, { name: `S${i}`, startsAt: inMinutes(i * 60), reset: 'soft' }, admin)), 201)
    const eleventh = await acting(ctx, postJson(`${API}/admin/games/${game.id}/seasons`, { name: 'S11', startsAt: inMinutes(11 * 60), reset: 'soft' }, admin), 409)
    expect(eleventh.body.error.code).toBe('conflict')
    expect(eleventh.records).toEqual([])
  })

  test('a season starts by its job: the ended season\'s final board stays readable, paged by its own cursors', async () => {
    const season = (await json<{ season: Season }>(ctx.handle(postJson(`${API}/admin/games/${gameId}/seasons`, { name: 'Season 2', startsAt: inMinutes(5), reset: 'hard' }, admin)), 201)).season
    const me = playerBearer(outsider.tokens.accessToken)
    const live = await json<Leaderboard>(get(`/games/${gameId}/leaderboard`, me), 200)
    ctx.clock.advance(5 * 60_000)
    expect(await ctx.runJobs()).toBeGreaterThanOrEqual(1)

    const { seasons } = await json<{ seasons: Season[] }>(get(`/games/${gameId}/seasons`, me), 200)
    expect(seasons.map((s) => [s.id, s.status])).toEqual([
      [season.id, 'current'],
      [firstSeason.id, 'ended'],
    ])
    // The new season's board is empty (nobody has played in it); the winner is back at the start values.
    expect(await json(get(`/games/${gameId}/leaderboard`, me), 200)).toMatchObject({ season: { id: season.id, status: 'current' }, entries: [], cursor: null })
    const mine = await json<{ rating: RatingView; seasonId: string }>(get(`/games/${gameId}/ratings/me`, playerBearer(winner.tokens.accessToken)), 200)
    expect(mine).toEqual({ seasonId: season.id, rating: { rating: 1500, deviation: 350, volatility: 0.06, display: 800, provisional: true, matches: 0 } })

    // The ended one: the two players as ranked when it ended.
    const past = await json<Leaderboard>(get(`/games/${gameId}/leaderboard?season=${firstSeason.id}`, me), 200)
    expect(past.season).toMatchObject({ id: firstSeason.id, status: 'ended' })
    expect(past.entries.map((e) => [e.rank, e.userId, e.username])).toEqual(live.entries.map((e) => [e.rank, e.userId, e.username]))
    const one = await json<Leaderboard>(get(`/games/${gameId}/leaderboard?season=${firstSeason.id}&limit=1`, me), 200)
    const two = await json<Leaderboard>(get(`/games/${gameId}/leaderboard?season=${firstSeason.id}&limit=1&after=${one.cursor}`, me), 200)
    expect([...one.entries, ...two.entries].map((e) => e.userId)).toEqual([winner.userId, loser.userId])
    expect(two.cursor).toBeNull()
    // A live board's cursor is no cursor of a final board, nor the reverse.
    const liveCursor = base64url([1, 100, winner.userId])
    await refused(get(`/games/${gameId}/leaderboard?season=${firstSeason.id}&after=${liveCursor}`, me), 422, 'validation_failed')
    await refused(get(`/games/${gameId}/leaderboard?season=${firstSeason.id}&after=${base64url([-1])}`, me), 422, 'validation_failed')
    await refused(get(`/games/${gameId}/leaderboard?after=${one.cursor}`, me), 422, 'validation_failed')
    // History: the reset is the winner's second row.
    const history = await json<RatingHistoryPage>(get(`/games/${gameId}/ratings/history`, playerBearer(winner.tokens.accessToken)), 200)
    expect(history.history.map((h) => [h.seq, h.kind, h.seasonId])).toEqual([
      [1, 'match', firstSeason.id],
      [2, 'season_reset', season.id],
    ])
  })
})
