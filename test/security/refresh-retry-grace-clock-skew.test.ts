// Contract §7, refresh retry grace across instances. Invariant: whether a spent
// refresh token presented again is a retry (inside ARENA_REFRESH_REUSE_GRACE_S
// of the rotation that spent it) or a replay (the session revoked) is decided
// on the database's clock, never by comparing two instances' clocks: an
// instance whose clock is minutes off neither revokes a legitimate double
// rotation nor forgives a replay that came after the grace in real time.
// PostgreSQL only, on two instances of one database: SQLite has one process
// per data dir, whose clock is the database's.
import { describe, expect, test } from 'bun:test'
import { onEngine, type TestApp } from '../helpers/app'
import { describeOnEngine } from '../helpers/engine'
import { twoInstances } from '../helpers/arena'
import { login, me, registerUser, rotate, type Tokens } from '../helpers/auth'

const GRACE_S = 1
const SKEW_MS = 5 * 60_000

const instances = onEngine('postgres') ? await twoInstances({ ARENA_REFRESH_REUSE_GRACE_S: String(GRACE_S) }) : undefined

async function rotated(app: TestApp, tokens: Tokens): Promise<Tokens> {
  const res = await rotate(app, tokens)
  expect(res.status).toBe(200)
  return (await res.json()) as Tokens
}

describeOnEngine('postgres', 'two instances, one clock minutes off', () => {
  const { one, two } = instances ?? ({} as { one: TestApp; two: TestApp })

  test('a double rotation within the grace succeeds on both, whichever way the second instance\'s clock is off', async () => {
    for (const skew of [SKEW_MS, -SKEW_MS]) {
      two.clock.advance(skew)
      try {
        const tokens = await login(one, (await registerUser(one)).username)
        const first = await rotated(one, tokens)
        // The same refresh token, a moment later, to the other instance: a retry.
        const retry = await rotated(two, tokens)
        expect(retry.refreshToken).not.toBe(first.refreshToken)
        for (const pair of [first, retry]) expect((await me(one, pair.accessToken)).status).toBe(200)
        // And the other way round: spent on the skewed instance, retried on the other.
        const second = await rotated(two, first)
        expect((await rotated(one, first)).refreshToken).not.toBe(second.refreshToken)
      } finally {
        two.clock.advance(-skew)
      }
    }
  })

  test('a presentation after the grace in real time is a replay, though both instance clocks say no time has passed', async () => {
    // The test's clocks stand still: by them, the second presentation is at
    // the very instant of the first rotation (the skew a few ms, inside the grace).
    two.clock.advance(5)
    try {
      const tokens = await login(one, (await registerUser(one)).username)
      const first = await rotated(one, tokens)
      await Bun.sleep(GRACE_S * 1000 + 300)
      const res = await rotate(two, tokens)
      expect(res.status).toBe(401)
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('refresh_token_reused')
      expect((await me(one, first.accessToken)).status).toBe(401)
    } finally {
      two.clock.advance(-5)
    }
  })
})
