// Device identity (issue 40): `x-arena-device` is the client's own token. A
// well-formed one (43 base64url characters) that a player's client sends is
// adopted at that player's successful sign-in, on every sign-in route
// (password, guest, OpenID Connect ID token and web exchange, Steam, device
// code), answered back and remembered (as its SHA-256) for that account; a
// malformed one is ignored and a new token answered. So one device's token
// is remembered for every account signed in from it, which `sharedPlaces`
// (the integrity signals' read) finds. The login throttle's known places
// still hold: a token becomes known for an account only at that account's
// own successful sign-in, and an operator's console cookie stays the
// server's (a made-up one is replaced, as before).
import { afterAll, beforeEach, describe, expect, test } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import { sharedPlaces } from '../../src/modules/auth/known-places'
import { sha256Hex } from '../../src/shared/crypto'
import { createTestApp, postJson, req, type TestApp } from '../helpers/app'
import { PASSWORD, registerUser } from '../helpers/auth'
import { answerOnPage, form, pollDevice, startDevice } from '../helpers/device-codes'
import { cliActor, OPERATOR_PASSWORD } from '../helpers/operators'
import { startOidcProvider } from '../helpers/oidc-provider'
import { sdkClient } from '../helpers/sdk'
import { startSteamStub } from '../helpers/steam-stub'

const CALLBACK = 'http://localhost/api/v1/auth/oidc/test/callback'
const oidc = await startOidcProvider({ redirectUris: [CALLBACK] })
const steam = startSteamStub()
const ctx = await createTestApp({
  env: {
    ARENA_TRUST_PROXY: 'true',
    // Every route's test creates accounts from the one test address.
    ARENA_GUEST_CREATE_PER_HOUR: '1000',
    ARENA_OIDC_PROVIDERS: JSON.stringify([{ name: 'test', issuer: oidc.issuer, clientId: oidc.clientId, clientSecret: oidc.clientSecret, nativeClientIds: ['com.example.game'] }]),
    ARENA_OIDC_REDIRECTS: 'https://game.example/',
    ...steam.env(),
  },
})
afterAll(async () => {
  await ctx.close()
  await oidc.close()
  await steam.close()
})
// The provider signs ID tokens by the real clock: arena's follows it.
beforeEach(() => ctx.clock.set(new Date()))

const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/
let counter = 0
const unique = (label: string) => `${label}-${++counter}-${Math.floor(Math.random() * 1e9)}`

/** A device token as a client makes one: 32 random bytes, base64url. */
function newToken(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')
}

/** How a device token is stored (src/modules/auth/known-places.ts): its SHA-256 under the `device:` prefix. */
const deviceHash = (token: string) => sha256Hex(`device:${token}`)
const addressHash = (address: string) => sha256Hex(`address:${address}`)

/** The device-token hashes remembered for a user. */
async function devicesOf(userId: string): Promise<string[]> {
  const { knownSignInPlaces: places } = ctx.peek.tables
  const rows = await ctx.peek.db
    .select({ placeHash: places.placeHash })
    .from(places)
    .where(and(eq(places.subject, `user:${userId}`), eq(places.kind, 'device')))
  return rows.map((row) => row.placeHash)
}

function login(identifier: string, password: string, address: string, device?: string) {
  return ctx.handle(postJson('/api/v1/user/login', { identifier, password }, { 'x-forwarded-for': address, ...(device === undefined ? {} : { 'x-arena-device': device }) }))
}

interface Route {
  name: string
  /** Signs a player in through the route, sending `headers`: the answer and who signed in. */
  signIn(headers: Record<string, string>): Promise<{ res: Response; userId: () => Promise<string> }>
}

const userIdOf = (res: Response) => async () => ((await res.clone().json()) as { user: { id: string } }).user.id

/** Every player sign-in route, each driven through its real HTTP flow. */
const ROUTES: Route[] = [
  {
    name: 'password (POST /user/login)',
    async signIn(headers) {
      const user = await registerUser(ctx)
      const res = await ctx.handle(postJson('/api/v1/user/login', { identifier: user.username, password: PASSWORD }, headers))
      return { res, userId: userIdOf(res) }
    },
  },
  {
    name: 'guest (POST /user/login/device)',
    async signIn(headers) {
      const res = await ctx.handle(postJson('/api/v1/user/login/device', { deviceSecret: newToken(), create: true }, headers))
      return { res, userId: userIdOf(res) }
    },
  },
  {
    name: 'OpenID Connect ID token (POST /user/login/oidc/{provider})',
    async signIn(headers) {
      const res = await ctx.handle(postJson('/api/v1/user/login/oidc/test', { idToken: await oidc.mint(unique('native')), create: true }, headers))
      return { res, userId: userIdOf(res) }
    },
  },
  {
    name: 'OpenID Connect web flow (POST /user/login/exchange)',
    async signIn(headers) {
      const started = await ctx.handle(req(`/api/v1/auth/oidc/test/start?${new URLSearchParams({ redirect: 'https://game.example/back', create: '1' })}`))
      const callback = await oidc.authorize(started.headers.get('location')!, unique('web'))
      const back = (await ctx.handle(new Request(callback.href))).headers.get('location')!
      const code = new URLSearchParams(back.slice(back.indexOf('#') + 1)).get('code')!
      const res = await ctx.handle(postJson('/api/v1/user/login/exchange', { code }, headers))
      return { res, userId: userIdOf(res) }
    },
  },
  {
    name: 'Steam (POST /user/login/steam)',
    async signIn(headers) {
      const res = await ctx.handle(postJson('/api/v1/user/login/steam', { ticket: steam.player().ticket, create: true }, headers))
      return { res, userId: userIdOf(res) }
    },
  },
  {
    name: 'device code (POST /auth/device-code/token)',
    async signIn(headers) {
      const user = await registerUser(ctx)
      const issued = await startDevice(ctx)
      expect((await answerOnPage(ctx, user.username, issued.userCode)).status).toBe(200)
      const res = await pollDevice(ctx, issued.deviceCode, headers)
      return { res, userId: async () => user.id }
    },
  },
]

describe('every player sign-in route', () => {
  for (const route of ROUTES) {
    test(`${route.name}: adopts the well-formed token sent, answers it back, remembers it for that account; nothing new in the body`, async () => {
      const token = newToken()
      const { res, userId } = await route.signIn({ 'x-arena-device': token })
      expect(res.status).toBe(200)
      expect(res.headers.get('x-arena-device')).toBe(token)
      expect(Object.keys((await res.clone().json()) as object)).not.toContain('deviceToken')
      expect(await devicesOf(await userId())).toEqual([deviceHash(token)])
    })

    test(`${route.name}: without a token, or with a malformed one, a new token is answered and only that one remembered`, async () => {
      for (const sent of [undefined, 'A'.repeat(42), 'A'.repeat(44), `${'A'.repeat(42)}=`, `${'A'.repeat(42)}+`, `${'A'.repeat(21)} ${'A'.repeat(21)}`]) {
        const { res, userId } = await route.signIn(sent === undefined ? {} : { 'x-arena-device': sent })
        expect(res.status).toBe(200)
        const answered = res.headers.get('x-arena-device')!
        expect(answered).toMatch(TOKEN_SHAPE)
        expect(answered).not.toBe(sent)
        expect(await devicesOf(await userId())).toEqual([deviceHash(answered)])
      }
    })
  }
})

describe('one device, two accounts', () => {
  test('the same token sent by two accounts is remembered for both: sharedPlaces finds it (and the shared address), not for an account elsewhere', async () => {
    const device = newToken()
    const [a, b, c] = [await registerUser(ctx), await registerUser(ctx), await registerUser(ctx)]
    // A password login and a guest sign-in from the same device and address.
    expect((await login(a.username, PASSWORD, '198.51.100.7', device)).headers.get('x-arena-device')).toBe(device)
    const guest = await ctx.handle(postJson('/api/v1/user/login/device', { deviceSecret: newToken(), create: true }, { 'x-forwarded-for': '198.51.100.7', 'x-arena-device': device }))
    expect(guest.headers.get('x-arena-device')).toBe(device)
    const guestId = ((await guest.json()) as { user: { id: string } }).user.id
    // b from the same device, another address; c from elsewhere entirely.
    expect((await login(b.username, PASSWORD, '192.0.2.8', device)).status).toBe(200)
    expect((await login(c.username, PASSWORD, '203.0.113.9', newToken())).status).toBe(200)

    const now = ctx.clock.now()
    const shared = (x: string, y: string) => sharedPlaces(ctx.services.storage.read.auth, `user:${x}`, `user:${y}`, now)
    expect(await shared(a.id, guestId)).toEqual([
      { kind: 'address', placeHash: addressHash('198.51.100.7') },
      { kind: 'device', placeHash: deviceHash(device) },
    ])
    expect(await shared(a.id, b.id)).toEqual([{ kind: 'device', placeHash: deviceHash(device) }])
    expect(await shared(b.id, a.id)).toEqual([{ kind: 'device', placeHash: deviceHash(device) }])
    expect(await shared(a.id, c.id)).toEqual([])
    // A failed sign-in remembers nothing: c trying b's name from the shared device shares nothing with b.
    expect((await login(b.username, 'not the password', '203.0.113.9', device)).status).toBe(401)
    expect(await shared(c.id, b.id)).toEqual([])
  })
})

describe('the known-places throttle with client-chosen tokens', () => {
  /** Five wrong passwords from five addresses: the name's own counter is full. */
  async function burn(identifier: string, prefix: string, device?: string) {
    for (let i = 0; i < 5; i++) expect((await login(identifier, 'a stranger guessing', `${prefix}.${i}`, device)).status).toBe(401)
    expect((await login(identifier, PASSWORD, `${prefix}.200`)).status).toBe(429)
  }

  test("a token the owner chose gets the owner in while the name is blocked; a stranger's own token, or one sent only with failures, does not", async () => {
    const owner = await registerUser(ctx)
    const stranger = await registerUser(ctx)
    const mine = newToken()
    const theirs = newToken()
    // The owner's token was never handed out by the server: adopted at the owner's sign-in.
    expect((await login(owner.username, PASSWORD, '198.51.100.20', mine)).headers.get('x-arena-device')).toBe(mine)
    // The stranger makes their own token known, for their own account.
    expect((await login(stranger.username, PASSWORD, '203.0.113.20', theirs)).headers.get('x-arena-device')).toBe(theirs)
    // Failures on the owner's name, sent with yet another token: counted on the name, never remembered.
    const failedWith = newToken()
    await burn(owner.username, '203.0.113', failedWith)
    expect((await login(owner.username, PASSWORD, '192.0.2.50', failedWith)).status).toBe(429)
    expect((await login(owner.username, PASSWORD, '192.0.2.50', theirs)).status).toBe(429)
    expect((await login(owner.username, PASSWORD, '192.0.2.50', mine)).status).toBe(200)
    expect(await devicesOf(owner.id)).toEqual([deviceHash(mine)])
  })
})

describe('operators', () => {
  function consoleSignIn(fields: Record<string, string>, address: string, cookie?: string) {
    return ctx.handle(form('/console/login', fields, { 'x-forwarded-for': address, ...(cookie ? { cookie: `arena_device=${cookie}` } : {}) }))
  }
  const cookieOf = (res: Response) => /^arena_device=([^;]+)/.exec(res.headers.getSetCookie().find((c) => c.startsWith('arena_device='))!)![1]!

  test("console sign-in keeps the server's cookie: a made-up token is replaced, not adopted; the token it was given is kept", async () => {
    const name = unique('night').slice(0, 32)
    const { password, operator } = await ctx.services.operators.create({ name, role: 'moderator' }, cliActor(ctx))
    const madeUp = newToken()
    const first = await consoleSignIn({ name, password, newPassword: OPERATOR_PASSWORD }, '198.51.100.60', madeUp)
    expect(first.status).toBe(303)
    const given = cookieOf(first)
    expect(given).toMatch(TOKEN_SHAPE)
    expect(given).not.toBe(madeUp)
    const { knownSignInPlaces: places } = ctx.peek.tables
    const remembered = async () =>
      (await ctx.peek.db.select().from(places).where(and(eq(places.subject, `operator:${operator.id}`), eq(places.kind, 'device')))).map((row) => row.placeHash)
    expect(await remembered()).toEqual([deviceHash(given)])
    const again = await consoleSignIn({ name, password: OPERATOR_PASSWORD }, '198.51.100.60', given)
    expect(again.status).toBe(303)
    expect(cookieOf(again)).toBe(given)
  })
})

describe('the SDK', () => {
  test('makes a token when none was given, sends it on every sign-in kind, and reports it; a kept one is sent as it is', async () => {
    const reported: string[] = []
    const { client, sent } = sdkClient(ctx, { onDeviceToken: (token) => reported.push(token) })
    const user = await registerUser(ctx)
    await client.auth.login(user.username, PASSWORD)
    await client.auth.loginAsGuest()
    await client.auth.loginWithIdToken('test', await oidc.mint(unique('sdk')), { create: true })
    await client.auth.loginWithSteam(steam.player().ticket, { create: true })
    const started = await ctx.handle(req(`/api/v1/auth/oidc/test/start?${new URLSearchParams({ redirect: 'https://game.example/back', create: '1' })}`))
    const callback = await oidc.authorize(started.headers.get('location')!, unique('sdk-web'))
    await client.auth.completeWebLogin((await ctx.handle(new Request(callback.href))).headers.get('location')!)
    const issued = await startDevice(ctx)
    expect((await answerOnPage(ctx, user.username, issued.userCode)).status).toBe(200)
    expect(await client.auth.checkDeviceCode(issued.deviceCode)).toMatchObject({ id: user.id })

    const token = reported[0]!
    expect(token).toMatch(TOKEN_SHAPE)
    // One report per sign-in, always the same token: the server adopted the SDK's own.
    expect(reported).toEqual(Array(6).fill(token))
    const signIns = sent.filter((r) => /^\/api\/v1\/(user\/login|auth\/device-code\/token)/.test(r.path))
    expect(signIns.map((r) => r.path)).toEqual([
      '/api/v1/user/login',
      '/api/v1/user/login/device',
      '/api/v1/user/login/oidc/test',
      '/api/v1/user/login/steam',
      '/api/v1/user/login/exchange',
      '/api/v1/auth/device-code/token',
    ])
    for (const request of signIns) expect(request.headers.get('x-arena-device')).toBe(token)
    // Not sent where it means nothing.
    expect(sent.filter((r) => !signIns.includes(r)).every((r) => !r.headers.has('x-arena-device'))).toBe(true)
    expect(await devicesOf(user.id)).toEqual([deviceHash(token)])

    // A kept token is used as it is; two clients make two different ones.
    const kept = sdkClient(ctx, { deviceToken: token })
    await kept.client.auth.loginAsGuest()
    expect(kept.sent.at(-1)!.headers.get('x-arena-device')).toBe(token)
    const other = sdkClient(ctx)
    await other.client.auth.loginAsGuest()
    expect(other.sent.at(-1)!.headers.get('x-arena-device')).toMatch(TOKEN_SHAPE)
    expect(other.sent.at(-1)!.headers.get('x-arena-device')).not.toBe(token)
  })

  test('a malformed kept token: the server answers a new one, which the SDK keeps, reports and sends from then on', async () => {
    const reported: string[] = []
    const { client, sent } = sdkClient(ctx, { deviceToken: 'not a token', onDeviceToken: (token) => reported.push(token) })
    await client.auth.loginAsGuest()
    expect(sent.at(-1)!.headers.get('x-arena-device')).toBe('not a token')
    expect(reported).toHaveLength(1)
    expect(reported[0]).toMatch(TOKEN_SHAPE)
    await client.auth.loginAsGuest()
    expect(sent.at(-1)!.headers.get('x-arena-device')).toBe(reported[0]!)
  })
})

describe('sharedPlaces (the auth store)', () => {
  test('the places both subjects signed in from since the cutoff, by kind then hash; a row older than it on either side does not count', async () => {
    const [a, b] = [`user:${unique('a')}`, `user:${unique('b')}`]
    const t = (minutes: number) => new Date(Date.UTC(2026, 10, 1, 12, minutes))
    const since = t(30)
    const rows: Array<[string, 'address' | 'device', string, Date]> = [
      // Both recent: shared.
      [a, 'device', 'd1', t(40)],
      [b, 'device', 'd1', t(31)],
      [a, 'address', 'a1', t(30)],
      [b, 'address', 'a1', t(59)],
      // a's is too old.
      [a, 'device', 'd2', t(29)],
      [b, 'device', 'd2', t(45)],
      // b's is too old.
      [a, 'address', 'a2', t(50)],
      [b, 'address', 'a2', t(10)],
      // Only one side has it.
      [a, 'device', 'd3', t(50)],
      [b, 'address', 'a3', t(50)],
    ]
    await ctx.services.storage.write(async (tx) => {
      for (const [subject, kind, place, lastSeenAt] of rows) await tx.auth.rememberPlace({ subject, kind, placeHash: sha256Hex(place), lastSeenAt }, 10)
    })
    const expected = [
      { kind: 'address' as const, placeHash: sha256Hex('a1') },
      { kind: 'device' as const, placeHash: sha256Hex('d1') },
    ]
    expect(await ctx.services.storage.read.auth.sharedPlaces(a, b, since)).toEqual(expected)
    expect(await ctx.services.storage.read.auth.sharedPlaces(b, a, since)).toEqual(expected)
    // Inside a unit of work too (where the integrity signals read it).
    expect(await ctx.services.storage.write((tx) => tx.auth.sharedPlaces(a, b, since))).toEqual(expected)
    expect(await ctx.services.storage.read.auth.sharedPlaces(a, b, t(41))).toEqual([])
    const byHash = (x: { placeHash: string }, y: { placeHash: string }) => (x.placeHash < y.placeHash ? -1 : 1)
    expect(await ctx.services.storage.read.auth.sharedPlaces(a, a, since)).toEqual([
      ...[sha256Hex('a1'), sha256Hex('a2')].map((placeHash) => ({ kind: 'address' as const, placeHash })).sort(byHash),
      ...[sha256Hex('d1'), sha256Hex('d3')].map((placeHash) => ({ kind: 'device' as const, placeHash })).sort(byHash),
    ])
  })
})
