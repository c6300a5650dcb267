// PIN, PIN sessions and the single-shot verify of contract §3.
import { afterAll, describe, expect, test } from 'bun:test'
import { ed25519 } from '@noble/curves/ed25519.js'
import { base58 } from '@scure/base'
import { eq } from 'drizzle-orm'
import { withdrawalMessage } from '../../src/modules/wallet/frost'
import { checkLedger } from '../../src/modules/wallet/ledger'
import { parseAmount } from '../../src/shared/money'
import { req } from '../helpers/app'
import { createArenaApp, players } from '../helpers/arena'
import { login, PASSWORD } from '../helpers/auth'
import { balance, funded, mint, mintRaw, PIN, someAddress, verify } from '../helpers/purchases'

// The real argon2id cost (hashGate given): the concurrent verifies here race across the PIN's hash, whose time is their window.
const ctx = await createArenaApp({ ARENA_PIN_SESSION_TTL_S: '30' }, { hashGate: {} })
afterAll(() => ctx.close())
const { userPins } = ctx.peek.tables

const putPin = (token: string, body: unknown) =>
  ctx.handle(new Request('http://localhost/api/v1/security/pin', { method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }))

let key = 0
const nextKey = () => `idem-${++key}`

describe('PUT /security/pin', () => {
  test('sets a PIN, stored only as an argon2id hash', async () => {
    const [p] = await players(ctx, 1)
    expect((await putPin(p!.tokens.accessToken, { pin: '5820', password: PASSWORD })).status).toBe(200)
    const row = (await ctx.peek.db.select().from(userPins).where(eq(userPins.userId, p!.userId)))[0]!
    expect(row.pinHash).toStartWith('$argon2id$')
  })

  test('refuses common PINs, wrong shapes, and a wrong password', async () => {
    const [p] = await players(ctx, 1)
    for (const pin of ['0000', '1234', '123456', '987654', '1111', '2580', '7890']) {
      expect((await putPin(p!.tokens.accessToken, { pin, password: PASSWORD })).status).toBe(422)
    }
    for (const pin of ['123', '123456789', '12a4', 1234, '']) {
      expect((await putPin(p!.tokens.accessToken, { pin, password: PASSWORD })).status).toBe(422)
    }
    expect((await putPin(p!.tokens.accessToken, { pin: '5820', password: 'wrong password' })).status).toBe(403)
  })
})

test('guessing the password through PUT /security/pin is throttled like a login', async () => {
  const [p] = await players(ctx, 1)
  for (let i = 0; i < 5; i++) expect((await putPin(p!.tokens.accessToken, { pin: '5820', password: `guess-${i}` })).status).toBe(403)
  const blocked = await putPin(p!.tokens.accessToken, { pin: '5820', password: PASSWORD })
  expect(blocked.status).toBe(429)
  expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0)
})

describe('mint', () => {
  test('201 { sessionId, sessionToken, expiresAt, maxAttempts } with the configured lifetime', async () => {
    const p = await funded(ctx, '0')
    const s = await mint(ctx, p)
    expect(s.sessionId).toMatch(/^pns_[0-9a-f]{32}$/)
    expect(s.sessionToken.length).toBeGreaterThanOrEqual(43)
    expect(s.maxAttempts).toBe(5)
    expect(new Date(s.expiresAt).getTime() - ctx.clock.now().getTime()).toBe(30_000)
  })

  test('without a PIN it is 409; without a bearer 401', async () => {
    const [p] = await players(ctx, 1)
    expect((await mintRaw(ctx, p!)).status).toBe(409)
    expect((await ctx.handle(new Request('http://localhost/api/v1/security/pin-session', { method: 'POST' }))).status).toBe(401)
  })
})

describe('verify', () => {
  test('a correct PIN: valid, the session is consumed, the amount leaves the balance, custody signs', async () => {
    const p = await funded(ctx, '100.00')
    const s = await mint(ctx, p)
    const destination = someAddress()
    const res = await verify(ctx, p, s, { pin: PIN, amount: '30.00', destinationAddress: destination, idempotencyKey: nextKey() })
    expect(res.status).toBe(200)
    const body = (await res.json()) as { valid: boolean; locked: boolean; attempt: number; withdrawal: { id: string; status: string; amount: string; asset: string; signature: string; destinationAddress: string } }
    expect(body).toMatchObject({ valid: true, locked: false, attempt: 0 })
    expect(body.withdrawal).toMatchObject({ status: 'signed', amount: '30', asset: 'USDC', destinationAddress: destination })
    expect(body.withdrawal.id).toMatch(/^wdr_[0-9a-f]{32}$/)
    const { address } = (await (await ctx.handle(req('/api/v1/wallet', { headers: { authorization: `Bearer ${p.tokens.accessToken}` } }))).json()) as { address: string }
    const message = withdrawalMessage({ id: body.withdrawal.id, asset: 'USDC', amount: parseAmount('30').toString(), destinationAddress: destination })
    expect(ed25519.verify(base58.decode(body.withdrawal.signature), message, base58.decode(address))).toBe(true)
    expect(await balance(ctx, p)).toBe('70')
    const again = await verify(ctx, p, s, { pin: PIN, amount: '30.00', destinationAddress: destination, idempotencyKey: nextKey() })
    expect(again.status).toBe(410)
  })

  test('a wrong PIN is 200 valid:false with the attempt count, and the session stays usable', async () => {
    const p = await funded(ctx, '10')
    const s = await mint(ctx, p)
    const wrong = await verify(ctx, p, s, { pin: '000111', amount: '1', destinationAddress: someAddress(), idempotencyKey: nextKey() })
    expect(wrong.status).toBe(200)
    expect(await wrong.json()).toEqual({ valid: false, locked: false, attempt: 1 })
    const right = await verify(ctx, p, s, { pin: PIN, amount: '1', destinationAddress: someAddress(), idempotencyKey: nextKey() })
    expect(((await right.json()) as { valid: boolean }).valid).toBe(true)
  })

  test('failures across fresh sessions reach the lock; then 429 with Retry-After for mint and verify; a later lock lasts twice as long', async () => {
    const p = await funded(ctx, '10')
    const spare = await mint(ctx, p)
    let last: unknown
    for (let i = 1; i <= 5; i++) {
      const s = await mint(ctx, p)
      last = await (await verify(ctx, p, s, { pin: '999000', amount: '1', destinationAddress: someAddress(), idempotencyKey: nextKey() })).json()
      expect(last).toMatchObject({ valid: false, attempt: i })
    }
    expect(last).toEqual({ valid: false, locked: true, attempt: 5 })
    const minted = await mintRaw(ctx, p)
    expect(minted.status).toBe(429)
    expect(((await minted.json()) as { error: { code: string } }).error.code).toBe('pin_locked')
    expect(minted.headers.get('retry-after')).toBe('900')
    const blocked = await verify(ctx, p, spare, { pin: PIN, amount: '1', destinationAddress: someAddress(), idempotencyKey: nextKey() })
    expect(blocked.status).toBe(429)
    expect(blocked.headers.get('retry-after')).toBe('900')

    ctx.clock.advance(900_000)
    p.tokens = await login(ctx, p.username) // the access token lived 900 s too
    for (let i = 1; i <= 5; i++) {
      const s = await mint(ctx, p)
      await verify(ctx, p, s, { pin: '999000', amount: '1', destinationAddress: someAddress(), idempotencyKey: nextKey() })
    }
    expect((await mintRaw(ctx, p)).headers.get('retry-after')).toBe('1800')
    ctx.clock.advance(1_800_000)
    p.tokens = await login(ctx, p.username)
    // A correct PIN resets the count and the doubling.
    const s = await mint(ctx, p)
    expect(((await (await verify(ctx, p, s, { pin: PIN, amount: '1', destinationAddress: someAddress(), idempotencyKey: nextKey() })).json()) as { valid: boolean }).valid).toBe(true)
    const fresh = await mint(ctx, p)
    expect(await (await verify(ctx, p, fresh, { pin: '999000', amount: '1', destinationAddress: someAddress(), idempotencyKey: nextKey() })).json()).toEqual({ valid: false, locked: false, attempt: 1 })
  })

  test('an expired session is 410', async () => {
    const p = await funded(ctx, '10')
    const s = await mint(ctx, p)
    ctx.clock.advance(31_000)
    const res = await verify(ctx, p, s, { pin: PIN, amount: '1', destinationAddress: someAddress(), idempotencyKey: nextKey() })
    expect(res.status).toBe(410)
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('session_expired')
  })

  test('a wrong x-secure-session, or another user\'s bearer, is 401', async () => {
    const p = await funded(ctx, '10')
    const other = await funded(ctx, '10')
    const s = await mint(ctx, p)
    const body = { pin: PIN, amount: '1', destinationAddress: someAddress(), idempotencyKey: nextKey() }
    expect((await verify(ctx, p, s, body, 'not-the-token')).status).toBe(401)
    expect((await verify(ctx, other, s, body)).status).toBe(401)
    expect((await verify(ctx, p, s, body)).status).toBe(200)
  })

  test('422s (missing fields, bad amounts, insufficient funds, bad destination) neither consume the session nor count as failures', async () => {
    const p = await funded(ctx, '5')
    const s = await mint(ctx, p)
    const dest = someAddress()
    const cases: Record<string, unknown>[] = [
      { pin: PIN, amount: '1' },
      { amount: '1', destinationAddress: dest, idempotencyKey: nextKey() },
      ...['-1', '1e2', '0.1234567', '00.10', '0', 1].map((amount) => ({ pin: PIN, amount, destinationAddress: dest, idempotencyKey: nextKey() })),
      { pin: PIN, amount: '6', destinationAddress: dest, idempotencyKey: nextKey() },
      { pin: PIN, amount: '1', destinationAddress: 'not-an-address', idempotencyKey: nextKey() },
      { pin: PIN, amount: '1', destinationAddress: '11111111111111111111111111111111', idempotencyKey: nextKey() },
    ]
    for (const body of cases) {
      const res = await verify(ctx, p, s, body)
      expect(res.status).toBe(422)
    }
    // Still usable, and no PIN failure was counted.
    const wrong = await verify(ctx, p, s, { pin: '999000', amount: '1', destinationAddress: dest, idempotencyKey: nextKey() })
    expect(await wrong.json()).toEqual({ valid: false, locked: false, attempt: 1 })
  })

  test('idempotency: the same key and request give the same withdrawal without a second debit; a different request is 409', async () => {
    const p = await funded(ctx, '50')
    const dest = someAddress()
    const k = nextKey()
    const first = (await (await verify(ctx, p, await mint(ctx, p), { pin: PIN, amount: '20', destinationAddress: dest, idempotencyKey: k })).json()) as { withdrawal: { id: string } }
    const second = (await (await verify(ctx, p, await mint(ctx, p), { pin: PIN, amount: '20', destinationAddress: dest, idempotencyKey: k })).json()) as { withdrawal: { id: string } }
    expect(second.withdrawal.id).toBe(first.withdrawal.id)
    expect(await balance(ctx, p)).toBe('30')
    const different = await verify(ctx, p, await mint(ctx, p), { pin: PIN, amount: '21', destinationAddress: dest, idempotencyKey: k })
    expect(different.status).toBe(409)
    expect(((await different.json()) as { error: { code: string } }).error.code).toBe('idempotency_key_reused')
  })

  test('8 concurrent verifies of one session: one withdrawal, one debit', async () => {
    const p = await funded(ctx, '100')
    const s = await mint(ctx, p)
    const dest = someAddress()
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => verify(ctx, p, s, { pin: PIN, amount: '10', destinationAddress: dest, idempotencyKey: `race-${key}-${i}` })))
    const statuses = results.map((r) => r.status)
    expect(statuses.filter((x) => x === 200).length).toBe(1)
    expect(statuses.filter((x) => x === 410).length).toBe(7)
    expect(await balance(ctx, p)).toBe('90')
  })

  test('6 concurrent verifies of 30.00 from 100.00 across sessions: exactly 3 succeed, 10.00 remains', async () => {
    const p = await funded(ctx, '100.00')
    const sessions = await Promise.all(Array.from({ length: 6 }, () => mint(ctx, p)))
    const dest = someAddress()
    const results = await Promise.all(sessions.map((s, i) => verify(ctx, p, s, { pin: PIN, amount: '30.00', destinationAddress: dest, idempotencyKey: `spread-${key}-${i}` })))
    const statuses = results.map((r) => r.status).sort()
    expect(statuses).toEqual([200, 200, 200, 422, 422, 422])
    expect(await balance(ctx, p)).toBe('10')
  })

  test('ten withdrawals of 0.1 empty a 1.00 balance exactly', async () => {
    const p = await funded(ctx, '1.00')
    for (let i = 0; i < 10; i++) {
      const res = await verify(ctx, p, await mint(ctx, p), { pin: PIN, amount: '0.1', destinationAddress: someAddress(), idempotencyKey: nextKey() })
      expect(res.status).toBe(200)
    }
    expect(await balance(ctx, p)).toBe('0')
    const more = await verify(ctx, p, await mint(ctx, p), { pin: PIN, amount: '0.000001', destinationAddress: someAddress(), idempotencyKey: nextKey() })
    expect(more.status).toBe(422)
    expect((await checkLedger(ctx.services.storage.read.wallet)).ok).toBe(true)
  })
})
