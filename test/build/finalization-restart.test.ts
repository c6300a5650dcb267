// A tournament whose final was agreed is finished by a durable job. Kill the
// server while the tournament is finalizing, start it again on the same data
// dir and database, and it completes. Operator actions go through the binary's own CLI.
import { afterAll, expect, test } from 'bun:test'
import { tempDir, testDatabaseEnv } from '../helpers/app'
import { BINARY, buildBinary, run, startServe, type ServerProcess } from '../helpers/process'

const started: ServerProcess[] = []
afterAll(() => started.forEach((s) => s.proc.kill('SIGKILL')))

test('killed while finalizing, restarted, completed', async () => {
  await buildBinary()
  const env = { ARENA_DATA_DIR: tempDir('arena-final-'), ...(await testDatabaseEnv()) }
  const cli = async (...args: string[]) => {
    const result = await run([BINARY, ...args, '--json'], env)
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' })
    return JSON.parse(result.stdout)
  }

  const { game, gameKey } = await cli('game', 'create', '--name', 'Restart Duel')
  const paused = await startServe([BINARY, 'serve'], { ...env, ARENA_JOBS_ENABLED: 'false' })
  started.push(paused)
  const json = { 'content-type': 'application/json' }
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${paused.url}${path}`, { method: 'POST', headers: { ...json, ...headers }, body: JSON.stringify(body) })

  const tokens: Record<string, string> = {}
  for (const name of ['final_a', 'final_b']) {
    expect((await post('/api/v1/user/register', { email: `${name}@example.com`, username: name, password: 'restart password', country: 'SE', accept_terms: true })).status).toBe(201)
    tokens[name] = ((await (await post('/api/v1/user/login', { identifier: name, password: 'restart password' })).json()) as { accessToken: string }).accessToken
  }

  const { tournament } = await cli('tournament', 'create', '--game', game.id, '--name', 'Restart Cup', '--players', 'final_a,final_b')
  const startedT = (await cli('tournament', 'start', tournament.id)).tournament as { matches: { id: string; slot1ParticipantId: string }[] }
  const final = startedT.matches[0]!
  let last = ''
  for (const name of ['final_a', 'final_b']) {
    const auth = { authorization: `Bearer ${tokens[name]}`, 'x-game-key': gameKey }
    const session = (await (await post(`/api/v1/game-sdk/${game.id}/sessions`, { matchId: final.id }, auth)).json()) as { token: string }
    const res = await post(`/api/v1/game-sdk/${game.id}/results`, { outcome: 'WIN', winnerParticipantId: final.slot1ParticipantId }, { ...auth, 'x-session-token': session.token })
    last = ((await res.json()) as { decision: string }).decision
  }
  expect(last).toBe('game_advance_pending_finalization')
  expect((await cli('tournament', 'show', tournament.id)).tournament.status).toBe('finalizing')

  paused.proc.kill('SIGKILL')
  await paused.proc.exited

  const resumed = await startServe([BINARY, 'serve'], env)
  started.push(resumed)
  let status = ''
  for (let i = 0; i < 50 && status !== 'completed'; i++) {
    const res = await fetch(`${resumed.url}/api/v1/tournaments/${tournament.id}`, { headers: { authorization: `Bearer ${tokens.final_a}` } })
    status = ((await res.json()) as { tournament: { status: string } }).tournament.status
    if (status !== 'completed') await Bun.sleep(100)
  }
  expect(status).toBe('completed')
  const shown = (await cli('tournament', 'show', tournament.id)).tournament
  expect(shown.winnerParticipantId).toBe(final.slot1ParticipantId)
  expect((await resumed.signal('SIGTERM')).code).toBe(0)
}, 60_000)
