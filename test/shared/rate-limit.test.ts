// The rate limiter's pure parts (src/shared/rate-limit.ts): the fixed-window
// decider, the in-process store's windows, and which group each route falls in.
import { describe, expect, test } from 'bun:test'
import { decide, inProcessRateLimitStore, ROUTE_GROUPS, windowStartMs } from '../../src/shared/rate-limit'
import { ManualClock } from '../../src/shared/clock'

describe('decide', () => {
  // count includes this request; window [0, 60 000) ms.
  test.each([
    // count, limit, now ms → allowed, remaining, resetS
    [1, 10, 0, true, 9, 60],
    [9, 10, 30_000, true, 1, 30],
    [10, 10, 30_001, true, 0, 30],
    [11, 10, 30_001, false, 0, 30],
    [500, 10, 59_999, false, 0, 1],
    // The last second rounds up to 1, never 0: Retry-After 0 would invite an immediate retry.
    [11, 10, 59_500, false, 0, 1],
    [1, 1, 0, true, 0, 60],
    [2, 1, 1, false, 0, 60],
  ])('count %d of %d at %d ms', (count, limit, now, allowed, remaining, resetS) => {
    expect(decide(count, limit, 0, 60_000, now)).toEqual({ allowed, remaining, resetS })
  })

  test.each([
    [0, 60_000, 0],
    [59_999, 60_000, 0],
    [60_000, 60_000, 60_000],
    [1_764_000_123_456, 1000, 1_764_000_123_000],
    [1_764_000_123_456, 3_600_000, 1_764_000_000_000],
  ])('windowStartMs(%d, %d) = %d: aligned to the epoch, the same on every instance', (now, window, start) => {
    expect(windowStartMs(now, window)).toBe(start)
  })
})

describe('inProcessRateLimitStore', () => {
  test('counts per policy and key, starts over in the next window, and forgets ended windows', async () => {
    const clock = new ManualClock('2026-11-22T10:00:00.000Z')
    const store = inProcessRateLimitStore(clock)
    const hit = (key: string) => store.hit([{ policy: 'g.address', key, windowMs: 60_000 }, { policy: 'g.account', key: 'usr_1', windowMs: 1000 }]) as { count: number }[]
    expect(hit('a').map((c) => c.count)).toEqual([1, 1])
    expect(hit('a').map((c) => c.count)).toEqual([2, 2])
    expect(hit('b').map((c) => c.count)).toEqual([1, 3])
    clock.advance(1000)
    expect(hit('a').map((c) => c.count)).toEqual([3, 1])
    clock.advance(60_000)
    expect(await store.prune(clock.now().getTime())).toBe(3)
    expect(store.size()).toBe(0)
  })
})

describe('route groups', () => {
  test.each([
    ['GET', '/healthz', 'general'],
    ['GET', '/metrics', 'general'],
    ['GET', '/console/users', 'general'],
    ['POST', '/console/login', 'sign-in'],
    ['POST', '/api/v1/user/login', 'sign-in'],
    ['POST', '/api/v1/auth/validate', 'refresh'],
    ['POST', '/api/v1/admin/sessions', 'sign-in'],
    ['POST', '/api/v1/admin/games', 'operator'],
    ['GET', '/api/v1/admin/users', 'operator'],
    ['POST', '/api/v1/security/pin-session', 'pin-session'],
    ['POST', '/api/v1/security/pin-session/:id/verify', 'player-write'],
    ['POST', '/api/v1/security/events', 'security-report'],
    ['POST', '/api/v1/game-sdk/:gameId/sessions', 'game-session'],
    ['POST', '/api/v1/game-sdk/:gameId/results', 'game-result'],
    ['POST', '/api/v1/game-servers/:gameId/results', 'server-result'],
    ['GET', '/api/v1/events', 'events'],
    ['GET', '/api/v1/me', 'player-read'],
    ['DELETE', '/api/v1/me/sessions/:id', 'player-write'],
  ])('%s %s → %s', (method, route, group) => {
    expect(ROUTE_GROUPS.find((candidate) => candidate.takes(method, route))!.name).toBe(group)
  })
})
