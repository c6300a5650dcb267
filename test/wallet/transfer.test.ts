// Invariant: money moves by name. `ledger(tx.wallet, now).transfer(...)` is
// one movement whose two postings balance (from debited, to credited);
// `.reverse(id)` writes that movement's exact opposite, once, under
// `reversal:<id>`, and restores every balance it moved; every refusal leaves
// nothing behind; `arena ledger check` proves each reversal against what it
// reverses; and nothing in src but the ledger builds postings.
// On a real database (SQLite, or PostgreSQL under ARENA_TEST_ENGINE=postgres).
import { afterAll, describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { accounts, checkLedger, ledger, postMovement, reversalReference, type Transfer } from '../../src/modules/wallet/ledger'
import { newId } from '../../src/shared/ids'
import { deleteUser } from '../helpers/accounts'
import { postJson, req } from '../helpers/app'
import { admin, createArenaApp, players, type Player } from '../helpers/arena'

const ctx = await createArenaApp()
afterAll(() => ctx.close())
const wallet = ctx.services.storage.read.wallet
const U = 1_000_000n
const ASSET = 'USDC'

const transfer = (t: Transfer, app = ctx) => app.services.storage.write((tx) => ledger(tx.wallet, app.clock.now()).transfer(t))
const reverse = (id: string, memo?: Record<string, unknown>, app = ctx) => app.services.storage.write((tx) => ledger(tx.wallet, app.clock.now()).reverse(id, memo ? { memo } : undefined))
const userBalance = (p: Player) => wallet.balance(accounts.user(p.userId, ASSET).id)
const systemTotal = (name: 'funding' | 'adjustments' | 'withdrawals' | 'house') => wallet.postingsTotal(accounts.system(name, ASSET).id)

/** The movement's postings as `account amount` lines, in the order they were written. */
async function postingsOf(id: string): Promise<string[]> {
  const recorded = await wallet.movement(id)
  return recorded!.postings.map(({ posting }) => `${posting.accountId} ${posting.amount}`)
}

/** GET /wallet's balance, through the player's own route. */
async function walletBalance(p: Player): Promise<string> {
  const res = await ctx.handle(req('/api/v1/wallet', { headers: { authorization: `Bearer ${p.tokens.accessToken}` } }))
  expect(res.status).toBe(200)
  return ((await res.json()) as { balance: string }).balance
}

async function fund(p: Player, amount: bigint): Promise<string> {
  return transfer({ kind: 'credit', from: accounts.system('funding', ASSET), to: accounts.user(p.userId, ASSET), amount, reference: `credit:${newId('participant')}` })
}

describe('transfer', () => {
  test('one movement whose two postings balance: from debited, then to credited, with its kind, reference and memo', async () => {
    const [p] = await players(ctx, 1)
    const funding = await systemTotal('funding')
    const reference = `credit:${newId('participant')}`
    const id = await transfer({ kind: 'credit', from: accounts.system('funding', ASSET), to: accounts.user(p!.userId, ASSET), amount: 5n * U, reference, memo: { note: 'by name' } })
    const recorded = await wallet.movement(id)
    expect(recorded!.transaction).toMatchObject({ id, kind: 'credit', reference, memo: { note: 'by name' } })
    expect(await postingsOf(id)).toEqual([`system:funding:${ASSET} -5000000`, `user:${p!.userId}:${ASSET} 5000000`])
    expect(recorded!.postings.reduce((sum, { posting }) => sum + posting.amount, 0n)).toBe(0n)
    expect(recorded!.postings.map(({ posting, userId }) => [userId, posting.balanceAfter])).toEqual([
      [null, null],
      [p!.userId, 5n * U],
    ])
    expect(await walletBalance(p!)).toBe('5')
    expect(await systemTotal('funding')).toBe(funding - 5n * U)
    expect(await wallet.transactionByReference(reference)).toMatchObject({ id })
    expect((await checkLedger(wallet)).ok).toBe(true)
  })

  test('the routes write the movements they wrote by hand: a credit, a signed adjustment both ways', async () => {
    const [p] = await players(ctx, 1)
    expect((await ctx.handle(postJson(`/api/v1/admin/wallets/${p!.userId}/credit`, { amount: '3', reference: 'named-credit' }, admin))).status).toBe(200)
    const credit = (await wallet.transactionByReference('credit:named-credit'))!
    expect(credit).toMatchObject({ kind: 'credit', memo: { userId: p!.userId, amount: '3000000', reference: 'named-credit' } })
    expect(await postingsOf(credit.id)).toEqual([`system:funding:${ASSET} -3000000`, `user:${p!.userId}:${ASSET} 3000000`])
    for (const [reference, amount, lines] of [
      ['named-up', '2', [`system:adjustments:${ASSET} -2000000`, `user:${p!.userId}:${ASSET} 2000000`]],
      ['named-down', '-4', [`user:${p!.userId}:${ASSET} -4000000`, `system:adjustments:${ASSET} 4000000`]],
    ] as const) {
      const res = await ctx.handle(postJson(`/api/v1/admin/wallets/${p!.userId}/adjust`, { amount, reason: 'by name', reference }, admin))
      expect(res.status).toBe(200)
      const adjustment = (await wallet.transactionByReference(`adjustment:${reference}`))!
      expect(adjustment).toMatchObject({ kind: 'adjustment', memo: { userId: p!.userId, amount: String(BigInt(Number(amount)) * U), reference, reason: 'by name' } })
      expect(await postingsOf(adjustment.id)).toEqual([...lines])
    }
    expect(await walletBalance(p!)).toBe('1')
  })

  test('refusals write nothing: a balance too low 422, a deleted account credited 404, a used reference, a bad shape', async () => {
    const [p, gone] = await players(ctx, 2)
    await fund(p!, 1n * U)
    expect((await deleteUser(ctx, gone!.userId)).status).toBe(200)
    const before = await checkLedger(wallet)
    const user = accounts.user(p!.userId, ASSET)
    await expect(transfer({ kind: 'adjustment', from: user, to: accounts.system('adjustments', ASSET), amount: 2n * U })).rejects.toMatchObject({ code: 'insufficient_funds', status: 422 })
    await expect(transfer({ kind: 'credit', from: accounts.system('funding', ASSET), to: accounts.user(gone!.userId, ASSET), amount: 1n })).rejects.toMatchObject({ code: 'not_found', status: 404 })
    const reference = `credit:${newId('participant')}`
    await transfer({ kind: 'credit', from: accounts.system('funding', ASSET), to: user, amount: 1n, reference })
    const once = await checkLedger(wallet)
    await expect(transfer({ kind: 'credit', from: accounts.system('funding', ASSET), to: user, amount: 1n, reference })).rejects.toThrow()
    expect(await checkLedger(wallet)).toEqual(once)
    for (const bad of [
      { amount: 0n, to: accounts.system('house', ASSET) },
      { amount: -1n, to: accounts.system('house', ASSET) },
      { amount: 1n, to: user },
      { amount: 1n, to: accounts.system('house', 'EURC') },
    ]) {
      await expect(transfer({ kind: 'adjustment', from: user, ...bad })).rejects.toThrow(/positive|itself|one asset/)
    }
    expect(await checkLedger(wallet)).toEqual(once)
    expect(once.transactions).toBe(before.transactions + 1)
    expect(await userBalance(p!)).toBe(1n * U + 1n)
  })
})

describe('reverse', () => {
  test('writes the exact opposite postings under reversal:<id> and restores every balance it moved', async () => {
    const [p] = await players(ctx, 1)
    await fund(p!, 10n * U)
    const funding = await systemTotal('funding')
    const escrow = accounts.escrow(newId('tournament'), ASSET)
    const fee = await transfer({ kind: 'entry_fee', from: accounts.user(p!.userId, ASSET), to: escrow, amount: 4n * U, memo: { why: 'a stake' } })
    expect(await walletBalance(p!)).toBe('6')
    const id = await reverse(fee, { why: 'the match was void' })
    const reversal = (await wallet.movement(id))!
    expect(reversal.transaction).toMatchObject({ kind: 'reversal', reference: reversalReference(fee), memo: { why: 'the match was void', reverses: fee } })
    expect(await postingsOf(id)).toEqual([`user:${p!.userId}:${ASSET} 4000000`, `${escrow.id} -4000000`])
    expect(reversal.postings[0]!.posting.balanceAfter).toBe(10n * U)
    expect(await walletBalance(p!)).toBe('10')
    expect(await wallet.postingsTotal(escrow.id)).toBe(0n)
    expect(await systemTotal('funding')).toBe(funding)
    // The history shows it like any movement, with the balance it left.
    const history = await ctx.handle(req('/api/v1/wallet/transactions', { headers: { authorization: `Bearer ${p!.tokens.accessToken}` } }))
    expect(history.status).toBe(200)
    expect(((await history.json()) as { transactions: { id: string; amount: string; balanceAfter: string }[] }).transactions.map((t) => [t.id, t.amount, t.balanceAfter])).toEqual([
      [expect.any(String), '10', '10'],
      [fee, '-4', '6'],
      [id, '4', '10'],
    ])
    expect((await checkLedger(wallet)).ok).toBe(true)
  })

  test('a movement is reversed once: again is 409 conflict, and two at once reverse it once', async () => {
    const [p] = await players(ctx, 1)
    const credit = await fund(p!, 3n * U)
    await reverse(credit)
    const once = await checkLedger(wallet)
    await expect(reverse(credit)).rejects.toMatchObject({ code: 'conflict', status: 409 })
    expect(await checkLedger(wallet)).toEqual(once)
    expect(await userBalance(p!)).toBe(0n)

    const second = await fund(p!, 2n * U)
    const both = await Promise.allSettled([reverse(second), reverse(second)])
    expect(both.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected'])
    expect((both.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason).toMatchObject({ code: 'conflict' })
    expect(await userBalance(p!)).toBe(0n)
    expect((await checkLedger(wallet)).ok).toBe(true)
  })

  test('money spent since is 422 insufficient_funds; a deleted account credited back is 404; both write nothing', async () => {
    const [p, q] = await players(ctx, 2)
    const credit = await fund(p!, 5n * U)
    await transfer({ kind: 'adjustment', from: accounts.user(p!.userId, ASSET), to: accounts.system('adjustments', ASSET), amount: 2n * U })
    const before = await checkLedger(wallet)
    await expect(reverse(credit)).rejects.toMatchObject({ code: 'insufficient_funds', status: 422 })
    expect(await checkLedger(wallet)).toEqual(before)
    expect(await userBalance(p!)).toBe(3n * U)

    await fund(q!, 1n * U)
    const out = await transfer({ kind: 'adjustment', from: accounts.user(q!.userId, ASSET), to: accounts.system('adjustments', ASSET), amount: 1n * U })
    expect((await deleteUser(ctx, q!.userId)).status).toBe(200)
    const after = await checkLedger(wallet)
    await expect(reverse(out)).rejects.toMatchObject({ code: 'not_found', status: 404 })
    expect(await checkLedger(wallet)).toEqual(after)
    expect(after.ok).toBe(true)
  })

  test('an unknown movement is 404; a withdrawal debit and a reversal are not reversed', async () => {
    await expect(reverse('ltx_nope')).rejects.toMatchObject({ code: 'not_found', status: 404 })
    // Its own database: a withdrawal debit without its withdrawal is a breach the shared one should not carry.
    const local = await createArenaApp()
    try {
      const [p] = await players(local, 1)
      const credit = await transfer({ kind: 'credit', from: accounts.system('funding', ASSET), to: accounts.user(p!.userId, ASSET), amount: 2n * U }, local)
      const debit = await transfer({ kind: 'withdrawal', from: accounts.user(p!.userId, ASSET), to: accounts.system('withdrawals', ASSET), amount: 1n * U }, local)
      const reversal = await reverse(credit, undefined, local).catch((error) => error)
      // The credit's reversal takes 2 where 1 is left: refused; the debit and a reversal are refused before any balance is read.
      expect(reversal).toMatchObject({ code: 'insufficient_funds' })
      const store = local.services.storage.read.wallet
      const before = (await store.ledgerSnapshot()).transactions.length
      await expect(reverse(debit, undefined, local)).rejects.toThrow('is a withdrawal: not reversed')
      const back = await transfer({ kind: 'adjustment', from: accounts.system('adjustments', ASSET), to: accounts.user(p!.userId, ASSET), amount: 1n * U }, local)
      const undone = await reverse(back, undefined, local)
      await expect(reverse(undone, undefined, local)).rejects.toThrow('is a reversal: not reversed')
      expect((await store.ledgerSnapshot()).transactions.length).toBe(before + 2)
    } finally {
      await local.close()
    }
  })
})

describe('arena ledger check and reversals', () => {
  test('a reversal that is not the exact opposite of what it names, or names nothing, is a breach', async () => {
    const local = await createArenaApp()
    try {
      const [p] = await players(local, 1)
      const store = local.services.storage.read.wallet
      const credit = await transfer({ kind: 'credit', from: accounts.system('funding', ASSET), to: accounts.user(p!.userId, ASSET), amount: 5n }, local)
      await reverse(credit, undefined, local)
      expect((await checkLedger(store)).ok).toBe(true)
      // Written behind reverse's back, balanced, but not the opposite: one unit where five moved; and one naming nothing.
      const other = await transfer({ kind: 'credit', from: accounts.system('funding', ASSET), to: accounts.user(p!.userId, ASSET), amount: 5n }, local)
      for (const [of, amount] of [
        [other, 1n],
        ['ltx_ghost', 1n],
      ] as const) {
        await local.services.storage.write((tx) =>
          postMovement(
            tx.wallet,
            {
              kind: 'reversal',
              asset: ASSET,
              reference: reversalReference(of),
              postings: [
                { accountId: accounts.user(p!.userId, ASSET).id, userId: p!.userId, amount: -amount },
                { accountId: accounts.system('funding', ASSET).id, userId: null, amount },
              ],
            },
            local.clock.now(),
          ),
        )
      }
      const problems = (await checkLedger(store)).problems
      expect(problems.find((line) => line.includes(`is not the exact opposite of ${other}`))).toBeDefined()
      expect(problems.find((line) => line.includes('reverses unknown transaction ltx_ghost'))).toBeDefined()
      // Reversals `reverse` writes are not withdrawal reversals: no "unknown withdrawal" for them.
      expect(problems.filter((line) => line.includes('unknown withdrawal'))).toEqual([])
      // The true reversal is none of the problems.
      expect(problems.filter((line) => line.includes(credit))).toEqual([])
    } finally {
      await local.close()
    }
  })
})

describe('one place builds postings', () => {
  test('no file in src but src/modules/wallet/ledger.ts calls postMovement or writes a posting list', () => {
    const ROOT = join(import.meta.dir, '..', '..')
    const walk = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? walk(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : []))
    const offenders = walk(join(ROOT, 'src'))
      .map((path) => ({ path: relative(ROOT, path), text: readFileSync(path, 'utf8') }))
      .filter((f) => f.path !== 'src/modules/wallet/ledger.ts' && !f.path.startsWith('src/db/'))
      .filter((f) => /postMovement\(|postings:\s*\[|\.addPosting\(|\.setBalance\(/.test(f.text))
      .map((f) => f.path)
    expect(offenders).toEqual([])
  })
})
