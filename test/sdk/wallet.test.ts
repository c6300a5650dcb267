// The SDK's wallet client against an in-process app: the balance, the history
// page by page and from a kept cursor, the withdrawals, and a bad cursor as
// the server's ApiError.
import { afterAll, expect, test } from 'bun:test'
import { ApiError, type WalletTransaction } from '@arena/sdk'
import { postJson } from '../helpers/app'
import { admin, createArenaApp } from '../helpers/arena'
import { PASSWORD } from '../helpers/auth'
import { funded, PIN, someAddress } from '../helpers/purchases'
import { sdkClient } from '../helpers/sdk'

const ctx = await createArenaApp()
afterAll(() => ctx.close())

test('wallet(), wallet.transactions(), wallet.allTransactions() and wallet.withdrawals()', async () => {
  const p = await funded(ctx, '10')
  const { client: arena, sent } = sdkClient(ctx)
  await arena.auth.login(p.username, PASSWORD)
  for (let i = 1; i <= 4; i++) expect((await ctx.handle(postJson(`/api/v1/admin/wallets/${p.userId}/credit`, { amount: `0.${i}`, reference: `sdk-${i}` }, admin))).status).toBe(200)
  const result = await arena.purchases.authorize({ pin: PIN, amount: '2', destinationAddress: someAddress() })
  expect(result.valid).toBe(true)
  const withdrawalId = result.valid ? result.withdrawal!.id : ''

  expect(await arena.wallet()).toMatchObject({ asset: 'USDC', balance: '9' })

  const first = await arena.wallet.transactions({ limit: 2 })
  expect(sent.at(-1)!.path).toBe('/api/v1/wallet/transactions?limit=2')
  expect(first.transactions.map((t) => t.reference)).toEqual([`fund-${p.userId}`, 'sdk-1'])
  const rest = await arena.wallet.transactions({ after: first.cursor })
  const expected: [WalletTransaction['kind'], string, string, string | null][] = [
    ['credit', '10', '10', `fund-${p.userId}`],
    ['credit', '0.1', '10.1', 'sdk-1'],
    ['credit', '0.2', '10.3', 'sdk-2'],
    ['credit', '0.3', '10.6', 'sdk-3'],
    ['credit', '0.4', '11', 'sdk-4'],
    ['withdrawal', '-2', '9', withdrawalId],
  ]
  expect([...first.transactions, ...rest.transactions].map((t) => [t.kind, t.amount, t.balanceAfter, t.reference])).toEqual(expected)

  const all = await arena.wallet.allTransactions()
  expect(all.transactions.map((t) => [t.kind, t.amount, t.balanceAfter, t.reference])).toEqual(expected)
  // A kept cursor reads only what moved since.
  expect((await arena.wallet.allTransactions(all.cursor)).transactions).toEqual([])
  await ctx.handle(postJson(`/api/v1/admin/wallets/${p.userId}/credit`, { amount: '1', reference: 'sdk-later' }, admin))
  const since = await arena.wallet.allTransactions(all.cursor)
  expect(since.transactions.map((t) => [t.kind, t.amount, t.balanceAfter, t.reference])).toEqual([['credit', '1', '10', 'sdk-later']])

  const withdrawals = await arena.wallet.withdrawals()
  expect(withdrawals.cursor).toBeNull()
  expect(withdrawals.withdrawals.map((w) => [w.id, w.status, w.amount])).toEqual([[withdrawalId, 'signed', '2']])
  expect((await arena.wallet.withdrawals({ limit: 1 })).withdrawals).toHaveLength(1)

  const refused = await arena.wallet.transactions({ after: 'not-a-cursor' }).catch((e: unknown) => e)
  expect(refused).toBeInstanceOf(ApiError)
  expect((refused as ApiError).status).toBe(422)
  expect((refused as ApiError).code).toBe('validation_failed')
})
