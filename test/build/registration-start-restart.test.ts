// A tournament players registered for is started by a durable job due at its
// startsAt. With the compiled binary: the job comes due while the server
// cannot run it, the server is SIGKILLed; a server that takes the job is
// SIGKILLed as soon as it listens (before, while or after it runs the job);
// a third start finds it started exactly once: one bracket, one
// tournament.started per participant.
import { afterAll, expect, test } from 'bun:test'
import { tempDir, testDatabaseEnv } from '../helpers/app'
import { BINARY, buildBinary, startServe, type ServerProcess } from '../helpers/process'

const started: ServerProcess[] = []
afterAll(() => started.forEach((s) => s.proc.kill('SIGKILL')))

const ADMIN = 'restart-admin-token-of-at-least-32-chars!!'

test('killed while the start job is due and again while it may run, restarted: started exactly once', async () => {
  await buildBinary()
  const env = { ARENA_DATA_DIR: tempDir('arena-regstart-'), ARENA_ADMIN_TOKEN: ADMIN, ...(await testDatabaseEnv()) }
  const serve = async (extra: Record<string, string> = {}) => {
    const server = await startServe([BINARY, 'serve'], { ...env, ...extra })
    started.push(server)
    return server
  }
  const paused = await serve({ ARENA_JOBS_ENABLED: 'false' })
  const call = (base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(`${base}${path}`, { method, headers: { 'content-type': 'application/json', ...headers }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })

  const game = ((await (await call(paused.url, 'POST', '/api/v1/admin/games', { name: 'Restart Start' }, { 'x-admin-token': ADMIN })).json()) as { game: { id: string } }).game
  const now = Date.now()
  const created = await call(
    paused.url,
    'POST',
    '/api/v1/admin/tournaments',
    { gameId: game.id, name: 'Restart Open', format: 'single_elimination', registration: { closesAt: new Date(now + 2500).toISOString(), maxPlayers: 8 }, startsAt: new Date(now + 3000).toISOString(), seeding: 'random' },
    { 'x-admin-token': ADMIN },
  )
  expect(created.status).toBe(201)
  const { tournament } = (await created.json()) as { tournament: { id: string; registration: { startsAt: string } } }

  const tokens: string[] = []
  for (const name of ['reg_a', 'reg_b', 'reg_c']) {
    expect((await call(paused.url, 'POST', '/api/v1/user/register', { email: `${name}@example.com`, username: name, password: 'restart password', country: 'SE', accept_terms: true })).status).toBe(201)
    const token = ((await (await call(paused.url, 'POST', '/api/v1/user/login', { identifier: name, password: 'restart password' })).json()) as { accessToken: string }).accessToken
    tokens.push(token)
    expect((await call(paused.url, 'POST', `/api/v1/tournaments/${tournament.id}/registration`, {}, { authorization: `Bearer ${token}` })).status).toBe(201)
  }

  // Due, and not run (jobs are off here): killed.
  await Bun.sleep(Math.max(0, new Date(tournament.registration.startsAt).getTime() - Date.now() + 200))
  const show = async (base: string) =>
    ((await (await call(base, 'GET', `/api/v1/tournaments/${tournament.id}`, undefined, { authorization: `Bearer ${tokens[0]}` })).json()) as {
      tournament: { status: string; matches: unknown[]; participants: { seed: number }[] }
    }).tournament
  expect((await show(paused.url)).status).toBe('registration')
  paused.proc.kill('SIGKILL')
  await paused.proc.exited

  // A server whose worker takes the due job at once: killed as soon as it listens.
  const hasty = await serve()
  hasty.proc.kill('SIGKILL')
  await hasty.proc.exited

  const resumed = await serve()
  let shown = await show(resumed.url)
  for (let i = 0; i < 50 && shown.status !== 'running'; i++) {
    await Bun.sleep(100)
    shown = await show(resumed.url)
  }
  expect(shown.status).toBe('running')
  expect(shown.matches.length).toBe(3)
  expect(shown.participants.map((p) => p.seed).sort()).toEqual([1, 2, 3])
  for (const token of tokens) {
    const page = (await (await call(resumed.url, 'GET', '/api/v1/events?topics=status', undefined, { authorization: `Bearer ${token}` })).json()) as { events: { type: string; data: { tournamentId?: string } }[] }
    expect(page.events.filter((e) => e.type === 'tournament.started' && e.data.tournamentId === tournament.id).length).toBe(1)
  }
  expect((await resumed.signal('SIGTERM')).code).toBe(0)
}, 90_000)
