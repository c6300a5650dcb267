// The operator CLI for entry fees and prizes (contract §10): `arena tournament
// create --entry-fee --prizes`, `arena tournament fund`, the money in `show`,
// and `arena ledger check` failing on a finished tournament whose escrow is
// not empty. The same services as the admin routes, on the app's database.
import { afterAll, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { escrowAccountId, systemAccountId } from '../../src/modules/wallet/ledger'
import { newId } from '../../src/shared/ids'
import { tempDir } from '../helpers/app'
import { createArenaApp, createGame } from '../helpers/arena'
import { run, SOURCE_COMMAND } from '../helpers/process'

const dataDir = tempDir('arena-cli-prizes-')
const app = await createArenaApp({}, { dataDir })
afterAll(async () => {
  await app.close()
  rmSync(dataDir, { recursive: true, force: true })
})

test('create with --entry-fee and --prizes, fund, show, cancel; ledger check fails on a tampered escrow', async () => {
  const env = { ARENA_DATA_DIR: dataDir, ...app.databaseEnv }
  const cli = (...args: string[]) => run([...SOURCE_COMMAND, ...args], env)
  const ok = async (...args: string[]) => {
    const result = await cli(...args)
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' })
    return result.stdout
  }
  const { game } = await createGame(app)
  const registration = ['--closes-at', '+1d', '--max-players', '4', '--starts-at', '+2d']

  const bad = await cli('tournament', 'create', '--game', game.id, '--name', 'Bad', ...registration, '--prizes', '5,x')
  expect(bad.code).toBe(1)
  expect(bad.stderr).toContain('--prizes #2')

  const { tournament: t } = JSON.parse(await ok('tournament', 'create', '--game', game.id, '--name', 'Prize Cup', ...registration, '--entry-fee', '2.50', '--prizes', '5, 3', '--json'))
  expect([t.entryFee, t.prizes, t.options]).toEqual(['2.5', ['5', '3'], {}])

  expect(await ok('tournament', 'fund', t.id, '--amount', '6', '--reference', 'cli-pool')).toBe(`${t.id}  escrow 6  prizes 8\n`)
  // Again: funded once.
  expect(JSON.parse(await ok('tournament', 'fund', t.id, '--amount', '6', '--reference', 'cli-pool', '--json'))).toEqual({ tournamentId: t.id, escrow: '6', prizesTotal: '8' })
  expect((await cli('tournament', 'fund', t.id, '--amount', '7', '--reference', 'cli-pool')).code).toBe(1)
  expect(await ok('tournament', 'show', t.id)).toContain('money  entry fee 2.5  prizes #1 5, #2 3')

  await ok('tournament', 'cancel', t.id, '--reason', 'rain')
  expect(await ok('ledger', 'check')).toStartWith('ok:')

  // A balanced movement into the cancelled tournament's escrow: the check names it and exits 1.
  const id = newId('ledgerTransaction')
  const { ledgerTransactions, ledgerPostings } = app.peek.tables
  await app.peek.db.insert(ledgerTransactions).values({ id, kind: 'prize_funding', reference: null, memo: { tournamentId: t.id }, createdAt: app.clock.now() })
  await app.peek.db.insert(ledgerPostings).values([
    { transactionId: id, accountId: systemAccountId('funding', 'USDC'), asset: 'USDC', amount: '-1', balanceAfter: null },
    { transactionId: id, accountId: escrowAccountId(t.id, 'USDC'), asset: 'USDC', amount: '1', balanceAfter: null },
  ])
  const breach = await cli('ledger', 'check')
  expect(breach.code).toBe(1)
  expect(breach.stdout).toContain(`escrow ${escrowAccountId(t.id, 'USDC')} of finished tournament ${t.id} still holds 1`)
}, 60_000)
