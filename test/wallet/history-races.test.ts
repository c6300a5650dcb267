// A player's history read while movements commit on two instances of one
// database (two SQLite connections to one file, or two PostgreSQL pools): a
// reader following the cursor as they land sees every movement exactly once,
// in the order they committed, with the running balance after each. (On
// PostgreSQL posting ids are drawn before commit; on one account they still
// commit in id order, since every movement updates the account's row.)
import { describe, expect, test } from 'bun:test'
import { formatAmount, parseAmount } from '../../src/shared/money'
import type { TransactionsPage } from '../../packages/sdk/src/types'
import { postJson, req, type TestApp } from '../helpers/app'
import { admin, players, twoInstances, type Player } from '../helpers/arena'

const { one, two } = await twoInstances()

async function page(app: TestApp, p: Player, after: string | undefined, limit: number): Promise<TransactionsPage> {
  const q = new URLSearchParams({ limit: String(limit), ...(after ? { after } : {}) })
  const res = await app.handle(req(`/api/v1/wallet/transactions?${q}`, { headers: { authorization: `Bearer ${p.tokens.accessToken}` } }))
  expect(res.status).toBe(200)
  return (await res.json()) as TransactionsPage
}

const CREDITS = 40

describe('history under concurrent movements', () => {
  test('a reader following the cursor on one instance while both instances credit sees each movement once, in order', async () => {
    const [p] = await players(one, 1)
    let writing = true
    const writer = (app: TestApp, tag: string) =>
      (async () => {
        for (let i = 0; i < CREDITS; i++) {
          const res = await app.handle(postJson(`/api/v1/admin/wallets/${p!.userId}/credit`, { amount: `${i + 1}`, reference: `${tag}-${i}` }, admin))
          expect(res.status).toBe(200)
        }
      })()
    const seen: TransactionsPage['transactions'] = []
    let cursor: string | undefined
    const reader = (async () => {
      while (writing) {
        const next = await page(two, p!, cursor, 3)
        seen.push(...next.transactions)
        cursor = next.cursor
        await Bun.sleep(1)
      }
    })()
    await Promise.all([writer(one, 'one'), writer(two, 'two')])
    writing = false
    await reader
    for (;;) {
      const next = await page(one, p!, cursor, 100)
      seen.push(...next.transactions)
      cursor = next.cursor
      if (next.transactions.length < 100) break
    }
    const whole = await page(one, p!, undefined, 100)
    expect(whole.transactions).toHaveLength(2 * CREDITS)
    expect(seen).toEqual(whole.transactions)
    let running = 0n
    for (const t of seen) {
      running += parseAmount(t.amount)
      expect(t.balanceAfter).toBe(formatAmount(running))
    }
    // Each writer's credits in its own order, both complete.
    for (const tag of ['one', 'two']) expect(seen.filter((t) => t.reference!.startsWith(`${tag}-`)).map((t) => t.reference)).toEqual(Array.from({ length: CREDITS }, (_, i) => `${tag}-${i}`))
  }, 60_000)
})
