// Invariant: a refresh token is good for exactly one rotation. Presenting a
// spent one after the retry grace (contract §7; its own test is
// refresh-retry-grace) is treated as theft: the whole session is revoked,
// including the tokens the legitimate rotation just issued.
import { afterAll, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { createTestApp } from '../helpers/app'
import { login, me, registerUser, rotate, spentEarlier, type Tokens } from '../helpers/auth'

const ctx = await createTestApp()
afterAll(() => ctx.close())
const { authSessions, outboxEvents } = ctx.peek.tables
// The grace runs on the database's clock (PostgreSQL's own, not the test clock): the spent stamps move back instead.
const pastGrace = (tokens: Tokens) => spentEarlier(ctx, tokens.accessToken, ctx.config.refreshReuseGraceS * 1000)

test('replaying a spent refresh token revokes the session: its newest access and refresh tokens are 401', async () => {
  const user = await registerUser(ctx)
  const stolen = await login(ctx, user.username)
  const rotated = (await (await rotate(ctx, stolen)).json()) as Tokens
  expect((await me(ctx, rotated.accessToken)).status).toBe(200)
  await pastGrace(stolen)

  const replay = await rotate(ctx, stolen)
  expect(replay.status).toBe(401)
  expect(((await replay.json()) as { error: { code: string } }).error.code).toBe('refresh_token_reused')

  expect((await me(ctx, rotated.accessToken)).status).toBe(401)
  expect((await rotate(ctx, rotated)).status).toBe(401)
  expect((await me(ctx, stolen.accessToken)).status).toBe(401)

  const sid = JSON.parse(Buffer.from(stolen.accessToken.split('.')[1]!, 'base64url').toString()).sid as string
  const session = (await ctx.peek.db.select().from(authSessions).where(eq(authSessions.id, sid)))[0]!
  expect(session.revokedReason).toBe('refresh_token_reused')
  const events = await ctx.peek.db.select().from(outboxEvents).where(eq(outboxEvents.userId, user.id))
  expect(events.map((e) => e.type)).toContain('session.reuse_revoked')
})

test('a reuse in one session leaves the user\'s other sessions alone', async () => {
  const user = await registerUser(ctx)
  const attacked = await login(ctx, user.username)
  const other = await login(ctx, user.username)
  await rotate(ctx, attacked)
  await pastGrace(attacked)
  expect((await rotate(ctx, attacked)).status).toBe(401)
  expect((await me(ctx, other.accessToken)).status).toBe(200)
})
