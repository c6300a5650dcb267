// Invariant: no client can send more than its route group's limit in a
// window, per client address, per account and per game (contract §20), on
// one instance or several: the request over it is 429 rate_limited with
// Retry-After, and every answer of a limited route, success or error, says
// the policies (RateLimit-Policy) and what is left of them (RateLimit) as
// draft-ietf-httpapi-ratelimit-headers writes them. The address is the
// socket's unless ARENA_TRUST_PROXY, and then the entry the proxy appended:
// an X-Forwarded-For the client wrote never moves it to a fresh counter.
import { afterAll, describe, expect, test } from 'bun:test'
import { createTestApp, loseDatabase, onEngine, postJson, req, tempDir, type TestApp } from '../helpers/app'
import { describeOnEngine } from '../helpers/engine'
import { ADMIN_TOKEN, admin, createGame } from '../helpers/arena'
import { bearer, login, registerUser } from '../helpers/auth'
import { ConfigError, loadConfig } from '../../src/config'
import { ROUTE_GROUPS } from '../../src/shared/rate-limit'
import { housekeeping } from '../../src/modules/events/housekeeping'

const apps: TestApp[] = []
afterAll(async () => {
  for (const app of apps) await app.close()
})

/**
 * On PostgreSQL the windows are the database's: fixed, aligned on multiples of
 * their length from the epoch, by the real clock. A test that counts up to a
 * limit must not straddle a window's end (its counter would start again and
 * the request over the limit pass): wait for the next window when less than
 * `roomMs` is left of this one. In process (SQLite) the window follows the
 * app's clock, which only a test moves.
 */
async function roomInWindow(windowS = 60, roomMs = 8_000): Promise<void> {
  if (!onEngine('postgres')) return
  const windowMs = windowS * 1000
  const left = windowMs - (Date.now() % windowMs)
  if (left < roomMs) await Bun.sleep(left + 50)
}

/** An app with the limits a server runs with, and `ARENA_RATE_LIMITS` when given; on PostgreSQL, early enough in a minute's window for the test to count up to a limit. */
async function app(env: Record<string, string> = {}, dataDir?: string): Promise<TestApp> {
  const created = await createTestApp({ rateLimits: 'defaults', env: { ARENA_ADMIN_TOKEN: ADMIN_TOKEN, ...env }, ...(dataDir ? { dataDir } : {}) })
  apps.push(created)
  await roomInWindow()
  return created
}

async function signedIn(ctx: TestApp): Promise<string> {
  const user = await registerUser(ctx)
  return (await login(ctx, user.username)).accessToken
}

const mint = (ctx: TestApp, token: string | null, headers: Record<string, string> = {}) =>
  ctx.handle(postJson('/api/v1/security/pin-session', {}, { ...(token ? bearer(token) : {}), ...headers }))

async function expectLimited(res: Response, policy: string) {
  expect(res.status).toBe(429)
  const body = (await res.json()) as { error: { code: string; status: number; message: string } }
  expect(body.error).toMatchObject({ code: 'rate_limited', status: 429 })
  const retryAfter = Number(res.headers.get('retry-after'))
  expect(retryAfter).toBeGreaterThanOrEqual(1)
  expect(retryAfter).toBeLessThanOrEqual(60)
  expect(res.headers.get('ratelimit-policy')).toContain(`"${policy}";q=`)
  // The policy that refused has nothing left, and says when its window ends: Retry-After.
  expect(res.headers.get('ratelimit')).toContain(`"${policy}";r=0;t=${retryAfter}`)
  expect(res.headers.get('x-request-id')).toBeTruthy()
}

describe('per client address', () => {
  test('the 601st request a minute from one address is 429 with Retry-After, RateLimit-Policy and RateLimit; the next window lets it in', async () => {
    const ctx = await app()
    for (let i = 1; i <= 600; i++) {
      const res = await ctx.handle(req('/healthz'))
      expect(res.status).toBe(200)
      if (i === 1 || i === 600) {
        expect(res.headers.get('ratelimit-policy')).toBe('"general.address";q=600;w=60')
        expect(res.headers.get('ratelimit')).toMatch(new RegExp(`^"general\\.address";r=${600 - i};t=\\d+$`))
      }
    }
    await expectLimited(await ctx.handle(req('/healthz')), 'general.address')
    // Another group's counter is its own.
    expect((await ctx.handle(postJson('/api/v1/user/login', { identifier: 'nobody', password: 'wrong password' }))).status).toBe(401)
    if (onEngine('sqlite')) {
      // In process the window follows the app's clock (PostgreSQL's follows the database's).
      ctx.clock.advance(60_000)
      expect((await ctx.handle(req('/healthz'))).status).toBe(200)
    }
  }, 60_000)

  test('errors carry the headers too: a 401, a 404 of a limited route, a 422', async () => {
    const ctx = await app()
    const unauthorized = await ctx.handle(req('/api/v1/me'))
    expect(unauthorized.status).toBe(401)
    // No account is known: only the address is counted, and said.
    expect(unauthorized.headers.get('ratelimit-policy')).toBe('"player-read.address";q=900;w=60, "player-read.account";q=600;w=60')
    expect(unauthorized.headers.get('ratelimit')).toMatch(/^"player-read\.address";r=899;t=\d+$/)
    const token = await signedIn(ctx)
    const missing = await ctx.handle(req('/api/v1/tournaments/trn_nope', { headers: bearer(token) }))
    expect(missing.status).toBe(404)
    expect(missing.headers.get('ratelimit')).toMatch(/^"player-read\.address";r=\d+;t=\d+, "player-read\.account";r=599;t=\d+$/)
    const invalid = await ctx.handle(postJson('/api/v1/user/login', { identifier: 42 }))
    expect(invalid.status).toBe(422)
    expect(invalid.headers.get('ratelimit-policy')).toBe('"sign-in.address";q=60;w=60')
  })

  test('a success names every policy of its group and what is left of each', async () => {
    const ctx = await app()
    const token = await signedIn(ctx)
    const res = await ctx.handle(req('/api/v1/me', { headers: bearer(token) }))
    expect(res.status).toBe(200)
    expect(res.headers.get('ratelimit-policy')).toBe('"player-read.address";q=900;w=60, "player-read.account";q=600;w=60')
    expect(res.headers.get('ratelimit')).toMatch(/^"player-read\.address";r=899;t=\d+, "player-read\.account";r=599;t=\d+$/)
  })
})

describe('per account', () => {
  test('an account minting PIN sessions is refused at the 11th in a minute; another account from the same address is not', async () => {
    const ctx = await app()
    const one = await signedIn(ctx)
    const two = await signedIn(ctx)
    for (let i = 0; i < 10; i++) expect((await mint(ctx, one)).status).not.toBe(429)
    await expectLimited(await mint(ctx, one), 'pin-session.account')
    const other = await mint(ctx, two)
    expect(other.status).not.toBe(429)
    expect(other.headers.get('ratelimit')).toMatch(/"pin-session\.account";r=9;/)
  })

  test('security reports: the 11th a minute from one account is 429', async () => {
    const ctx = await app()
    const token = await signedIn(ctx)
    const report = () => ctx.handle(postJson('/api/v1/security/events', { kind: 'CLIENT_TAMPER', details: {} }, bearer(token)))
    for (let i = 0; i < 10; i++) expect((await report()).status).not.toBe(429)
    await expectLimited(await report(), 'security-report.account')
  })

  test('refresh rotations: the 4th a minute from one account is 429, from whichever address it comes', async () => {
    // Each rotation stores a token and an outbox event: the account's own limit bounds what it adds.
    const ctx = await app({ ARENA_TRUST_PROXY: 'true' })
    const user = await registerUser(ctx)
    let tokens = await login(ctx, user.username)
    for (let i = 0; i < 3; i++) {
      const res = await ctx.handle(postJson('/api/v1/auth/validate', { refreshToken: tokens.refreshToken }, { ...bearer(tokens.accessToken), 'x-forwarded-for': `198.51.100.${i}` }))
      expect(res.status).toBe(200)
      tokens = (await res.json()) as typeof tokens
    }
    await expectLimited(
      await ctx.handle(postJson('/api/v1/auth/validate', { refreshToken: tokens.refreshToken }, { ...bearer(tokens.accessToken), 'x-forwarded-for': '198.51.100.99' })),
      'refresh.account',
    )
  })

  test('requests without a valid bearer count against the address alone: never the account of a token they do not hold', async () => {
    const ctx = await app()
    for (let i = 0; i < 12; i++) {
      const res = await mint(ctx, i % 2 === 0 ? null : 'not.a.token')
      expect(res.status).toBe(401)
      expect(res.headers.get('ratelimit')).toMatch(new RegExp(`^"pin-session\\.address";r=${119 - i};t=\\d+$`))
    }
  })

  test('operators are counted per operator', async () => {
    const ctx = await app({ ARENA_RATE_LIMITS: JSON.stringify({ operator: { account: { limit: 3, windowS: 60 } } }) })
    for (let i = 0; i < 3; i++) expect((await ctx.handle(req('/api/v1/admin/users', { headers: admin }))).status).toBe(200)
    await expectLimited(await ctx.handle(req('/api/v1/admin/users', { headers: admin })), 'operator.account')
    // A wrong token is no operator: its requests count against the address only.
    const wrong = await ctx.handle(req('/api/v1/admin/users', { headers: { 'x-admin-token': 'wrong' } }))
    expect(wrong.status).toBe(401)
    expect(wrong.headers.get('ratelimit')).toMatch(/^"operator\.address";r=\d+;t=\d+$/)
  })

  test('every route of a group limited per account asks for a credential (else its account could not be counted)', async () => {
    const ctx = await app()
    const accountGroups = new Set(ROUTE_GROUPS.filter((group) => group.defaults.account !== undefined).map((group) => group.name))
    let checked = 0
    for (const route of (ctx.app as unknown as { routes: { method: string; path: string }[] }).routes) {
      const group = ROUTE_GROUPS.find((candidate) => candidate.takes(route.method, route.path))!
      if (!accountGroups.has(group.name)) continue
      const path = route.path.replace(/:[A-Za-z]+/g, 'x')
      const res = await ctx.handle(new Request(`http://localhost${path}`, { method: route.method, headers: { 'content-type': 'application/json' }, ...(route.method === 'GET' ? {} : { body: '{}' }) }))
      expect({ route: `${route.method} ${route.path}`, status: res.status }).toEqual({ route: `${route.method} ${route.path}`, status: 401 })
      checked++
    }
    expect(checked).toBeGreaterThan(40)
  })
})

describe('per game', () => {
  test("a game's session issues are counted across its players; another game's are not", async () => {
    const ctx = await app({ ARENA_RATE_LIMITS: JSON.stringify({ 'game-session': { game: { limit: 3, windowS: 60 } } }) })
    const game = await createGame(ctx, 'Limited')
    const other = await createGame(ctx, 'Other')
    const tokens = [await signedIn(ctx), await signedIn(ctx)]
    const issue = (gameId: string, gameKey: string, token: string) =>
      ctx.handle(postJson(`/api/v1/game-sdk/${gameId}/sessions`, { matchId: 'mat_none' }, { ...bearer(token), 'x-game-key': gameKey }))
    for (let i = 0; i < 3; i++) expect((await issue(game.game.id, game.gameKey, tokens[i % 2]!)).status).not.toBe(429)
    const refused = await issue(game.game.id, game.gameKey, tokens[1]!)
    await expectLimited(refused, 'game-session.game')
    expect(refused.headers.get('ratelimit-policy')).toBe('"game-session.address";q=300;w=60, "game-session.account";q=30;w=60, "game-session.game";q=3;w=60')
    expect((await issue(other.game.id, other.gameKey, tokens[0]!)).status).not.toBe(429)
    // Without an accepted bearer the game is not counted: a stranger cannot spend its quota.
    const stranger = await issue(other.game.id, other.gameKey, 'not.a.token')
    expect(stranger.status).toBe(401)
    expect(stranger.headers.get('ratelimit')).toMatch(/^"game-session\.address";r=\d+;t=\d+$/)
    for (let i = 0; i < 2; i++) expect((await issue(other.game.id, other.gameKey, tokens[1]!)).status).not.toBe(429)
  })
})

describe('ARENA_RATE_LIMITS', () => {
  test('overrides a group, or switches limits off', async () => {
    const tight = await app({ ARENA_RATE_LIMITS: JSON.stringify({ general: { address: { limit: 2, windowS: 10 } } }) })
    await roomInWindow(10, 3_000)
    for (let i = 0; i < 2; i++) expect((await tight.handle(req('/healthz'))).status).toBe(200)
    const refused = await tight.handle(req('/healthz'))
    await expectLimited(refused, 'general.address')
    expect(refused.headers.get('ratelimit-policy')).toBe('"general.address";q=2;w=10')
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(10)

    const off = await app({ ARENA_RATE_LIMITS: '{"*":false}' })
    for (let i = 0; i < 700; i++) expect((await off.handle(req('/healthz'))).status).toBe(200)
    const res = await off.handle(req('/healthz'))
    expect(res.headers.get('ratelimit')).toBeNull()
    expect(res.headers.get('ratelimit-policy')).toBeNull()
  }, 30_000)

  test('"*" sets every group, a named group wins over it, false drops one dimension', () => {
    const limits = loadConfig({
      ARENA_RATE_LIMITS: JSON.stringify({ 'player-read': { account: false }, '*': { address: { limit: 5, windowS: 1 } } }),
    }).rateLimits
    expect(limits.get('general')).toEqual({ address: { limit: 5, windowS: 1 } })
    expect(limits.get('player-read')).toEqual({ address: { limit: 5, windowS: 1 } })
    expect(limits.get('pin-session')).toEqual({ address: { limit: 5, windowS: 1 }, account: { limit: 10, windowS: 60 } })
  })

  test.each([
    ['not json', 'ARENA_RATE_LIMITS must be JSON'],
    ['[1]', 'ARENA_RATE_LIMITS must be a JSON object from route group to limits'],
    ['{"reads":false}', 'ARENA_RATE_LIMITS: "reads" is not a route group (known: *, sign-in,'],
    ['{"general":3}', 'ARENA_RATE_LIMITS: "general" must be false (no limit) or an object of address, account, game limits'],
    ['{"general":{"user":false}}', 'ARENA_RATE_LIMITS: "general" has no "user" (known: address, account, game)'],
    ['{"general":{"account":{"limit":5,"windowS":60}}}', 'ARENA_RATE_LIMITS: "general" is not limited per account (it has: address)'],
    ['{"general":{"address":{"limit":0,"windowS":60}}}', 'ARENA_RATE_LIMITS: "general".address.limit must be a whole number between 1 and 10000000, got 0'],
    ['{"general":{"address":{"limit":5,"windowS":86401}}}', 'ARENA_RATE_LIMITS: "general".address.windowS must be a whole number between 1 and 86400, got 86401'],
    ['{"general":{"address":{"limit":1.5,"windowS":60}}}', '"general".address.limit must be a whole number between 1 and 10000000, got 1.5'],
    ['{"general":{"address":{"limit":5}}}', '"general".address.windowS must be a whole number between 1 and 86400, got nothing'],
    ['{"general":{"address":{"limit":5,"windowS":60,"burst":9}}}', '"general".address has an unknown field "burst" (known: limit, windowS)'],
  ])('refuses %s at start-up with a clear message', (value, message) => {
    let error: unknown
    try {
      loadConfig({ ARENA_RATE_LIMITS: value })
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as Error).message).toContain(message)
  })
})

describe('ARENA_TRUST_PROXY', () => {
  const tight = JSON.stringify({ general: { address: { limit: 2, windowS: 60 } } })
  const from = (ctx: TestApp, forwardedFor: string) => ctx.handle(req('/healthz', { headers: { 'x-forwarded-for': forwardedFor } }))

  test('on: the address the proxy appended is the client; what the client wrote left of it changes nothing', async () => {
    const ctx = await app({ ARENA_TRUST_PROXY: 'true', ARENA_RATE_LIMITS: tight })
    expect((await from(ctx, '198.51.100.1, 203.0.113.7')).status).toBe(200)
    expect((await from(ctx, '198.51.100.2, 203.0.113.7')).status).toBe(200)
    await expectLimited(await from(ctx, '198.51.100.3, 203.0.113.7'), 'general.address')
    // Another client behind the same proxy has its own counter.
    expect((await from(ctx, '203.0.113.8')).status).toBe(200)
  })

  test('off: a spoofed X-Forwarded-For is ignored, every request is the socket address', async () => {
    const ctx = await app({ ARENA_RATE_LIMITS: tight })
    expect((await from(ctx, '203.0.113.1')).status).toBe(200)
    expect((await from(ctx, '203.0.113.2')).status).toBe(200)
    await expectLimited(await from(ctx, '203.0.113.3'), 'general.address')
  })

  test('off, over a real socket: the peer address is counted, whatever X-Forwarded-For says', async () => {
    const ctx = await app({ ARENA_RATE_LIMITS: tight })
    const server = ctx.app.listen({ port: 0, hostname: '127.0.0.1' })
    try {
      const url = `http://127.0.0.1:${server.server!.port}/healthz`
      const statuses = []
      for (let i = 0; i < 3; i++) statuses.push((await fetch(url, { headers: { 'x-forwarded-for': `198.51.100.${i}` } })).status)
      expect(statuses).toEqual([200, 200, 429])
    } finally {
      await server.stop(true)
    }
  })
})

describeOnEngine('postgres', 'across instances (PostgreSQL)', () => {
  test('half an account’s quota on each instance: the next request on either is 429', async () => {
    const dataDir = tempDir()
    const one = await app({}, dataDir)
    const two = await app({}, dataDir)
    const token = await signedIn(one)
    for (let i = 0; i < 5; i++) expect((await mint(one, token)).status).not.toBe(429)
    for (let i = 0; i < 5; i++) expect((await mint(two, token)).status).not.toBe(429)
    await expectLimited(await mint(one, token), 'pin-session.account')
    await expectLimited(await mint(two, token), 'pin-session.account')
  })

  test('concurrent requests on two instances never let more than the limit through', async () => {
    const dataDir = tempDir()
    const limits = JSON.stringify({ general: { address: { limit: 25, windowS: 60 } } })
    const one = await app({ ARENA_RATE_LIMITS: limits }, dataDir)
    const two = await app({ ARENA_RATE_LIMITS: limits }, dataDir)
    const statuses = await Promise.all(Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? one : two).handle(req('/healthz')).then((res) => res.status)))
    expect(statuses.filter((status) => status === 200).length).toBe(25)
    expect(statuses.filter((status) => status === 429).length).toBe(35)
  })

  test('one instance, one turn: concurrent requests over the limit are refused exactly past it, each counted once with its own count', async () => {
    const limits = JSON.stringify({ general: { address: { limit: 25, windowS: 60 } } })
    const ctx = await app({ ARENA_RATE_LIMITS: limits })
    const answers = await Promise.all(Array.from({ length: 60 }, () => ctx.handle(req('/healthz'))))
    expect(answers.filter((res) => res.status === 200).length).toBe(25)
    expect(answers.filter((res) => res.status === 429).length).toBe(35)
    // Each allowed request got its own count: what is left runs 24 … 0, once each.
    const left = answers.filter((res) => res.status === 200).map((res) => Number(/r=(\d+)/.exec(res.headers.get('ratelimit')!)![1]))
    expect(left.sort((a, b) => a - b)).toEqual(Array.from({ length: 25 }, (_, i) => i))
    const [row] = await ctx.postgres.sql<{ count: number }[]>`SELECT count FROM rate_limit_counters WHERE policy = 'general.address'`
    expect(row!.count).toBe(60)
  })

  test("the store: one turn's hits on one key, in one statement, get distinct consecutive counts in call order; a turn over the batch size too", async () => {
    const ctx = await app()
    const store = ctx.postgres.rateLimits
    const policy = `test.${crypto.randomUUID()}`
    const windowMs = 60_000
    // 40 requests, each hitting the shared counter and one of three others.
    const counted = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        store.hit([
          { policy, key: 'shared', windowMs },
          { policy: `${policy}.by3`, key: `k${i % 3}`, windowMs },
        ]),
      ),
    )
    expect(counted.map((counts) => counts[0]!.count)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1))
    for (let k = 0; k < 3; k++) {
      const mine = counted.filter((_, i) => i % 3 === k).map((counts) => counts[1]!.count)
      expect(mine).toEqual(Array.from({ length: mine.length }, (_, i) => i + 1))
    }
    // Every count of one statement shares its window and its clock.
    expect(new Set(counted.map((counts) => counts[0]!.windowStart)).size).toBe(1)
    // 600 in one turn: more than one batch, run concurrently; still every count from 41 to 640 once.
    const more = await Promise.all(Array.from({ length: 600 }, () => store.hit([{ policy, key: 'shared', windowMs }])))
    expect(more.map((counts) => counts[0]!.count).sort((a, b) => a - b)).toEqual(Array.from({ length: 600 }, (_, i) => i + 41))
    const [row] = await ctx.postgres.sql<{ count: number }[]>`SELECT count FROM rate_limit_counters WHERE policy = ${policy} AND key = 'shared'`
    expect(row!.count).toBe(640)
  })

  test("a key PostgreSQL text cannot hold (U+0000, a lone surrogate) is counted, and does not fail its batch's other hits", async () => {
    const ctx = await app()
    const store = ctx.postgres.rateLimits
    const policy = `test.${crypto.randomUUID()}`
    const windowMs = 60_000
    const keys = ['game\u0000id', 'game\uFFFDid', 'lone\uD800', 'plain']
    const counted = await Promise.all([...keys, ...keys].map((key) => store.hit([{ policy, key, windowMs }])))
    // U+0000 and U+FFFD share a counter (the first is stored as the second); each hit its own count.
    expect(counted.map((counts) => counts[0]!.count)).toEqual([1, 2, 1, 1, 3, 4, 2, 2])
  })

  test('with the database gone the limiter lets requests through: /healthz still answers 200, the other routes meet the outage themselves', async () => {
    const ctx = await app()
    expect((await ctx.handle(req('/healthz'))).headers.get('ratelimit')).not.toBeNull()
    await loseDatabase(ctx)
    const health = await ctx.handle(req('/healthz'))
    expect(health.status).toBe(200)
    expect(health.headers.get('ratelimit')).toBeNull()
    expect(ctx.logs.some((line) => line.msg === 'rate limits not counted: the counter store failed')).toBe(true)
    const login = await ctx.handle(postJson('/api/v1/user/login', { identifier: 'someone', password: 'a password' }))
    // The route's own query meets the outage (a dropped PostgreSQL database is a 500 today), not a 429.
    expect(login.status).toBeGreaterThanOrEqual(500)
  })

  test('the counters table is bounded: housekeeping deletes the rows of ended windows', async () => {
    const ctx = await app({ ARENA_RATE_LIMITS: JSON.stringify({ general: { address: { limit: 100, windowS: 1 } } }) })
    for (let i = 0; i < 3; i++) await ctx.handle(req('/healthz'))
    const rows = async () => (await ctx.postgres.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM rate_limit_counters`)[0]!.n
    expect(await rows()).toBeGreaterThan(0)
    await Bun.sleep(1100)
    const report = await housekeeping(ctx.services.storage, ctx.clock, 30)
    expect(report.rateLimitCounters).toBeGreaterThan(0)
    expect(await rows()).toBe(0)
  })
})
