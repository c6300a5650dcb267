// Invariant: nobody can lock a player or an operator out by failing on their
// name. A sign-in from a place the name signed in from before (a client
// address, or the device token it was given: the API's `x-arena-device`
// header, the console's `arena_device` cookie) counts on a counter of its own
// (5 in 15 minutes), so strangers' failures elsewhere, which fill the name's
// counter, do not block it; a stranger sharing that place gets no more than
// those 5; from anywhere else, a brute force across any number of addresses
// stays capped at 5 per name. The same holds for console sign-in and for
// TOTP codes, on both engines and across two instances on one database.
import { afterAll, describe, expect, test } from 'bun:test'
import { totpCode } from '../../src/modules/operators/totp'
import { housekeeping } from '../../src/modules/events/housekeeping'
import { createTestApp, postJson, tempDir, type TestApp } from '../helpers/app'
import { PASSWORD, registerUser } from '../helpers/auth'
import { cliActor, OPERATOR_PASSWORD, signedInOperator } from '../helpers/operators'
import { sdkClient } from '../helpers/sdk'
import { ApiError } from '@arena/sdk'

const env = { ARENA_TRUST_PROXY: 'true' }
const apps: TestApp[] = []
afterAll(async () => {
  for (const app of apps) await app.close()
})

/** `realHashCost`: argon2id at its real cost (hashGate given), for the races that span the hash, whose time is their window. */
async function app(dataDir?: string, realHashCost = false) {
  const created = await createTestApp({ env, ...(dataDir ? { dataDir } : {}), ...(realHashCost ? { hashGate: {} } : {}) })
  apps.push(created)
  return created
}

function login(ctx: TestApp, identifier: string, password: string, address: string, device?: string) {
  return ctx.handle(postJson('/api/v1/user/login', { identifier, password }, { 'x-forwarded-for': address, ...(device ? { 'x-arena-device': device } : {}) }))
}

/** Five wrong passwords from five addresses of the stranger's: the name's own counter is full. */
async function strangerBurns(ctx: TestApp, identifier: string, prefix: string) {
  for (let i = 0; i < 5; i++) expect((await login(ctx, identifier, 'a stranger guessing', `${prefix}.${i}`)).status).toBe(401)
  // Blocked for everyone who comes from anywhere else, the owner included.
  expect((await login(ctx, identifier, PASSWORD, `${prefix}.200`)).status).toBe(429)
}

describe('players (POST /user/login)', () => {
  test('a stranger burns the name from many addresses; the owner still signs in from an address it signed in from before', async () => {
    const ctx = await app()
    const owner = await registerUser(ctx)
    expect((await login(ctx, owner.username, PASSWORD, '198.51.100.10')).status).toBe(200)
    await strangerBurns(ctx, owner.username, '203.0.113')
    expect((await login(ctx, owner.email, PASSWORD, '198.51.100.10')).status).toBe(200)
    // The stranger's block on the name stands: the owner's success cleared only its own counter.
    expect((await login(ctx, owner.username, PASSWORD, '203.0.113.201')).status).toBe(429)
  }, 30_000)

  test('the device token it was given lets the owner in from a new address; a made-up one does not', async () => {
    const ctx = await app()
    const owner = await registerUser(ctx)
    const first = await login(ctx, owner.username, PASSWORD, '198.51.100.20')
    expect(first.status).toBe(200)
    const device = first.headers.get('x-arena-device')!
    expect(device).toMatch(/^[A-Za-z0-9_-]{43}$/)
    // Nothing new in the contract's body.
    expect(Object.keys((await first.json()) as object).sort()).toEqual(['accessToken', 'expiresIn', 'refreshToken', 'tokenType', 'user'])
    await strangerBurns(ctx, owner.username, '203.0.113')
    expect((await login(ctx, owner.username, PASSWORD, '192.0.2.77', 'A'.repeat(43))).status).toBe(429)
    const fromNewAddress = await login(ctx, owner.username, PASSWORD, '192.0.2.77', device)
    expect(fromNewAddress.status).toBe(200)
    // The same device keeps its token.
    expect(fromNewAddress.headers.get('x-arena-device')).toBe(device)
    // Another account's device token is no place of this one's.
    const other = await registerUser(ctx)
    const otherDevice = (await login(ctx, other.username, PASSWORD, '192.0.2.88')).headers.get('x-arena-device')!
    await strangerBurns(ctx, other.username, '203.0.114')
    expect((await login(ctx, other.username, PASSWORD, '192.0.2.99', device)).status).toBe(429)
    expect((await login(ctx, other.username, PASSWORD, '192.0.2.99', otherDevice)).status).toBe(200)
  }, 30_000)

  test('a brute force from 50 addresses is still capped at 5 guesses per name', async () => {
    const ctx = await app()
    const owner = await registerUser(ctx)
    expect((await login(ctx, owner.username, PASSWORD, '198.51.100.30')).status).toBe(200)
    const statuses: number[] = []
    for (let i = 0; i < 50; i++) statuses.push((await login(ctx, owner.username, `guess-${i}`, `100.64.${i}.1`)).status)
    expect(statuses.filter((s) => s === 401).length).toBe(5)
    expect(statuses.filter((s) => s === 429).length).toBe(45)
    // Guessed right from a 51st address: still refused.
    expect((await login(ctx, owner.username, PASSWORD, '100.64.99.1')).status).toBe(429)
  }, 30_000)

  test('parallel guesses from a known address are counted one by one: 5 evaluated, the rest 429', async () => {
    const ctx = await app(undefined, true)
    const owner = await registerUser(ctx)
    expect((await login(ctx, owner.username, PASSWORD, '198.51.100.35')).status).toBe(200)
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => login(ctx, owner.username, `wrong-${i}`, '198.51.100.35')))
    const statuses = results.map((r) => r.status)
    expect(statuses.filter((s) => s === 401).length).toBe(5)
    expect(statuses.filter((s) => s === 429).length).toBe(5)
  }, 30_000)

  test("the known address's allowance is capped too: a stranger behind the owner's NAT gets 5 guesses, and the owner's device still gets in", async () => {
    const ctx = await app()
    const owner = await registerUser(ctx)
    const nat = '198.51.100.40'
    const device = (await login(ctx, owner.username, PASSWORD, nat)).headers.get('x-arena-device')!
    for (let i = 0; i < 5; i++) expect((await login(ctx, owner.username, `nat-guess-${i}`, nat)).status).toBe(401)
    const blocked = await login(ctx, owner.username, PASSWORD, nat)
    expect(blocked.status).toBe(429)
    expect(Number(blocked.headers.get('retry-after'))).toBe(900)
    // The device the owner signed in with has a counter of its own.
    expect((await login(ctx, owner.username, PASSWORD, nat, device)).status).toBe(200)
    // And the allowance ends on time like any block.
    ctx.clock.advance(15 * 60_000)
    expect((await login(ctx, owner.username, PASSWORD, nat)).status).toBe(200)
  }, 30_000)

  test('an unknown name is throttled exactly like a known one: the same 401, the same 429, no device token on a failure', async () => {
    const ctx = await app()
    const owner = await registerUser(ctx)
    const known = await login(ctx, owner.username, 'wrong', '203.0.113.60')
    const unknown = await login(ctx, 'nobody_by_this_name', 'wrong', '203.0.113.60')
    expect(known.status).toBe(401)
    expect(unknown.status).toBe(401)
    expect(await known.json()).toEqual(await unknown.json())
    expect(known.headers.get('x-arena-device')).toBeNull()
    expect(unknown.headers.get('x-arena-device')).toBeNull()
    for (let i = 1; i < 5; i++) {
      expect((await login(ctx, owner.username, 'wrong', `203.0.113.${60 + i}`)).status).toBe(401)
      expect((await login(ctx, 'nobody_by_this_name', 'wrong', `203.0.113.${60 + i}`)).status).toBe(401)
    }
    expect((await login(ctx, owner.username, 'wrong', '203.0.113.70')).status).toBe(429)
    expect((await login(ctx, 'nobody_by_this_name', 'wrong', '203.0.113.70')).status).toBe(429)
  }, 30_000)

  test('places are bounded: the 10 most recent addresses are known, older ones and any unused for 60 days are forgotten and pruned', async () => {
    const ctx = await app()
    const owner = await registerUser(ctx)
    for (let i = 0; i < 12; i++) {
      expect((await login(ctx, owner.username, PASSWORD, `198.51.100.${100 + i}`)).status).toBe(200)
      ctx.clock.advance(1000)
    }
    const places = await ctx.peek.db.select().from(ctx.peek.tables.knownSignInPlaces)
    const mine = places.filter((p) => p.subject === `user:${owner.id}`)
    // 10 addresses and 10 device tokens (each login without one was given a new one).
    expect(mine.filter((p) => p.kind === 'address').length).toBe(10)
    expect(mine.filter((p) => p.kind === 'device').length).toBe(10)
    // Only hashes are stored.
    expect(JSON.stringify(mine)).not.toContain('198.51.100')
    await strangerBurns(ctx, owner.username, '203.0.113')
    expect((await login(ctx, owner.username, PASSWORD, '198.51.100.100')).status).toBe(429)
    expect((await login(ctx, owner.username, PASSWORD, '198.51.100.102')).status).toBe(200)

    ctx.clock.advance(61 * 86_400_000)
    await strangerBurns(ctx, owner.username, '203.0.115')
    expect((await login(ctx, owner.username, PASSWORD, '198.51.100.111')).status).toBe(429)
    const report = await housekeeping(ctx.services.storage, ctx.clock, 30)
    expect(report.knownPlaces).toBe(20)
    const left = await ctx.peek.db.select().from(ctx.peek.tables.knownSignInPlaces)
    expect(left.filter((p) => p.subject === `user:${owner.id}`)).toEqual([])
  }, 30_000)

  test('a deleted account leaves no known places behind', async () => {
    const ctx = await app()
    const owner = await registerUser(ctx)
    const res = await login(ctx, owner.username, PASSWORD, '198.51.100.50')
    const { accessToken } = (await res.json()) as { accessToken: string }
    const deleted = await ctx.handle(postJson('/api/v1/me/delete', { password: PASSWORD }, { authorization: `Bearer ${accessToken}`, 'x-forwarded-for': '198.51.100.50' }))
    expect(deleted.status).toBe(200)
    const places = await ctx.peek.db.select().from(ctx.peek.tables.knownSignInPlaces)
    expect(places.filter((p) => p.subject === `user:${owner.id}`)).toEqual([])
  }, 30_000)
})

describe('operators', () => {
  function consoleSignIn(ctx: TestApp, fields: Record<string, string>, address: string, device?: string) {
    return ctx.handle(
      new Request('http://localhost/console/login', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': address, ...(device ? { cookie: `arena_device=${device}` } : {}) },
        body: new URLSearchParams(fields).toString(),
      }),
    )
  }

  /** The browser's device cookie from a sign-in's answer. */
  function deviceCookieOf(res: Response): string {
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('arena_device='))
    expect(cookie).toBeDefined()
    return /^arena_device=([^;]+)/.exec(cookie!)![1]!
  }

  async function strangerBurnsConsole(ctx: TestApp, name: string, prefix: string) {
    for (let i = 0; i < 5; i++) expect((await consoleSignIn(ctx, { name, password: 'a stranger guessing' }, `${prefix}.${i}`)).status).toBe(401)
    expect((await consoleSignIn(ctx, { name, password: OPERATOR_PASSWORD }, `${prefix}.200`)).status).toBe(429)
  }

  test('console: after strangers burn the name, the operator signs in from its known address, and with its device cookie from a new one', async () => {
    const ctx = await app()
    const { password } = await ctx.services.operators.create({ name: 'night-shift', role: 'moderator' }, cliActor(ctx))
    const first = await consoleSignIn(ctx, { name: 'night-shift', password, newPassword: OPERATOR_PASSWORD }, '198.51.100.60')
    expect(first.status).toBe(303)
    const device = deviceCookieOf(first)
    await strangerBurnsConsole(ctx, 'night-shift', '203.0.113')
    expect((await consoleSignIn(ctx, { name: 'night-shift', password: OPERATOR_PASSWORD }, '198.51.100.60')).status).toBe(303)
    expect((await consoleSignIn(ctx, { name: 'night-shift', password: OPERATOR_PASSWORD }, '192.0.2.61')).status).toBe(429)
    const withCookie = await consoleSignIn(ctx, { name: 'night-shift', password: OPERATOR_PASSWORD }, '192.0.2.61', device)
    expect(withCookie.status).toBe(303)
    expect(deviceCookieOf(withCookie)).toBe(device)
    // A stranger behind the known address gets 5 guesses there, no more.
    for (let i = 0; i < 5; i++) expect((await consoleSignIn(ctx, { name: 'night-shift', password: `nat-${i}` }, '198.51.100.60')).status).toBe(401)
    expect((await consoleSignIn(ctx, { name: 'night-shift', password: OPERATOR_PASSWORD }, '198.51.100.60')).status).toBe(429)
  }, 30_000)

  test('API sign-in (POST /admin/sessions): the x-arena-device token works as the console cookie does; 50 addresses stay capped at 5', async () => {
    const ctx = await app()
    const op = await signedInOperator(ctx, 'viewer')
    const signIn = (password: string, address: string, device?: string) =>
      ctx.handle(postJson('/api/v1/admin/sessions', { name: op.operator.name, password }, { 'x-forwarded-for': address, ...(device ? { 'x-arena-device': device } : {}) }))
    const first = await signIn(OPERATOR_PASSWORD, '198.51.100.70')
    expect(first.status).toBe(201)
    const device = first.headers.get('x-arena-device')!
    const statuses: number[] = []
    for (let i = 0; i < 50; i++) statuses.push((await signIn(`guess-${i}`, `100.65.${i}.1`)).status)
    expect(statuses.filter((s) => s === 401).length).toBe(5)
    expect(statuses.filter((s) => s === 429).length).toBe(45)
    expect((await signIn(OPERATOR_PASSWORD, '192.0.2.71')).status).toBe(429)
    expect((await signIn(OPERATOR_PASSWORD, '192.0.2.71', device)).status).toBe(201)
  }, 30_000)

  test('TOTP: strangers burning the name do not stop the code step from a known address; codes guessed there are capped at 5', async () => {
    const ctx = await app()
    const op = await signedInOperator(ctx, 'finance')
    const by = ctx.services.audit.actor({ id: op.operator.id, name: op.operator.name, role: 'finance' }, 'console')
    const { secret } = await ctx.services.operatorTotp.beginTotp(op.operator.id, OPERATOR_PASSWORD)
    await ctx.services.operatorTotp.confirmTotp(op.operator.id, totpCode(secret, ctx.clock.now()), by)
    const name = op.operator.name
    ctx.clock.advance(30_000)
    const first = await consoleSignIn(ctx, { name, password: OPERATOR_PASSWORD, totp: totpCode(secret, ctx.clock.now()) }, '198.51.100.80')
    expect(first.status).toBe(303)
    await strangerBurnsConsole(ctx, name, '203.0.113')
    ctx.clock.advance(30_000)
    expect((await consoleSignIn(ctx, { name, password: OPERATOR_PASSWORD, totp: totpCode(secret, ctx.clock.now()) }, '198.51.100.80')).status).toBe(303)

    // Someone at that address who has the password guesses codes: 5 tries, then the place is blocked too.
    ctx.clock.advance(30_000)
    const code = totpCode(secret, ctx.clock.now())
    const wrong = code === '000000' ? '111111' : '000000'
    for (let i = 0; i < 5; i++) expect((await consoleSignIn(ctx, { name, password: OPERATOR_PASSWORD, totp: wrong }, '198.51.100.80')).status).toBe(401)
    expect((await consoleSignIn(ctx, { name, password: OPERATOR_PASSWORD, totp: code }, '198.51.100.80')).status).toBe(429)
    // From elsewhere the name's own block still holds.
    expect((await consoleSignIn(ctx, { name, password: OPERATOR_PASSWORD, totp: code }, '192.0.2.81')).status).toBe(429)
  }, 30_000)
})

describe('two instances on one database', () => {
  test('an address known from a login on one instance is known on the other', async () => {
    const dataDir = tempDir()
    const one = await app(dataDir)
    const two = await app(dataDir)
    const owner = await registerUser(one)
    expect((await login(one, owner.username, PASSWORD, '198.51.100.90')).status).toBe(200)
    two.clock.set(one.clock.now())
    await strangerBurns(two, owner.username, '203.0.113')
    expect((await login(one, owner.username, PASSWORD, '203.0.113.201')).status).toBe(429)
    expect((await login(two, owner.username, PASSWORD, '198.51.100.90')).status).toBe(200)
  }, 30_000)
})

describe('the SDK', () => {
  test('keeps the device token it was given and sends it back: a new client holding it gets in while the name is blocked', async () => {
    const ctx = await app()
    const owner = await registerUser(ctx)
    let kept: string | undefined
    const first = sdkClient(ctx, { onDeviceToken: (token) => (kept = token) })
    await first.client.auth.login(owner.username, PASSWORD)
    expect(kept).toMatch(/^[A-Za-z0-9_-]{43}$/)
    await strangerBurns(ctx, owner.username, '203.0.113')
    // Without it (the SDK's requests here carry no address: only the device can be known), blocked.
    const stranger = sdkClient(ctx)
    const refused = await stranger.client.auth.login(owner.username, PASSWORD).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(ApiError)
    expect((refused as ApiError).code).toBe('rate_limited')
    const again = sdkClient(ctx, { deviceToken: kept! })
    expect((await again.client.auth.login(owner.username, PASSWORD)).id).toBe(owner.id)
    expect(again.sent.at(-1)!.headers.get('x-arena-device')).toBe(kept!)
  }, 30_000)
})
