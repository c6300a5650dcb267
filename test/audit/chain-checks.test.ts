// The dashboard's chain checks (src/modules/operations/chain-checks.ts) stay
// cheap and never hang a page: a result younger than the maximum age is
// answered without walking; an older one is walked again; a walk longer than
// the wait is answered without (the last result, or null the first time) and
// its result shows at the next visit; two callers at once share one walk; a
// walk that fails leaves the last result. The walks here are stand-ins whose
// timing the test holds: what is under test is the scheduling, and the real
// walks are the browser test's (test/console/dashboard-chains.test.ts).
import { expect, test } from 'bun:test'
import { ManualClock } from '../../src/shared/clock'
import { ChainChecks, type ChainVerification } from '../../src/modules/operations/chain-checks'

function held() {
  let release!: (result: ChainVerification) => void
  let fail!: (error: Error) => void
  const promise = new Promise<ChainVerification>((resolve, reject) => {
    release = resolve
    fail = reject
  })
  return { promise, release, fail }
}

test('answers a fresh result without walking, walks again when it is old, waits for a slow walk only so long, and shares a walk', async () => {
  const clock = new ManualClock('2026-11-22T10:00:00.000Z')
  let walks = 0
  let next = held()
  const checks = new ChainChecks({
    clock,
    maxAgeMs: 60_000,
    waitMs: 50,
    walks: {
      audit: () => {
        walks++
        return next.promise
      },
      security: async () => ({ ok: true, rows: 0 }),
    },
  })

  // The first visit: the walk is slow, so the page answers null (checking) and the walk goes on.
  const first = await checks.recent('audit')
  expect(first).toBeNull()
  expect(walks).toBe(1)
  // A second visit meanwhile joins the same walk.
  expect(await checks.recent('audit')).toBeNull()
  expect(walks).toBe(1)
  next.release({ ok: true, rows: 7 })
  await Bun.sleep(0)
  expect(await checks.recent('audit')).toEqual({ result: { ok: true, rows: 7 }, checkedAt: new Date('2026-11-22T10:00:00.000Z') })
  expect(walks).toBe(1)

  // Old: walked again; a quick walk is waited for.
  clock.advance(60_000)
  next = held()
  const again = checks.recent('audit')
  next.release({ ok: false, rows: 3, brokenAt: 3, reason: 'edited' })
  expect(await again).toEqual({ result: { ok: false, rows: 3, brokenAt: 3, reason: 'edited' }, checkedAt: new Date('2026-11-22T10:01:00.000Z') })
  expect(walks).toBe(2)

  // A walk that fails leaves the last result, and the next visit tries again.
  clock.advance(60_000)
  next = held()
  const failing = checks.recent('audit')
  next.fail(new Error('database unavailable'))
  expect((await failing)?.result).toEqual({ ok: false, rows: 3, brokenAt: 3, reason: 'edited' })
  next = held()
  next.release({ ok: true, rows: 9 })
  expect((await checks.recent('audit'))?.result).toEqual({ ok: true, rows: 9 })
  expect(walks).toBe(4)

  // "Verify now" walks at once, however fresh the last result.
  next = held()
  next.release({ ok: true, rows: 10 })
  expect((await checks.check('audit')).result).toEqual({ ok: true, rows: 10 })
  expect((await checks.recent('audit'))?.result).toEqual({ ok: true, rows: 10 })
  expect(walks).toBe(5)
})
