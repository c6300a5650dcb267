// `arena game-server add|list|disable|rotate` and `arena game update
// --results`, run as a child process on the app's own database (either
// engine): the admin API's service methods, audited as `cli:<OS user>`,
// printing what the routes answer; a key the API refuses is refused naming
// the flag (exit 1), wrong words exit 2. The server added here signs a result
// the app accepts, its rotated key too.
import { afterAll, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { tempDir } from '../helpers/app'
import { createArenaApp, createGame, players, startedTournament } from '../helpers/arena'
import { serverKeys, signedResult } from '../helpers/game-servers'
import { CLI_OPERATOR, run, SOURCE_COMMAND } from '../helpers/process'

const dataDir = tempDir('arena-game-server-cli-')
const app = await createArenaApp({}, { dataDir })
afterAll(async () => {
  await app.close()
  rmSync(dataDir, { recursive: true, force: true })
})

test('add, list, rotate and disable a game server, set the game\'s results (audited as cli:<OS user>); refusals exit 1 naming the flag, wrong words 2', async () => {
  const { game } = await createGame(app, 'Server CLI Duel')
  const env = { ARENA_DATA_DIR: dataDir, ...app.databaseEnv }
  const arena = (...args: string[]) => run([...SOURCE_COMMAND, ...args], env)
  const keys = serverKeys()

  const updated = await arena('game', 'update', game.id, '--results', 'server', '--json')
  expect({ code: updated.code, stderr: updated.stderr }).toEqual({ code: 0, stderr: '' })
  expect(JSON.parse(updated.stdout).game).toMatchObject({ id: game.id, results: 'server' })

  const added = await arena('game-server', 'add', game.id, '--name', 'eu-1', `--public-key=${keys.publicKey}`, '--json')
  expect({ code: added.code, stderr: added.stderr }).toEqual({ code: 0, stderr: '' })
  const { server } = JSON.parse(added.stdout)
  expect(server).toMatchObject({ gameId: game.id, name: 'eu-1', publicKey: keys.publicKey, status: 'active' })
  expect(await app.services.gameServers.list(game.id)).toEqual([server])

  // The key registered on the command line verifies a result the server signs.
  const people = await players(app, 2)
  const t = await startedTournament(app, game.id, people)
  const final = t.matches[0]!
  const decided = await app.handle(await signedResult(game.id, { server, privateKey: keys.privateKey }, { matchId: final.id, outcome: 'WIN', winnerParticipantId: final.slot1ParticipantId }, app.clock.now()))
  expect(decided.status).toBe(200)

  const bad = await arena('game-server', 'rotate', server.id, '--public-key', 'not-a-key')
  expect(bad.code).toBe(1)
  expect(bad.stderr).toContain('--public-key')
  const next = serverKeys()
  const rotated = await arena('game-server', 'rotate', server.id, `--public-key=${next.publicKey}`)
  expect({ code: rotated.code, stderr: rotated.stderr }).toEqual({ code: 0, stderr: '' })
  expect(rotated.stdout).toContain('has a new key')

  const disabled = await arena('game-server', 'disable', server.id, '--json')
  expect(JSON.parse(disabled.stdout).server).toMatchObject({ id: server.id, publicKey: next.publicKey, status: 'disabled' })
  const listed = await arena('game-server', 'list', game.id)
  expect(listed.stdout.trim()).toMatch(new RegExp(`^disabled\\s+eu-1\\s+${next.publicKey}.*${server.id}$`))

  expect((await arena('game-server', 'remove', server.id)).code).toBe(2)
  expect((await arena('game', 'update', game.id, '--results', 'servers')).code).toBe(2)

  const records = (await app.storage.read.audit.auditAfter(0, 200)).filter((r) => r.target === server.id || (r.target === game.id && r.action === 'game.update'))
  expect(records.map((r) => [r.action, r.operatorName, r.via])).toEqual([
    ['game.update', CLI_OPERATOR, 'cli'],
    ['game_server.create', CLI_OPERATOR, 'cli'],
    ['game_server.rotate', CLI_OPERATOR, 'cli'],
    ['game_server.disable', CLI_OPERATOR, 'cli'],
  ])
})
