// Invariant: concurrent rotations of one refresh token let exactly one win.
// The losers present a token that is spent by then, which is a replay.
import { afterAll, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { refreshTokens } from '../../src/db/schema'
import { createTestApp } from '../helpers/app'
import { login, registerUser, rotate } from '../helpers/auth'

const ctx = createTestApp()
afterAll(() => ctx.close())

test('12 concurrent rotations of one token: exactly one 200', async () => {
  const user = await registerUser(ctx)
  const tokens = await login(ctx, user.username)
  const results = await Promise.all(Array.from({ length: 12 }, () => rotate(ctx, tokens)))
  const statuses = results.map((r) => r.status)
  expect(statuses.filter((s) => s === 200).length).toBe(1)
  expect(statuses.filter((s) => s === 401).length).toBe(11)
  const sid = JSON.parse(Buffer.from(tokens.accessToken.split('.')[1]!, 'base64url').toString()).sid as string
  // One token spent, one issued by the single winner: no second branch of the chain.
  expect(ctx.db.db.select().from(refreshTokens).where(eq(refreshTokens.sessionId, sid)).all().length).toBe(2)
})
