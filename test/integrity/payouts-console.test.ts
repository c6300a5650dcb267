// The console's Held payouts page (/console/payouts, docs/console.md): every
// role lists and reads the holds with their signals; only finance (and
// admins) get the release and void buttons, their confirmation pages and
// forms (403 for a moderator); a form without its CSRF token changes
// nothing; a release pays, a void refunds, each once; a decided hold's
// confirmation page says so (409); the dashboard and /metrics count the
// holds (arena_payouts_held) and the signals (arena_integrity_signals_total).
import { afterAll, expect, test } from 'bun:test'
import { createArenaApp, players } from '../helpers/arena'
import { holdsOf, rakedGame, references, stakedWin } from '../helpers/integrity'
import { expectLedgerSound, fund } from '../helpers/matchmaking'
import { consoleAs, textOf } from '../helpers/operators'
import { NOTICES } from '../../src/console/notices'
import { req } from '../helpers/app'
import { parseMetrics } from '../helpers/metrics'

const TOKEN = 'metrics-token-0123456789abcdef0123456789'
const ctx = await createArenaApp({ ARENA_INTEGRITY_PAIR_LIMIT: '1', ARENA_METRICS_TOKEN: TOKEN })
afterAll(() => ctx.close())

/** arena_payouts_held and arena_integrity_signals_total by signal, as /metrics reports them now. */
async function metrics(): Promise<{ held: number | undefined; signals: Record<string, number | undefined> }> {
  const res = await ctx.handle(req('/metrics', { headers: { authorization: `Bearer ${TOKEN}` } }))
  expect(res.status).toBe(200)
  const samples = parseMetrics(await res.text())
  const value = (name: string, labels: Record<string, string> = {}) => samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value
  return {
    held: value('arena_payouts_held'),
    signals: Object.fromEntries(['pair_limit', 'shared_address', 'shared_device', 'alternating', 'upset'].map((signal) => [signal, value('arena_integrity_signals_total', { signal })])),
  }
}

test('viewers see the held payouts and their signals; finance releases one and voids another through confirmation pages; a moderator is refused', async () => {
  // Every signal is reported from 0.
  expect(await metrics()).toEqual({ held: 0, signals: { pair_limit: 0, shared_address: 0, shared_device: 0, alternating: 0, upset: 0 } })
  const { game, gameKey } = await rakedGame(ctx, 'Console holds')
  const [a, b] = await players(ctx, 2)
  await fund(ctx, [a!, b!], '10')
  await stakedWin(ctx, game, gameKey, a!, b!, '1')
  const first = await stakedWin(ctx, game, gameKey, a!, b!, '1')
  const second = await stakedWin(ctx, game, gameKey, b!, a!, '1')
  const [one, two] = await holdsOf(ctx)
  expect([one!.matchId, two!.matchId]).toEqual([first, second])
  expect(await metrics()).toEqual({ held: 2, signals: { pair_limit: 2, shared_address: 0, shared_device: 0, alternating: 0, upset: 0 } })

  const viewer = await consoleAs(ctx, 'viewer')
  expect(textOf((await viewer.get('/console')).html)).toContain('2 payouts held for review')
  const list = await viewer.get('/console/payouts')
  expect(list.status).toBe(200)
  const text = textOf(list.html)
  expect(text).toContain('Held payouts')
  expect(text).toContain(`${a!.username} stake winnings 1.8 USDC`)
  expect(text).toContain('pair_limit')
  expect(text).toContain('Releasing and voiding need the finance role.')
  expect(list.html).not.toContain(`/console/payouts/${one!.id}/release`)
  const detail = await viewer.get(`/console/payouts/${one!.id}`)
  expect(textOf(detail.html)).toContain('pair_limit (matches 2, limit 1, windowHours 24)')
  expect((await viewer.get(`/console/payouts/${one!.id}/release`)).status).toBe(403)

  const moderator = await consoleAs(ctx, 'moderator')
  expect((await moderator.post(`/console/payouts/${one!.id}/release`, { reason: 'looks fine' })).status).toBe(403)

  const finance = await consoleAs(ctx, 'finance')
  const page = await finance.get('/console/payouts')
  expect(page.html).toContain(`/console/payouts/${one!.id}/release`)
  const confirm = await finance.get(`/console/payouts/${one!.id}/release`)
  expect(confirm.status).toBe(200)
  expect(textOf(confirm.html)).toContain(`${a!.username} is paid 1.8 USDC, the pot less the rake`)
  // No CSRF token: refused, nothing paid.
  expect((await finance.post(`/console/payouts/${one!.id}/release`, { reason: 'looks fine' }, null)).status).toBe(403)
  expect(await references(ctx, `stake_payout:${first}`)).toEqual([])
  const released = await finance.post(`/console/payouts/${one!.id}/release`, { reason: 'looks fine' })
  expect(released.status).toBe(303)
  expect((await finance.get(released.location!)).html).toContain(NOTICES.payout_released)
  expect(await references(ctx, `stake_payout:${first}`)).toEqual([`stake_payout:${first}`])
  // Decided: its confirmation page says so, a second form changes nothing.
  const late = await finance.get(`/console/payouts/${one!.id}/void`)
  expect(late.status).toBe(409)
  expect(textOf(late.html)).toContain('This payout was released already')
  expect((await finance.post(`/console/payouts/${one!.id}/void`, { reason: 'changed my mind' })).status).toBe(409)

  const voided = await finance.post(`/console/payouts/${two!.id}/void`, { reason: 'one person, two accounts' })
  expect(voided.status).toBe(303)
  expect(await references(ctx, `stake_refund:${second}`)).toHaveLength(2)
  const history = textOf((await viewer.get('/console/payouts?status=voided')).html)
  expect(history).toContain('one person, two accounts')
  expect(textOf((await viewer.get('/console/payouts')).html)).toContain('No payout is held.')
  expect(textOf((await viewer.get('/console')).html)).toContain('0 payouts held for review')
  expect((await metrics()).held).toBe(0)
  await expectLedgerSound(ctx)
})
