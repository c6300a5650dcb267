// What matchmaking reports on GET /metrics, on both engines: the players
// waiting in each open queue (read at scrape time), the matches made by kind
// (counted once committed), and each paired ticket's wait (from its place in
// line to its pairing, observed once the pairing committed). A pairing that
// makes no match (a player who can no longer pay) counts nothing.
import { afterAll, expect, test } from 'bun:test'
import { req } from '../helpers/app'
import { admin, createArenaApp, createGame, players } from '../helpers/arena'
import { parseMetrics, type Sample } from '../helpers/metrics'
import { answerChallenge, challenge, createQueue, fund, joined } from '../helpers/matchmaking'

const TOKEN = 'metrics-token-0123456789abcdef0123456789'
const ctx = await createArenaApp({ ARENA_METRICS_TOKEN: TOKEN })
afterAll(() => ctx.close())

const scrape = async (): Promise<Sample[]> => {
  const res = await ctx.handle(req('/metrics', { headers: { authorization: `Bearer ${TOKEN}` } }))
  expect(res.status).toBe(200)
  return parseMetrics(await res.text())
}
const value = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value
const open = (samples: Sample[], game: string, queue: string) => value(samples, 'arena_matchmaking_tickets_open', { game, queue })
const made = (samples: Sample[]) => ({ queue: value(samples, 'arena_matchmaking_matches_total', { kind: 'queue' }), challenge: value(samples, 'arena_matchmaking_matches_total', { kind: 'challenge' }) })
const waits = (samples: Sample[]) => ({
  count: value(samples, 'arena_matchmaking_wait_seconds_count') ?? 0,
  sum: value(samples, 'arena_matchmaking_wait_seconds_sum') ?? 0,
  le2: value(samples, 'arena_matchmaking_wait_seconds_bucket', { le: '2' }) ?? 0,
  le5: value(samples, 'arena_matchmaking_wait_seconds_bucket', { le: '5' }) ?? 0,
  le10: value(samples, 'arena_matchmaking_wait_seconds_bucket', { le: '10' }) ?? 0,
})

test('tickets open per queue at scrape time, matches counted by kind, each paired ticket\'s wait observed once', async () => {
  const start = await scrape()
  // Every kind is there from 0.
  expect(made(start).queue).toBeGreaterThanOrEqual(0)
  expect(made(start).challenge).toBeGreaterThanOrEqual(0)
  const before = waits(start)

  const { game } = await createGame(ctx, 'Metrics queue')
  await createQueue(ctx, game.id, { name: 'ranked' })
  await createQueue(ctx, game.id, { name: 'casual' })
  // An open queue nobody waits in reads 0.
  let samples = await scrape()
  expect(open(samples, game.id, 'ranked')).toBe(0)
  expect(open(samples, game.id, 'casual')).toBe(0)

  const [a, b, c, d] = (await players(ctx, 4)) as [Awaited<ReturnType<typeof players>>[0], Awaited<ReturnType<typeof players>>[0], Awaited<ReturnType<typeof players>>[0], Awaited<ReturnType<typeof players>>[0]]
  await joined(ctx, game.id, 'ranked', a)
  ctx.clock.advance(5_000)
  await joined(ctx, game.id, 'ranked', b)
  ctx.clock.advance(2_000)
  await joined(ctx, game.id, 'ranked', c)
  await joined(ctx, game.id, 'casual', d)
  samples = await scrape()
  expect(open(samples, game.id, 'ranked')).toBe(3)
  expect(open(samples, game.id, 'casual')).toBe(1)

  // Equal displays: the oldest (a, waited 7 s) takes the older of the others (b, waited 2 s); c waits on.
  expect(await ctx.services.matchmaking.matchTick()).toBe(1)
  samples = await scrape()
  expect(open(samples, game.id, 'ranked')).toBe(1)
  expect(made(samples)).toEqual({ queue: made(start).queue! + 1, challenge: made(start).challenge! })
  const after = waits(samples)
  expect(after.count - before.count).toBe(2)
  expect(after.sum - before.sum).toBeCloseTo(9, 6)
  expect(after.le2 - before.le2).toBe(1)
  expect(after.le5 - before.le5).toBe(1)
  expect(after.le10 - before.le10).toBe(2)
  // A tick that pairs nothing observes nothing.
  expect(await ctx.services.matchmaking.matchTick()).toBe(0)
  expect(waits(await scrape())).toEqual(after)

  // An accepted challenge counts as a challenge's match, no wait.
  const sent = await challenge(ctx, game.id, c, { opponent: d.username })
  expect(sent.status).toBe(201)
  const { challenge: chl } = (await sent.json()) as { challenge: { id: string } }
  expect((await answerChallenge(ctx, chl.id, 'accept', d)).status).toBe(200)
  samples = await scrape()
  expect(made(samples)).toEqual({ queue: made(start).queue! + 1, challenge: made(start).challenge! + 1 })
  expect(waits(samples)).toEqual(after)

  // A closed queue's series goes; the other's stays.
  const closed = await ctx.handle(req(`/api/v1/admin/games/${game.id}/queues/ranked`, { method: 'DELETE', headers: admin }))
  expect(closed.status).toBe(200)
  samples = await scrape()
  expect(open(samples, game.id, 'ranked')).toBeUndefined()
  expect(open(samples, game.id, 'casual')).toBe(1)
})

test('a pairing that makes no match (a player who can no longer pay is dropped) counts no match and observes no wait', async () => {
  const { game } = await createGame(ctx, 'Metrics stakes')
  const { game: other } = await createGame(ctx, 'Metrics elsewhere')
  await createQueue(ctx, game.id, { name: 'staked', stake: '5' })
  const [a, b, c] = (await players(ctx, 3)) as [Awaited<ReturnType<typeof players>>[0], Awaited<ReturnType<typeof players>>[0], Awaited<ReturnType<typeof players>>[0]]
  await fund(ctx, [a, b, c], '5')
  await joined(ctx, game.id, 'staked', a)
  await joined(ctx, game.id, 'staked', b)
  // b's money goes into a challenge's match in another game meanwhile.
  const sent = await challenge(ctx, other.id, c, { opponent: b.username, stake: '5' })
  expect(sent.status).toBe(201)
  const { challenge: chl } = (await sent.json()) as { challenge: { id: string } }
  expect((await answerChallenge(ctx, chl.id, 'accept', b)).status).toBe(200)
  const before = await scrape()
  expect(open(before, game.id, 'staked')).toBe(2)

  expect(await ctx.services.matchmaking.matchTick()).toBe(0)
  const after = await scrape()
  // b dropped (insufficient_funds), a keeps their place; nothing made, no wait observed.
  expect(open(after, game.id, 'staked')).toBe(1)
  expect(made(after)).toEqual(made(before))
  expect(waits(after)).toEqual(waits(before))
})
