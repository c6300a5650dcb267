// Invariant: when the argon2id gate is full, login, registration, PUT
// /security/pin and PIN verify answer 503 service_unavailable with
// Retry-After, in the standard envelope, and the refused call leaves no
// trace: no throttle attempt, no session, no user, no PIN change, no PIN
// failure, no consumed PIN session, no debit. An unknown identifier is
// refused exactly like a known one.
import { afterAll, describe, expect, test, beforeAll } from 'bun:test'
import { eq } from 'drizzle-orm'
import type { HashTicket } from '../../src/modules/auth/hash-gate'
import { createTestApp, postJson, type TestApp } from '../helpers/app'
import { createArenaApp } from '../helpers/arena'
import { PASSWORD, registerUser } from '../helpers/auth'
import { balance, funded, mint, PIN, someAddress, verify } from '../helpers/purchases'

const apps: TestApp[] = []
afterAll(() => Promise.all(apps.map((a) => a.close())))

/** K = 1 hash at a time, Q = 2 waiting. */
async function smallGateApp() {
  const ctx = await createTestApp({ hashGate: { concurrency: 1, queue: 2 } })
  apps.push(ctx)
  return ctx
}

const loginReq = (ctx: TestApp, identifier: string, password: string) => ctx.handle(postJson('/api/v1/user/login', { identifier, password }))

/** Takes every slot and queue place of the app's gate by hand; returns the release. */
function fillGate(ctx: TestApp): () => void {
  const gate = ctx.services.pins.hashGate
  const tickets: HashTicket[] = []
  for (let i = 0; i < gate.concurrency + gate.queue; i++) tickets.push(gate.admit())
  return () => tickets.forEach((t) => t.cancel())
}

async function expectRefused(res: Response) {
  expect(res.status).toBe(503)
  expect(res.headers.get('retry-after')).toBe('1')
  expect(res.headers.get('x-request-id')).toBeTruthy()
  const body = (await res.json()) as { error: { code: string; message: string; status: number } }
  expect(body).toEqual({ error: { code: 'service_unavailable', message: body.error.message, status: 503 } })
  expect(body.error.message.length).toBeGreaterThan(0)
  return body
}

async function throttleRow(ctx: TestApp, key: string) {
  const { loginThrottle } = ctx.peek.tables
  return (await ctx.peek.db.select().from(loginThrottle).where(eq(loginThrottle.key, key)))[0]
}

async function sessionsOf(ctx: TestApp, userId: string) {
  const { authSessions } = ctx.peek.tables
  return (await ctx.peek.db.select().from(authSessions).where(eq(authSessions.userId, userId))).length
}

function count(statuses: number[], status: number) {
  return statuses.filter((s) => s === status).length
}

describe('login under a burst (K=1, Q=2)', () => {
  test('20 simultaneous logins: the admitted ones 200, the rest 503 + Retry-After; one session per 200; no throttling', async () => {
    const ctx = await smallGateApp()
    const user = await registerUser(ctx)
    const results = await Promise.all(Array.from({ length: 20 }, () => loginReq(ctx, user.username, PASSWORD)))
    const statuses = results.map((r) => r.status)
    // The first K + Q to arrive are admitted; the burst arrives well within one hash.
    expect(count(statuses, 200)).toBeGreaterThanOrEqual(3)
    expect(count(statuses, 503)).toBeGreaterThanOrEqual(1)
    expect(count(statuses, 200) + count(statuses, 503)).toBe(20)
    for (const res of results) if (res.status === 503) await expectRefused(res)
    expect(await sessionsOf(ctx, user.id)).toBe(count(statuses, 200))
    expect(ctx.services.pins.hashGate.stats()).toMatchObject({ running: 0, waiting: 0, refused: count(statuses, 503) })

    // The 503s were not attempts: the right password still logs in, and nothing was throttled.
    expect((await loginReq(ctx, user.username, PASSWORD)).status).toBe(200)
    await ctx.services.securityLog.flush()
    const { securityEvents } = ctx.peek.tables
    expect(await ctx.peek.db.select().from(securityEvents).where(eq(securityEvents.kind, 'LOGIN_THROTTLED'))).toEqual([])
  })

  test('20 simultaneous wrong passwords: only the judged ones (401) count; the 503s do not, so the account is not blocked', async () => {
    const ctx = await smallGateApp()
    const user = await registerUser(ctx)
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => loginReq(ctx, user.username, `wrong-${i}`)))
    const statuses = results.map((r) => r.status)
    const judged = count(statuses, 401)
    expect(judged).toBeGreaterThanOrEqual(3)
    // Had the 503s counted, 5 attempts would have blocked the account (429s here, and below).
    expect(judged).toBeLessThan(5)
    expect(count(statuses, 503)).toBe(20 - judged)
    for (const res of results) if (res.status === 503) await expectRefused(res)
    expect((await throttleRow(ctx, `account:${user.id}`))?.failures).toBe(judged)
    expect((await throttleRow(ctx, 'address:unknown'))?.failures).toBe(judged)
    expect(await sessionsOf(ctx, user.id)).toBe(0)

    expect((await loginReq(ctx, user.username, PASSWORD)).status).toBe(200)
  })
})

describe('a full gate refuses before anything is judged or written', () => {
  test('login: a known and an unknown identifier get the same 503; no attempt counted, no session', async () => {
    const ctx = await smallGateApp()
    const user = await registerUser(ctx)
    const release = fillGate(ctx)
    const known = await expectRefused(await loginReq(ctx, user.username, PASSWORD))
    const wrong = await expectRefused(await loginReq(ctx, user.username, 'wrong password'))
    const unknown = await expectRefused(await loginReq(ctx, 'nobody_by_this_name', 'wrong password'))
    expect(unknown).toEqual(known)
    expect(wrong).toEqual(known)
    const { loginThrottle } = ctx.peek.tables
    expect(await ctx.peek.db.select().from(loginThrottle)).toEqual([])
    expect(await sessionsOf(ctx, user.id)).toBe(0)
    release()
    expect((await loginReq(ctx, user.username, PASSWORD)).status).toBe(200)
    expect(await sessionsOf(ctx, user.id)).toBe(1)
  })

  test('register: 503 and no user; the same registration succeeds once the gate has room', async () => {
    const ctx = await smallGateApp()
    const body = { email: 'gated@example.com', username: 'gated_player', password: PASSWORD, country: 'DE', accept_terms: true }
    const release = fillGate(ctx)
    await expectRefused(await ctx.handle(postJson('/api/v1/user/register', body)))
    const { users } = ctx.peek.tables
    expect((await ctx.peek.db.select().from(users).where(eq(users.usernameKey, 'gated_player')))[0]).toBeUndefined()
    release()
    expect((await ctx.handle(postJson('/api/v1/user/register', body))).status).toBe(201)
  })
})

describe('PIN (K=1, Q=0)', () => {
  let ctx!: TestApp
  beforeAll(async () => {
    ctx = await createArenaApp({}, { hashGate: { concurrency: 1, queue: 0 } })
    apps.push(ctx)
  })
  const putPin = (token: string, body: unknown) =>
    ctx.handle(new Request('http://localhost/api/v1/security/pin', { method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }))

  test('a refused verify consumes nothing, counts no failure, debits nothing; the same session then verifies', async () => {
    const p = await funded(ctx, '100')
    const s = await mint(ctx, p)
    const dest = someAddress()
    const body = { pin: PIN, amount: '10', destinationAddress: dest, idempotencyKey: 'gated-verify' }

    const release = fillGate(ctx)
    await expectRefused(await verify(ctx, p, s, body))
    // A wrong PIN is refused the same way, and is not a failure either.
    await expectRefused(await verify(ctx, p, s, { ...body, pin: '913572' }))
    const { pinSessions, pinLocks, withdrawals } = ctx.peek.tables
    expect((await ctx.peek.db.select().from(pinSessions).where(eq(pinSessions.id, s.sessionId)))[0]!.consumedAt).toBeNull()
    expect((await ctx.peek.db.select().from(pinLocks).where(eq(pinLocks.userId, p.userId)))[0]).toBeUndefined()
    expect(await ctx.peek.db.select().from(withdrawals).where(eq(withdrawals.userId, p.userId))).toEqual([])
    release()
    expect(await balance(ctx, p)).toBe('100')

    const res = await verify(ctx, p, s, body)
    expect(res.status).toBe(200)
    expect(((await res.json()) as { valid: boolean }).valid).toBe(true)
    expect(await balance(ctx, p)).toBe('90')
    expect(ctx.services.pins.hashGate.stats()).toMatchObject({ running: 0, waiting: 0 })
  })

  test('a refused PUT /security/pin writes nothing and counts no password attempt', async () => {
    const p = await funded(ctx, '0')
    const { userPins, loginThrottle } = ctx.peek.tables
    const before = (await ctx.peek.db.select().from(userPins).where(eq(userPins.userId, p.userId)))[0]!
    const release = fillGate(ctx)
    await expectRefused(await putPin(p.tokens.accessToken, { pin: '5820', password: PASSWORD }))
    await expectRefused(await putPin(p.tokens.accessToken, { pin: '5820', password: 'wrong password' }))
    release()
    expect((await ctx.peek.db.select().from(userPins).where(eq(userPins.userId, p.userId)))[0]).toEqual(before)
    expect((await ctx.peek.db.select().from(loginThrottle).where(eq(loginThrottle.key, `account:${p.userId}`)))[0]).toBeUndefined()
    expect((await putPin(p.tokens.accessToken, { pin: '5820', password: PASSWORD })).status).toBe(200)
    expect((await ctx.peek.db.select().from(userPins).where(eq(userPins.userId, p.userId)))[0]!.pinHash).not.toBe(before.pinHash)
  })
})
