// Invariant: a PIN lock never lasts longer than PIN_LOCK_MAX_MS (24 hours),
// however many locks came before it. The doubling (15 min, 30, 60 …) used to
// grow without end, so a few rounds of wrong PINs (a stolen session guessing,
// a player who forgot the PIN) locked the wallet for weeks. Through HTTP on
// the test clock: round after round of five wrong PINs, the Retry-After that
// mint answers is 15 min × 2^n until it reaches a day, then a day for every
// further lock; and once that day has passed, the PIN is usable again.
import { afterAll, describe, expect, test } from 'bun:test'
import { PIN_LOCK_BASE_MS, PIN_LOCK_MAX_MS, pinLockMs } from '../../src/modules/security/pin-rules'
import { createArenaApp } from '../helpers/arena'
import { login } from '../helpers/auth'
import { funded, mint, mintRaw, PIN, someAddress, verify } from '../helpers/purchases'

const ctx = await createArenaApp()
afterAll(() => ctx.close())

let key = 0
const nextKey = () => `cap-${++key}`
const WRONG = '999000'

describe('pinLockMs: the lock after n earlier locks', () => {
  test.each([
    [0, 15 * 60_000],
    [1, 30 * 60_000],
    [2, 60 * 60_000],
    [6, 16 * 3_600_000],
    [7, 24 * 3_600_000],
    [8, 24 * 3_600_000],
    [52, 24 * 3_600_000],
    [1_100, 24 * 3_600_000],
    [Number.MAX_SAFE_INTEGER, 24 * 3_600_000],
  ])('after %p locks: %p ms', (locks, ms) => {
    expect(pinLockMs(locks)).toBe(ms)
  })

  test('never above the cap, never below the first lock, for any count', () => {
    expect(PIN_LOCK_MAX_MS).toBe(86_400_000)
    for (let locks = 0; locks < 2_000; locks++) {
      const ms = pinLockMs(locks)
      expect(ms).toBeLessThanOrEqual(PIN_LOCK_MAX_MS)
      expect(ms).toBeGreaterThanOrEqual(PIN_LOCK_BASE_MS)
    }
  })
})

test('twelve locks in a row through HTTP: each Retry-After is 15 min doubling up to a day, then a day; after it the PIN works', async () => {
  const p = await funded(ctx, '10')
  const seen: number[] = []
  for (let round = 0; round < 12; round++) {
    // The access token lives 15 minutes: a fresh one for each round after the clock jumped.
    p.tokens = await login(ctx, p.username)
    let last: unknown
    for (let attempt = 1; attempt <= 5; attempt++) {
      const s = await mint(ctx, p)
      last = await (await verify(ctx, p, s, { pin: WRONG, amount: '1', destinationAddress: someAddress(), idempotencyKey: nextKey() })).json()
    }
    expect(last).toEqual({ valid: false, locked: true, attempt: 5 })
    const locked = await mintRaw(ctx, p)
    expect(locked.status).toBe(429)
    expect(((await locked.json()) as { error: { code: string } }).error.code).toBe('pin_locked')
    const retryAfterS = Number(locked.headers.get('retry-after'))
    seen.push(retryAfterS)
    expect(retryAfterS * 1000).toBeLessThanOrEqual(PIN_LOCK_MAX_MS)
    expect(retryAfterS).toBe(Math.min(900 * 2 ** round, 86_400))
    // One second before the end it is still locked; at the end it is not.
    ctx.clock.advance(retryAfterS * 1000 - 1000)
    p.tokens = await login(ctx, p.username)
    expect((await mintRaw(ctx, p)).status).toBe(429)
    ctx.clock.advance(1000)
  }
  expect(seen).toEqual([900, 1800, 3600, 7200, 14_400, 28_800, 57_600, 86_400, 86_400, 86_400, 86_400, 86_400])
  p.tokens = await login(ctx, p.username)
  const s = await mint(ctx, p)
  expect(((await (await verify(ctx, p, s, { pin: PIN, amount: '1', destinationAddress: someAddress(), idempotencyKey: nextKey() })).json()) as { valid: boolean }).valid).toBe(true)
}, 120_000)
