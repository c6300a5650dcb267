// The SDK's tournaments client against an in-process app: list the open
// tournaments, register, leave, check in, and the server's refusals as ApiError codes.
import { afterAll, expect, test } from 'bun:test'
import { ApiError } from '@arena/sdk'
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
