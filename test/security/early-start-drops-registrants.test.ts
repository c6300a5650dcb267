// Invariant: an operator's early start never drops a registrant who may still
// check in, or could not yet. A registration tournament that asks for check-in
// starts before startsAt only once its check-in window has ended (409
// check_in_open before, changing nothing); without check-in, once registration
// has closed, as before. The admin API and `arena tournament start` run the
// same rule (issue 33).
import { afterAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { postJson, tempDir } from '../helpers/app'
import { admin, createArenaApp, createGame, players, tournament, type Player, type TournamentView } from '../helpers/arena'
import { run, SOURCE_COMMAND } from '../helpers/process'

const dataDir = tempDir('arena-early-start-')
const ctx = await createArenaApp({}, { dataDir })
afterAll(async () => {
  await ctx.close()
  rmSync(dataDir, { recursive: true, force: true })
})
const { game } = await createGame(ctx, 'Early Start Duel')

const MIN = 6_000
const at = (msFromNow: number) => new Date(ctx.clock.now().getTime() + msFromNow).toISOString()
const bearer = (p: Player) => ({ authorization: `Bearer ${p.tokens.accessToken}` })

async function open(registration: Record<string, unknown>, startsAt: string, people: Player[]): Promise<TournamentView> {
  const res = await ctx.handle(postJson('/api/v1/admin/tournaments', { gameId: game.id, name: 'Open Cup', format: 'single_elimination', registration: { maxPlayers: 8, ...registration }, startsAt }, admin))
  expect(res.status).toBe(201)
  const { tournament: t } = (await res.json()) as { tournament: TournamentView }
  for (const p of people) expect((await ctx.handle(postJson(`/api/v1/tournaments/${t.id}/registration`, {}, bearer(p)))).status).toBe(201)
  return t
}

const start = (id: string) => ctx.handle(postJson(`/api/v1/admin/tournaments/${id}/start`, {}, admin))
const show = (id: string) => tournament(ctx, id) as Promise<TournamentView>
const errorOf = async (res: Response) => ((await res.json()) as { error: { code: string; message: string; status: number } }).error

describe('POST /admin/tournaments/{id}/start', () => {
  test('refused while check-in is open and before it opens; nobody is dropped; once it ended the start drops who did not check in', async () => {
    const people = await players(ctx, 4)
    // Registration closes at 30, check-in runs 40..55, the start job at 60.
    const t = await open({ closesAt: at(30 * MIN), checkIn: { opensAt: at(40 * MIN), closesAt: at(55 * MIN) } }, at(60 * MIN), people)
    const before = await show(t.id)

    // Registration closed, check-in not yet open: nobody could have checked in.
    ctx.clock.set(new Date(new Date(t.registration!.closesAt).getTime() + MIN))
    const notYet = await start(t.id)
    expect(notYet.status).toBe(409)
    const notYetError = await errorOf(notYet)
    expect(notYetError.code).toBe('check_in_open')
    expect(notYetError.message).toContain(t.registration!.checkIn!.opensAt)
    expect(await show(t.id)).toEqual(before)

    // Check-in open, two checked in: starting now would drop the two who still may.
    ctx.clock.set(t.registration!.checkIn!.opensAt)
    for (const p of people.slice(0, 2)) expect((await ctx.handle(postJson(`/api/v1/tournaments/${t.id}/check-in`, {}, bearer(p)))).status).toBe(200)
    const during = await show(t.id)
    ctx.clock.set(new Date(new Date(t.registration!.checkIn!.closesAt).getTime() - 1))
    const inWindow = await start(t.id)
    expect(inWindow.status).toBe(409)
    expect((await errorOf(inWindow)).code).toBe('check_in_open')
    expect(await show(t.id)).toEqual(during)
    // A third checks in at the last moment: still in time.
    expect((await ctx.handle(postJson(`/api/v1/tournaments/${t.id}/check-in`, {}, bearer(people[2]!)))).status).toBe(200)

    // Check-in ended: the start is taken, and drops only the one who never checked in.
    ctx.clock.set(t.registration!.checkIn!.closesAt)
    const started = await start(t.id)
    expect(started.status).toBe(200)
    const view = ((await started.json()) as { tournament: TournamentView }).tournament
    expect(view.status).toBe('running')
    expect(view.participants.map((p) => p.userId).sort()).toEqual(people.slice(0, 3).map((p) => p.userId).sort())
  })

  test('without check-in: refused only while registration is open, as before', async () => {
    const people = await players(ctx, 2)
    const t = await open({ closesAt: at(30 * MIN) }, at(60 * MIN), people)
    const early = await start(t.id)
    expect(early.status).toBe(409)
    expect((await errorOf(early)).code).toBe('registration_open')
    ctx.clock.set(t.registration!.closesAt)
    const started = await start(t.id)
    expect(started.status).toBe(200)
    expect(((await started.json()) as { tournament: TournamentView }).tournament.participants.length).toBe(2)
  })
})

test('arena tournament start: the same refusal while check-in is open, nobody dropped', async () => {
  // The command runs on the real clock: the app's clock is put two hours behind it, so a
  // tournament created "in the future" has its registration closed and its check-in open now.
  const now = Date.now()
  ctx.clock.set(new Date(now - 120 * 60_000))
  const people = await players(ctx, 2)
  const t = await open(
    { closesAt: new Date(now - 60 * 60_000).toISOString(), checkIn: { opensAt: new Date(now - 30 * 60_000).toISOString(), closesAt: new Date(now + 60 * 60_000).toISOString() } },
    new Date(now + 90 * 60_000).toISOString(),
    people,
  )
  const env = { ARENA_DATA_DIR: dataDir, ...ctx.databaseEnv }
  const refused = await run([...SOURCE_COMMAND, 'tournament', 'start', t.id, '--json'], env)
  expect(refused.code).not.toBe(0)
  expect(refused.stderr).toContain(`Check-in is open until ${t.registration!.checkIn!.closesAt}`)
  const shown = await show(t.id)
  expect(shown.status).toBe('registration')
  expect(shown.participants.length).toBe(2)
}, 60_000)
