// Refresh rotation (POST /auth/validate) and logout (POST /user/s/logout), contract §1.
import { afterAll, describe, expect, test } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import { createTestApp, postJson } from '../helpers/app'
import { bearer, login, me, registerUser, rotate, type Tokens } from '../helpers/auth'

const ctx = await createTestApp()
afterAll(() => ctx.close())
const { outboxEvents } = ctx.peek.tables

const logout = (accessToken: string, body: unknown = {}) => ctx.handle(postJson('/api/v1/user/s/logout', body, bearer(accessToken)))

async function freshLogin() {
  const user = await registerUser(ctx)
  return { user, tokens: await login(ctx, user.username) }
}

describe('rotation', () => {
  test('gives a new pair of the same shape; both new tokens work', async () => {
    const { user, tokens } = await freshLogin()
    const res = await rotate(ctx, tokens)
    expect(res.status).toBe(200)
    const next = (await res.json()) as Tokens
    expect(next.tokenType).toBe('Bearer')
    expect(next.expiresIn).toBe(900)
    expect(next.user.id).toBe(user.id)
    expect(next.refreshToken).not.toBe(tokens.refreshToken)
    expect(next.accessToken).not.toBe(tokens.accessToken)
    expect((await me(ctx, next.accessToken)).status).toBe(200)
    expect((await rotate(ctx, next)).status).toBe(200)
  })

  test('requires the bearer token', async () => {
    const { tokens } = await freshLogin()
    const res = await ctx.handle(postJson('/api/v1/auth/validate', { refreshToken: tokens.refreshToken }))
    expect(res.status).toBe(401)
    // The refresh token was not spent by the refused call.
    expect((await rotate(ctx, tokens)).status).toBe(200)
  })

  test('an expired access token of the same session is accepted here, and only here', async () => {
    const { tokens } = await freshLogin()
    ctx.clock.advance(901_000)
    expect((await me(ctx, tokens.accessToken)).status).toBe(401)
    const res = await rotate(ctx, tokens)
    expect(res.status).toBe(200)
    const next = (await res.json()) as Tokens
    expect((await me(ctx, next.accessToken)).status).toBe(200)
  })

  test('a bearer of another session, even of the same user, cannot rotate this session\'s refresh token', async () => {
    const { user, tokens: a } = await freshLogin()
    const b = await login(ctx, user.username)
    const res = await rotate(ctx, { accessToken: b.accessToken, refreshToken: a.refreshToken })
    expect(res.status).toBe(401)
    // Refused, not spent: the rightful session can still rotate it.
    expect((await rotate(ctx, a)).status).toBe(200)
    const stranger = await freshLogin()
    expect((await rotate(ctx, { accessToken: stranger.tokens.accessToken, refreshToken: b.refreshToken })).status).toBe(401)
  })

  test('without a valid bearer the answer is 401 whatever the body, never a 422', async () => {
    for (const body of ['{}', '{"refreshToken":123}', '[]']) {
      expect((await ctx.handle(postJson('/api/v1/auth/validate', body))).status).toBe(401)
      expect((await ctx.handle(postJson('/api/v1/user/s/logout', body, bearer('garbage')))).status).toBe(401)
    }
  })

  test('an unknown refresh token is 401; a malformed body is 422', async () => {
    const { tokens } = await freshLogin()
    expect((await rotate(ctx, { accessToken: tokens.accessToken, refreshToken: 'not-a-token' })).status).toBe(401)
    expect((await ctx.handle(postJson('/api/v1/auth/validate', {}, bearer(tokens.accessToken)))).status).toBe(422)
  })

  test('the refresh token dies with the session\'s absolute lifetime (30 days)', async () => {
    const { tokens } = await freshLogin()
    ctx.clock.advance(30 * 86_400_000 + 1000)
    expect((await rotate(ctx, tokens)).status).toBe(401)
  })

  test('writes a session.refreshed event', async () => {
    const { user, tokens } = await freshLogin()
    await rotate(ctx, tokens)
    const types = (await ctx.peek.db.select().from(outboxEvents).where(eq(outboxEvents.userId, user.id)).orderBy(outboxEvents.seq)).map((e) => e.type)
    // Register mailed the verification code first.
    expect(types).toEqual(['account.code_sent', 'session.login', 'session.refreshed'])
  })
})

describe('logout', () => {
  test('revokes the session: its access and refresh tokens stop working at once', async () => {
    const { tokens } = await freshLogin()
    const res = await logout(tokens.accessToken)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ revoked: 1 })
    expect((await me(ctx, tokens.accessToken)).status).toBe(401)
    expect((await rotate(ctx, tokens)).status).toBe(401)
    // A second logout with the same access token is a 401 (contract §1).
    expect((await logout(tokens.accessToken)).status).toBe(401)
  })

  test('writes one session.logout event for the session it ends', async () => {
    const { user, tokens } = await freshLogin()
    await logout(tokens.accessToken)
    const events = await ctx.peek.db.select().from(outboxEvents).where(and(eq(outboxEvents.userId, user.id), eq(outboxEvents.type, 'session.logout')))
    expect(events.length).toBe(1)
    expect(events[0]!.data).toMatchObject({ reason: 'logout' })
  })

  test('{ "all": true } counts only sessions that were still live', async () => {
    const { user, tokens: old } = await freshLogin()
    ctx.clock.advance(30 * 86_400_000 + 1000) // the first session has now expired
    const recent = await login(ctx, user.username)
    expect((await rotate(ctx, old)).status).toBe(401)
    expect(await (await logout(recent.accessToken, { all: true })).json()).toEqual({ revoked: 1 })
  })

  test('works without a body', async () => {
    const { tokens } = await freshLogin()
    const res = await ctx.handle(new Request('http://localhost/api/v1/user/s/logout', { method: 'POST', headers: bearer(tokens.accessToken) }))
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ revoked: 1 })
  })

  test('logging out one session leaves another session of the same user alive', async () => {
    const { user, tokens: first } = await freshLogin()
    const second = await login(ctx, user.username)
    await logout(first.accessToken)
    expect((await me(ctx, first.accessToken)).status).toBe(401)
    expect((await me(ctx, second.accessToken)).status).toBe(200)
    expect((await rotate(ctx, second)).status).toBe(200)
  })

  test('{ "all": true } ends every session of the user, and no other user\'s', async () => {
    const { user, tokens: first } = await freshLogin()
    const others = [await login(ctx, user.username), await login(ctx, user.username)]
    const stranger = await freshLogin()
    const res = await logout(first.accessToken, { all: true })
    expect(await res.json()).toEqual({ revoked: 3 })
    for (const t of [first, ...others]) {
      expect((await me(ctx, t.accessToken)).status).toBe(401)
      expect((await rotate(ctx, t)).status).toBe(401)
    }
    expect((await me(ctx, stranger.tokens.accessToken)).status).toBe(200)
    const events = await ctx.peek.db.select().from(outboxEvents).where(and(eq(outboxEvents.userId, user.id), eq(outboxEvents.type, 'session.logout')))
    expect(events.length).toBe(3)
  })

  test('a body that is not { all?: boolean } is 422 and revokes nothing', async () => {
    const { tokens } = await freshLogin()
    for (const body of [{ all: 'yes' }, { all: null }, 123, '"x"', [1, 2], true]) {
      const res = await logout(tokens.accessToken, typeof body === 'string' ? body : JSON.stringify(body))
      expect(res.status).toBe(422)
    }
    expect((await me(ctx, tokens.accessToken)).status).toBe(200)
  })
})
