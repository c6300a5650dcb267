// `arena queue create|list|update|close`, run as a child process on the
// app's own database (either engine): the admin API's service methods,
// audited as `cli:<OS user>`, printing what the routes answer; what the API's
// schema refuses is refused naming the flag (exit 1), wrong words exit 2;
// closing cancels the waiting tickets.
import { afterAll, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { tempDir } from '../helpers/app'
import { createArenaApp, createGame, players } from '../helpers/arena'
import { joined } from '../helpers/matchmaking'
import { CLI_OPERATOR, run, SOURCE_COMMAND } from '../helpers/process'

const dataDir = tempDir('arena-queue-cli-')
const app = await createArenaApp({}, { dataDir })
afterAll(async () => {
  await app.close()
  rmSync(dataDir, { recursive: true, force: true })
})

test('create, list, update and close a queue (audited as cli:<OS user>); refusals exit 1 naming the flag, wrong words 2', async () => {
  const { game } = await createGame(app, 'Queue CLI Chess')
  const env = { ARENA_DATA_DIR: dataDir, ...app.databaseEnv }
  const cli = (...args: string[]) => run([...SOURCE_COMMAND, 'queue', ...args], env)
  const window = ['--window-initial', '80', '--window-widen', '1.5', '--window-max', '250']

  const created = await cli('create', game.id, '--name', 'blitz', '--rated', '--stake', '2.5', '--rake', '0.05', ...window, '--ready-check', '15', '--match-deadline', '900', '--rematch-cooldown', '30', '--draws', 'result', '--json')
  expect({ code: created.code, stderr: created.stderr }).toEqual({ code: 0, stderr: '' })
  const { queue } = JSON.parse(created.stdout)
  expect(queue).toMatchObject({ gameId: game.id, name: 'blitz', rated: true, stake: '2.5', rake: '0.05', window: { initial: 80, widenPerSecond: 1.5, max: 250 }, readyCheckS: 15, matchDeadlineS: 900, rematchCooldownS: 30, draws: 'result', closedAt: null })
  expect((await app.services.matchmaking.queues(game.id, false)).queues).toEqual([queue])
  const records = (await app.storage.read.audit.auditAfter(0, 200)).filter((r) => r.target === queue.id)
  expect(records).toEqual([expect.objectContaining({ action: 'queue.create', operatorName: CLI_OPERATOR, role: 'admin', via: 'cli' })])

  // The defaults: unrated, unstaked, no deadline, no cooldown, draws replayed.
  const casual = await cli('create', game.id, '--name', 'casual', ...window, '--ready-check', '30')
  expect(casual.code).toBe(0)
  expect(casual.stdout).toContain('queue casual opened')
  expect((await app.services.matchmaking.queues(game.id, false)).queues.find((q) => q.name === 'casual')).toMatchObject({ rated: false, stake: null, rake: '0', matchDeadlineS: null, rematchCooldownS: 0, draws: 'replay' })

  const listed = await cli('list', game.id, '--json')
  expect(listed.code).toBe(0)
  expect(JSON.parse(listed.stdout)).toEqual(await app.services.matchmaking.queues(game.id, false))
  const text = await cli('list', game.id)
  expect(text.stdout.split('\n')).toEqual([expect.stringMatching(/^blitz +open +rated +stake 2\.5 rake 0\.05 +window ±80 \+1\.5\/s ≤250 +ready 15s +deadline 900s +cooldown 30s +draws result +que_/), expect.stringMatching(/^casual +open +unrated/), ''])

  // Update: only what is given changes.
  const updated = await cli('update', game.id, 'blitz', '--unrated', '--stake', 'none', '--rake', '0', '--match-deadline', 'none', '--json')
  expect({ code: updated.code, stderr: updated.stderr }).toEqual({ code: 0, stderr: '' })
  expect(JSON.parse(updated.stdout).queue).toMatchObject({ name: 'blitz', rated: false, stake: null, rake: '0', matchDeadlineS: null, readyCheckS: 15, rematchCooldownS: 30, window: { initial: 80, widenPerSecond: 1.5, max: 250 } })

  // Refused as the API refuses, the flag named; nothing changed.
  for (const [args, says] of [
    [['create', game.id, '--name', 'blitz', ...window, '--ready-check', '15'], 'open queue of that name'],
    [['create', game.id, '--name', 'slow', ...window, '--ready-check', '1'], '--ready-check'],
    [['create', game.id, '--name', 'slow', ...window, '--ready-check', 'soon'], '--ready-check'],
    [['create', game.id, '--name', 'slow', '--window-initial', '300', '--window-widen', '1', '--window-max', '100', '--ready-check', '15'], '--window-max'],
    [['create', game.id, '--name', 'slow', '--rake', '0.1', ...window, '--ready-check', '15'], 'A rake needs a stake'],
    [['update', game.id, 'blitz', '--draws', 'sometimes'], '--draws'],
    [['update', game.id, 'nope', '--rated'], 'No such queue'],
    [['list', 'gam_00000000000000000000000000000000'], 'No such game'],
  ] as const) {
    const refused = await cli(...args)
    expect({ args, code: refused.code }).toEqual({ args, code: 1 })
    expect(refused.stderr).toContain(says)
  }
  expect((await app.services.matchmaking.queues(game.id, true)).queues.map((q) => q.name)).toEqual(['blitz', 'casual'])

  // Wrong words: exit 2, with the usage.
  for (const args of [
    ['create', game.id, ...window, '--ready-check', '15'],
    ['create', game.id, '--name', 'x', '--window-initial', '1', '--ready-check', '15'],
    ['update', game.id, 'blitz'],
    ['update', game.id, 'blitz', '--rated', '--unrated'],
    ['list'],
  ]) {
    const wrong = await cli(...args)
    expect({ args, code: wrong.code }).toEqual({ args, code: 2 })
    expect(wrong.stderr).toContain('Usage:')
  }

  // Close: the waiting ticket cancelled; listed again only with --closed.
  const [player] = await players(app, 1)
  const ticket = await joined(app, game.id, 'casual', player!)
  const closed = await cli('close', game.id, 'casual', '--json')
  expect({ code: closed.code, stderr: closed.stderr }).toEqual({ code: 0, stderr: '' })
  expect(JSON.parse(closed.stdout).queue).toMatchObject({ name: 'casual', closedAt: expect.any(String) })
  expect((await app.storage.read.matchmaking.ticketsByIds([ticket.id]))[0]).toMatchObject({ status: 'cancelled', closeReason: 'queue_closed' })
  expect(JSON.parse((await cli('list', game.id, '--json')).stdout).queues.map((q: { name: string }) => q.name)).toEqual(['blitz'])
  expect(JSON.parse((await cli('list', game.id, '--closed', '--json')).stdout).queues.map((q: { name: string }) => q.name)).toEqual(['blitz', 'casual'])
  const actions = (await app.storage.read.audit.auditAfter(0, 500)).filter((r) => r.via === 'cli' && r.action.startsWith('queue.')).map((r) => r.action)
  expect(actions).toEqual(['queue.create', 'queue.create', 'queue.update', 'queue.close'])
}, 90_000)
