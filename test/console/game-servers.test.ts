// The game's servers on its console page (issue 40) over app.handle, on both
// engines: a viewer reads the results setting and the servers (their public
// keys, status), with no forms; an admin sets who reports results, adds a
// server, rotates its key and disables it (after a confirmation page), each
// through the service the admin API calls (audited via the console); a
// refused key comes back saying why, nothing added; lower roles are refused.
import { afterAll, expect, test } from 'bun:test'
import { createArenaApp, createGame } from '../helpers/arena'
import { consoleAs, textOf } from '../helpers/operators'
import { serverKeys } from '../helpers/game-servers'

const app = await createArenaApp()
afterAll(() => app.close())

const audited = async (target: string) => (await app.storage.read.audit.auditAfter(0, 500)).filter((r) => r.target === target).map((r) => [r.action, r.via])

test('a viewer reads the results and the servers; an admin sets results, adds, rotates and disables (confirmed first), audited via the console', async () => {
  const { game } = await createGame(app, 'Console Servers')
  const page = `/console/games/${game.id}`
  const viewer = await consoleAs(app, 'viewer')
  const shown = await viewer.get(page)
  expect(textOf(shown.html)).toContain("Results claims: its players' claims only")
  expect(textOf(shown.html)).toContain('No game server')
  expect(shown.html).not.toContain(`action="${page}/servers"`)
  const keys = serverKeys()
  expect((await viewer.post(`${page}/servers`, { name: 'eu-1', publicKey: keys.publicKey })).status).toBe(403)
  expect((await viewer.post(`${page}/results`, { results: 'server' })).status).toBe(403)
  expect(await app.services.gameServers.list(game.id)).toEqual([])

  const admin = await consoleAs(app, 'admin')
  const set = await admin.post(`${page}/results`, { results: 'either' })
  expect(set.location).toBe(`${page}?notice=game_results_set#game-servers`)
  expect((await app.services.games.getGame(game.id)).results).toBe('either')

  const refused = await admin.post(`${page}/servers`, { name: 'bad', publicKey: 'not-a-key' })
  expect(textOf((await admin.get(refused.location!)).html)).toContain('publicKey')
  expect(await app.services.gameServers.list(game.id)).toEqual([])

  const added = await admin.post(`${page}/servers`, { name: 'eu-1', publicKey: keys.publicKey })
  expect(added.location).toBe(`${page}?notice=game_server_added#game-servers`)
  const [server] = await app.services.gameServers.list(game.id)
  expect(server).toMatchObject({ name: 'eu-1', publicKey: keys.publicKey, status: 'active' })
  const listed = textOf((await viewer.get(page)).html)
  expect(listed).toContain(`eu-1 ${server!.id} active ${keys.publicKey}`)

  const next = serverKeys().publicKey
  const rotated = await admin.post(`${page}/servers/${server!.id}/rotate`, { publicKey: next })
  expect(rotated.location).toBe(`${page}?notice=game_server_rotated#game-servers`)
  expect((await app.services.gameServers.list(game.id))[0]!.publicKey).toBe(next)

  // Disabling asks first; the question changes nothing.
  const confirm = await admin.get(`${page}/servers/${server!.id}/disable`)
  expect(confirm.status).toBe(200)
  expect(textOf(confirm.html)).toContain('Disable the game server eu-1?')
  expect((await app.services.gameServers.list(game.id))[0]!.status).toBe('active')
  expect((await admin.get(`${page}/servers/gsv_00000000000000000000000000000000/disable`)).status).toBe(404)
  const disabled = await admin.post(`${page}/servers/${server!.id}/disable`, {})
  expect(disabled.location).toBe(`${page}?notice=game_server_disabled#game-servers`)
  expect((await app.services.gameServers.list(game.id))[0]!.status).toBe('disabled')
  expect(textOf((await admin.get(page)).html)).toContain(`eu-1 ${server!.id} disabled`)

  expect(await audited(server!.id)).toEqual([
    ['game_server.create', 'console'],
    ['game_server.rotate', 'console'],
    ['game_server.disable', 'console'],
  ])
  expect(await audited(game.id)).toContainEqual(['game.update', 'console'])
})
