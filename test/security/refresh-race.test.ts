// Invariant: concurrent rotations of one refresh token never log the player
// out while the retry grace is on (contract §7: two tabs, a retry after a
// timeout): every one gets a working pair, and the session lives. With the
// grace off (0), exactly one wins and the losers are replays.
import type { TestApp } from '../helpers/app'
import { afterAll, describe, expect, test, beforeAll } from 'bun:test'
import { eq } from 'drizzle-orm'
import { createTestApp } from '../helpers/app'
import { login, me, registerUser, rotate, type Tokens } from '../helpers/auth'

const sidOf = (tokens: Tokens) => JSON.parse(Buffer.from(tokens.accessToken.split('.')[1]!, 'base64url').toString()).sid as string

describe('with the retry grace (default)', () => {
  let ctx!: TestApp
  beforeAll(async () => {
    ctx = await createTestApp()
  })
  afterAll(() => ctx.close())

  test('12 concurrent rotations of one token: all 200, each pair works, the session lives', async () => {
    const user = await registerUser(ctx)
    const tokens = await login(ctx, user.username)
    const results = await Promise.all(Array.from({ length: 12 }, () => rotate(ctx, tokens)))
    expect(results.map((r) => r.status)).toEqual(Array(12).fill(200))
    const pairs = (await Promise.all(results.map((r) => r.json()))) as Tokens[]
    expect(new Set(pairs.map((p) => p.refreshToken)).size).toBe(12)
    for (const pair of pairs) expect((await me(ctx, pair.accessToken)).status).toBe(200)
    // Each new refresh token rotates once more, without any of them revoking the session.
    for (const pair of pairs) expect((await rotate(ctx, pair)).status).toBe(200)
    const { authSessions } = ctx.peek.tables
    expect((await ctx.peek.db.select().from(authSessions).where(eq(authSessions.id, sidOf(tokens))))[0]!.revokedAt).toBeNull()
  })
})

describe('with the grace off', () => {
  let ctx!: TestApp
  beforeAll(async () => {
    ctx = await createTestApp({ env: { ARENA_REFRESH_REUSE_GRACE_S: '0' } })
  })
  afterAll(() => ctx.close())

  test('12 concurrent rotations of one token: exactly one 200', async () => {
    const user = await registerUser(ctx)
    const tokens = await login(ctx, user.username)
    const results = await Promise.all(Array.from({ length: 12 }, () => rotate(ctx, tokens)))
    const statuses = results.map((r) => r.status)
    expect(statuses.filter((s) => s === 200).length).toBe(1)
    expect(statuses.filter((s) => s === 401).length).toBe(11)
    // One token spent, one issued by the single winner: no second branch of the chain.
    const { refreshTokens } = ctx.peek.tables
    expect((await ctx.peek.db.select().from(refreshTokens).where(eq(refreshTokens.sessionId, sidOf(tokens)))).length).toBe(2)
  })
})
