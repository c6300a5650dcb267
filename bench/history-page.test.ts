// One page of a 10 000-movement history (GET /api/v1/wallet/transactions),
// in-process through app.handle, with the balance after each movement stored
// on its posting (how arena writes it) and, on the same rows, with none
// stored (the way a history written before arena stored it is read: the sum
// of the account's earlier postings, then the page). docs/decisions.md, "The
// player's money history", has the figures.
//
//   npx bun test ./bench/history-page.test.ts                               (SQLite)
//   ARENA_TEST_ENGINE=postgres npx bun test ./bench/history-page.test.ts    (PostgreSQL)
//
// BENCH_MOVEMENTS (10000) and BENCH_REPEATS (200) change the sizes.
import { afterAll, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { userAccountId } from '../src/modules/wallet/ledger'
import type { TransactionsPage } from '../packages/sdk/src/types'
import { req, TEST_ENGINE } from '../test/helpers/app'
import { createArenaApp, players } from '../test/helpers/arena'
import { testActor } from '../test/helpers/actors'

const MOVEMENTS = Number(process.env.BENCH_MOVEMENTS ?? 10_000)
const REPEATS = Number(process.env.BENCH_REPEATS ?? 200)

const ctx = await createArenaApp()
afterAll(() => ctx.close())

test(`a page of a ${MOVEMENTS}-movement history on ${TEST_ENGINE}`, async () => {
  const [p, other] = await players(ctx, 2)
  const headers = { authorization: `Bearer ${p!.tokens.accessToken}` }
  // Through the service the admin route calls (the HTTP layer adds nothing to what is stored);
  // another player's movements in between, so the table is not the one account's alone.
  const by = testActor(ctx.services, 'finance')
  for (let i = 0; i < MOVEMENTS; i++) {
    await ctx.services.wallet.credit({ userId: p!.userId, amount: '1.000001', reference: `bench-${i}` }, by)
    if (i % 4 === 0) await ctx.services.wallet.credit({ userId: other!.userId, amount: '2', reference: `other-${i}` }, by)
  }
  // As autovacuum would after a load like this: the planner sees the table as it is.
  if (TEST_ENGINE === 'postgres') await ctx.postgres.sql.unsafe('ANALYZE')
  const get = async (after?: string) => {
    const res = await ctx.handle(req(`/api/v1/wallet/transactions?limit=100${after ? `&after=${encodeURIComponent(after)}` : ''}`, { headers }))
    expect(res.status).toBe(200)
    return (await res.json()) as TransactionsPage
  }
  // Cursors at the start, the middle, 100 before the end, and the end.
  const cursors: Record<string, string | undefined> = { first: undefined }
  let cursor: string | undefined
  for (let read = 0; ; read += 100) {
    const page = await get(cursor)
    if (read === Math.floor(MOVEMENTS / 200) * 100) cursors.middle = cursor
    if (read === MOVEMENTS - 100) cursors.last = cursor
    cursor = page.cursor
    if (page.transactions.length < 100) break
  }
  cursors.end = cursor
  const measure = async () => {
    const out: Record<string, string> = {}
    for (const [name, after] of Object.entries(cursors)) {
      const times: number[] = []
      for (let i = 0; i < REPEATS; i++) {
        const start = performance.now()
        await get(after)
        times.push(performance.now() - start)
      }
      times.sort((a, b) => a - b)
      out[name] = `median ${times[Math.floor(times.length / 2)]!.toFixed(2)} ms, p99 ${times[Math.floor(times.length * 0.99)]!.toFixed(2)} ms`
    }
    return out
  }
  const pages = { last: await get(cursors.last) }
  const stored = await measure()
  const { ledgerPostings } = ctx.peek.tables
  await ctx.peek.db.update(ledgerPostings).set({ balanceAfter: null }).where(eq(ledgerPostings.accountId, userAccountId(p!.userId, 'USDC')))
  // The same answer either way.
  expect(await get(cursors.last)).toEqual(pages.last)
  const computed = await measure()
  console.log(JSON.stringify({ engine: TEST_ENGINE, movements: MOVEMENTS, limit: 100, repeats: REPEATS, stored, computed }, null, 2))
}, 1_800_000)
