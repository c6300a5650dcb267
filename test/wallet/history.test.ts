// Invariant: a player's history (GET /wallet/transactions) is every movement
// of their own wallet exactly once, in commit order, each with the balance it
// left, which is the running sum of the movements up to it; paging by the
// server's cursor never skips or repeats one, and GET /wallet/withdrawals is
// their withdrawals, oldest first, with what became of each.
import { afterAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { eq, inArray } from 'drizzle-orm'
import { CustodyRefusedError, LocalFrostCustody, type CustodyClient } from '../../src/modules/wallet/custody'
import { encodeHistoryCursor } from '../../src/modules/wallet/history'
import { checkLedger, userAccountId } from '../../src/modules/wallet/ledger'
import { formatAmount, maxAmount, parseAmount } from '../../src/shared/money'
import type { TransactionsPage, WithdrawalsPage } from '../../packages/sdk/src/types'
import { postJson, req, tempDir } from '../helpers/app'
import { admin, createArenaApp, players, type Player } from '../helpers/arena'
import { balance, funded, mint, PIN, someAddress, verify } from '../helpers/purchases'

/** Local custody that refuses to sign while `refusing`: a withdrawal then fails and is reversed. */
class RefusingCustody implements CustodyClient {
  refusing = false
  private readonly real = new LocalFrostCustody(join(tempDir('arena-custody-'), 'custody'))
  createWallet() {
    return this.real.createWallet()
  }
  signWithdrawal(keyRef: string, message: Uint8Array) {
    return this.refusing ? Promise.reject(new CustodyRefusedError('provider refused: destination blocked')) : this.real.signWithdrawal(keyRef, message)
  }
  health() {
    return Promise.resolve({ ok: true })
  }
}

const custody = new RefusingCustody()
const ctx = await createArenaApp({}, { custody })
afterAll(() => ctx.close())
const { ledgerPostings } = ctx.peek.tables

const bearer = (p: Player) => ({ authorization: `Bearer ${p.tokens.accessToken}` })
const query = (q: Record<string, string | number | undefined>) => {
  const params = new URLSearchParams()
  for (const [k, v] of Object.entries(q)) if (v !== undefined) params.set(k, String(v))
  const s = params.toString()
  return s === '' ? '' : `?${s}`
}
const transactionsRaw = (p: Player | null, q: Record<string, string | number | undefined> = {}) =>
  ctx.handle(req(`/api/v1/wallet/transactions${query(q)}`, p ? { headers: bearer(p) } : {}))
const withdrawalsRaw = (p: Player | null, q: Record<string, string | number | undefined> = {}) =>
  ctx.handle(req(`/api/v1/wallet/withdrawals${query(q)}`, p ? { headers: bearer(p) } : {}))

async function transactions(p: Player, q: Record<string, string | number | undefined> = {}): Promise<TransactionsPage> {
  const res = await transactionsRaw(p, q)
  expect(res.status).toBe(200)
  return (await res.json()) as TransactionsPage
}

/** Every page from `after` with `limit`, the pages' sizes, and the last cursor. */
async function readAll(p: Player, limit: number, after?: string) {
  const all: TransactionsPage['transactions'] = []
  const sizes: number[] = []
  let cursor = after
  for (;;) {
    const page = await transactions(p, { limit, after: cursor })
    all.push(...page.transactions)
    sizes.push(page.transactions.length)
    cursor = page.cursor
    if (page.transactions.length < limit) return { all, sizes, cursor }
  }
}

async function credit(p: Player, amount: string, reference: string) {
  const res = await ctx.handle(postJson(`/api/v1/admin/wallets/${p.userId}/credit`, { amount, reference }, admin))
  expect(res.status).toBe(200)
}

async function withdraw(p: Player, amount: string, key: string): Promise<{ id: string; status: string }> {
  const res = await verify(ctx, p, await mint(ctx, p), { pin: PIN, amount, destinationAddress: someAddress(), idempotencyKey: key })
  expect(res.status).toBe(200)
  const body = (await res.json()) as { valid: boolean; withdrawal: { id: string; status: string } }
  expect(body.valid).toBe(true)
  return body.withdrawal
}

const minor = (amount: string) => (amount.startsWith('-') ? -parseAmount(amount.slice(1)) : parseAmount(amount))

/** Each movement's balanceAfter is the running sum of the amounts up to it. */
function expectRunningBalances(list: TransactionsPage['transactions'], start = 0n) {
  let running = start
  for (const t of list) {
    running += minor(t.amount)
    expect(t.balanceAfter).toBe(formatAmount(running))
  }
  return running
}

async function errorOf(res: Response) {
  return { status: res.status, body: (await res.json()) as { error: { code: string; details?: { path: string }[] } } }
}

describe('GET /api/v1/wallet/transactions', () => {
  test('credits, withdrawals and a refused withdrawal with its reversal: each once, in order, with the running balance', async () => {
    const p = await funded(ctx, '100')
    await credit(p, '0.000001', 'tiny')
    const signed = await withdraw(p, '30.5', 'w-1')
    expect(signed.status).toBe('signed')
    custody.refusing = true
    const refused = await withdraw(p, '20', 'w-2')
    custody.refusing = false
    expect(refused.status).toBe('failed')
    await credit(p, '7.25', 'bonus')
    const last = await withdraw(p, '0.25', 'w-3')

    const { all } = await readAll(p, 100)
    expect(all.map((t) => [t.kind, t.amount, t.reference])).toEqual([
      ['credit', '100', `fund-${p.userId}`],
      ['credit', '0.000001', 'tiny'],
      ['withdrawal', '-30.5', signed.id],
      ['withdrawal', '-20', refused.id],
      ['withdrawal_reversal', '20', refused.id],
      ['credit', '7.25', 'bonus'],
      ['withdrawal', '-0.25', last.id],
    ])
    expect(all.map((t) => t.balanceAfter)).toEqual(['100', '100.000001', '69.500001', '49.500001', '69.500001', '76.750001', '76.500001'])
    expect(expectRunningBalances(all)).toBe(minor(await balance(ctx, p)))
    for (const t of all) {
      expect(t.id).toMatch(/^ltx_[0-9a-f]{32}$/)
      expect(t.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
    }
    expect(new Set(all.map((t) => t.id)).size).toBe(all.length)
    expect((await checkLedger(ctx.services.storage.read.wallet)).problems).toEqual([])
  })

  test('pages of every size return every movement exactly once, in order, and the last cursor reads on later', async () => {
    const p = await funded(ctx, '1')
    for (let i = 1; i <= 11; i++) await credit(p, `${i}.0${i % 10}`, `page-${i}`)
    const whole = (await readAll(p, 100)).all
    expect(whole).toHaveLength(12)
    for (const limit of [1, 2, 3, 5, 12, 13]) {
      const { all, sizes } = await readAll(p, limit)
      expect(all).toEqual(whole)
      // Full pages, then the short one that says "nothing more yet".
      expect(sizes.slice(0, -1).every((n) => n === limit)).toBe(true)
      expect(sizes.at(-1)!).toBeLessThan(limit)
    }
    const { cursor } = await readAll(p, 5)
    // At the end: an empty page keeps the cursor where it was.
    const empty = await transactions(p, { after: cursor })
    expect(empty).toEqual({ transactions: [], cursor, held: [] })
    // New movements after it are exactly what the kept cursor reads next.
    await credit(p, '2', 'later-1')
    await withdraw(p, '3', 'later-w')
    const later = await readAll(p, 50, cursor)
    expect(later.all.map((t) => [t.kind, t.amount])).toEqual([
      ['credit', '2'],
      ['withdrawal', '-3'],
    ])
    expectRunningBalances(later.all, minor(whole.at(-1)!.balanceAfter))
    // Without a limit, 50 at most.
    for (let i = 0; i < 40; i++) await credit(p, '1', `many-${i}`)
    expect((await transactions(p)).transactions).toHaveLength(50)
  })

  test("an operator's adjustments appear as kind adjustment, signed, with the operator's reference and the balance they left", async () => {
    const p = await funded(ctx, '20')
    const adjust = (amount: string, reference: string) => ctx.handle(postJson(`/api/v1/admin/wallets/${p.userId}/adjust`, { amount, reason: 'support ticket', reference }, admin))
    expect((await adjust('-7.5', `down-${p.userId}`)).status).toBe(200)
    expect((await adjust('2.25', `up-${p.userId}`)).status).toBe(200)
    const page = await transactions(p)
    expect(page.transactions.map((t) => [t.kind, t.amount, t.balanceAfter, t.reference])).toEqual([
      ['credit', '20', '20', `fund-${p.userId}`],
      ['adjustment', '-7.5', '12.5', `down-${p.userId}`],
      ['adjustment', '2.25', '14.75', `up-${p.userId}`],
    ])
  })

  test('a player with no movement has an empty history and a cursor that starts it', async () => {
    const [p] = await players(ctx, 1)
    const first = await transactions(p!)
    expect(first.transactions).toEqual([])
    await credit(p!, '5', 'first-ever')
    const next = await transactions(p!, { after: first.cursor })
    expect(next.transactions.map((t) => [t.kind, t.amount, t.balanceAfter])).toEqual([['credit', '5', '5']])
  })

  test("another user's movements never appear, and their cursor is not this player's", async () => {
    const [a, b] = await players(ctx, 2)
    for (let i = 0; i < 4; i++) {
      await credit(a!, `${i + 1}`, `a-${i}`)
      await credit(b!, `${(i + 1) * 10}`, `b-${i}`)
    }
    const ofA = await readAll(a!, 3)
    const ofB = await readAll(b!, 3)
    expect(ofA.all.map((t) => t.reference)).toEqual(['a-0', 'a-1', 'a-2', 'a-3'])
    expect(ofB.all.map((t) => t.reference)).toEqual(['b-0', 'b-1', 'b-2', 'b-3'])
    expect(ofA.all.at(-1)!.balanceAfter).toBe('10')
    expect(ofB.all.at(-1)!.balanceAfter).toBe('100')
    const firstOfB = await transactions(b!, { limit: 1 })
    const crossed = await errorOf(await transactionsRaw(a!, { after: firstOfB.cursor }))
    expect(crossed.status).toBe(422)
    expect(crossed.body.error.code).toBe('validation_failed')
    expect(crossed.body.error.details?.[0]?.path).toBe('query/after')
  })

  test('a cursor the server did not issue, and a limit out of 1..100, are 422', async () => {
    const p = await funded(ctx, '3')
    const posting = (await ctx.peek.db.select().from(ledgerPostings).where(eq(ledgerPostings.accountId, userAccountId(p.userId, 'USDC'))))[0]!
    // The player's own posting id, written as the server writes cursors, is accepted.
    expect((await transactionsRaw(p, { after: encodeHistoryCursor(posting.id) })).status).toBe(200)
    const b64 = (s: string) => `h1.${Buffer.from(s).toString('base64url')}`
    for (const after of ['garbage', String(posting.id), 'h1.', b64('-1'), b64('01'), b64('1.5'), b64('99999999999999'), b64('9'.repeat(20)), `c1.${Buffer.from(String(posting.id)).toString('base64url')}`, 'x'.repeat(65)]) {
      const { status, body } = await errorOf(await transactionsRaw(p, { after }))
      expect([after, status, body.error.code]).toEqual([after, 422, 'validation_failed'])
    }
    for (const limit of ['0', '101', '-1', '1.5', 'ten', '']) {
      const { status, body } = await errorOf(await transactionsRaw(p, { limit }))
      expect([limit, status, body.error.code]).toEqual([limit, 422, 'validation_failed'])
    }
    expect((await transactionsRaw(p, { limit: 100 })).status).toBe(200)
    expect((await transactionsRaw(p, { limit: 1 })).status).toBe(200)
  })

  test('without a bearer it is 401', async () => {
    const res = await errorOf(await transactionsRaw(null))
    expect(res.status).toBe(401)
    expect(res.body.error.code).toBe('unauthorized')
    expect((await ctx.handle(req('/api/v1/wallet/transactions', { headers: { authorization: 'Bearer nope' } }))).status).toBe(401)
  })

  test('balances at the top of the range are exact (no float anywhere)', async () => {
    const [p] = await players(ctx, 1)
    const top = formatAmount(maxAmount())
    await credit(p!, formatAmount(maxAmount() - 3n), 'near-top')
    await credit(p!, '0.000003', 'to-the-top')
    const { all } = await readAll(p!, 10)
    expect(all.map((t) => t.balanceAfter)).toEqual(['999999999999999999.999996', top])
  })

  test('movements written before balances were stored get theirs from the sum of the ones before, exactly', async () => {
    const p = await funded(ctx, '999999999999999990')
    await credit(p, '0.000007', 'old-1')
    await withdraw(p, '0.000002', 'old-w')
    await credit(p, '1.5', 'old-2')
    await credit(p, '2', 'new-1')
    await credit(p, '3', 'new-2')
    const stored = (await readAll(p, 100)).all
    expect(stored.map((t) => t.balanceAfter)).toEqual([
      '999999999999999990',
      '999999999999999990.000007',
      '999999999999999990.000005',
      '999999999999999991.500005',
      '999999999999999993.500005',
      '999999999999999996.500005',
    ])
    const account = userAccountId(p.userId, 'USDC')
    const ids = (await ctx.peek.db.select().from(ledgerPostings).where(eq(ledgerPostings.accountId, account))).map((r) => r.id).sort((x, y) => x - y)
    // As a database migrated from before the column holds them: the first four have none.
    await ctx.peek.db.update(ledgerPostings).set({ balanceAfter: null }).where(inArray(ledgerPostings.id, ids.slice(0, 4)))
    for (const limit of [1, 2, 3, 4, 100]) expect((await readAll(p, limit)).all).toEqual(stored)
    // And any mix (an older instance still writing during a rolling upgrade).
    await ctx.peek.db.update(ledgerPostings).set({ balanceAfter: null }).where(inArray(ledgerPostings.id, [ids[5]!]))
    for (const limit of [1, 2, 5, 100]) expect((await readAll(p, limit)).all).toEqual(stored)
    expect((await checkLedger(ctx.services.storage.read.wallet)).problems).toEqual([])
  })

  test('the ledger check finds a stored balance that is not the running sum', async () => {
    const p = await funded(ctx, '10')
    await credit(p, '1', 'check-1')
    const [, second] = await ctx.peek.db.select().from(ledgerPostings).where(eq(ledgerPostings.accountId, userAccountId(p.userId, 'USDC'))).orderBy(ledgerPostings.id)
    await ctx.peek.db.update(ledgerPostings).set({ balanceAfter: '12000000' }).where(eq(ledgerPostings.id, second!.id))
    const report = await checkLedger(ctx.services.storage.read.wallet)
    expect(report.problems).toEqual([`posting ${second!.id} records balance 12000000 after it but its account's postings sum to 11000000`])
    await ctx.peek.db.update(ledgerPostings).set({ balanceAfter: '11000000' }).where(eq(ledgerPostings.id, second!.id))
    expect((await checkLedger(ctx.services.storage.read.wallet)).ok).toBe(true)
  })
})

describe('GET /api/v1/wallet/withdrawals', () => {
  test("the caller's withdrawals, oldest first, page by page, each once, with a signature or why it failed", async () => {
    const p = await funded(ctx, '50')
    const [other] = await players(ctx, 1)
    await credit(other!, '5', 'other-fund')
    const made: { id: string; status: string }[] = []
    made.push(await withdraw(p, '1', 'list-1'))
    custody.refusing = true
    made.push(await withdraw(p, '2', 'list-2'))
    custody.refusing = false
    made.push(await withdraw(p, '3', 'list-3'))
    made.push(await withdraw(p, '4', 'list-4'))
    made.push(await withdraw(p, '5', 'list-5'))

    const all = ((await (await withdrawalsRaw(p)).json()) as WithdrawalsPage)
    expect(all.cursor).toBeNull()
    expect(all.withdrawals.map((w) => [w.id, w.status, w.amount, w.idempotencyKey])).toEqual(made.map((m, i) => [m.id, i === 1 ? 'failed' : 'signed', `${i + 1}`, `list-${i + 1}`]))
    const failed = all.withdrawals[1]!
    expect(failed.failureReason).toBe('provider refused: destination blocked')
    expect(failed.signature).toBeUndefined()
    for (const w of all.withdrawals.filter((w) => w.status === 'signed')) {
      expect(w.signature).toMatch(/^[1-9A-HJ-NP-Za-km-z]+$/)
      expect(w.failureReason).toBeUndefined()
      expect(w.asset).toBe('USDC')
    }

    for (const limit of [1, 2, 3, 5]) {
      const seen: WithdrawalsPage['withdrawals'] = []
      let after: string | undefined
      for (;;) {
        const res = await withdrawalsRaw(p, { limit, after })
        expect(res.status).toBe(200)
        const page = (await res.json()) as WithdrawalsPage
        expect(page.withdrawals.length).toBeLessThanOrEqual(limit)
        seen.push(...page.withdrawals)
        if (page.cursor === null) break
        expect(page.withdrawals).toHaveLength(limit)
        after = page.cursor
      }
      expect(seen).toEqual(all.withdrawals)
    }
    // The other user has none of them.
    expect(((await (await withdrawalsRaw(other!)).json()) as WithdrawalsPage)).toEqual({ withdrawals: [], cursor: null })
    // Their ids are not the other user's cursors.
    const crossed = await errorOf(await withdrawalsRaw(other!, { after: made[0]!.id }))
    expect([crossed.status, crossed.body.error.code, crossed.body.error.details?.[0]?.path]).toEqual([422, 'validation_failed', 'query/after'])
  })

  test('a bad cursor or limit is 422, no bearer 401', async () => {
    const p = await funded(ctx, '5')
    for (const after of ['garbage', 'wdr_00000000000000000000000000000000', 'usr_0123456789abcdef0123456789abcdef', p.userId]) {
      const { status, body } = await errorOf(await withdrawalsRaw(p, { after }))
      expect([after, status, body.error.code]).toEqual([after, 422, 'validation_failed'])
    }
    for (const limit of ['0', '101', '2.5', 'x']) {
      const { status, body } = await errorOf(await withdrawalsRaw(p, { limit }))
      expect([limit, status, body.error.code]).toEqual([limit, 422, 'validation_failed'])
    }
    const none = await errorOf(await withdrawalsRaw(null))
    expect([none.status, none.body.error.code]).toEqual([401, 'unauthorized'])
  })
})
