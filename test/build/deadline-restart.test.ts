// A match's deadline is settled by a durable job (contract §9). Kill the
// compiled binary while that job is due, start it again on the same data dir
// and database: the match is settled exactly once (one decision, one
// match.decided per player). The tournament is made with the binary's own CLI.
import { afterAll, expect, test } from 'bun:test'
import { tempDir, testDatabaseEnv } from '../helpers/app'
import { BINARY, buildBinary, run, startServe, type ServerProcess } from '../helpers/process'

const started: ServerProcess[] = []
afterAll(() => started.forEach((s) => s.proc.kill('SIGKILL')))

test('killed with the settle job due, restarted: settled exactly once (no_show)', async () => {
  await buildBinary()
  const env = { ARENA_DATA_DIR: tempDir('arena-deadline-'), ...(await testDatabaseEnv()) }
  const cli = async (...args: string[]) => {
    const result = await run([BINARY, ...args, '--json'], env)
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' })
    return JSON.parse(result.stdout)
  }

  const { game, gameKey } = await cli('game', 'create', '--name', 'Deadline Duel')
  // Jobs off: the settle job falls due while this server runs, and is not run.
  const paused = await startServe([BINARY, 'serve'], { ...env, ARENA_JOBS_ENABLED: 'false' })
  started.push(paused)
  const json = { 'content-type': 'application/json' }
  const post = (base: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${base}${path}`, { method: 'POST', headers: { ...json, ...headers }, body: JSON.stringify(body) })

  const tokens: Record<string, string> = {}
  for (const name of ['late_a', 'late_b']) {
    expect((await post(paused.url, '/api/v1/user/register', { email: `${name}@example.com`, username: name, password: 'deadline password', country: 'SE', accept_terms: true })).status).toBe(201)
    tokens[name] = ((await (await post(paused.url, '/api/v1/user/login', { identifier: name, password: 'deadline password' })).json()) as { accessToken: string }).accessToken
  }

  const { tournament } = await cli('tournament', 'create', '--game', game.id, '--name', 'Deadline Cup', '--players', 'late_a,late_b', '--deadline', '2')
  expect(tournament.options).toEqual({ matchDeadlineS: 2 })
  const startedT = (await cli('tournament', 'start', tournament.id)).tournament as { matches: { id: string; slot1ParticipantId: string; deadline: string }[]; participants: { id: string; userId: string }[] }
  const match = startedT.matches[0]!
  expect(match.deadline).not.toBeNull()
  // late_a (seed 1, slot 1) claims; late_b never shows.
  const auth = { authorization: `Bearer ${tokens.late_a}`, 'x-game-key': gameKey }
  const session = (await (await post(paused.url, `/api/v1/game-sdk/${game.id}/sessions`, { matchId: match.id }, auth)).json()) as { token: string }
  const claimed = await post(paused.url, `/api/v1/game-sdk/${game.id}/results`, { outcome: 'WIN', winnerParticipantId: match.slot1ParticipantId }, { ...auth, 'x-session-token': session.token })
  expect(((await claimed.json()) as { decision: string }).decision).toBe('pending')

  // Past the deadline with the job due, then killed.
  await Bun.sleep(Math.max(0, new Date(match.deadline).getTime() - Date.now()) + 300)
  expect((await cli('tournament', 'show', tournament.id)).tournament.matches[0].status).toBe('running')
  paused.proc.kill('SIGKILL')
  await paused.proc.exited

  const decidedEvents = async (base: string, name: string) => {
    const res = await fetch(`${base}/api/v1/events?topics=status`, { headers: { authorization: `Bearer ${tokens[name]}` } })
    const { events } = (await res.json()) as { events: { type: string; data: Record<string, unknown> }[] }
    return events.filter((e) => e.type === 'match.decided')
  }

  const resumed = await startServe([BINARY, 'serve'], env)
  started.push(resumed)
  let status = ''
  for (let i = 0; i < 100 && status !== 'completed'; i++) {
    status = (await cli('tournament', 'show', tournament.id)).tournament.status
    if (status !== 'completed') await Bun.sleep(100)
  }
  expect(status).toBe('completed')
  const shown = (await cli('tournament', 'show', tournament.id)).tournament
  expect(shown.matches[0]).toMatchObject({ status: 'decided', winnerParticipantId: match.slot1ParticipantId })
  expect((await resumed.signal('SIGTERM')).code).toBe(0)

  // Once more, to see nothing runs again.
  const again = await startServe([BINARY, 'serve'], env)
  started.push(again)
  await Bun.sleep(1500)
  for (const name of ['late_a', 'late_b']) {
    expect((await decidedEvents(again.url, name)).map((e) => e.data)).toEqual([{ tournamentId: tournament.id, matchId: match.id, winnerParticipantId: match.slot1ParticipantId, outcome: 'WIN', reason: 'no_show' }])
  }
  expect((await again.signal('SIGTERM')).code).toBe(0)
}, 90_000)
