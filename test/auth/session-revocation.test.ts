// Ending sessions one by one (DELETE /me/sessions/{id}) and "everywhere else"
// (POST /user/s/logout { others: true }), contract §8, through HTTP.
import { afterAll, describe, expect, test } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import { createTestApp, postJson, req } from '../helpers/app'
import { bearer, login, me, registerUser, rotate } from '../helpers/auth'

const ctx = await createTestApp()
afterAll(() => ctx.close())
const { outboxEvents, authSessions } = ctx.peek.tables

const revoke = (accessToken: string, id: string) => ctx.handle(req(`/api/v1/me/sessions/${encodeURIComponent(id)}`, { method: 'DELETE', headers: bearer(accessToken) }))
const logout = (accessToken: string, body: unknown) => ctx.handle(postJson('/api/v1/user/s/logout', body, bearer(accessToken)))

async function sessionsOf(accessToken: string) {
  const res = await ctx.handle(req('/api/v1/me/sessions', { headers: bearer(accessToken) }))
  expect(res.status).toBe(200)
  return ((await res.json()) as { sessions: { id: string; current: boolean }[] }).sessions
}

async function logoutEvents(userId: string) {
  const rows = await ctx.peek.db.select().from(outboxEvents).where(and(eq(outboxEvents.userId, userId), eq(outboxEvents.type, 'session.logout')))
  return rows.map((row) => row.data as { sessionId: string; reason: string })
}

/** A user logged in three times: three sessions, with the ids GET /me/sessions shows. */
async function threeSessions() {
  const user = await registerUser(ctx)
  const tokens = [await login(ctx, user.username), await login(ctx, user.username), await login(ctx, user.username)]
  const listed = await sessionsOf(tokens[0]!.accessToken)
  expect(listed.length).toBe(3)
  // Each token's session id, as the list marks it current for that token.
  const ids = await Promise.all(tokens.map(async (t) => (await sessionsOf(t.accessToken)).find((s) => s.current)!.id))
  return { user, tokens, ids }
}

describe('DELETE /me/sessions/{id}', () => {
  test('ends another session of the caller at once: its access and refresh tokens stop working, the caller\'s do not', async () => {
    const { user, tokens, ids } = await threeSessions()
    const res = await revoke(tokens[0]!.accessToken, ids[1]!)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ revoked: 1 })
    expect((await me(ctx, tokens[1]!.accessToken)).status).toBe(401)
    expect((await rotate(ctx, tokens[1]!)).status).toBe(401)
    expect((await me(ctx, tokens[0]!.accessToken)).status).toBe(200)
    expect((await me(ctx, tokens[2]!.accessToken)).status).toBe(200)
    expect((await sessionsOf(tokens[0]!.accessToken)).map((s) => s.id).sort()).toEqual([ids[0]!, ids[2]!].sort())
    expect(await logoutEvents(user.id)).toEqual([{ sessionId: ids[1]!, reason: 'revoked' }])
    const [row] = await ctx.peek.db.select().from(authSessions).where(eq(authSessions.id, ids[1]!))
    expect(row!.revokedReason).toBe('revoked')
  })

  test('the caller may end its own session: its token then answers 401', async () => {
    const { tokens, ids } = await threeSessions()
    expect(await (await revoke(tokens[0]!.accessToken, ids[0]!)).json()).toEqual({ revoked: 1 })
    expect((await me(ctx, tokens[0]!.accessToken)).status).toBe(401)
    expect((await me(ctx, tokens[1]!.accessToken)).status).toBe(200)
  })

  test("another user's session, an unknown id and an ended session are all 404 not_found, and end nothing", async () => {
    const { user, tokens, ids } = await threeSessions()
    const stranger = await registerUser(ctx)
    const theirs = await login(ctx, stranger.username)
    const theirId = (await sessionsOf(theirs.accessToken))[0]!.id

    const foreign = await revoke(tokens[0]!.accessToken, theirId)
    expect(foreign.status).toBe(404)
    expect(((await foreign.json()) as { error: { code: string } }).error.code).toBe('not_found')
    expect((await me(ctx, theirs.accessToken)).status).toBe(200)

    expect((await revoke(tokens[0]!.accessToken, 'ses_00000000000000000000000000000000')).status).toBe(404)

    // Ended once: a second DELETE is a 404, and writes no second event.
    expect((await revoke(tokens[0]!.accessToken, ids[2]!)).status).toBe(200)
    const again = await revoke(tokens[0]!.accessToken, ids[2]!)
    expect(again.status).toBe(404)
    expect((await logoutEvents(user.id)).length).toBe(1)
    // Logged out by its own logout: 404 too.
    expect((await logout(tokens[1]!.accessToken, {})).status).toBe(200)
    expect((await revoke(tokens[0]!.accessToken, ids[1]!)).status).toBe(404)
  })

  test('an expired session is ended already: 404', async () => {
    const user = await registerUser(ctx)
    const old = await login(ctx, user.username)
    const oldId = (await sessionsOf(old.accessToken))[0]!.id
    ctx.clock.advance(30 * 86_400_000 + 1000) // past the session's absolute lifetime
    const fresh = await login(ctx, user.username)
    expect((await revoke(fresh.accessToken, oldId)).status).toBe(404)
  })

  test('without a valid bearer: 401 whatever the id; an id too long: 422', async () => {
    const { tokens, ids } = await threeSessions()
    expect((await revoke('garbage', ids[1]!)).status).toBe(401)
    expect((await me(ctx, tokens[1]!.accessToken)).status).toBe(200)
    expect((await revoke(tokens[0]!.accessToken, 'x'.repeat(65))).status).toBe(422)
  })
})

describe('POST /user/s/logout { others: true }', () => {
  test('ends every live session but the caller\'s, with reason logout_others', async () => {
    const { user, tokens, ids } = await threeSessions()
    const stranger = await registerUser(ctx)
    const theirs = await login(ctx, stranger.username)
    const res = await logout(tokens[1]!.accessToken, { others: true })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ revoked: 2 })
    expect((await me(ctx, tokens[1]!.accessToken)).status).toBe(200)
    expect((await rotate(ctx, tokens[1]!)).status).toBe(200)
    for (const t of [tokens[0]!, tokens[2]!]) {
      expect((await me(ctx, t.accessToken)).status).toBe(401)
      expect((await rotate(ctx, t)).status).toBe(401)
    }
    expect((await me(ctx, theirs.accessToken)).status).toBe(200)
    const events = await logoutEvents(user.id)
    expect(events.map((e) => e.sessionId).sort()).toEqual([ids[0]!, ids[2]!].sort())
    expect(events.every((e) => e.reason === 'logout_others')).toBe(true)
  })

  test('with no other session it ends nothing: { revoked: 0 }', async () => {
    const user = await registerUser(ctx)
    const only = await login(ctx, user.username)
    expect(await (await logout(only.accessToken, { others: true })).json()).toEqual({ revoked: 0 })
    expect((await me(ctx, only.accessToken)).status).toBe(200)
  })

  test('{ all: true, others: true } is 422 and ends nothing; { others: false } is a plain logout', async () => {
    const { tokens } = await threeSessions()
    const both = await logout(tokens[0]!.accessToken, { all: true, others: true })
    expect(both.status).toBe(422)
    expect(((await both.json()) as { error: { details: { path: string }[] } }).error.details[0]!.path).toBe('body/others')
    for (const t of tokens) expect((await me(ctx, t.accessToken)).status).toBe(200)
    expect((await logout(tokens[0]!.accessToken, { others: 'yes' })).status).toBe(422)
    expect(await (await logout(tokens[0]!.accessToken, { others: false })).json()).toEqual({ revoked: 1 })
    expect((await me(ctx, tokens[0]!.accessToken)).status).toBe(401)
    expect((await me(ctx, tokens[1]!.accessToken)).status).toBe(200)
  })
})
