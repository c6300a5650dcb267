// Operator side of contract §2/§6: the admin guard, games and keys,
// tournaments from creation to completion.
import { afterAll, describe, expect, test } from 'bun:test'
import { and, asc, eq } from 'drizzle-orm'
import { finalizeTournament } from '../../src/modules/games/finalize'
import { createTestApp, postJson, req } from '../helpers/app'
import { admin, ADMIN_TOKEN, createArenaApp, createGame, openSession, players, playOut, startedTournament, tournament, type TournamentView } from '../helpers/arena'

const ctx = await createArenaApp()
afterAll(() => ctx.close())
const { db, tables: { games, outboxEvents } } = ctx.peek

const createTournament = (body: unknown, headers = admin) => ctx.handle(postJson('/api/v1/admin/tournaments', body, headers))

describe('admin guard', () => {
  test('outside local, without ARENA_ADMIN_TOKEN, the whole admin tree is a 404 that says the operator API is disabled', async () => {
    const closed = await createTestApp({ env: { ARENA_ENV: 'sandbox' } })
    try {
      const requests = [
        postJson('/api/v1/admin/games', { name: 'x' }, { 'x-admin-token': 'anything' }),
        postJson('/api/v1/admin/tournaments', { name: 'x' }),
        req('/api/v1/admin/tournaments/trn_x'),
        req('/api/v1/admin/no/such/route', { method: 'DELETE' }),
        req('/api/v1/admin'),
      ]
      for (const request of requests) {
        const res = await closed.handle(request)
        expect(res.status).toBe(404)
        const body = (await res.json()) as { error: { code: string; message: string } }
        expect(body.error.code).toBe('operator_api_disabled')
        expect(body.error.message).toContain('ARENA_ADMIN_TOKEN')
      }
      // The rest of the API is unaffected, look-alike paths included.
      expect(((await (await closed.handle(req('/api/v1/administrator'))).json()) as { error: { code: string } }).error.code).toBe('not_found')
      expect((await closed.handle(req('/api/v1/no-such-route'))).status).toBe(404)
      expect(((await (await closed.handle(req('/api/v1/no-such-route'))).json()) as { error: { code: string } }).error.code).toBe('not_found')
    } finally {
      closed.close()
    }
  })

  test('a missing or wrong token is 401 before the body is looked at', async () => {
    const attempts: Record<string, string>[] = [{}, { 'x-admin-token': 'wrong' }, { 'x-admin-token': ADMIN_TOKEN.slice(0, -1) }]
    for (const headers of attempts) {
      const res = await ctx.handle(postJson('/api/v1/admin/games', { nonsense: true }, headers))
      expect(res.status).toBe(401)
    }
    const get = await ctx.handle(req('/api/v1/admin/tournaments/trn_x'))
    expect(get.status).toBe(401)
  })
})

describe('games', () => {
  test('create: 201 with the game and a key shown once; the key is stored only as a hash', async () => {
    const { game, gameKey } = await createGame(ctx, 'Hash Check')
    expect(game.id).toMatch(/^gam_[0-9a-f]{32}$/)
    expect(gameKey.length).toBeGreaterThanOrEqual(40)
    const stored = await db.select().from(games).where(eq(games.id, game.id))
    expect(stored).toHaveLength(1)
    expect(JSON.stringify(stored)).not.toContain(gameKey)
  })

  test('rotate-key: the new key works and the old one stops at once', async () => {
    const { game, gameKey } = await createGame(ctx)
    const people = await players(ctx, 2)
    const t = await startedTournament(ctx, game.id, people)
    const rotated = await ctx.handle(postJson(`/api/v1/admin/games/${game.id}/rotate-key`, {}, admin))
    expect(rotated.status).toBe(200)
    const { gameKey: fresh } = (await rotated.json()) as { gameKey: string }
    expect(fresh).not.toBe(gameKey)
    const seated = people.find((p) => t.participants.some((q) => q.userId === p.userId && q.id === t.matches[0]!.slot1ParticipantId))!
    expect((await openSession(ctx, game.id, gameKey, seated, t.matches[0]!.id)).status).toBe(403)
    expect((await openSession(ctx, game.id, fresh, seated, t.matches[0]!.id)).status).toBe(201)
    expect((await ctx.handle(postJson('/api/v1/admin/games/gam_nope/rotate-key', {}, admin))).status).toBe(404)
  })
})

describe('tournaments', () => {
  test('participants by user id or username (any case), seeded in the given order', async () => {
    const { game } = await createGame(ctx)
    const people = await players(ctx, 3)
    const res = await createTournament({
      gameId: game.id,
      name: 'Mixed refs',
      format: 'single_elimination',
      participants: [people[2]!.username.toUpperCase(), people[0]!.userId, people[1]!.username],
    })
    expect(res.status).toBe(201)
    const { tournament: t } = (await res.json()) as { tournament: TournamentView }
    expect(t.status).toBe('draft')
    expect(t.matches).toEqual([])
    expect(t.participants.map((p) => [p.seed, p.userId])).toEqual([
      [1, people[2]!.userId],
      [2, people[0]!.userId],
      [3, people[1]!.userId],
    ])
  })

  test('bad participant lists are 422; an unknown game is 404', async () => {
    const { game } = await createGame(ctx)
    const [a, b] = await players(ctx, 2)
    const base = { gameId: game.id, name: 'Bad', format: 'single_elimination' }
    for (const participants of [[a!.userId], [a!.userId, a!.userId], [a!.userId, a!.username], [a!.userId, 'no_such_user'], Array(1025).fill(a!.userId)]) {
      expect((await createTournament({ ...base, participants })).status).toBe(422)
    }
    expect((await createTournament({ ...base, format: 'ladder', participants: [a!.userId, b!.userId] })).status).toBe(422)
    // A format's own options only, and no more Swiss rounds than the players allow.
    expect((await createTournament({ ...base, options: { grandFinal: 'simple' }, participants: [a!.userId, b!.userId] })).status).toBe(422)
    expect((await createTournament({ ...base, format: 'round_robin', options: { thirdPlaceMatch: true }, participants: [a!.userId, b!.userId] })).status).toBe(422)
    expect((await createTournament({ ...base, format: 'swiss', options: { rounds: 2 }, participants: [a!.userId, b!.userId] })).status).toBe(422)
    expect((await createTournament({ ...base, format: 'swiss', options: { rounds: 1 }, participants: [a!.userId, b!.userId] })).status).toBe(201)
    // A round robin of more than 128 (every pair plays): refused by the player count, listed or the registration's maximum.
    const league = { ...base, format: 'round_robin', registration: { closesAt: new Date(ctx.clock.now().getTime() + 3600_000).toISOString(), maxPlayers: 129 }, startsAt: new Date(ctx.clock.now().getTime() + 7200_000).toISOString() }
    const tooBig = await createTournament(league)
    expect(tooBig.status).toBe(422)
    expect(JSON.stringify(await tooBig.json())).toContain('body/registration/maxPlayers')
    expect((await createTournament({ ...league, registration: { ...league.registration, maxPlayers: 128 } })).status).toBe(201)
    expect((await createTournament({ ...base, gameId: 'gam_nope', participants: [a!.userId, b!.userId] })).status).toBe(404)
  })

  test('start builds the bracket once: byes to the top seeds, decided at start; a second start is 409', async () => {
    const { game } = await createGame(ctx)
    const people = await players(ctx, 5)
    const t = await startedTournament(ctx, game.id, people)
    expect(t.status).toBe('running')
    expect(t.matches.length).toBe(7)
    const seedOf = (participantId: string | null) => t.participants.find((p) => p.id === participantId)?.seed
    const round1 = t.matches.filter((m) => m.round === 1)
    const byes = round1.filter((m) => m.status === 'decided')
    expect(byes.map((m) => seedOf(m.winnerParticipantId)).sort()).toEqual([1, 2, 3])
    expect(round1.filter((m) => m.status === 'running').map((m) => [seedOf(m.slot1ParticipantId), seedOf(m.slot2ParticipantId)])).toEqual([[4, 5]])
    // Seeds 2 and 3 both had byes into the same semi-final: it is already playable.
    const semis = t.matches.filter((m) => m.round === 2)
    expect(semis.map((m) => m.status).sort()).toEqual(['running', 'waiting'])
    const again = await ctx.handle(postJson(`/api/v1/admin/tournaments/${t.id}/start`, {}, admin))
    expect(again.status).toBe(409)
  })

  test('5 players with byes play through to completed, with a winner and status events', async () => {
    const { game, gameKey } = await createGame(ctx)
    const people = await players(ctx, 5)
    let t = await startedTournament(ctx, game.id, people)
    let last = ''
    for (let guard = 0; guard < 10 && t.status === 'running'; guard++) {
      const running = t.matches.filter((m) => m.status === 'running')
      expect(running.length).toBeGreaterThan(0)
      for (const match of running) {
        // The lower-numbered seed wins every match.
        const seed = (id: string | null) => t.participants.find((p) => p.id === id)!.seed
        const winner = seed(match.slot1ParticipantId) < seed(match.slot2ParticipantId) ? match.slot1ParticipantId! : match.slot2ParticipantId!
        last = (await playOut(ctx, game.id, gameKey, t, people, match, winner)).decision
      }
      t = await tournament(ctx, t.id)
    }
    expect(last).toBe('game_advance_pending_finalization')
    expect(t.status).toBe('finalizing')
    await ctx.runJobs()
    t = await tournament(ctx, t.id)
    expect(t.status).toBe('completed')
    expect(t.winnerParticipantId).toBe(t.participants.find((p) => p.seed === 1)!.id)
    expect(t.matches.every((m) => m.status === 'decided')).toBe(true)

    const events = await db.select().from(outboxEvents).where(eq(outboxEvents.userId, people[0]!.userId)).orderBy(asc(outboxEvents.seq))
    const types = events.filter((e) => e.topic === 'status').map((e) => e.type)
    expect(types[0]).toBe('tournament.started')
    for (const type of ['match.decided', 'match.ready', 'tournament.finalizing']) expect(types).toContain(type)
    expect(types.at(-1)).toBe('tournament.completed')
    // Each player learns the winner and their own place.
    const places = await Promise.all(
      people.map(async (p) => {
        const completed = await db.select().from(outboxEvents).where(and(eq(outboxEvents.userId, p.userId), eq(outboxEvents.type, 'tournament.completed')))
        expect(completed.length).toBe(1)
        return (completed[0]!.data as { place: number }).place
      }),
    )
    // Ranks are distinct (contract §9): the semi-final losers are ordered by the tie-break, seed.
    expect(places.sort()).toEqual([1, 2, 3, 4, 5])
    // Finalization is idempotent: running it again, or its job again, changes nothing.
    await ctx.services.storage.write((tx) => finalizeTournament(tx, ctx.clock, t.id))
    expect(await ctx.runJobs()).toBe(0)
    const again = await db.select().from(outboxEvents).where(and(eq(outboxEvents.userId, people[0]!.userId), eq(outboxEvents.type, 'tournament.completed')))
    expect(again.length).toBe(1)
  })

  test('unknown tournament is 404 for operators and players', async () => {
    expect((await ctx.handle(req('/api/v1/admin/tournaments/trn_nope', { headers: admin }))).status).toBe(404)
    const [p] = await players(ctx, 1)
    expect((await ctx.handle(req('/api/v1/tournaments/trn_nope', { headers: { authorization: `Bearer ${p!.tokens.accessToken}` } }))).status).toBe(404)
  })
})
