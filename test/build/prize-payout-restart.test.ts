// Prizes are paid exactly once through a crash: many funded tournaments wait
// in `finalizing`; the compiled server starts paying them out (the finalize
// jobs, one after another) and is SIGKILLed after the first few, in the middle
// of the rest; started again on the same data dir and database, it finishes
// them. Every tournament is completed, every prize paid once (the players'
// histories), every escrow empty and the ledger balanced (`arena ledger check`).
import { afterAll, expect, test } from 'bun:test'
import { tempDir, testDatabaseEnv } from '../helpers/app'
import { BINARY, buildBinary, run, startServe, type ServerProcess } from '../helpers/process'

const started: ServerProcess[] = []
afterAll(() => started.forEach((s) => s.proc.kill('SIGKILL')))

const TOURNAMENTS = 24
const ADMIN = 'prize-restart-admin-token-of-32-chars!!'

test('killed while paying the prizes of several tournaments, restarted: each prize paid once, the ledger balanced', async () => {
  await buildBinary()
  // One pair plays all 24 finals: pair_limit would hold the winner's prizes this test counts (held payouts: test/integrity/*).
  const env = { ARENA_DATA_DIR: tempDir('arena-prizes-'), ARENA_ADMIN_TOKEN: ADMIN, ARENA_INTEGRITY_SIGNALS: 'none', ...(await testDatabaseEnv()) }
  const cli = async (...args: string[]) => {
    const result = await run([BINARY, ...args, '--json'], env)
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' })
    return JSON.parse(result.stdout)
  }
  const { game, gameKey } = await cli('game', 'create', '--name', 'Payout Duel')
  const paused = await startServe([BINARY, 'serve'], { ...env, ARENA_JOBS_ENABLED: 'false' })
  started.push(paused)
  const send = (server: ServerProcess, method: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${server.url}${path}`, { method, headers: { 'content-type': 'application/json', ...headers }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
  const admin = { 'x-admin-token': ADMIN }

  const tokens: Record<string, string> = {}
  for (const name of ['payout_a', 'payout_b']) {
    expect((await send(paused, 'POST', '/api/v1/user/register', { email: `${name}@example.com`, username: name, password: 'payout password', country: 'SE', accept_terms: true })).status).toBe(201)
    tokens[name] = ((await (await send(paused, 'POST', '/api/v1/user/login', { identifier: name, password: 'payout password' })).json()) as { accessToken: string }).accessToken
  }

  const ids: string[] = []
  for (let i = 0; i < TOURNAMENTS; i++) {
    const created = await send(paused, 'POST', '/api/v1/admin/tournaments', { gameId: game.id, name: `Payout ${i}`, format: 'single_elimination', participants: ['payout_a', 'payout_b'], prizes: ['3', '1'] }, admin)
    expect(created.status).toBe(201)
    const { tournament } = (await created.json()) as { tournament: { id: string } }
    expect((await send(paused, 'POST', `/api/v1/admin/tournaments/${tournament.id}/fund`, { amount: '5', reference: `pool-${tournament.id}` }, admin)).status).toBe(200)
    const start = await send(paused, 'POST', `/api/v1/admin/tournaments/${tournament.id}/start`, {}, admin)
    const final = ((await start.json()) as { tournament: { matches: { id: string; slot1ParticipantId: string }[] } }).tournament.matches[0]!
    for (const name of ['payout_a', 'payout_b']) {
      const auth = { authorization: `Bearer ${tokens[name]}`, 'x-game-key': gameKey }
      const session = (await (await send(paused, 'POST', `/api/v1/game-sdk/${game.id}/sessions`, { matchId: final.id }, auth)).json()) as { token: string }
      expect((await send(paused, 'POST', `/api/v1/game-sdk/${game.id}/results`, { outcome: 'WIN', winnerParticipantId: final.slot1ParticipantId }, { ...auth, 'x-session-token': session.token })).status).toBe(200)
    }
    ids.push(tournament.id)
  }
  paused.proc.kill('SIGKILL')
  await paused.proc.exited

  // Paying: killed once a few finalize jobs are done, while the worker runs on into the next ones.
  const paying = await startServe([BINARY, 'serve'], env)
  started.push(paying)
  const done = () => paying.lines.filter((l) => l.msg === 'job done' && l.kind === 'finalize_tournament').length
  for (let i = 0; i < 400 && done() < 3; i++) await Bun.sleep(5)
  paying.proc.kill('SIGKILL')
  await paying.proc.exited
  const beforeRestart = done()
  expect(beforeRestart).toBeGreaterThan(0)
  expect(beforeRestart).toBeLessThan(TOURNAMENTS)

  const resumed = await startServe([BINARY, 'serve'], env)
  started.push(resumed)
  const statuses = async () =>
    Promise.all(ids.map(async (id) => ((await (await send(resumed, 'GET', `/api/v1/tournaments/${id}`, undefined, { authorization: `Bearer ${tokens.payout_a}` })).json()) as { tournament: { status: string } }).tournament.status))
  for (let i = 0; i < 100 && !(await statuses()).every((s) => s === 'completed'); i++) await Bun.sleep(100)
  expect(await statuses()).toEqual(ids.map(() => 'completed'))

  // Each tournament paid rank 1 (3) and rank 2 (1) once: two prizes per tournament across the two histories.
  let total = 0n
  const paid = new Map<string, string[]>()
  for (const name of ['payout_a', 'payout_b']) {
    const res = await send(resumed, 'GET', '/api/v1/wallet/transactions?limit=100', undefined, { authorization: `Bearer ${tokens[name]}` })
    const { transactions } = (await res.json()) as { transactions: { kind: string; amount: string; reference: string }[] }
    for (const t of transactions.filter((x) => x.kind === 'prize')) {
      paid.set(t.reference, [...(paid.get(t.reference) ?? []), t.amount].sort())
      total += BigInt(t.amount)
    }
  }
  expect([...paid.keys()].sort()).toEqual([...ids].sort())
  for (const id of ids) expect(paid.get(id)).toEqual(['1', '3'])
  expect(total).toBe(4n * BigInt(TOURNAMENTS))
  const check = await run([BINARY, 'ledger', 'check'], env)
  expect({ code: check.code, out: check.stdout.split(' ')[0] }).toEqual({ code: 0, out: 'ok:' })
  expect((await resumed.signal('SIGTERM')).code).toBe(0)
}, 120_000)
