// GET /metrics: 404 without ARENA_METRICS_TOKEN, 401 without the right bearer,
// the Prometheus text format with it; request labels are route templates.
import { afterAll, describe, expect, test } from 'bun:test'
import { Elysia } from 'elysia'
import { createTestApp, onEngine, postJson, req, settle } from '../helpers/app'
import { admin, createArenaApp, createGame, playOut, players, startedTournament } from '../helpers/arena'
import { cliActor } from '../helpers/operators'
import { parseMetrics, type Sample } from '../helpers/metrics'
import { AppMetrics } from '../../src/modules/metrics'
import { funded, mint, PIN, someAddress, verify } from '../helpers/purchases'

const TOKEN = 'metrics-token-0123456789abcdef0123456789'
const probes = new Elysia().get('/probe/items/:id', ({ params }) => ({ id: params.id }))

const ctx = await createTestApp({ probes, env: { ARENA_METRICS_TOKEN: TOKEN } })
const unset = await createTestApp()
const approval = await createArenaApp({ ARENA_WITHDRAWAL_APPROVAL_ABOVE: '100', ARENA_METRICS_TOKEN: TOKEN }, { hashGate: { concurrency: 1, queue: 0 } })
afterAll(async () => {
  await approval.close()
  await ctx.close()
  await unset.close()
})

const scrapeText = async (app: { handle(request: Request): Promise<Response> } = ctx) => {
  const res = await app.handle(req('/metrics', { headers: { authorization: `Bearer ${TOKEN}` } }))
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toContain('text/plain')
  return await res.text()
}
const scrape = async (app: { handle(request: Request): Promise<Response> } = ctx) => parseMetrics(await scrapeText(app))
const value = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value

describe('GET /metrics', () => {
  test('answers 404 (as an unknown path does) when ARENA_METRICS_TOKEN is unset', async () => {
    const res = await unset.handle(req('/metrics', { headers: { authorization: `Bearer ${TOKEN}` } }))
    expect(res.status).toBe(404)
    const body = (await res.json()) as { error: { code: string } }
    expect(body.error.code).toBe('not_found')
  })

  test('answers 401 without a bearer or with a wrong one', async () => {
    const attempts: Record<string, string>[] = [{}, { authorization: 'Bearer wrong' }, { authorization: TOKEN }, { authorization: `Bearer ${TOKEN}x` }]
    for (const headers of attempts) {
      const res = await ctx.handle(req('/metrics', { headers }))
      expect(res.status).toBe(401)
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unauthorized')
    }
  })

  test('counts requests by route template, never by raw id', async () => {
    const count = (samples: Sample[]) =>
      samples.find((s) => s.name === 'arena_http_requests_total' && s.labels.route === '/probe/items/:id' && s.labels.method === 'GET' && s.labels.status === '200')?.value ?? 0
    await settle()
    const before = count(await scrape())
    for (const id of ['item-secret-1', 'item-secret-2', 'item-secret-3']) expect((await ctx.handle(req(`/probe/items/${id}`))).status).toBe(200)
    await ctx.handle(req('/no/such/thing-secret-4'))
    await settle()
    const after = await scrape()
    expect(count(after) - before).toBe(3)
    for (const sample of after) for (const value of Object.values(sample.labels)) expect(value).not.toContain('secret')
    expect(after.some((s) => s.name === 'arena_http_request_duration_seconds_count' && s.labels.route === '/probe/items/:id')).toBe(true)
    for (const name of ['arena_security_events_buffered', 'arena_hash_gate_waiting', 'arena_hash_gate_refused_total', 'arena_process_resident_memory_bytes']) {
      expect(after.some((s) => s.name === name)).toBe(true)
    }
  })
})

test('arena_withdrawals counts a withdrawal awaiting approval', async () => {
  const gauge = (samples: Sample[]) => samples.find((s) => s.name === 'arena_withdrawals' && s.labels.status === 'awaiting_approval')?.value
  expect(gauge(await scrape(approval))).toBe(0)
  const p = await funded(approval, '500')
  const res = await verify(approval, p, await mint(approval, p), { pin: PIN, amount: '250', destinationAddress: someAddress(), idempotencyKey: 'metrics-1' })
  expect(((await res.json()) as { withdrawal: { status: string } }).withdrawal.status).toBe('awaiting_approval')
  const after = await scrape(approval)
  expect(gauge(after)).toBe(1)
  expect(after.find((s) => s.name === 'arena_withdrawals' && s.labels.status === 'held')?.value).toBe(0)
})

describe('what the engine, the queues and the gates report', () => {
  test('group-commit batches and commit time match what the engine committed; reruns and size are there', async () => {
    const [p] = await players(approval, 1)
    const credit = (i: number) => approval.handle(postJson(`/api/v1/admin/wallets/${p!.userId}/credit`, { amount: '1', reference: `metrics-batch-${i}` }, admin))
    const before = await scrape(approval)
    const results = await Promise.all(Array.from({ length: 24 }, (_, i) => credit(i)))
    for (const res of results) expect(res.status).toBe(200)
    await settle()
    const after = await scrape(approval)
    const delta = (name: string) => value(after, name)! - (value(before, name) ?? 0)
    // Every credit committed, in some commit: the batch sizes add up to at least them.
    expect(delta('arena_db_commit_batch_size_sum')).toBeGreaterThanOrEqual(24)
    expect(delta('arena_db_commit_duration_seconds_count')).toBe(delta('arena_db_commit_batch_size_count'))
    expect(delta('arena_db_commit_duration_seconds_sum')).toBeGreaterThan(0)
    if (onEngine('sqlite')) {
      // SQLite: one observation per group-commit batch, its size the batch's; reruns never happen.
      expect(delta('arena_db_commit_batch_size_count')).toBeLessThanOrEqual(delta('arena_db_commit_batch_size_sum'))
      expect(value(after, 'arena_db_retries_total')).toBe(0)
    } else {
      // PostgreSQL: one transaction, one unit of work.
      expect(delta('arena_db_commit_batch_size_count')).toBe(delta('arena_db_commit_batch_size_sum'))
      expect(value(after, 'arena_db_retries_total')).toBe(approval.postgres.retries)
    }
    expect(value(after, 'arena_db_size_bytes')).toBeGreaterThan(16 * 1024)
  })

  test('SQLite: the batch histogram counts exactly the group committer\'s batches and items', async () => {
    if (!onEngine('sqlite')) return
    // Stats and a scrape of one quiet instant: a background flush may commit between the two reads; read again then.
    const quiet = async () => {
      for (;;) {
        const stats = approval.sqlite.commits.stats()
        const samples = await scrape(approval)
        if (approval.sqlite.commits.stats().batches === stats.batches) return { stats, samples }
      }
    }
    const [p] = await players(approval, 1)
    const before = await quiet()
    const results = await Promise.all(Array.from({ length: 16 }, (_, i) => approval.handle(postJson(`/api/v1/admin/wallets/${p!.userId}/credit`, { amount: '1', reference: `metrics-exact-${i}` }, admin))))
    for (const res of results) expect(res.status).toBe(200)
    const after = await quiet()
    expect(after.stats.failedBatches).toBe(before.stats.failedBatches)
    const delta = (name: string) => value(after.samples, name)! - value(before.samples, name)!
    expect(delta('arena_db_commit_batch_size_count')).toBe(after.stats.commits - before.stats.commits)
    expect(delta('arena_db_commit_batch_size_sum')).toBe(after.stats.items - before.stats.items)
    expect(after.stats.items - before.stats.items).toBeGreaterThanOrEqual(16)
  })

  test('the job queue: due, later and failed jobs, and how long the oldest due one has waited', async () => {
    const read = async () => {
      const samples = await scrape(approval)
      return { due: value(samples, 'arena_jobs', { state: 'due' })!, later: value(samples, 'arena_jobs', { state: 'later' })!, failed: value(samples, 'arena_jobs', { state: 'failed' })!, lag: value(samples, 'arena_job_lag_seconds')! }
    }
    await approval.runJobs()
    const before = await read()
    expect(before.due).toBe(0)
    expect(before.lag).toBe(0)
    const now = approval.clock.now()
    const { storage } = approval.services
    const [due, later] = await storage.write(async (tx) => [
      await tx.jobs.enqueue('metrics.probe', {}, now, new Date(now.getTime() - 90_000)),
      await tx.jobs.enqueue('metrics.probe', {}, now, new Date(now.getTime() + 3_600_000)),
    ])
    const queued = await read()
    expect(queued).toEqual({ due: 1, later: before.later + 1, failed: before.failed, lag: 90 })
    approval.clock.advance(10_000)
    expect((await read()).lag).toBe(100)
    await storage.write(async (tx) => {
      await tx.jobs.fail(due!, { attempts: 1, error: 'probe', final: true, retryAt: now, now })
      await tx.jobs.complete(later!, now)
    })
    expect(await read()).toEqual({ due: 0, later: before.later, failed: before.failed + 1, lag: 0 })
  })

  test('long polls waiting in this process', async () => {
    const [p] = await players(approval, 1)
    const gauge = async () => value(await scrape(approval), 'arena_event_polls_waiting')
    expect(await gauge()).toBe(0)
    const auth = { authorization: `Bearer ${p!.tokens.accessToken}` }
    const first = (await (await approval.handle(req('/api/v1/events', { headers: auth }))).json()) as { cursor: string }
    const polls = [0, 1].map(() => approval.handle(req(`/api/v1/events?after=${first.cursor}&wait=10`, { headers: auth })))
    for (let i = 0; i < 100 && (await gauge()) !== 2; i++) await Bun.sleep(10)
    expect(await gauge()).toBe(2)
    expect((await approval.handle(postJson(`/api/v1/admin/wallets/${p!.userId}/credit`, { amount: '1', reference: `metrics-poll-${p!.userId}` }, admin))).status).toBe(200)
    for (const poll of polls) expect((await poll).status).toBe(200)
    expect(await gauge()).toBe(0)
  })

  test('hash-gate refusals and security-event sheds are counters; event-loop lag is reported', async () => {
    const text = await scrapeText(approval)
    expect(text).toContain('# TYPE arena_hash_gate_refused_total counter')
    expect(text).toContain('# TYPE arena_security_events_shed_total counter')
    const refusedBefore = value(parseMetrics(text), 'arena_hash_gate_refused_total')!
    const gate = approval.services.hashGate
    const held = gate.admit()
    const refused = await approval.handle(postJson('/api/v1/user/login', { identifier: 'nobody-metrics', password: 'whatever-password' }))
    held.cancel()
    expect(refused.status).toBe(503)
    const after = parseMetrics(await scrapeText(approval))
    expect(value(after, 'arena_hash_gate_refused_total')).toBe(refusedBefore + 1)
    const lag = value(after, 'arena_nodejs_eventloop_lag_seconds')
    expect(Number.isFinite(lag)).toBe(true)
    expect(lag!).toBeGreaterThanOrEqual(0)
  })
})

test('a long poll woken by a commit is counted in arena_event_wake_seconds, with the time from the wake-up to its page; one that times out or finds nothing new is not', async () => {
  const [p] = await players(approval, 1)
  const auth = { authorization: `Bearer ${p!.tokens.accessToken}` }
  const poll = async (query: string) => (await (await approval.handle(req(`/api/v1/events${query}`, { headers: auth }))).json()) as { events: unknown[]; cursor: string }
  let cursor = ''
  for (;;) {
    const page = await poll(`?wait=0${cursor ? `&after=${cursor}` : ''}`)
    cursor = page.cursor
    if (page.events.length === 0) break
  }
  const before = await scrape(approval)
  const countBefore = value(before, 'arena_event_wake_seconds_count') ?? 0
  // One that waits out its second finds nothing: not counted.
  expect((await poll(`?after=${cursor}&wait=1`)).events).toEqual([])
  const waiting = poll(`?after=${cursor}&wait=10`)
  await Bun.sleep(50)
  expect((await approval.handle(postJson(`/api/v1/admin/wallets/${p!.userId}/credit`, { amount: '1', reference: `wake-metric-${p!.userId}` }, admin))).status).toBe(200)
  expect((await waiting).events.length).toBe(1)
  const after = await scrape(approval)
  expect(value(after, 'arena_event_wake_seconds_count')).toBe(countBefore + 1)
  const sum = value(after, 'arena_event_wake_seconds_sum')! - (value(before, 'arena_event_wake_seconds_sum') ?? 0)
  expect(sum).toBeGreaterThanOrEqual(0)
  expect(sum).toBeLessThan(1)
  expect(value(after, 'arena_event_wake_seconds_bucket', { le: '1' })).toBe(countBefore + 1)
})

test('a source that fails at scrape time leaves its metric out (never a 0, never a failed scrape); backup times only once there are some', async () => {
  const failing = () => {
    throw new Error('source down')
  }
  let backups: { lastSuccessAt?: number; lastBytes?: number } = {}
  const metrics = new AppMetrics({
    securityEvents: failing,
    hashGate: failing,
    withdrawals: async () => failing(),
    jobs: async () => failing(),
    pollsWaiting: failing,
    observeWakeups: () => {},
    observeSteam: () => {},
    sockets: { openSockets: failing, observe: () => {} },
    storage: { observe: () => () => {}, sizeBytes: async () => failing() },
    clock: ctx.clock,
    backups: () => backups,
    openTickets: async () => failing(),
    observeMatchmakingWaits: () => {},
    payoutsHeld: async () => failing(),
    webhookQueue: async () => failing(),
  })
  const names = new Set(parseMetrics(await metrics.registry.metrics()).map((s) => s.name))
  for (const name of ['arena_db_size_bytes', 'arena_security_events_buffered', 'arena_security_events_shed_total', 'arena_hash_gate_refused_total', 'arena_event_polls_waiting', 'arena_sockets_open', 'arena_withdrawals', 'arena_jobs', 'arena_job_lag_seconds', 'arena_matchmaking_tickets_open', 'arena_payouts_held', 'arena_webhook_queue_depth', 'arena_webhook_oldest_pending_seconds', 'arena_backup_last_success_timestamp_seconds', 'arena_backup_last_size_bytes']) {
    expect(names.has(name)).toBe(false)
  }
  expect(names.has('arena_process_resident_memory_bytes')).toBe(true)
  backups = { lastSuccessAt: 1_795_000_000_000, lastBytes: 4096 }
  const samples = parseMetrics(await metrics.registry.metrics())
  expect(value(samples, 'arena_backup_last_success_timestamp_seconds')).toBe(1_795_000_000)
  expect(value(samples, 'arena_backup_last_size_bytes')).toBe(4096)
  expect(value(samples, 'arena_backup_last_failure_timestamp_seconds')).toBeUndefined()
})

test('arena_rating_updates_total counts each player\'s rating update once its unit of work commits: a rated match 2, a correction 2, a season start 1 a player; a rolled-back count nothing', async () => {
  const kinds = ['match', 'correction', 'season_reset'] as const
  const read = async () => {
    const samples = await scrape(approval)
    return Object.fromEntries(kinds.map((kind) => [kind, value(samples, 'arena_rating_updates_total', { kind })])) as Record<(typeof kinds)[number], number | undefined>
  }
  const before = await read()
  // Every kind is there from 0.
  for (const kind of kinds) expect(before[kind]).toBeGreaterThanOrEqual(0)
  const { game, gameKey } = await createGame(approval, 'Metrics Chess')
  const people = await players(approval, 2)
  const t = await startedTournament(approval, game.id, people)
  const [match] = t.matches
  expect((await playOut(approval, game.id, gameKey, t, people, match!, match!.slot1ParticipantId!)).decision).toBe('game_advance_pending_finalization')
  expect(await read()).toEqual({ match: before.match! + 2, correction: before.correction!, season_reset: before.season_reset! })
  const corrected = await approval.handle(postJson(`/api/v1/admin/matches/${match!.id}/correct`, { winnerParticipantId: match!.slot2ParticipantId, reason: 'wrong winner reported' }, admin))
  expect(corrected.status).toBe(200)
  expect(await read()).toEqual({ match: before.match! + 2, correction: before.correction! + 2, season_reset: before.season_reset! })
  // A season starting resets each of the game's two rated players.
  const startsAt = new Date(approval.clock.now().getTime() + 60_000)
  await approval.services.ratings.createSeason(game.id, { name: 'Next', startsAt: startsAt.toISOString(), reset: 'hard' }, cliActor(approval))
  approval.clock.advance(61_000)
  await approval.runJobs()
  expect(await read()).toEqual({ match: before.match! + 2, correction: before.correction! + 2, season_reset: before.season_reset! + 2 })
  // A unit of work that counted and rolled back: nothing.
  await expect(approval.storage.write(async (tx) => {
    tx.count('ratingUpdates', 'match', 5)
    throw new Error('rolled back')
  })).rejects.toThrow('rolled back')
  await settle()
  expect((await read()).match).toBe(before.match! + 2)
})
