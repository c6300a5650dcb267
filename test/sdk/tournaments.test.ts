// The SDK's tournaments client against an in-process app: list the open
// tournaments, register, leave, check in, and the server's refusals as ApiError codes.
import { afterAll, expect, test } from 'bun:test'
import { ApiError, type Claim, type Decision, type MyMatch, type Tournament } from '@arena/sdk'
import { postJson } from '../helpers/app'
import { admin, createArenaApp, createGame } from '../helpers/arena'
import { PASSWORD, registerUser } from '../helpers/auth'
import { sdkClient } from '../helpers/sdk'

const ctx = await createArenaApp()
afterAll(() => ctx.close())

const at = (ms: number) => new Date(ctx.clock.now().getTime() + ms).toISOString()

async function signedIn() {
  const user = await registerUser(ctx)
  const { client, sent } = sdkClient(ctx)
  await client.auth.login(user.username, PASSWORD)
  return { client, sent, user }
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(ApiError)
  return (error as ApiError).code
}

test('open tournaments, register, check in, leave; refusals carry the server codes', async () => {
  const { game } = await createGame(ctx, 'SDK Open')
  const res = await ctx.handle(
    postJson(
      '/api/v1/admin/tournaments',
      { gameId: game.id, name: 'SDK Cup', format: 'single_elimination', registration: { closesAt: at(60_000), maxPlayers: 2, checkIn: { opensAt: at(30_000), closesAt: at(90_000) } }, startsAt: at(120_000) },
      admin,
    ),
  )
  expect(res.status).toBe(201)
  const id = ((await res.json()) as { tournament: { id: string } }).tournament.id
  const alice = await signedIn()
  const bob = await signedIn()
  const carol = await signedIn()

  const open = await alice.client.tournaments.open()
  const listed = open.find((t) => t.id === id)!
  expect(listed).toMatchObject({ status: 'registration', participantCount: 0, registration: { maxPlayers: 2, seeding: 'registration', seed: null } })
  const page = await alice.client.tournaments.list({ status: 'registration', limit: 1 })
  expect(page.tournaments.length).toBe(1)
  expect(alice.sent.some((r) => r.method === 'GET' && r.path.startsWith('/api/v1/tournaments?status=registration&limit=1'))).toBe(true)

  const seat = await alice.client.tournaments.register(id)
  expect(seat).toEqual({ tournamentId: id, participantId: expect.stringMatching(/^par_/), registeredAt: ctx.clock.now().toISOString(), checkedInAt: null })
  expect(await codeOf(alice.client.tournaments.register(id))).toBe('already_registered')
  await bob.client.tournaments.register(id)
  expect(await codeOf(carol.client.tournaments.register(id))).toBe('tournament_full')
  expect(await codeOf(alice.client.tournaments.checkIn(id))).toBe('check_in_closed')

  ctx.clock.advance(30_000)
  const checked = await alice.client.tournaments.checkIn(id)
  expect(checked.checkedInAt).toBe(ctx.clock.now().toISOString())
  await bob.client.tournaments.leave(id)
  expect(await codeOf(bob.client.tournaments.leave(id))).toBe('not_registered')
  await carol.client.tournaments.register(id)
  const t = await carol.client.tournaments.get(id)
  expect(t.participants.map((p) => [p.userId, p.checkedInAt !== null])).toEqual([
    [alice.user.id, true],
    [carol.user.id, false],
  ])
  ctx.clock.advance(30_000)
  expect(await codeOf(bob.client.tournaments.register(id))).toBe('registration_closed')
})

test('a round robin through the SDK: matches by bracket, a draw is a result with its outcome, the live standings', async () => {
  const { game, gameKey } = await createGame(ctx, 'SDK League')
  const seats = [await signedIn(), await signedIn(), await signedIn()]
  const created = await ctx.handle(
    postJson('/api/v1/admin/tournaments', { gameId: game.id, name: 'SDK League', format: 'round_robin', participants: seats.map((s) => s.user.id) }, admin),
  )
  expect(created.status).toBe(201)
  const id = ((await created.json()) as { tournament: { id: string } }).tournament.id
  expect((await ctx.handle(postJson(`/api/v1/admin/tournaments/${id}/start`, {}, admin))).status).toBe(200)

  const t: Tournament = await seats[0]!.client.tournaments.get(id)
  expect(t.format).toBe('round_robin')
  expect(t.participants.map((p) => p.disqualifiedAt)).toEqual([null, null, null])
  expect(t.standings.map((s) => [s.rank, s.points])).toEqual([
    [1, 0],
    [2, 0],
    [3, 0],
  ])
  // Every pair once, all playable now; nothing goes on from a league match.
  expect(t.matches.map((m) => [m.bracket, m.status, m.outcome, m.nextMatchId, m.loserNextMatchId])).toEqual(Array(3).fill(['round_robin', 'running', null, null, null]))
  const mine: MyMatch[] = await seats[0]!.client.myMatches()
  expect(mine.filter((m) => m.tournamentId === id).map((m) => m.bracket)).toEqual(['round_robin', 'round_robin'])

  const [p1, p2, p3] = t.participants.map((p) => p.id) as [string, string, string]
  const seatOf = (participantId: string) => seats[t.participants.findIndex((p) => p.id === participantId)]!
  const play = async (a: string, b: string, claim: Claim) => {
    const match = t.matches.find((m) => [m.slot1ParticipantId, m.slot2ParticipantId].sort().join() === [a, b].sort().join())!
    const decisions: Decision[] = []
    for (const p of [a, b]) {
      const client = seatOf(p).client.game(game.id, gameKey)
      decisions.push(await client.submitResult(await client.openSession(match.id), claim))
    }
    return decisions
  }
  const [, drawn] = await play(p1, p2, { outcome: 'DRAW' })
  expect(drawn).toEqual({ decision: 'game_advance', reason: 'claims_agree', matchId: expect.any(String), tournamentId: id, outcome: 'DRAW' })
  expect((await play(p2, p3, { outcome: 'WIN', winnerParticipantId: p2 }))[1]).toMatchObject({ decision: 'game_advance', outcome: 'WIN', winnerParticipantId: p2 })
  expect((await play(p3, p1, { outcome: 'WIN', winnerParticipantId: p1 }))[1]).toMatchObject({ decision: 'game_advance_pending_finalization', outcome: 'WIN', winnerParticipantId: p1 })

  const done = await seats[2]!.client.tournament(id)
  expect(done.matches.find((m) => m.id === drawn!.matchId)).toMatchObject({ status: 'decided', outcome: 'DRAW', winnerParticipantId: null })
  // 1 and 2: a draw and a win each, level head to head and on wins: by seed.
  expect(done.standings).toEqual([
    { participantId: p1, rank: 1, wins: 1, draws: 1, losses: 0, points: 4 },
    { participantId: p2, rank: 2, wins: 1, draws: 1, losses: 0, points: 4 },
    { participantId: p3, rank: 3, wins: 0, draws: 0, losses: 2, points: 0 },
  ])
  expect(done.winnerParticipantId).toBe(p1)
})
