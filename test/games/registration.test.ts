// Tournament registration and check-in (contract §9), through HTTP: open and
// close times, capacity, leaving, the check-in window, the start job (drop-
// outs, seeding, exactly once), an operator's early start, random seeding
// reproducible from the stored seed. On SQLite and, with
// ARENA_TEST_ENGINE=postgres, on PostgreSQL.
import { afterAll, describe, expect, test } from 'bun:test'
import { and, asc, eq, inArray } from 'drizzle-orm'
import { seedOrder } from '../../src/modules/games/seeding'
import { postJson, req } from '../helpers/app'
import { admin, createArenaApp, createGame, players, tournament, type Player, type TournamentView } from '../helpers/arena'
import { banUser } from '../helpers/accounts'

const ctx = await createArenaApp()
afterAll(() => ctx.close())
const { db, tables: { outboxEvents, jobs } } = ctx.peek
const { game } = await createGame(ctx, 'Registration Duel')

// One "minute" of the schedule: short, so that access tokens (15 min) outlive a whole registration.
const MIN = 6_000
const at = (msFromNow: number) => new Date(ctx.clock.now().getTime() + msFromNow).toISOString()
const bearer = (p: Player) => ({ authorization: `Bearer ${p.tokens.accessToken}` })

function createBody(overrides: Record<string, unknown> = {}, registration: Record<string, unknown> = {}) {
  return {
    gameId: game.id,
    name: 'Open Cup',
    format: 'single_elimination',
    registration: { closesAt: at(50 * MIN), maxPlayers: 8, ...registration },
    startsAt: at(60 * MIN),
    ...overrides,
  }
}

async function create(overrides: Record<string, unknown> = {}, registration: Record<string, unknown> = {}): Promise<TournamentView> {
  const res = await ctx.handle(postJson('/api/v1/admin/tournaments', createBody(overrides, registration), admin))
  expect(res.status).toBe(201)
  return ((await res.json()) as { tournament: TournamentView }).tournament
}

const join = (id: string, p: Player) => ctx.handle(postJson(`/api/v1/tournaments/${id}/registration`, {}, bearer(p)))
const leave = (id: string, p: Player) => ctx.handle(req(`/api/v1/tournaments/${id}/registration`, { method: 'DELETE', headers: bearer(p) }))
const checkIn = (id: string, p: Player) => ctx.handle(postJson(`/api/v1/tournaments/${id}/check-in`, {}, bearer(p)))
const codeOf = async (res: Response) => ((await res.json()) as { error: { code: string } }).error.code
const show = (id: string) => tournament(ctx, id) as Promise<TournamentView>

async function eventsOf(userIds: string[], type: string) {
  return db.select().from(outboxEvents).where(and(inArray(outboxEvents.userId, userIds), eq(outboxEvents.type, type))).orderBy(asc(outboxEvents.seq))
}

/** Runs the start job: the clock moved to startsAt, the due jobs run. */
async function reachStart(t: TournamentView): Promise<number> {
  ctx.clock.set(t.registration!.startsAt)
  return ctx.runJobs()
}

describe('creating a tournament players register for', () => {
  test('without participants: status registration, the registration as given, the seed hidden, a start job due at startsAt', async () => {
    const t = await create({ seeding: 'random' }, { checkIn: { opensAt: at(40 * MIN), closesAt: at(55 * MIN) } })
    expect(t.status).toBe('registration')
    expect(t.participants).toEqual([])
    expect(t.registration).toEqual({
      closesAt: at(50 * MIN),
      maxPlayers: 8,
      checkIn: { opensAt: at(40 * MIN), closesAt: at(55 * MIN) },
      startsAt: at(60 * MIN),
      seeding: 'random',
      seed: null,
    })
    const queued = (await db.select().from(jobs).where(eq(jobs.kind, 'start_tournament'))).filter((j) => (j.payload as { tournamentId: string }).tournamentId === t.id)
    expect(queued.map((j) => [j.status, new Date(j.runAfter).toISOString()])).toEqual([['queued', at(60 * MIN)]])
    // Nothing runs before then.
    expect(await ctx.runJobs()).toBe(0)
    expect((await show(t.id)).status).toBe('registration')
  })

  test('the draft flow is unchanged: with participants, registration is null', async () => {
    const people = await players(ctx, 2)
    const res = await ctx.handle(postJson('/api/v1/admin/tournaments', { gameId: game.id, name: 'Listed', format: 'single_elimination', participants: people.map((p) => p.userId) }, admin))
    expect(res.status).toBe(201)
    const { tournament: t } = (await res.json()) as { tournament: TournamentView }
    expect(t.status).toBe('draft')
    expect(t.registration).toBeNull()
    expect(t.participants.map((p) => [p.registeredAt, p.checkedInAt])).toEqual([[null, null], [null, null]])
  })

  test('times out of order, in the past, too far ahead, a bad maxPlayers, or a mix of both flows: 422 naming each field', async () => {
    const [a, b] = await players(ctx, 2)
    const cases: [Record<string, unknown>, Record<string, unknown>, string[]][] = [
      [{}, { closesAt: at(-MIN) }, ['body/registration/closesAt']],
      [{}, { closesAt: at(61 * MIN) }, ['body/registration/closesAt']],
      [{ startsAt: at(-MIN) }, { closesAt: at(-2 * MIN) }, ['body/startsAt', 'body/registration/closesAt']],
      [{ startsAt: at(400 * 24 * 3600_000) }, {}, ['body/startsAt']],
      [{}, { checkIn: { opensAt: at(30 * MIN), closesAt: at(30 * MIN) } }, ['body/registration/checkIn/opensAt']],
      [{}, { checkIn: { opensAt: at(30 * MIN), closesAt: at(61 * MIN) } }, ['body/registration/checkIn/closesAt']],
      [{}, { checkIn: { opensAt: at(-MIN), closesAt: at(30 * MIN) } }, ['body/registration/checkIn/opensAt']],
      [{}, { maxPlayers: 1 }, ['body/registration/maxPlayers']],
      [{}, { maxPlayers: 1025 }, ['body/registration/maxPlayers']],
      [{ participants: [a!.userId, b!.userId] }, {}, ['body/registration', 'body/startsAt']],
      [{ registration: undefined }, {}, ['body/registration']],
      [{ startsAt: undefined }, {}, ['body/startsAt']],
      [{ seeding: 'alphabetical' }, {}, ['body/seeding']],
      [{ startsAt: 'not a time' }, {}, ['body/startsAt']],
    ]
    for (const [overrides, registration, paths] of cases) {
      const body = createBody(overrides, registration)
      const res = await ctx.handle(postJson('/api/v1/admin/tournaments', body, admin))
      expect({ body, status: res.status }).toEqual({ body, status: 422 })
      const { error } = (await res.json()) as { error: { details: { path: string }[] } }
      for (const path of paths) expect({ body, paths: error.details.map((d) => d.path) }).toEqual({ body, paths: expect.arrayContaining([path]) })
    }
  })
})

describe('players: list, join, leave', () => {
  test('GET /tournaments?status=registration lists it with its count; pages by cursor; a bad cursor is 422', async () => {
    const [p] = await players(ctx, 1)
    const first = await create({ name: 'List One' })
    const second = await create({ name: 'List Two' })
    expect((await join(first.id, p!)).status).toBe(201)
    const all: { id: string; participantCount: number; status: string; registration: unknown }[] = []
    let after: string | null = null
    let pages = 0
    do {
      const res = await ctx.handle(req(`/api/v1/tournaments?status=registration&limit=2${after ? `&after=${after}` : ''}`, { headers: bearer(p!) }))
      expect(res.status).toBe(200)
      const page = (await res.json()) as { tournaments: typeof all; cursor: string | null }
      expect(page.tournaments.length).toBeLessThanOrEqual(2)
      all.push(...page.tournaments)
      after = page.cursor
      pages++
    } while (after !== null && pages < 50)
    expect(all.every((t) => t.status === 'registration')).toBe(true)
    expect(new Set(all.map((t) => t.id)).size).toBe(all.length)
    const ids = all.map((t) => t.id)
    expect(ids.indexOf(first.id)).toBeLessThan(ids.indexOf(second.id))
    expect(all.find((t) => t.id === first.id)!.participantCount).toBe(1)
    expect(all.find((t) => t.id === second.id)!.participantCount).toBe(0)
    expect(all.find((t) => t.id === first.id)!.registration).toEqual(first.registration)
    // Running ones are listed apart.
    const running = (await (await ctx.handle(req('/api/v1/tournaments?status=running', { headers: bearer(p!) }))).json()) as { tournaments: { id: string }[] }
    expect(running.tournaments.map((t) => t.id)).not.toContain(first.id)
    for (const query of ['status=nope', 'after=nope', 'limit=0', 'limit=101']) {
      expect((await ctx.handle(req(`/api/v1/tournaments?${query}`, { headers: bearer(p!) }))).status).toBe(422)
    }
    expect((await ctx.handle(req('/api/v1/tournaments'))).status).toBe(401)
  })

  test('join 201 in join order; twice 409 already_registered; full 409 tournament_full; leave frees the place; after closesAt 409 registration_closed', async () => {
    const people = await players(ctx, 4)
    const [a, b, c, d] = people as [Player, Player, Player, Player]
    const t = await create({}, { maxPlayers: 2 })
    const joined = await join(t.id, a)
    expect(joined.status).toBe(201)
    const { registration } = (await joined.json()) as { registration: { tournamentId: string; participantId: string; registeredAt: string; checkedInAt: string | null } }
    expect(registration).toEqual({ tournamentId: t.id, participantId: expect.stringMatching(/^par_/), registeredAt: ctx.clock.now().toISOString(), checkedInAt: null })
    expect(await codeOf(await join(t.id, a))).toBe('already_registered')
    expect((await join(t.id, b)).status).toBe(201)
    const full = await join(t.id, c)
    expect(full.status).toBe(409)
    expect(await codeOf(full)).toBe('tournament_full')
    // Leaving frees the place; joining again is a new registration, at the end of the order.
    expect((await leave(t.id, a)).status).toBe(200)
    expect(await codeOf(await leave(t.id, a))).toBe('not_registered')
    expect((await join(t.id, c)).status).toBe(201)
    expect(await codeOf(await join(t.id, a))).toBe('tournament_full')
    expect((await show(t.id)).participants.map((p) => [p.userId, p.seed])).toEqual([
      [b.userId, 2],
      [c.userId, 3],
    ])
    // Closed: no joins; leaving is still possible until the start.
    ctx.clock.set(t.registration!.closesAt)
    expect((await leave(t.id, b)).status).toBe(200)
    const late = await join(t.id, d)
    expect(late.status).toBe(409)
    expect(await codeOf(late)).toBe('registration_closed')
    // Not a registration tournament: 409 registration_closed; unknown: 404.
    const draft = await ctx.handle(postJson('/api/v1/admin/tournaments', { gameId: game.id, name: 'Draft', format: 'single_elimination', participants: [a.userId, b.userId] }, admin))
    const draftId = ((await draft.json()) as { tournament: { id: string } }).tournament.id
    expect(await codeOf(await join(draftId, d))).toBe('registration_closed')
    expect((await join('trn_nope', d)).status).toBe(404)
  })

  test('a banned player cannot join', async () => {
    const [p] = await players(ctx, 1)
    const t = await create()
    await banUser(ctx, p!.userId, { reason: 'cheating' })
    expect([401, 403]).toContain((await join(t.id, p!)).status)
    expect((await show(t.id)).participants).toEqual([])
  })

  test('two players racing for the last place: exactly one gets it', async () => {
    for (let round = 0; round < 3; round++) {
      const t = await create({}, { maxPlayers: 3 })
      const people = await players(ctx, 8)
      const answers = await Promise.all(people.map((p) => join(t.id, p)))
      const statuses = answers.map((r) => r.status).sort()
      expect(statuses).toEqual([201, 201, 201, 409, 409, 409, 409, 409])
      for (const r of answers.filter((x) => x.status === 409)) expect(await codeOf(r)).toBe('tournament_full')
      const shown = await show(t.id)
      expect(shown.participants.length).toBe(3)
      expect(new Set(shown.participants.map((p) => p.seed)).size).toBe(3)
    }
  })
})

describe('check-in', () => {
  test('only registered players, only inside [opensAt, closesAt); again answers the same', async () => {
    const [a, b] = await players(ctx, 2)
    const t = await create({}, { checkIn: { opensAt: at(40 * MIN), closesAt: at(55 * MIN) } })
    expect((await join(t.id, a!)).status).toBe(201)
    const early = await checkIn(t.id, a!)
    expect(early.status).toBe(409)
    expect(await codeOf(early)).toBe('check_in_closed')
    ctx.clock.set(t.registration!.checkIn!.opensAt)
    expect(await codeOf(await checkIn(t.id, b!))).toBe('not_registered')
    const ok = await checkIn(t.id, a!)
    expect(ok.status).toBe(200)
    const first = ((await ok.json()) as { registration: { checkedInAt: string } }).registration
    expect(first.checkedInAt).toBe(t.registration!.checkIn!.opensAt)
    ctx.clock.advance(MIN)
    const again = ((await (await checkIn(t.id, a!)).json()) as { registration: { checkedInAt: string } }).registration
    expect(again).toEqual(first)
    ctx.clock.set(t.registration!.checkIn!.closesAt)
    expect((await join(t.id, b!)).status).toBe(409) // registration closed at 50 min
    expect(await codeOf(await checkIn(t.id, a!))).toBe('check_in_closed')
    // A tournament without check-in has no window.
    const plain = await create()
    expect((await join(plain.id, b!)).status).toBe(201)
    expect(await codeOf(await checkIn(plain.id, b!))).toBe('check_in_closed')
  })

  test('at the start, registrants who did not check in are dropped and told; the rest seeded in join order and told once', async () => {
    const people = await players(ctx, 5)
    const t = await create({}, { checkIn: { opensAt: at(40 * MIN), closesAt: at(55 * MIN) } })
    for (const p of people) expect((await join(t.id, p)).status).toBe(201)
    ctx.clock.set(t.registration!.checkIn!.opensAt)
    const present = [people[0]!, people[2]!, people[3]!]
    const absent = [people[1]!, people[4]!]
    for (const p of present) expect((await checkIn(t.id, p)).status).toBe(200)
    expect(await reachStart(t)).toBeGreaterThanOrEqual(1)
    const started = await show(t.id)
    expect(started.status).toBe('running')
    expect(started.participants.map((p) => [p.seed, p.userId])).toEqual(present.map((p, i) => [i + 1, p.userId]))
    expect(started.matches.length).toBe(3)
    expect((await eventsOf(absent.map((p) => p.userId), 'tournament.dropped')).map((e) => [e.userId, e.data])).toEqual(
      absent.map((p) => [p.userId, { tournamentId: t.id, reason: 'not_checked_in' }]),
    )
    expect((await eventsOf(absent.map((p) => p.userId), 'tournament.started')).length).toBe(0)
    const startedEvents = await eventsOf(present.map((p) => p.userId), 'tournament.started')
    expect(startedEvents.map((e) => e.userId).sort()).toEqual(present.map((p) => p.userId).sort())
    // The job ran once: running the queue again does nothing.
    expect(await ctx.runJobs()).toBe(0)
    expect((await eventsOf(present.map((p) => p.userId), 'tournament.started')).length).toBe(3)
    // Started: no more leaving or check-in.
    expect(await codeOf(await leave(t.id, present[0]!))).toBe('registration_closed')
  })

  test('options given at creation hold once it starts: a match deadline on the matches the start opens', async () => {
    const people = await players(ctx, 2)
    const t = await create({ options: { matchDeadlineS: 600 } })
    expect((t as unknown as { options: unknown }).options).toEqual({ matchDeadlineS: 600 })
    for (const p of people) expect((await join(t.id, p)).status).toBe(201)
    expect(await reachStart(t)).toBeGreaterThanOrEqual(1)
    const started = (await show(t.id)) as unknown as { matches: { status: string; deadline: string | null }[] }
    expect(started.matches.map((m) => [m.status, m.deadline])).toEqual([['running', new Date(Date.parse(t.registration!.startsAt) + 600_000).toISOString()]])
  })

  test('fewer than 2 left at the start: cancelled, reason not_enough_players, told', async () => {
    const [a, b] = await players(ctx, 2)
    const t = await create({}, { checkIn: { opensAt: at(40 * MIN), closesAt: at(55 * MIN) } })
    await join(t.id, a!)
    await join(t.id, b!)
    ctx.clock.set(t.registration!.checkIn!.opensAt)
    await checkIn(t.id, a!)
    await reachStart(t)
    const shown = await show(t.id)
    expect(shown.status).toBe('cancelled')
    expect(shown.matches).toEqual([])
    expect((await eventsOf([a!.userId], 'tournament.cancelled')).map((e) => e.data)).toEqual([{ tournamentId: t.id, reason: 'not_enough_players' }])
    expect((await eventsOf([b!.userId], 'tournament.dropped')).length).toBe(1)
  })
})

describe('seeding and the start', () => {
  test('random seeding: the bracket is the stored seed\'s shuffle of the join order, shown once started; the same seed gives the same order', async () => {
    const people = await players(ctx, 7)
    const t = await create({ seeding: 'random' })
    for (const p of people) await join(t.id, p)
    expect((await show(t.id)).registration!.seed).toBeNull()
    await reachStart(t)
    const started = await show(t.id)
    expect(started.status).toBe('running')
    const seed = started.registration!.seed!
    expect(seed).toMatch(/^[0-9a-f]{32}$/)
    const expected = seedOrder(people.map((p) => p.userId), 'random', seed)
    expect(started.participants.map((p) => p.userId)).toEqual(expected)
    expect(seedOrder(people.map((p) => p.userId), 'random', seed)).toEqual(expected)
    // A different seed, a different order (for 7 players, almost surely).
    expect(seedOrder(people.map((p) => p.userId), 'random', '0'.repeat(32))).not.toEqual(expected)
  })

  test('an operator starts it early only after registration closed; the job then does nothing', async () => {
    const people = await players(ctx, 3)
    const t = await create()
    for (const p of people) await join(t.id, p)
    const early = await ctx.handle(postJson(`/api/v1/admin/tournaments/${t.id}/start`, {}, admin))
    expect(early.status).toBe(409)
    expect(await codeOf(early)).toBe('registration_open')
    ctx.clock.set(t.registration!.closesAt)
    const started = await ctx.handle(postJson(`/api/v1/admin/tournaments/${t.id}/start`, {}, admin))
    expect(started.status).toBe(200)
    const view = ((await started.json()) as { tournament: TournamentView }).tournament
    expect(view.status).toBe('running')
    expect(view.participants.map((p) => [p.seed, p.userId])).toEqual(people.map((p, i) => [i + 1, p.userId]))
    // Again: 409. At startsAt the job runs, finds it started, and changes nothing.
    expect((await ctx.handle(postJson(`/api/v1/admin/tournaments/${t.id}/start`, {}, admin))).status).toBe(409)
    await reachStart(t)
    const after = await show(t.id)
    expect(after.matches).toEqual(view.matches)
    expect((await eventsOf(people.map((p) => p.userId), 'tournament.started')).length).toBe(3)
    const job = (await db.select().from(jobs).where(eq(jobs.kind, 'start_tournament'))).find((j) => (j.payload as { tournamentId: string }).tournamentId === t.id)!
    expect(job.status).toBe('done')
  })

  test('the start job and an operator start racing: started exactly once', async () => {
    const people = await players(ctx, 4)
    const t = await create()
    for (const p of people) await join(t.id, p)
    ctx.clock.set(t.registration!.startsAt)
    const [jobRuns, res] = await Promise.all([ctx.runJobs(), ctx.handle(postJson(`/api/v1/admin/tournaments/${t.id}/start`, {}, admin))])
    expect(jobRuns).toBeGreaterThanOrEqual(1)
    expect([200, 409]).toContain(res.status)
    const shown = await show(t.id)
    expect(shown.status).toBe('running')
    expect(shown.matches.length).toBe(3)
    expect((await eventsOf(people.map((p) => p.userId), 'tournament.started')).length).toBe(4)
  })
})
