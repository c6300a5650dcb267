// Contract §7, refresh retry grace. Invariant: a spent refresh token presented
// again within ARENA_REFRESH_REUSE_GRACE_S of the rotation that spent it, with
// a bearer of the same live session, is a retry: it gets a pair of its own and
// the first rotation's pair keeps working. From the grace's end on, the same
// request is a replay that revokes the whole session. The grace runs from the
// first rotation and is never extended by retries. The grace runs on the
// database's clock (on PostgreSQL its own; on SQLite the process's): across
// instances with skewed clocks, see refresh-retry-grace-clock-skew.test.ts.
import { afterAll, describe, expect, test, beforeAll } from 'bun:test'
import { eq } from 'drizzle-orm'
import { createTestApp, onEngine, type TestApp } from '../helpers/app'
import { login, me, registerUser, rotate, sessionIdOf, spentEarlier, type Tokens } from '../helpers/auth'

const GRACE_S = 10
const ctx = await createTestApp({ env: { ARENA_REFRESH_REUSE_GRACE_S: String(GRACE_S) } })
afterAll(() => ctx.close())

async function rotated(app: TestApp, tokens: Tokens): Promise<Tokens> {
  const res = await rotate(app, tokens)
  expect(res.status).toBe(200)
  return (await res.json()) as Tokens
}

async function expectReplay(app: TestApp, tokens: Tokens) {
  const res = await rotate(app, tokens)
  expect(res.status).toBe(401)
  expect(((await res.json()) as { error: { code: string } }).error.code).toBe('refresh_token_reused')
}

const sidOf = (tokens: Tokens) => sessionIdOf(tokens.accessToken)

/**
 * Lets `ms` pass on the grace's clock since the session's tokens were spent.
 * SQLite: the process's clock, the test's ManualClock, moved exactly. PostgreSQL:
 * the database's own clock, which no test moves: the spent stamps are moved
 * back instead (forward for a negative `ms`, a clock that stepped back).
 */
async function elapse(app: TestApp, tokens: Tokens, ms: number): Promise<void> {
  if (onEngine('sqlite')) return app.clock.advance(ms)
  await spentEarlier(app, tokens.accessToken, ms)
}
/** The end of the grace still inside it: its last millisecond; on PostgreSQL, whose clock runs on during the test, its last two seconds. */
const LAST = onEngine('sqlite') ? 1 : 2000

const revokedReason = async (app: TestApp, tokens: Tokens) => {
  const { authSessions } = app.peek.tables
  return (await app.peek.db.select().from(authSessions).where(eq(authSessions.id, sidOf(tokens))))[0]!.revokedReason
}

describe('inside the grace: a retry', () => {
  test('the last millisecond of the grace still answers a new pair, and both pairs work', async () => {
    const tokens = await login(ctx, (await registerUser(ctx)).username)
    const first = await rotated(ctx, tokens)
    await elapse(ctx, tokens, GRACE_S * 1000 - LAST)
    const retry = await rotated(ctx, tokens)
    expect(retry.refreshToken).not.toBe(first.refreshToken)
    for (const pair of [first, retry]) expect((await me(ctx, pair.accessToken)).status).toBe(200)
    // Each pair's refresh token is good for its own rotation.
    await rotated(ctx, first)
    await rotated(ctx, retry)
    expect(await revokedReason(ctx, tokens)).toBeNull()
  })

  test('a retry must carry a bearer of the same session', async () => {
    const user = await registerUser(ctx)
    const tokens = await login(ctx, user.username)
    const other = await login(ctx, user.username)
    await rotated(ctx, tokens)
    const res = await rotate(ctx, { accessToken: other.accessToken, refreshToken: tokens.refreshToken })
    expect(res.status).toBe(401)
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unauthorized')
  })

  test('a retry of a session that was logged out is refused', async () => {
    const tokens = await login(ctx, (await registerUser(ctx)).username)
    const first = await rotated(ctx, tokens)
    const out = await ctx.handle(new Request('http://localhost/api/v1/user/s/logout', { method: 'POST', headers: { authorization: `Bearer ${first.accessToken}`, 'content-type': 'application/json' }, body: '{}' }))
    expect(out.status).toBe(200)
    expect((await rotate(ctx, tokens)).status).toBe(401)
  })
})

describe('from the end of the grace on: a replay', () => {
  test('exactly at the grace the spent token revokes the session, both pairs included', async () => {
    const tokens = await login(ctx, (await registerUser(ctx)).username)
    const first = await rotated(ctx, tokens)
    await elapse(ctx, tokens, GRACE_S * 1000)
    await expectReplay(ctx, tokens)
    expect((await me(ctx, first.accessToken)).status).toBe(401)
    expect((await rotate(ctx, first)).status).toBe(401)
    expect(await revokedReason(ctx, tokens)).toBe('refresh_token_reused')
  })

  test('a clock that stepped back is no grace: a token spent "in the future" is a replay', async () => {
    const tokens = await login(ctx, (await registerUser(ctx)).username)
    await rotated(ctx, tokens)
    await elapse(ctx, tokens, -60_000)
    await expectReplay(ctx, tokens)
    if (onEngine('sqlite')) ctx.clock.advance(60_000)
  })

  test('retries do not extend the grace: it runs from the first rotation', async () => {
    const tokens = await login(ctx, (await registerUser(ctx)).username)
    await rotated(ctx, tokens)
    await elapse(ctx, tokens, GRACE_S * 1000 - 1000 - LAST)
    await rotated(ctx, tokens)
    await elapse(ctx, tokens, 1000 + LAST)
    await expectReplay(ctx, tokens)
  })
})

describe('grace 0', () => {
  let strict!: TestApp
  beforeAll(async () => {
    strict = await createTestApp({ env: { ARENA_REFRESH_REUSE_GRACE_S: '0' } })
  })
  afterAll(() => strict.close())

  test('the very next presentation of a spent token is a replay', async () => {
    const tokens = await login(strict, (await registerUser(strict)).username)
    await rotated(strict, tokens)
    await expectReplay(strict, tokens)
    expect(await revokedReason(strict, tokens)).toBe('refresh_token_reused')
  })
})
