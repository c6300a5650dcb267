// Invariant: an operator adjustment (contract §10) moves a signed amount
// between a wallet and the adjustments account as one balanced movement,
// never takes a balance below zero (422 insufficient_funds, nothing
// written), moves once per reference (a mismatched replay is 409
// idempotency_key_reused), tells the player (wallet.adjusted) and leaves an
// operator record (WALLET_ADJUSTED); `arena ledger check` holds throughout.
import { afterAll, describe, expect, test } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import { checkLedger, systemAccountId } from '../../src/modules/wallet/ledger'
import { createTestApp, postJson, req, tempDir, testDatabaseEnv } from '../helpers/app'
import { admin, createArenaApp, players, type Player } from '../helpers/arena'
import { run, SOURCE_COMMAND } from '../helpers/process'
import { securityEventsOf } from '../helpers/accounts'
import { balance } from '../helpers/purchases'

const ctx = await createArenaApp()
afterAll(() => ctx.close())
const { outboxEvents, ledgerTransactions, ledgerPostings, users } = ctx.peek.tables

const adjust = (userId: string, body: Record<string, unknown>, headers: Record<string, string> = admin) =>
  ctx.handle(postJson(`/api/v1/admin/wallets/${userId}/adjust`, body, headers))
const credit = (userId: string, amount: string, reference: string) => ctx.handle(postJson(`/api/v1/admin/wallets/${userId}/credit`, { amount, reference }, admin))

async function funded(amount: string): Promise<Player> {
  const [p] = await players(ctx, 1)
  if (amount !== '0') expect((await credit(p!.userId, amount, `fund-${p!.userId}`)).status).toBe(200)
  return p!
}

/** Everything an adjustment writes for this user: its movements, its events, its security records. */
async function writtenFor(p: Player) {
  const movements = (await ctx.peek.db.select().from(ledgerTransactions).where(eq(ledgerTransactions.kind, 'adjustment'))).filter(
    (t) => (t.memo as { userId?: string } | null)?.userId === p.userId,
  )
  const events = await ctx.peek.db.select().from(outboxEvents).where(and(eq(outboxEvents.userId, p.userId), eq(outboxEvents.type, 'wallet.adjusted')))
  const audit = await securityEventsOf(ctx, p.userId, 'WALLET_ADJUSTED')
  return { movements, events: events.map((e) => e.data), audit: audit.map((e) => e.details) }
}

async function ledgerOk(): Promise<void> {
  const report = await checkLedger(ctx.services.storage.read.wallet)
  expect(report.problems).toEqual([])
  expect(report.ok).toBe(true)
}

async function errorOf(res: Response): Promise<{ code: string; status: number; details?: { path: string }[] }> {
  return ((await res.json()) as { error: { code: string; status: number; details?: { path: string }[] } }).error
}

describe('operator adjustments', () => {
  test('credit, then adjust down and up: each answers the new balance, tells the player and is on record', async () => {
    const p = await funded('100')
    const down = await adjust(p.userId, { amount: '-30.25', reason: 'duplicate credit', reference: 'adj-down' })
    expect(down.status).toBe(200)
    expect(await down.json()).toEqual({ balance: '69.75' })
    const up = await adjust(p.userId, { amount: '0.25', reason: 'goodwill', reference: 'adj-up' })
    expect(up.status).toBe(200)
    expect(await up.json()).toEqual({ balance: '70' })
    expect(await balance(ctx, p)).toBe('70')

    const written = await writtenFor(p)
    expect(written.movements.map((m) => [m.reference, m.memo])).toEqual([
      ['adjustment:adj-down', { userId: p.userId, amount: '-30250000', reference: 'adj-down', reason: 'duplicate credit' }],
      ['adjustment:adj-up', { userId: p.userId, amount: '250000', reference: 'adj-up', reason: 'goodwill' }],
    ])
    expect(written.events).toEqual([
      { asset: 'USDC', amount: '-30.25', reference: 'adj-down', reason: 'duplicate credit', balance: '69.75' },
      { asset: 'USDC', amount: '0.25', reference: 'adj-up', reason: 'goodwill', balance: '70' },
    ])
    expect(written.audit).toEqual([
      { transactionId: written.movements[0]!.id, asset: 'USDC', amount: '-30.25', reason: 'duplicate credit', reference: 'adj-down', balance: '69.75' },
      { transactionId: written.movements[1]!.id, asset: 'USDC', amount: '0.25', reason: 'goodwill', reference: 'adj-up', balance: '70' },
    ])
    // Each movement is the wallet against the adjustments account.
    const postings = await ctx.peek.db.select().from(ledgerPostings).where(eq(ledgerPostings.transactionId, written.movements[0]!.id))
    expect(postings.map((x) => [x.accountId, String(x.amount)]).sort()).toEqual(
      [
        [systemAccountId('adjustments', 'USDC'), '30250000'],
        [`user:${p.userId}:USDC`, '-30250000'],
      ].sort(),
    )
    await ledgerOk()
  })

  test('a wallet with nothing in it can be adjusted up', async () => {
    const p = await funded('0')
    expect(await (await adjust(p.userId, { amount: '5', reason: 'missed prize', reference: 'from-zero' })).json()).toEqual({ balance: '5' })
    await ledgerOk()
  })

  test('exactly the balance takes it to zero; a cent more is 422 insufficient_funds and writes nothing', async () => {
    const p = await funded('10')
    const over = await adjust(p.userId, { amount: '-10.01', reason: 'too much', reference: 'over' })
    expect(over.status).toBe(422)
    expect((await errorOf(over)).code).toBe('insufficient_funds')
    const least = await adjust(p.userId, { amount: '-10.000001', reason: 'too much', reference: 'over-by-one' })
    expect(least.status).toBe(422)
    expect(await writtenFor(p)).toEqual({ movements: [], events: [], audit: [] })
    expect(await balance(ctx, p)).toBe('10')

    const exact = await adjust(p.userId, { amount: '-10', reason: 'all of it', reference: 'exact' })
    expect(exact.status).toBe(200)
    expect(await exact.json()).toEqual({ balance: '0' })
    const below = await adjust(p.userId, { amount: '-0.01', reason: 'a cent below zero', reference: 'cent' })
    expect(below.status).toBe(422)
    expect((await errorOf(below)).code).toBe('insufficient_funds')
    const written = await writtenFor(p)
    expect(written.movements.map((m) => m.reference)).toEqual(['adjustment:exact'])
    expect(written.events).toHaveLength(1)
    expect(written.audit).toHaveLength(1)
    // The refused reference was not spent: it adjusts once there is money.
    await credit(p.userId, '1', `refill-${p.userId}`)
    expect(await (await adjust(p.userId, { amount: '-0.01', reason: 'a cent below zero', reference: 'cent' })).json()).toEqual({ balance: '0.99' })
    await ledgerOk()
  })

  test('the same reference twice moves once and answers the current balance', async () => {
    const p = await funded('50')
    const body = { amount: '-20', reason: 'chargeback', reference: 'once' }
    expect(await (await adjust(p.userId, body)).json()).toEqual({ balance: '30' })
    // The reason is not part of what is compared: a retry with edited text is still the same adjustment.
    expect(await (await adjust(p.userId, { ...body, reason: 'chargeback (retry)' })).json()).toEqual({ balance: '30' })
    await credit(p.userId, '5', `later-${p.userId}`)
    const replay = await adjust(p.userId, body)
    expect(replay.status).toBe(200)
    expect(await replay.json()).toEqual({ balance: '35' })
    const written = await writtenFor(p)
    expect(written.movements).toHaveLength(1)
    expect(written.events).toHaveLength(1)
    expect(written.audit).toHaveLength(1)
    await ledgerOk()
  })

  test('the same reference with another amount or user is 409 idempotency_key_reused and moves nothing', async () => {
    const a = await funded('50')
    const b = await funded('50')
    expect((await adjust(a.userId, { amount: '-5', reason: 'r', reference: 'mismatch' })).status).toBe(200)
    for (const [who, amount] of [
      [a, '-6'],
      [a, '5'],
      [a, '-5.000001'],
      [b, '-5'],
    ] as const) {
      const res = await adjust(who.userId, { amount, reason: 'r', reference: 'mismatch' })
      expect(res.status).toBe(409)
      expect((await errorOf(res)).code).toBe('idempotency_key_reused')
    }
    expect(await balance(ctx, a)).toBe('45')
    expect(await balance(ctx, b)).toBe('50')
    expect((await writtenFor(a)).movements).toHaveLength(1)
    expect(await writtenFor(b)).toEqual({ movements: [], events: [], audit: [] })
    // "-5" and "-5.00" are one amount.
    expect(await (await adjust(a.userId, { amount: '-5.00', reason: 'r', reference: 'mismatch' })).json()).toEqual({ balance: '45' })
  })

  test('credit and adjustment references are separate spaces', async () => {
    const p = await funded('0')
    expect(await (await credit(p.userId, '3', `shared-${p.userId}`)).json()).toEqual({ balance: '3' })
    expect(await (await adjust(p.userId, { amount: '-3', reason: 'undo', reference: `shared-${p.userId}` })).json()).toEqual({ balance: '0' })
    await ledgerOk()
  })

  test.each([
    ['zero', { amount: '0', reason: 'r', reference: 'v' }, 'body/amount'],
    ['minus zero', { amount: '-0.000000', reason: 'r', reference: 'v' }, 'body/amount'],
    ['a plus sign', { amount: '+5', reason: 'r', reference: 'v' }, 'body/amount'],
    ['two minus signs', { amount: '--5', reason: 'r', reference: 'v' }, 'body/amount'],
    ['a space after the sign', { amount: '- 5', reason: 'r', reference: 'v' }, 'body/amount'],
    ['too many decimals', { amount: '-0.0000001', reason: 'r', reference: 'v' }, 'body/amount'],
    ['an exponent', { amount: '-1e2', reason: 'r', reference: 'v' }, 'body/amount'],
    ['a leading zero', { amount: '-05', reason: 'r', reference: 'v' }, 'body/amount'],
    ['a JSON number', { amount: -5, reason: 'r', reference: 'v' }, 'body/amount'],
    ['no amount', { reason: 'r', reference: 'v' }, 'body/amount'],
    ['no reason', { amount: '-1', reference: 'v' }, 'body/reason'],
    ['an empty reason', { amount: '-1', reason: '', reference: 'v' }, 'body/reason'],
    ['a reason of spaces', { amount: '-1', reason: '   ', reference: 'v' }, 'body/reason'],
    ['a reason too long', { amount: '-1', reason: 'x'.repeat(501), reference: 'v' }, 'body/reason'],
    ['no reference', { amount: '-1', reason: 'r' }, 'body/reference'],
    ['an empty reference', { amount: '-1', reason: 'r', reference: '' }, 'body/reference'],
    ['a reference too long', { amount: '-1', reason: 'r', reference: 'x'.repeat(129) }, 'body/reference'],
  ])('%s is 422 validation_failed and writes nothing', async (_, body, path) => {
    const p = await funded('10')
    const res = await adjust(p.userId, body)
    expect(res.status).toBe(422)
    const error = await errorOf(res)
    expect(error.code).toBe('validation_failed')
    expect(error.details?.map((d) => d.path)).toContain(path)
    expect(await writtenFor(p)).toEqual({ movements: [], events: [], audit: [] })
    expect(await balance(ctx, p)).toBe('10')
  })

  test('a reason of 500 characters and a reference of 128 are accepted', async () => {
    const p = await funded('0')
    expect((await adjust(p.userId, { amount: '1', reason: 'x'.repeat(500), reference: 'y'.repeat(128) })).status).toBe(200)
  })

  test('a balance past the largest expressible amount is 422 and moves nothing', async () => {
    const p = await funded('1')
    const res = await adjust(p.userId, { amount: '999999999999999999.999999', reason: 'r', reference: 'huge' })
    expect(res.status).toBe(422)
    expect((await errorOf(res)).code).toBe('validation_failed')
    expect(await balance(ctx, p)).toBe('1')
  })

  test('an unknown user and a deleted one are 404', async () => {
    expect((await adjust('usr_nope', { amount: '1', reason: 'r', reference: 'nobody' })).status).toBe(404)
    const p = await funded('0')
    const deleted = await ctx.handle(postJson(`/api/v1/admin/users/${p.userId}/delete`, { reason: 'asked to' }, admin))
    expect(deleted.status).toBe(200)
    const res = await adjust(p.userId, { amount: '1', reason: 'r', reference: 'deleted' })
    expect(res.status).toBe(404)
    expect((await errorOf(res)).code).toBe('not_found')
    const [row] = await ctx.peek.db.select().from(users).where(eq(users.id, p.userId))
    expect(row!.deletedAt).not.toBeNull()
  })

  test('without the operator token: 401, before the body is looked at', async () => {
    const p = await funded('10')
    for (const headers of [{}, { 'x-admin-token': 'wrong' }] as Record<string, string>[]) {
      const res = await adjust(p.userId, { amount: '-10', reason: 'r', reference: 'no-token' }, headers)
      expect(res.status).toBe(401)
      expect((await errorOf(res)).code).toBe('unauthorized')
    }
    expect((await adjust(p.userId, { amount: 'nonsense' }, {})).status).toBe(401)
    expect(await balance(ctx, p)).toBe('10')
  })

  test('the account export lists an adjustment with its kind and signed amount', async () => {
    const p = await funded('4')
    await adjust(p.userId, { amount: '-1.5', reason: 'fee', reference: `export-${p.userId}` })
    const res = await ctx.handle(req('/api/v1/me/export', { headers: { authorization: `Bearer ${p.tokens.accessToken}` } }))
    expect(res.status).toBe(200)
    const { ledger } = (await res.json()) as { ledger: { kind: string; amount: string; reference: string | null }[] }
    expect(ledger.map((e) => [e.kind, e.amount, e.reference])).toEqual([
      ['credit', '4', `credit:fund-${p.userId}`],
      ['adjustment', '-1.5', `adjustment:export-${p.userId}`],
    ])
  })
})

describe('command line', () => {
  test('arena wallet adjust moves money as the route does, refuses below zero, and arena ledger check still passes', async () => {
    const database = await testDatabaseEnv()
    const env = { ARENA_DATA_DIR: tempDir('arena-adjust-'), ...database }
    const shared = await createTestApp({ dataDir: env.ARENA_DATA_DIR, env: database })
    const [p] = await players(shared, 1)
    await shared.close()
    const cli = (...args: string[]) => run([...SOURCE_COMMAND, 'wallet', ...args], env)

    expect((await cli('credit', p!.username, '--amount', '10', '--reference', 'cli-credit')).code).toBe(0)
    const down = await cli('adjust', p!.username, '--amount=-2.5', '--reason', 'duplicate', '--reference', 'cli-1', '--json')
    expect(down.stderr).toBe('')
    expect(down.code).toBe(0)
    expect(JSON.parse(down.stdout)).toEqual({ balance: '7.5' })
    // By id, a positive amount, the text output.
    const up = await cli('adjust', p!.userId, '--amount', '0.5', '--reason', 'goodwill', '--reference', 'cli-2')
    expect(up.code).toBe(0)
    expect(up.stdout.trim()).toBe('balance 8')
    // The same reference again: the same answer, no second movement.
    expect(JSON.parse((await cli('adjust', p!.username, '--amount=-2.5', '--reason', 'duplicate', '--reference', 'cli-1', '--json')).stdout)).toEqual({ balance: '8' })

    const short = await cli('adjust', p!.username, '--amount=-8.01', '--reason', 'too much', '--reference', 'cli-3')
    expect(short.code).toBe(1)
    expect(short.stderr).toContain('The balance is lower than the amount')
    const reused = await cli('adjust', p!.username, '--amount=-1', '--reason', 'other', '--reference', 'cli-1')
    expect(reused.code).toBe(1)
    expect(reused.stderr).toContain('already used')
    const zero = await cli('adjust', p!.username, '--amount', '0', '--reason', 'r', '--reference', 'cli-4')
    expect(zero.code).toBe(1)
    expect(zero.stderr).toContain('body/amount')
    const nobody = await cli('adjust', 'no-such-user', '--amount', '1', '--reason', 'r', '--reference', 'cli-5')
    expect(nobody.code).toBe(1)
    expect(nobody.stderr).toContain('No user')
    // Usage mistakes: exit 2 with the usage line, nothing moved.
    for (const args of [
      ['adjust', p!.username, '--amount', '-1', '--reason', 'r', '--reference', 'cli-6'],
      ['adjust', p!.username, '--amount=1', '--reference', 'cli-6'],
      ['adjust', p!.username, '--amount=1', '--reason', 'r'],
      ['adjust', '--amount=1', '--reason', 'r', '--reference', 'cli-6'],
    ]) {
      const result = await cli(...args)
      expect(result.code).toBe(2)
      expect(result.stderr).toContain('Usage: npx arena wallet')
    }

    const check = await run([...SOURCE_COMMAND, 'ledger', 'check', '--json'], env)
    expect(check.code).toBe(0)
    expect(JSON.parse(check.stdout)).toMatchObject({ ok: true, transactions: 3, postings: 6, problems: [] })
  }, 60_000)
})
