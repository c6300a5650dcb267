// The operator CLI for issue 19: a tournament with a match deadline,
// disqualify, correct and cancel, running the same services as the admin
// routes on the app's own database.
import { afterAll, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { tempDir } from '../helpers/app'
import { createArenaApp, createGame, playOut, players, tournament } from '../helpers/arena'
import { run, SOURCE_COMMAND } from '../helpers/process'

const dataDir = tempDir('arena-cli-t19-')
const app = await createArenaApp({}, { dataDir })
afterAll(async () => {
  await app.close()
  rmSync(dataDir, { recursive: true, force: true })
})

test('tournament create --deadline, disqualify, match correct, tournament cancel', async () => {
  const env = { ARENA_DATA_DIR: dataDir, ...app.databaseEnv }
  const cli = async (...args: string[]) => {
    const result = await run([...SOURCE_COMMAND, ...args, '--json'], env)
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' })
    return JSON.parse(result.stdout)
  }
  const { game, gameKey } = await createGame(app)
  const people = await players(app, 4)
  const { tournament: created } = await cli('tournament', 'create', '--game', game.id, '--name', 'CLI Cup', '--players', people.map((p) => p.username).join(','), '--deadline', '90')
  expect(created.options).toEqual({ matchDeadlineS: 90 })
  const { tournament: t } = await cli('tournament', 'start', created.id)
  const [m1, m2] = t.matches.filter((m: { status: string }) => m.status === 'running')
  expect(m1.deadline).not.toBeNull()

  await playOut(app, game.id, gameKey, t, people, m1, m1.slot1ParticipantId)
  const corrected = await cli('match', 'correct', m1.id, '--winner', m1.slot2ParticipantId, '--reason', 'typo')
  expect(corrected.match.winnerParticipantId).toBe(m1.slot2ParticipantId)

  const dq = await cli('tournament', 'disqualify', t.id, m2.slot1ParticipantId, '--reason', 'cheating')
  expect(dq.match).toMatchObject({ id: m2.id, status: 'decided', winnerParticipantId: m2.slot2ParticipantId })

  const { tournament: cancelled } = await cli('tournament', 'cancel', t.id, '--reason', 'storm')
  expect(cancelled.status).toBe('cancelled')
  expect((await tournament(app, t.id)).matches.find((m) => m.id === m1.nextMatchId)!.status).toBe('cancelled')

  const usage = await run([...SOURCE_COMMAND, 'tournament', 'cancel', t.id], env)
  expect(usage.code).toBe(2)
  const refused = await run([...SOURCE_COMMAND, 'tournament', 'cancel', t.id, '--reason', 'again'], env)
  expect(refused.code).toBe(1)
}, 60_000)
