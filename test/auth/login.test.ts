// POST /api/v1/user/login, GET /api/v1/me, GET /api/v1/me/sessions.
import { afterAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { createTestApp, postJson, req } from '../helpers/app'
import { bearer, login, me, PASSWORD, registerUser } from '../helpers/auth'

const ctx = await createTestApp()
afterAll(() => ctx.close())
const { outboxEvents } = ctx.peek.tables

function decode(part: string) {
  return JSON.parse(Buffer.from(part, 'base64url').toString('utf8'))
}

describe('login', () => {
  test('by username, in any case: tokens, expiresIn, tokenType and the user', async () => {
    const user = await registerUser(ctx)
    const tokens = await login(ctx, user.username.toUpperCase())
    expect(tokens.tokenType).toBe('Bearer')
    expect(tokens.expiresIn).toBe(900)
    expect(tokens.user).toMatchObject({ id: user.id, email: user.email, username: user.username, country: 'DE' })
    expect(Buffer.from(tokens.refreshToken, 'base64url').length).toBeGreaterThanOrEqual(32)
  })

  test('by email, in any case', async () => {
    const user = await registerUser(ctx)
    const tokens = await login(ctx, user.email.toUpperCase())
    expect(tokens.user.id).toBe(user.id)
  })

  test('the access token is an HS256 JWT with iss, aud, typ, sub, sid and a 900 s lifetime', async () => {
    const user = await registerUser(ctx)
    const { accessToken } = await login(ctx, user.username)
    const [header, payload] = accessToken.split('.').map((p, i) => (i < 2 ? decode(p) : p))
    expect(header).toMatchObject({ alg: 'HS256', typ: 'at+jwt' })
    expect(payload).toMatchObject({ iss: 'arena', aud: 'arena-api', sub: user.id })
    expect(payload.sid).toMatch(/^ses_[0-9a-f]{32}$/)
    expect(payload.exp - Math.floor(ctx.clock.now().getTime() / 1000)).toBe(900)
  })

  test('each login is its own session, and writes a session.login event', async () => {
    const user = await registerUser(ctx)
    const a = await login(ctx, user.username)
    const b = await login(ctx, user.username)
    const sid = (token: string) => decode(token.split('.')[1]!).sid
    expect(sid(a.accessToken)).not.toBe(sid(b.accessToken))
    const events = await ctx.peek.db.select().from(outboxEvents).where(eq(outboxEvents.userId, user.id)).orderBy(outboxEvents.seq)
    expect(events.map((e) => [e.topic, e.type])).toEqual([
      ['account', 'account.code_sent'], // register mailed the verification code
      ['session', 'session.login'],
      ['session', 'session.login'],
    ])
    expect(JSON.stringify(events)).not.toContain(a.refreshToken)
  })

  test('a login from a user agent the user never logged in with is a new device: newDevice and NEW_DEVICE_LOGIN; the first login and a known agent are not', async () => {
    const user = await registerUser(ctx)
    const phone = { 'user-agent': 'DuelClient/2.1 (Android 15)' }
    const laptop = { 'user-agent': 'DuelClient/2.1 (Windows 11)' }
    await login(ctx, user.username, PASSWORD, phone) // the first login: no old device to compare with
    await login(ctx, user.username, PASSWORD, phone) // the same device again
    const third = await login(ctx, user.username, PASSWORD, laptop)
    await login(ctx, user.username, PASSWORD, laptop) // known by now
    const logins = await ctx.peek.db.select().from(outboxEvents).where(eq(outboxEvents.userId, user.id)).orderBy(outboxEvents.seq)
    expect(logins.filter((e) => e.type === 'session.login').map((e) => (e.data as { newDevice: boolean }).newDevice)).toEqual([false, false, true, false])

    await ctx.services.securityLog.flush()
    const { securityEvents } = ctx.peek.tables
    const alerts = (await ctx.peek.db.select().from(securityEvents).where(eq(securityEvents.userId, user.id))).filter((e) => e.kind === 'NEW_DEVICE_LOGIN')
    expect(alerts).toHaveLength(1)
    expect(alerts[0]).toMatchObject({ source: 'server', level: 'SAFE' })
    expect(alerts[0]!.details).toMatchObject({ sessionId: decode(third.accessToken.split('.')[1]!).sid, userAgent: laptop['user-agent'] })
  })

  test('missing or mistyped fields are 422', async () => {
    for (const body of [{}, { identifier: 'x' }, { password: 'x' }, { identifier: 1, password: 'x' }]) {
      const res = await ctx.handle(postJson('/api/v1/user/login', body))
      expect(res.status).toBe(422)
    }
  })

  test('a wrong password is 401 invalid_credentials', async () => {
    const user = await registerUser(ctx)
    const res = await ctx.handle(postJson('/api/v1/user/login', { identifier: user.username, password: `${PASSWORD}!` }))
    expect(res.status).toBe(401)
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('invalid_credentials')
  })
})

describe('me', () => {
  test('GET /me returns the user of the token', async () => {
    const user = await registerUser(ctx)
    const { accessToken } = await login(ctx, user.username)
    const res = await me(ctx, accessToken)
    expect(res.status).toBe(200)
    expect(((await res.json()) as { user: { id: string } }).user.id).toBe(user.id)
  })

  test('without a bearer token it is 401 with WWW-Authenticate', async () => {
    const res = await ctx.handle(req('/api/v1/me'))
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toContain('Bearer')
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unauthorized')
  })

  test('GET /me/sessions lists the live sessions with user agent, marking the current one', async () => {
    const user = await registerUser(ctx)
    const phone = await login(ctx, user.username, PASSWORD, { 'user-agent': 'ArenaPhone/1.0' })
    ctx.clock.advance(1000)
    const desktop = await login(ctx, user.username, PASSWORD, { 'user-agent': 'ArenaDesktop/2.0' })
    const res = await ctx.handle(req('/api/v1/me/sessions', { headers: bearer(phone.accessToken) }))
    expect(res.status).toBe(200)
    const { sessions } = (await res.json()) as { sessions: { id: string; userAgent: string; current: boolean; createdAt: string; lastUsedAt: string }[] }
    expect(sessions.length).toBe(2)
    const byAgent = Object.fromEntries(sessions.map((s) => [s.userAgent, s]))
    expect(byAgent['ArenaPhone/1.0']!.current).toBe(true)
    expect(byAgent['ArenaDesktop/2.0']!.current).toBe(false)
    expect(byAgent['ArenaDesktop/2.0']!.id).toBe(decode(desktop.accessToken.split('.')[1]!).sid)
    for (const s of sessions) expect(s.lastUsedAt >= s.createdAt).toBe(true)
  })

  test('a user agent is kept to its first 256 characters', async () => {
    const user = await registerUser(ctx)
    const tokens = await login(ctx, user.username, PASSWORD, { 'user-agent': 'U'.repeat(1000) })
    const { sessions } = (await (await ctx.handle(req('/api/v1/me/sessions', { headers: bearer(tokens.accessToken) }))).json()) as { sessions: { userAgent: string }[] }
    expect(sessions[0]!.userAgent).toBe('U'.repeat(256))
  })
})

test('while the hash gate is full, a login is refused with 503 before it reads or writes anything', async () => {
  const user = await registerUser(ctx)
  const gate = ctx.services.hashGate
  const held = Array.from({ length: gate.concurrency + gate.queue }, () => gate.admit())
  const reads = ctx.storage.read.auth
  const byUsername = reads.userByUsernameKey
  const write = ctx.storage.write
  let touched = 0
  reads.userByUsernameKey = (...args) => (touched++, byUsername.apply(reads, args))
  ctx.storage.write = ((...args: Parameters<typeof write>) => (touched++, write.apply(ctx.storage, args))) as typeof write
  try {
    const refused = await ctx.handle(postJson('/api/v1/user/login', { identifier: user.username, password: PASSWORD }))
    expect(refused.status).toBe(503)
    expect(refused.headers.get('retry-after')).toBe('1')
    expect(touched).toBe(0)
  } finally {
    reads.userByUsernameKey = byUsername
    ctx.storage.write = write
    for (const ticket of held) ticket.cancel()
  }
  expect((await ctx.handle(postJson('/api/v1/user/login', { identifier: user.username, password: PASSWORD }))).status).toBe(200)
})
