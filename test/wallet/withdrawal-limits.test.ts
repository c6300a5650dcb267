// Contract §10: ARENA_WITHDRAWAL_MAX bounds a single withdrawal and
// ARENA_WITHDRAWAL_DAILY_MAX one user's withdrawals over any 24 hours
// (pending and signed ones count, failed ones do not). Over either, the PIN
// verify answers 422 withdrawal_limit with the limit and what is left; the
// session is not consumed and no PIN failure is counted. Through HTTP, with
// the test clock moved across the window's edge.
import { afterAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { eq } from 'drizzle-orm'
import { CustodyRefusedError, LocalFrostCustody, type CustodyClient } from '../../src/modules/wallet/custody'
import { checkLedger } from '../../src/modules/wallet/ledger'
import { tempDir } from '../helpers/app'
import { createArenaApp, type Player } from '../helpers/arena'
import { login } from '../helpers/auth'
import { balance, funded, mint, mintRaw, PIN, someAddress, verify } from '../helpers/purchases'

const HOUR = 3_600_000
const DAY = 24 * HOUR

/** Stands in for a remote provider (the one boundary we do not own): up, away, or refusing. */
class SwitchableCustody implements CustodyClient {
  mode: 'up' | 'down' | 'refusing' = 'up'
  constructor(private readonly real: CustodyClient) {}
  createWallet() {
    return this.real.createWallet()
  }
  async signWithdrawal(keyRef: string, message: Uint8Array) {
    if (this.mode === 'down') throw new Error('ECONNREFUSED custody provider')
    if (this.mode === 'refusing') throw new CustodyRefusedError('provider refused: destination blocked')
    return this.real.signWithdrawal(keyRef, message)
  }
  health() {
    return Promise.resolve({ ok: this.mode === 'up' })
  }
}

const custody = new SwitchableCustody(new LocalFrostCustody(join(tempDir('arena-custody-'), 'custody')))
const ctx = await createArenaApp({ ARENA_WITHDRAWAL_MAX: '100.5', ARENA_WITHDRAWAL_DAILY_MAX: '250' }, { custody })
const dailyOnly = await createArenaApp({ ARENA_WITHDRAWAL_DAILY_MAX: '250' })
const unlimited = await createArenaApp()
afterAll(async () => {
  await ctx.close()
  await dailyOnly.close()
  await unlimited.close()
})
const { pinSessions } = ctx.peek.tables

type Session = { sessionId: string; sessionToken: string }
type Answer = { status: number; body: Record<string, unknown> & { error?: { code: string; message: string; status: number } } }

let keys = 0
async function withdraw(p: Player, amount: string, options: { session?: Session; pin?: string; key?: string; destinationAddress?: string } = {}): Promise<Answer> {
  const session = options.session ?? (await mint(ctx, p))
  const res = await verify(ctx, p, session, {
    pin: options.pin ?? PIN,
    amount,
    destinationAddress: options.destinationAddress ?? someAddress(),
    idempotencyKey: options.key ?? `limits-${++keys}`,
  })
  return { status: res.status, body: (await res.json()) as Answer['body'] }
}

function expectLimit(answer: Answer, message: string) {
  expect(answer.status).toBe(422)
  expect(answer.body).toEqual({ error: { code: 'withdrawal_limit', message, status: 422 } })
}

async function consumedAt(session: Session): Promise<Date | null> {
  const [row] = await ctx.peek.db.select().from(pinSessions).where(eq(pinSessions.id, session.sessionId))
  return row!.consumedAt
}

/** Moves the clock; the bearer (15 minutes) is renewed by logging in again. */
async function advance(ms: number, ...people: Player[]) {
  ctx.clock.advance(ms)
  for (const p of people) p.tokens = await login(ctx, p.username)
}

const dailyOver = (left: string, from?: string) =>
  `The amount is over the daily withdrawal limit of 250 USDC (any 24 hours); ${left} USDC left` + (from ? `, enough for this amount from ${from}` : '')

describe('the single withdrawal limit (ARENA_WITHDRAWAL_MAX=100.5)', () => {
  test('exactly the limit passes, one minor unit more is refused; the success payload is the usual one', async () => {
    const p = await funded(ctx, '1000')
    const session = await mint(ctx, p)
    const over = await withdraw(p, '100.500001', { session })
    expectLimit(over, 'The amount is over the limit of 100.5 USDC for a single withdrawal; the limits allow at most 100.5 USDC now')
    expect(await consumedAt(session)).toBeNull()
    expect(await balance(ctx, p)).toBe('1000')

    // The same session, exactly at the limit.
    const destinationAddress = someAddress()
    const at = await withdraw(p, '100.5', { session, key: 'at-the-max', destinationAddress })
    expect(at.status).toBe(200)
    const withdrawal = at.body.withdrawal as { id: string; createdAt: string; signature: string }
    expect(at.body).toEqual({
      valid: true,
      locked: false,
      attempt: 0,
      withdrawal: {
        id: withdrawal.id,
        status: 'signed',
        amount: '100.5',
        asset: 'USDC',
        destinationAddress,
        idempotencyKey: 'at-the-max',
        signature: withdrawal.signature,
        createdAt: ctx.clock.now().toISOString(),
      },
    })
    expect(withdrawal.id).toStartWith('wdr_')
    expect(withdrawal.signature.length).toBeGreaterThan(80)
    expect(await consumedAt(session)).not.toBeNull()
    expect(await balance(ctx, p)).toBe('899.5')
  })

  test('over the single limit with the daily one nearly spent: the message gives what the daily one leaves', async () => {
    const p = await funded(ctx, '1000')
    expect((await withdraw(p, '100')).status).toBe(200)
    expect((await withdraw(p, '80')).status).toBe(200)
    expectLimit(await withdraw(p, '101'), 'The amount is over the limit of 100.5 USDC for a single withdrawal; the limits allow at most 70 USDC now')
  })

  test('refusals are not PIN verdicts: a wrong PIN over the limit counts no failure, never locks, and the session stays usable', async () => {
    const p = await funded(ctx, '1000')
    const session = await mint(ctx, p)
    for (let i = 0; i < 7; i++) {
      const refused = await withdraw(p, '500', { session, pin: '000000' })
      expect(refused.body.error?.code).toBe('withdrawal_limit')
    }
    // Not locked: a new session can be minted.
    expect((await mintRaw(ctx, p)).status).toBe(201)
    // No failure counted: the first wrong PIN judged is attempt 1, not 8.
    const wrong = await withdraw(p, '5', { session, pin: '000000' })
    expect(wrong).toEqual({ status: 200, body: { valid: false, locked: false, attempt: 1 } })
    expect(await consumedAt(session)).toBeNull()
    const right = await withdraw(p, '5', { session })
    expect(right.status).toBe(200)
    expect(right.body).toMatchObject({ valid: true, locked: false, attempt: 0, withdrawal: { amount: '5', status: 'signed' } })
    expect(await balance(ctx, p)).toBe('995')
  })

  test('a key used before with the same amount and destination answers that withdrawal again, limits or not', async () => {
    const p = await funded(ctx, '1000')
    const destinationAddress = someAddress()
    const first = await withdraw(p, '100', { key: 'again', destinationAddress })
    expect(first.status).toBe(200)
    expect((await withdraw(p, '100')).status).toBe(200)
    expect((await withdraw(p, '50')).status).toBe(200) // 250: the daily limit is spent
    expectLimit(await withdraw(p, '1'), dailyOver('0', new Date(ctx.clock.now().getTime() + DAY).toISOString()))
    const repeat = await withdraw(p, '100', { key: 'again', destinationAddress })
    expect(repeat.status).toBe(200)
    expect((repeat.body.withdrawal as { id: string }).id).toBe((first.body.withdrawal as { id: string }).id)
    expect(await balance(ctx, p)).toBe('750')
  })
})

describe('the daily limit (ARENA_WITHDRAWAL_DAILY_MAX=250, rolling 24 hours)', () => {
  test('at the limit passes, one minor unit over is refused; a withdrawal stops counting at exactly 24 hours', async () => {
    const p = await funded(ctx, '1000')
    const start = ctx.clock.now().getTime()
    const iso = (ms: number) => new Date(ms).toISOString()

    expect((await withdraw(p, '100')).status).toBe(200) // t0
    await advance(HOUR, p)
    expect((await withdraw(p, '100')).status).toBe(200) // t0 + 1h
    await advance(HOUR, p)
    // 200 counted, 50 left; 50.000001 fits once the first leaves the window.
    const session = await mint(ctx, p)
    expectLimit(await withdraw(p, '50.000001', { session }), dailyOver('50', iso(start + DAY)))
    expect(await consumedAt(session)).toBeNull()
    expect((await withdraw(p, '50', { session })).status).toBe(200) // t0 + 2h: exactly 250
    expectLimit(await withdraw(p, '0.000001'), dailyOver('0', iso(start + DAY)))
    expect(await balance(ctx, p)).toBe('750')

    // One millisecond before the first is 24 hours old, it still counts.
    await advance(DAY - 2 * HOUR - 1, p)
    expectLimit(await withdraw(p, '0.000001'), dailyOver('0', iso(start + DAY)))
    // At exactly 24 hours it no longer does: 150 counted, 100 left.
    await advance(1, p)
    expectLimit(await withdraw(p, '100.000001'), dailyOver('100', iso(start + DAY + HOUR)))
    expect((await withdraw(p, '100')).status).toBe(200)
    expectLimit(await withdraw(p, '0.000001'), dailyOver('0', iso(start + DAY + HOUR)))
    expect(await balance(ctx, p)).toBe('650')
    expect((await checkLedger(ctx.services.storage.read.wallet)).ok).toBe(true)
  })

  test('a withdrawal custody refused (failed, reversed) does not count; one waiting for its signature does', async () => {
    const p = await funded(ctx, '1000')
    custody.mode = 'refusing'
    try {
      const failed = await withdraw(p, '100')
      expect(failed.status).toBe(200)
      expect(failed.body.withdrawal).toMatchObject({ status: 'failed', amount: '100' })
    } finally {
      custody.mode = 'up'
    }
    expect(await balance(ctx, p)).toBe('1000')

    custody.mode = 'down'
    try {
      const pending = await withdraw(p, '100')
      expect(pending.body.withdrawal).toMatchObject({ status: 'pending_signature', amount: '100' })
    } finally {
      custody.mode = 'up'
    }
    expect((await withdraw(p, '100')).status).toBe(200)
    // The pending 100 and the signed 100 count, the failed 100 does not: 50 left.
    expectLimit(await withdraw(p, '50.000001'), dailyOver('50', new Date(ctx.clock.now().getTime() + DAY).toISOString()))
    expect((await withdraw(p, '50')).status).toBe(200)
    expect(await balance(ctx, p)).toBe('750')
    expect(await ctx.services.withdrawals.resumePending()).toBeGreaterThanOrEqual(1)
    expect((await checkLedger(ctx.services.storage.read.wallet)).ok).toBe(true)
  })

  test('the time it fits is when enough of the oldest have left the window', async () => {
    const p = await funded(ctx, '1000')
    const start = ctx.clock.now().getTime()
    expect((await withdraw(p, '50')).status).toBe(200) // t0
    await advance(HOUR, p)
    expect((await withdraw(p, '100')).status).toBe(200) // t0 + 1h
    await advance(HOUR, p)
    expect((await withdraw(p, '100')).status).toBe(200) // t0 + 2h
    // Nothing left; 100 fits once the 50 and the first 100 are out, at t0 + 25h.
    expectLimit(await withdraw(p, '100'), dailyOver('0', new Date(start + DAY + HOUR).toISOString()))
    expectLimit(await withdraw(p, '50'), dailyOver('0', new Date(start + DAY).toISOString()))
  })

  test('each user has their own window', async () => {
    const a = await funded(ctx, '1000')
    const b = await funded(ctx, '1000')
    expect((await withdraw(a, '100')).status).toBe(200)
    expect((await withdraw(a, '100')).status).toBe(200)
    expect((await withdraw(a, '50')).status).toBe(200)
    expect((await withdraw(b, '100')).status).toBe(200)
    expect((await withdraw(b, '100')).status).toBe(200)
    expect((await withdraw(b, '50')).status).toBe(200)
  })
})

test('the daily limit alone: an amount over the limit itself is refused, with no time it would fit', async () => {
  const p = await funded(dailyOnly, '1000')
  const res = await verify(dailyOnly, p, await mint(dailyOnly, p), { pin: PIN, amount: '250.000001', destinationAddress: someAddress(), idempotencyKey: 'daily-only-over' })
  expect(res.status).toBe(422)
  expect(await res.json()).toEqual({ error: { code: 'withdrawal_limit', message: dailyOver('250'), status: 422 } })
  const at = await verify(dailyOnly, p, await mint(dailyOnly, p), { pin: PIN, amount: '250', destinationAddress: someAddress(), idempotencyKey: 'daily-only-at' })
  expect(at.status).toBe(200)
  expect(await balance(dailyOnly, p)).toBe('750')
})

test('unset, there is no limit', async () => {
  expect(unlimited.config.withdrawalMax).toBeUndefined()
  expect(unlimited.config.withdrawalDailyMax).toBeUndefined()
  const p = await funded(unlimited, '5000')
  for (const amount of ['2000', '2000', '1000']) {
    const res = await verify(unlimited, p, await mint(unlimited, p), { pin: PIN, amount, destinationAddress: someAddress(), idempotencyKey: `unlimited-${amount}-${++keys}` })
    expect(res.status).toBe(200)
  }
  expect(await balance(unlimited, p)).toBe('0')
})
