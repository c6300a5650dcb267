// `arena season create|list`, run as a child process on the app's own
// database (either engine): a season scheduled as the admin API schedules
// it (the same service, the same checks), audited as `cli:<OS user>`, listed
// newest first; wrong words exit 2, a refused season 1 saying why, with
// nothing scheduled.
import { afterAll, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { tempDir } from '../helpers/app'
import { createArenaApp, createGame } from '../helpers/arena'
import { CLI_OPERATOR, run, SOURCE_COMMAND } from '../helpers/process'

const dataDir = tempDir('arena-season-cli-')
const app = await createArenaApp({}, { dataDir })
afterAll(async () => {
  await app.close()
  rmSync(dataDir, { recursive: true, force: true })
})

test('create schedules a season (audited as cli:<OS user>), list shows every season newest first; bad words exit 2, a refused season 1', async () => {
  const { game } = await createGame(app, 'Season Chess')
  const env = { ARENA_DATA_DIR: dataDir, ...app.databaseEnv }
  const cli = (...args: string[]) => run([...SOURCE_COMMAND, 'season', ...args], env)
  // The CLI runs on the system clock: a start a week from now.
  const startsAt = new Date(Date.now() + 7 * 24 * 3600_000)
  startsAt.setUTCMilliseconds(0)

  const created = await cli('create', '--game', game.id, '--name', 'Spring', '--starts-at', startsAt.toISOString(), '--reset', 'hard', '--json')
  expect({ code: created.code, stderr: created.stderr }).toEqual({ code: 0, stderr: '' })
  const { season } = JSON.parse(created.stdout)
  expect(season).toMatchObject({ gameId: game.id, name: 'Spring', number: 2, status: 'scheduled', reset: 'hard', startsAt: startsAt.toISOString() })
  const { seasons } = await app.services.ratings.seasons(game.id)
  expect(seasons.map((s) => s.id)).toEqual([season.id, expect.any(String)])
  const records = (await app.storage.read.audit.auditAfter(0, 100)).filter((r) => r.action === 'season.create')
  expect(records).toEqual([expect.objectContaining({ target: season.id, operatorName: CLI_OPERATOR, role: 'admin', via: 'cli', details: { gameId: game.id, name: 'Spring', startsAt: startsAt.toISOString(), reset: 'hard' } })])

  const listed = await cli('list', '--game', game.id, '--json')
  expect(listed.code).toBe(0)
  expect(JSON.parse(listed.stdout)).toEqual({ seasons })
  const text = await cli('list', '--game', game.id)
  expect(text.stdout.split('\n')[0]).toContain(`#2    scheduled  ${startsAt.toISOString()}`)
  expect(text.stdout).toContain('"Spring"')
  expect(text.stdout).toContain('"Season 1"')
  expect(text.stdout.split('\n')[1]).toContain('current')

  // Wrong words: exit 2, with the usage.
  for (const args of [
    ['create', '--game', game.id, '--name', 'X', '--starts-at', startsAt.toISOString(), '--reset', 'medium'],
    ['create', '--game', game.id, '--name', 'X', '--starts-at', startsAt.toISOString()],
    ['create', '--name', 'X', '--starts-at', startsAt.toISOString(), '--reset', 'soft'],
    ['list'],
    ['rename', '--game', game.id],
  ]) {
    const wrong = await cli(...args)
    expect({ args, code: wrong.code }).toEqual({ args, code: 2 })
    expect(wrong.stderr).toContain('Usage:')
  }
  // Refused by the service: exit 1 saying why, nothing scheduled.
  const past = await cli('create', '--game', game.id, '--name', 'Past', '--starts-at', '2020-01-01T00:00:00Z', '--reset', 'soft')
  expect(past.code).toBe(1)
  expect(past.stderr).toContain('Must not be in the past')
  const unreadable = await cli('create', '--game', game.id, '--name', 'When', '--starts-at', 'next tuesday', '--reset', 'soft')
  expect(unreadable.code).toBe(1)
  expect(unreadable.stderr).toContain('ISO-8601')
  const unknown = await cli('list', '--game', 'gam_00000000000000000000000000000000')
  expect(unknown.code).toBe(1)
  expect(unknown.stderr).toContain('No such game')
  expect((await app.services.ratings.seasons(game.id)).seasons).toEqual(seasons)
}, 60_000)
