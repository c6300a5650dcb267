// Invariant: a deleted account holds no money. A prize the finalize job pays,
// or an entry fee a cancel refunds, at the very moment its owner's account is
// deleted on another instance either lands first, and the deletion is then
// refused 409 balance_not_empty with the money in the wallet, or finds the
// account deleted and goes to the house (an `escrow_release` that says so);
// never a deletion that succeeded with money in the erased account. The ledger
// check passes after every race, and `arena ledger check` fails, naming the
// account, when a deleted account does hold money. An operator's credit racing
// a deletion is credited (and the deletion refused) or refused 404.
//
// Two instances on one database (two PostgreSQL pools; on SQLite two
// connections to one file, where the one writer orders them). Each round
// staggers the two sides by a few milliseconds drawn from the printed seed.
import { describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { checkLedger, escrowAccountId, systemAccountId, userAccountId } from '../../src/modules/wallet/ledger'
import { newId } from '../../src/shared/ids'
import { postJson, tempDir } from '../helpers/app'
import { admin, createArenaApp, createGame, playOut, players, tournament, twoInstances, type Player, type TournamentView } from '../helpers/arena'
import { deleteOwn, deleteUser, type Answer } from '../helpers/accounts'
import { PASSWORD } from '../helpers/auth'
import { run, SOURCE_COMMAND } from '../helpers/process'
import { chooseSeed, seededRandom } from '../helpers/seed'

const SEED = chooseSeed('ARENA_DELETION_RACE_SEED', 'prize-to-deleted-account')
const ROUNDS = 16

const { one, two } = await twoInstances()
const { game, gameKey } = await createGame(one, 'Deletion Race')
const wallet = one.services.storage.read.wallet
const U = 1_000_000n
const MIN = 60_000
const at = (msFromNow: number) => new Date(one.clock.now().getTime() + msFromNow).toISOString()

const balanceOf = (p: Player) => wallet.balance(userAccountId(p.userId, 'USDC'))
const house = () => wallet.postingsTotal(systemAccountId('house', 'USDC'))

async function ok(res: Promise<Response>, status = 200): Promise<Record<string, any>> {
  const answer = await res
  const body = (await answer.json()) as Record<string, any>
  expect({ status: answer.status, body }).toEqual({ status, body: expect.anything() })
  return body
}

const credit = (p: Player, amount: string) => ok(one.handle(postJson(`/api/v1/admin/wallets/${p.userId}/credit`, { amount, reference: newId('participant') }, admin)))

/** The account's deletion, by the user (round parity) or by an operator, on the second instance. */
function deletion(round: number, p: Player): Promise<Answer> {
  return round % 2 === 0 ? deleteUser(two, p.userId, 'asked by mail') : deleteOwn(two, p.tokens.accessToken, PASSWORD)
}

/** Runs both sides of a round, the one drawn to go second a few milliseconds later. */
async function race<A, B>(round: number, stream: number, a: () => Promise<A>, b: () => Promise<B>): Promise<[A, B]> {
  const random = seededRandom(SEED, stream, round)
  const delay = Math.floor(random() * 12)
  const aFirst = random() < 0.5
  const later = async <T>(go: () => Promise<T>, wait: boolean) => {
    if (wait) await Bun.sleep(delay)
    return go()
  }
  return Promise.all([later(a, !aFirst), later(b, aFirst)])
}

/** The movements of a tournament, by kind. */
async function movementsOf(tournamentId: string) {
  const { ledgerTransactions } = one.peek.tables
  const all = await one.peek.db.select().from(ledgerTransactions)
  return all.filter((m) => (m.memo as { tournamentId?: string } | null)?.tournamentId === tournamentId)
}

async function ledgerOk(): Promise<void> {
  const report = await checkLedger(wallet)
  expect(report.problems).toEqual([])
  expect(report.ok).toBe(true)
}

/**
 * What a round must end in: the deletion refused with the money in the
 * wallet, or the deletion done, the wallet empty and the money the house's
 * through a release naming the account.
 */
async function expectNoMoneyInDeletedAccount(p: Player, deleted: Answer, tournamentId: string, amount: bigint, houseBefore: bigint): Promise<'refused' | 'deleted'> {
  const released = (await movementsOf(tournamentId)).filter((m) => m.kind === 'escrow_release' && (m.memo as { forfeited?: unknown }).forfeited !== undefined)
  if (deleted.status === 409) {
    expect(deleted.body.error.code).toBe('balance_not_empty')
    expect(await balanceOf(p)).toBe(amount)
    expect(released).toEqual([])
    return 'refused'
  }
  expect(deleted.status).toBe(200)
  expect(await balanceOf(p)).toBe(0n)
  expect(await house()).toBe(houseBefore + amount)
  expect(released.length).toBe(1)
  expect(JSON.stringify(released[0]!.memo)).toContain('account_deleted')
  expect(released[0]!.memo).toEqual(expect.objectContaining({ to: 'house' }))
  return 'deleted'
}

describe('a prize paid while the winner deletes the account', () => {
  test(`the finalize job on one instance, the deletion on the other: refused 409 after the prize, or the prize to the house (${ROUNDS} rounds)`, async () => {
    const outcomes: string[] = []
    for (let round = 0; round < ROUNDS; round++) {
      const people = await players(one, 2)
      const t = (await ok(one.handle(postJson('/api/v1/admin/tournaments', { gameId: game.id, name: 'Gone Cup', format: 'single_elimination', participants: people.map((p) => p.userId), prizes: ['3'] }, admin)), 201))
        .tournament as TournamentView
      await ok(one.handle(postJson(`/api/v1/admin/tournaments/${t.id}/fund`, { amount: '3', reference: `gone-${t.id}` }, admin)))
      const started = (await ok(one.handle(postJson(`/api/v1/admin/tournaments/${t.id}/start`, {}, admin)))).tournament as TournamentView
      const final = started.matches.find((m) => m.status === 'running')!
      const winner = started.participants.find((p) => p.id === final.slot1ParticipantId)!
      const champion = people.find((p) => p.userId === winner.userId)!
      // Every other round the winner's wallet exists already, at zero; otherwise the prize opens it.
      if (round % 4 < 2) {
        await credit(champion, '1')
        await ok(one.handle(postJson(`/api/v1/admin/wallets/${champion.userId}/adjust`, { amount: '-1', reason: 'back to zero', reference: newId('participant') }, admin)))
      }
      await playOut(one, game.id, gameKey, started, people, final, winner.id)
      expect((await tournament(one, t.id)).status).toBe('finalizing')
      const houseBefore = await house()

      const [, deleted] = await race(round, 1, () => one.runJobs(), () => deletion(round, champion))

      expect((await tournament(one, t.id)).status).toBe('completed')
      expect(await wallet.postingsTotal(escrowAccountId(t.id, 'USDC'))).toBe(0n)
      outcomes.push(await expectNoMoneyInDeletedAccount(champion, deleted, t.id, 3n * U, houseBefore))
    }
    console.log(`prize races: ${outcomes.filter((o) => o === 'deleted').length} deletions first, ${outcomes.filter((o) => o === 'refused').length} prizes first`)
    await ledgerOk()
  }, 120_000)
})

describe('an entry fee refunded while the registrant deletes the account', () => {
  test(`the start job cancelling (too few players) on one instance, the deletion on the other (${ROUNDS} rounds)`, async () => {
    const outcomes: string[] = []
    for (let round = 0; round < ROUNDS; round++) {
      const [p] = await players(one, 1)
      await credit(p!, '10')
      const t = (await ok(one.handle(postJson('/api/v1/admin/tournaments', { gameId: game.id, name: 'Gone Open', format: 'single_elimination', registration: { closesAt: at(50 * MIN), maxPlayers: 4 }, startsAt: at(60 * MIN), entryFee: '10' }, admin)), 201))
        .tournament as TournamentView & { registration: { startsAt: string } }
      await ok(one.handle(postJson(`/api/v1/tournaments/${t.id}/registration`, {}, { authorization: `Bearer ${p!.tokens.accessToken}` })), 201)
      expect(await balanceOf(p!)).toBe(0n)
      one.clock.set(t.registration.startsAt)
      const houseBefore = await house()

      const [, deleted] = await race(round, 2, () => one.runJobs(), () => deletion(round, p!))

      expect((await tournament(one, t.id)).status).toBe('cancelled')
      outcomes.push(await expectNoMoneyInDeletedAccount(p!, deleted, t.id, 10n * U, houseBefore))
    }
    console.log(`start-job refund races: ${outcomes.filter((o) => o === 'deleted').length} deletions first, ${outcomes.filter((o) => o === 'refused').length} refunds first`)
    await ledgerOk()
  }, 120_000)

  test(`an operator's cancel on one instance, the deletion on the other (${ROUNDS} rounds)`, async () => {
    const outcomes: string[] = []
    for (let round = 0; round < ROUNDS; round++) {
      const people = await players(one, 2)
      for (const p of people) await credit(p, '10')
      const t = (await ok(one.handle(postJson('/api/v1/admin/tournaments', { gameId: game.id, name: 'Gone Cancelled', format: 'single_elimination', registration: { closesAt: at(50 * MIN), maxPlayers: 4 }, startsAt: at(60 * MIN), entryFee: '10' }, admin)), 201))
        .tournament as TournamentView
      for (const p of people) await ok(one.handle(postJson(`/api/v1/tournaments/${t.id}/registration`, {}, { authorization: `Bearer ${p.tokens.accessToken}` })), 201)
      const houseBefore = await house()
      const [cancelled, deleted] = await race(
        round,
        3,
        () => one.handle(postJson(`/api/v1/admin/tournaments/${t.id}/cancel`, { reason: 'rain' }, admin)),
        () => deletion(round, people[0]!),
      )
      expect(cancelled.status).toBe(200)
      outcomes.push(await expectNoMoneyInDeletedAccount(people[0]!, deleted, t.id, 10n * U, houseBefore))
      expect(await balanceOf(people[1]!)).toBe(10n * U)
    }
    console.log(`cancel refund races: ${outcomes.filter((o) => o === 'deleted').length} deletions first, ${outcomes.filter((o) => o === 'refused').length} refunds first`)
    await ledgerOk()
  }, 120_000)
})

describe('an operator credit while the account is deleted', () => {
  test(`the credit on one instance, the deletion on the other: credited and refused 409, or deleted and the credit 404 (${ROUNDS} rounds)`, async () => {
    const outcomes: string[] = []
    for (let round = 0; round < ROUNDS; round++) {
      const [p] = await players(one, 1)
      const [credited, deleted] = await race(
        round,
        4,
        () => one.handle(postJson(`/api/v1/admin/wallets/${p!.userId}/credit`, { amount: '4', reference: newId('participant') }, admin)),
        () => deletion(round, p!),
      )
      const code = ((await credited.json()) as { error?: { code: string } }).error?.code ?? null
      if (deleted.status === 200) {
        expect([credited.status, code]).toEqual([404, 'not_found'])
        expect(await balanceOf(p!)).toBe(0n)
        outcomes.push('deleted')
      } else {
        expect([credited.status, deleted.status, deleted.body.error.code]).toEqual([200, 409, 'balance_not_empty'])
        expect(await balanceOf(p!)).toBe(4n * U)
        outcomes.push('refused')
      }
    }
    console.log(`credit races: ${outcomes.filter((o) => o === 'deleted').length} deletions first, ${outcomes.filter((o) => o === 'refused').length} credits first`)
    await ledgerOk()
  }, 120_000)
})

describe('arena ledger check', () => {
  test('fails, naming the account, when a deleted account holds money', async () => {
    // An app of its own (the command runs on its data dir), so the races' ledger stays clean.
    const dataDir = tempDir('arena-deleted-money-')
    const app = await createArenaApp({}, { dataDir })
    try {
      const cli = (...args: string[]) => run([...SOURCE_COMMAND, ...args], { ARENA_DATA_DIR: dataDir, ...app.databaseEnv })
      const [p] = await players(app, 1)
      expect((await deleteUser(app, p!.userId)).status).toBe(200)
      expect(await checkLedger(app.services.storage.read.wallet)).toEqual(expect.objectContaining({ ok: true, problems: [] }))
      // No route credits a deleted account any more: the stranded prize is written straight into the tables.
      const { ledgerTransactions, ledgerPostings, ledgerAccounts } = app.peek.tables
      const id = newId('ledgerTransaction')
      const account = userAccountId(p!.userId, 'USDC')
      await app.peek.db.insert(ledgerTransactions).values({ id, kind: 'prize', reference: null, memo: { userId: p!.userId }, createdAt: app.clock.now() })
      await app.peek.db.insert(ledgerAccounts).values([
        { id: systemAccountId('house', 'USDC'), userId: null, asset: 'USDC', balance: '0', createdAt: app.clock.now() },
        { id: account, userId: p!.userId, asset: 'USDC', balance: '7000000', createdAt: app.clock.now() },
      ])
      await app.peek.db.insert(ledgerPostings).values([
        { transactionId: id, accountId: systemAccountId('house', 'USDC'), asset: 'USDC', amount: '-7000000', balanceAfter: null },
        { transactionId: id, accountId: account, asset: 'USDC', amount: '7000000', balanceAfter: '7000000' },
      ])
      const problem = `account ${account} of deleted user ${p!.userId} holds 7000000: money no one can reach`
      // Every other invariant holds: this is the only problem, and the command exits 1 on it.
      expect(await checkLedger(app.services.storage.read.wallet)).toEqual(expect.objectContaining({ ok: false, problems: [problem] }))
      const breach = await cli('ledger', 'check')
      expect(breach.code).toBe(1)
      expect(breach.stdout).toStartWith('BREACH:')
      expect(breach.stdout).toContain(problem)
    } finally {
      await app.close()
      rmSync(dataDir, { recursive: true, force: true })
    }
  }, 60_000)
})
