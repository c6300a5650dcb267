// `arena payout list|release|void`, run as a child process on the app's own
// database (either engine): the admin API's service methods, audited as
// `cli:<OS user>`, printing what the routes answer; a second decision exits
// 1 saying who decided it first, wrong words exit 2.
import { afterAll, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { tempDir } from '../helpers/app'
import { createArenaApp, players } from '../helpers/arena'
import { holdsOf, rakedGame, references, stakedWin } from '../helpers/integrity'
import { balanceOf, expectLedgerSound, fund } from '../helpers/matchmaking'
import { CLI_OPERATOR, run, SOURCE_COMMAND } from '../helpers/process'

const dataDir = tempDir('arena-payout-cli-')
const app = await createArenaApp({ ARENA_INTEGRITY_PAIR_LIMIT: '1' }, { dataDir })
afterAll(async () => {
  await app.close()
  rmSync(dataDir, { recursive: true, force: true })
})

test('list the held payouts, release one and void another (audited as cli:<OS user>); a second decision exits 1, wrong words 2', async () => {
  const { game, gameKey } = await rakedGame(app, 'Payout CLI')
  const [a, b] = await players(app, 2)
  await fund(app, [a!, b!], '10')
  await stakedWin(app, game, gameKey, a!, b!, '1')
  const released = await stakedWin(app, game, gameKey, a!, b!, '1')
  const voided = await stakedWin(app, game, gameKey, b!, a!, '1')
  const held = await holdsOf(app)
  expect(held.map((h) => h.matchId)).toEqual([released, voided])
  const env = { ARENA_DATA_DIR: dataDir, ...app.databaseEnv }
  const cli = (...args: string[]) => run([...SOURCE_COMMAND, 'payout', ...args], env)

  const listed = await cli('list', '--json')
  expect({ code: listed.code, stderr: listed.stderr }).toEqual({ code: 0, stderr: '' })
  expect(JSON.parse(listed.stdout)).toEqual({ payouts: held })
  const text = await cli('list')
  expect(text.stdout.split('\n')).toEqual([
    expect.stringMatching(new RegExp(`^\\S+ +held +stake +1\\.8 USDC +${a!.username} \\(${a!.userId}\\) +pair_limit +${held[0]!.id}$`)),
    expect.stringMatching(new RegExp(`held .*${b!.username}.* ${held[1]!.id}$`)),
    'cursor - (the last page)',
    '',
  ])

  const release = await cli('release', held[0]!.id, '--reason', 'a rematch series, fine', '--json')
  expect({ code: release.code, stderr: release.stderr }).toEqual({ code: 0, stderr: '' })
  expect(JSON.parse(release.stdout).payout).toMatchObject({ id: held[0]!.id, status: 'released', decidedBy: CLI_OPERATOR, reason: 'a rematch series, fine' })
  expect(await references(app, `stake_payout:${released}`)).toEqual([`stake_payout:${released}`])
  const voiding = await cli('void', held[1]!.id, '--reason', 'one person, two accounts')
  expect(voiding.code).toBe(0)
  expect(voiding.stdout).toContain(`voided`)
  expect(await references(app, `stake_refund:${voided}`)).toHaveLength(2)
  // a: 10 − 1 + 1.8 (paid) − 1 + 1.8 (released) − 1 + 1 (refunded) = 11.6; b: 10 − 3 + 1 = 8.
  expect([await balanceOf(app, a!), await balanceOf(app, b!)]).toEqual(['11.6', '8'])
  const records = (await app.storage.read.audit.auditAfter(0, 200)).filter((r) => r.action.startsWith('payout.'))
  expect(records.map((r) => [r.action, r.target, r.operatorName, r.via])).toEqual([
    ['payout.release', held[0]!.id, CLI_OPERATOR, 'cli'],
    ['payout.void', held[1]!.id, CLI_OPERATOR, 'cli'],
  ])

  const again = await cli('void', held[0]!.id, '--reason', 'too late')
  expect(again.code).toBe(1)
  expect(again.stderr).toContain(`This payout was released already by ${CLI_OPERATOR}`)
  for (const args of [['release', held[1]!.id], ['list', '--status', 'lost'], ['pay', held[0]!.id], ['release']]) expect((await cli(...args)).code).toBe(2)
  expect(JSON.parse((await cli('list', '--status', 'released', '--json')).stdout).payouts.map((h: { id: string }) => h.id)).toEqual([held[0]!.id])
  await expectLedgerSound(app)
})
