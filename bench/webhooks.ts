// npm run bench:webhooks: webhook delivery (contract §18, issue 41) against
// the compiled binary: how fast the delivery loop sends, and how long a fact
// takes from its commit to the studio's receiver.
//
//   npm run bench:webhooks [-- --engine postgres]
//
// The receivers are this process: one Bun.serve on loopback answering 200 at
// once, each endpoint a path of its own (/hook/0, /hook/1, …). The server runs
// with ARENA_WEBHOOKS_ALLOW_PRIVATE=true (the setting the webhook tests use:
// the destination check refuses loopback otherwise). The facts are
// `user.banned`, produced through the API: POST /admin/users/{id}/ban (a ban
// in force is replaced, so every ban publishes one fact), BENCH_USERS players
// in turn, each ban's reason naming it so that each delivery is matched to
// its fact. Every endpoint subscribes to `user.banned` only.
//
// Phases, first with one endpoint, then with BENCH_ENDPOINTS:
// 1. Latency at a moderate rate: BENCH_RATE bans a second for BENCH_SECONDS,
//    paced (each sent at its time, answered or not). Per delivery: from the
//    ban's answer arriving to the receiver's request (commit → receiver, less
//    the answer's own way back: a lower bound), and from sending the ban (an
//    upper bound).
// 2. Throughput, the delivery loop alone: the receivers hold their answers
//    (every endpoint's sender waits on its first attempt), BENCH_BACKLOG bans
//    are made BENCH_CONCURRENCY at a time (or as many as 7 s make: a held
//    attempt must not reach the sender's 10 s timeout), then the receivers
//    answer: the
//    deliveries a second from the release to the last delivery, with no
//    production beside them.
//
// Every fact must reach every endpoint at least once; the run counts the ones
// that did not and the repeats (at least once allows them; none is expected
// here). The server runs pinned to the last core, this process (the API
// client and the receivers) to core 0.
//
// Settings (environment): BENCH_ENDPOINTS (10), BENCH_RATE (50), BENCH_SECONDS
// (10), BENCH_BACKLOG (2000), BENCH_CONCURRENCY (16), BENCH_USERS (64),
// BENCH_BINARY (dist/arena: a wrapper script running the source under
// `bun --cpu-prof` profiles the server), BENCH_WINDOWS (a file: the drains'
// windows, named drain-<endpoints>, for bench/cpuprofile-summary.ts).
// Prints the tables, then one JSON line with the figures.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildBinary } from '../test/helpers/process'
import { startPostgres } from '../test/helpers/postgres'
import { admin, api, canPin, cores, inBatches, LOAD_CPU, loadAverage, log, METRICS_TOKEN, PASSWORD, SERVER_CPU, startArena } from './harness'

const option = (name: string) => {
  const at = process.argv.indexOf(name)
  return at === -1 ? undefined : process.argv[at + 1]
}
const ENGINE = option('--engine') ?? 'sqlite'
const ENDPOINTS = Number(process.env.BENCH_ENDPOINTS ?? 10)
const RATE = Number(process.env.BENCH_RATE ?? 50)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 2000)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16)
const USERS = Number(process.env.BENCH_USERS ?? 64)
if ((ENGINE !== 'sqlite' && ENGINE !== 'postgres') || ![ENDPOINTS, RATE, SECONDS, BACKLOG, CONCURRENCY, USERS].every((n) => Number.isInteger(n) && n > 0)) {
  throw new Error('usage: npm run bench:webhooks [-- --engine sqlite|postgres]; BENCH_ENDPOINTS, BENCH_RATE, BENCH_SECONDS, BENCH_BACKLOG, BENCH_CONCURRENCY, BENCH_USERS: positive integers')
}

// ---------------------------------------------------------------- the receivers

/** `${endpoint index} ${webhook-id}` → arrival times (more than one: a repeat). */
const arrivals = new Map<string, number[]>()
/** The fact's reason → its webhook-id (one per fact, whatever the endpoint). */
const messageOf = new Map<string, string>()
/** Requests per endpoint. */
let requests = 0
/** While set, every request waits for it before its 200. */
let gate: Promise<void> | null = null
let openGate: () => void = () => {}

const receiver = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  idleTimeout: 60,
  async fetch(request) {
    const at = performance.now()
    const endpoint = new URL(request.url).pathname.split('/')[2]!
    const id = request.headers.get('webhook-id') ?? ''
    const body = (await request.json()) as { data: { reason: string } }
    requests++
    const key = `${endpoint} ${id}`
    const seen = arrivals.get(key)
    if (seen) seen.push(at)
    else arrivals.set(key, [at])
    messageOf.set(body.data.reason, id)
    if (gate) await gate
    return new Response(null, { status: 204 })
  },
})
const hookUrl = (i: number) => `http://127.0.0.1:${receiver.port}/hook/${i}`

// ---------------------------------------------------------------- the server

log('building dist/arena from the current source')
await buildBinary()
const dataDir = join(mkdtempSync(join(tmpdir(), 'arena-bench-webhooks-')), 'data')
let engineEnv: Record<string, string> = { ARENA_METRICS_TOKEN: METRICS_TOKEN, ARENA_WEBHOOKS_ALLOW_PRIVATE: 'true' }
if (ENGINE === 'postgres') {
  // Durable, as a studio runs it (and as `npm run bench -- --engine postgres`).
  const cluster = await startPostgres({ durable: true })
  await cluster.createDatabase('arena_bench')
  engineEnv = { ...engineEnv, ARENA_DATABASE_URL: cluster.url('arena_bench'), ARENA_MASTER_KEY: Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex') }
  log(`PostgreSQL: throwaway cluster (fsync on), socket in ${cluster.socketDir}`)
}
const arena = await startArena(dataDir, process.env.BENCH_BINARY, engineEnv)
const base = arena.url
// This process (client and receivers) on the load core from here on; the server is on its own, PostgreSQL where it started.
if (canPin) await Bun.spawn(['taskset', '-a', '-cp', LOAD_CPU, String(process.pid)], { stdout: 'ignore' }).exited
log(`arena on ${base} (engine ${ENGINE}), server on cpu ${canPin ? SERVER_CPU : 'any'}, this client and the receivers on cpu ${canPin ? LOAD_CPU : 'any'}; ${USERS} players`)

const players = await inBatches(Array.from({ length: USERS }, (_, i) => i), 4, async (i) => {
  const username = `hook_${i}`
  const { user } = await api<{ user: { id: string } }>(base, 'POST', '/api/v1/user/register', { email: `${username}@bench.test`, username, password: PASSWORD, country: 'DE', accept_terms: true })
  return user.id
})

let endpoints = 0
async function addEndpoints(total: number): Promise<void> {
  for (; endpoints < total; endpoints++) await api(base, 'POST', '/api/v1/admin/webhooks', { url: hookUrl(endpoints), types: ['user.banned'] }, admin)
}

// ---------------------------------------------------------------- facts

interface Fact {
  reason: string
  sentAt: number
  answeredAt: number
  ok: boolean
}
let retried = 0

/** One ban of player `k mod USERS`, its reason `reason`: one user.banned fact. A 503 is sent again (at most 10 times), as a client would. */
async function ban(k: number, reason: string): Promise<Fact> {
  const sentAt = performance.now()
  for (let attempt = 1; ; attempt++) {
    const res = await fetch(`${base}/api/v1/admin/users/${players[k % USERS]}/ban`, { method: 'POST', headers: { ...admin, 'content-type': 'application/json' }, body: JSON.stringify({ reason }) })
    await res.arrayBuffer()
    if (res.status === 503 && attempt < 10) {
      retried++
      await Bun.sleep(50 * attempt)
      continue
    }
    return { reason, sentAt, answeredAt: performance.now(), ok: res.ok }
  }
}

/** Every endpoint's arrivals of the fact (empty for an endpoint it has not reached). */
const arrivalsOf = (fact: Fact, endpoint: number) => {
  const id = messageOf.get(fact.reason)
  return id === undefined ? [] : (arrivals.get(`${endpoint} ${id}`) ?? [])
}

async function allDelivered(facts: Fact[], ms = 60_000): Promise<boolean> {
  const deadline = performance.now() + ms
  for (;;) {
    if (facts.every((f) => !f.ok || Array.from({ length: endpoints }, (_, e) => arrivalsOf(f, e).length > 0).every(Boolean))) return true
    if (performance.now() > deadline) return false
    await Bun.sleep(10)
  }
}

const round2 = (n: number) => Math.round(n * 100) / 100
function quantiles(values: number[]): { p50: number; p99: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b)
  const at = (q: number) => round2(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN)
  return { p50: at(0.5), p99: at(0.99), max: round2(sorted.at(-1) ?? NaN) }
}

interface Counts {
  facts: number
  failed: number
  deliveries: number
  missing: number
  repeated: number
}
function counts(facts: Fact[]): Counts {
  const ok = facts.filter((f) => f.ok)
  let deliveries = 0
  let missing = 0
  let repeated = 0
  for (const f of ok) {
    for (let e = 0; e < endpoints; e++) {
      const n = arrivalsOf(f, e).length
      deliveries += n
      if (n === 0) missing++
      if (n > 1) repeated += n - 1
    }
  }
  return { facts: facts.length, failed: facts.length - ok.length, deliveries, missing, repeated }
}

// ---------------------------------------------------------------- 1. latency

interface Latency extends Counts {
  endpoints: number
  /** The ban's answer → the receiver's request: commit → receiver, less the answer's way back. */
  afterAnswer: ReturnType<typeof quantiles>
  /** Sending the ban → the receiver's request. */
  afterSend: ReturnType<typeof quantiles>
  load: string
}

async function latency(prefix: string): Promise<Latency> {
  log(`latency: ${RATE} bans/s for ${SECONDS} s, ${endpoints} endpoint(s)`)
  const load = loadAverage()
  const pending: Promise<Fact>[] = []
  const start = performance.now()
  for (let k = 0; k < RATE * SECONDS; k++) {
    const wait = start + (k * 1000) / RATE - performance.now()
    if (wait > 0) await Bun.sleep(wait)
    pending.push(ban(k, `${prefix}-${k}`))
  }
  const facts = await Promise.all(pending)
  if (!(await allDelivered(facts))) log(`${prefix}: not every fact reached every endpoint within 60 s`)
  const afterAnswer: number[] = []
  const afterSend: number[] = []
  for (const f of facts) {
    if (!f.ok) continue
    for (let e = 0; e < endpoints; e++) {
      const first = arrivalsOf(f, e)[0]
      if (first === undefined) continue
      afterAnswer.push(first - f.answeredAt)
      afterSend.push(first - f.sentAt)
    }
  }
  return { endpoints, ...counts(facts), afterAnswer: quantiles(afterAnswer), afterSend: quantiles(afterSend), load }
}

// ---------------------------------------------------------------- 2. throughput

interface Throughput extends Counts {
  endpoints: number
  /** Making the backlog (bans answered a second, the receivers holding). */
  bansPerSecond: number
  /** From the release to the last delivery. */
  drainMs: number
  deliveriesPerSecond: number
  load: string
}

/** How long the receivers hold while the backlog is made: under the sender's 10 s timeout (WEBHOOK_TIMEOUT_MS), so no held attempt fails. */
const HOLD_MS = 7_000

/** Each drain, release → last delivery, for bench/cpuprofile-summary.ts (BENCH_WINDOWS). */
const drainWindows: { name: string; start: number; end: number }[] = []

async function throughput(prefix: string): Promise<Throughput> {
  log(`throughput: ${BACKLOG} facts queued behind held receivers, ${endpoints} endpoint(s)`)
  const load = loadAverage()
  gate = new Promise<void>((resolve) => (openGate = resolve))
  const facts: Fact[] = []
  let next = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      // Made within HOLD_MS, whatever the count then: the held attempts must not reach the sender's 10 s timeout.
      for (let k = next++; k < BACKLOG && performance.now() - started < HOLD_MS; k = next++) facts.push(await ban(k, `${prefix}-${k}`))
    }),
  )
  const made = performance.now() - started
  // Each endpoint's sender is held on its first attempt (the receivers answer after the release): the rest is queued.
  if (facts.length < BACKLOG) log(`${prefix}: ${facts.length} of ${BACKLOG} facts made in ${HOLD_MS / 1000} s (the held attempts must not time out): the backlog is smaller`)
  const releasedAt = performance.now()
  gate = null
  openGate()
  if (!(await allDelivered(facts, 120_000))) log(`${prefix}: not every fact reached every endpoint within 120 s`)
  let last = releasedAt
  for (const f of facts) for (let e = 0; e < endpoints; e++) for (const at of arrivalsOf(f, e)) last = Math.max(last, at)
  const drainMs = last - releasedAt
  drainWindows.push({ name: `drain-${endpoints}`, start: releasedAt, end: last })
  const c = counts(facts)
  return { endpoints, ...c, bansPerSecond: Math.round(facts.length / (made / 1000)), drainMs: Math.round(drainMs), deliveriesPerSecond: Math.round(c.deliveries / (drainMs / 1000)), load }
}

await addEndpoints(1)
const latencyOne = await latency('l1')
const throughputOne = await throughput('t1')
await addEndpoints(ENDPOINTS)
const latencyMany = await latency(`l${ENDPOINTS}`)
const throughputMany = await throughput(`t${ENDPOINTS}`)
await arena.stop()
await receiver.stop(true)
if (process.env.BENCH_WINDOWS) await Bun.write(process.env.BENCH_WINDOWS, JSON.stringify({ timeOrigin: performance.timeOrigin, windows: drainWindows }))

// ---------------------------------------------------------------- report

console.log(`\n${new Date().toISOString()}; ${cores} cores; Bun ${Bun.version}; engine ${ENGINE}; receivers on loopback in the client process; facts: user.banned (POST /admin/users/{id}/ban), ${USERS} players in turn\n`)
console.log(`**Latency at ${RATE} facts/s** for ${SECONDS} s, ms (the delivery loop's tick is 1 s, its re-scan while a sender runs 250 ms)\n`)
console.log('| endpoints | facts (failed) | deliveries | the ban\'s answer → receiver: p50 / p99 / max | ban sent → receiver: p50 / p99 / max | missing / repeated | load (1/5/15 min) |')
console.log('|---|---|---|---|---|---|---|')
for (const l of [latencyOne, latencyMany]) {
  console.log(`| ${l.endpoints} | ${l.facts} (${l.failed}) | ${l.deliveries} | ${l.afterAnswer.p50} / ${l.afterAnswer.p99} / ${l.afterAnswer.max} | ${l.afterSend.p50} / ${l.afterSend.p99} / ${l.afterSend.max} | ${l.missing} / ${l.repeated} | ${l.load} |`)
}
console.log(`\n**Throughput of the delivery loop alone**: ${BACKLOG} facts queued while the receivers held their answers, then released\n`)
console.log('| endpoints | facts made /s (receivers held) | deliveries | drained in ms | deliveries /s | missing / repeated | load (1/5/15 min) |')
console.log('|---|---|---|---|---|---|---|')
for (const t of [throughputOne, throughputMany]) {
  console.log(`| ${t.endpoints} | ${t.bansPerSecond} | ${t.deliveries} | ${t.drainMs} | ${t.deliveriesPerSecond} | ${t.missing} / ${t.repeated} | ${t.load} |`)
}
console.log(`\n- bans answered 503 and sent again: ${retried}; receiver requests: ${requests}`)
console.log(`- load average at the end: ${loadAverage()}`)
console.log(`- data and server log: ${dataDir}`)
const brief = (l: Latency) => ({ endpoints: l.endpoints, afterAnswerMs: l.afterAnswer, afterSendMs: l.afterSend, missing: l.missing, repeated: l.repeated, load: l.load })
const briefT = (t: Throughput) => ({ endpoints: t.endpoints, deliveries: t.deliveries, drainMs: t.drainMs, deliveriesPerSecond: t.deliveriesPerSecond, missing: t.missing, repeated: t.repeated, load: t.load })
console.log(JSON.stringify({ bench: 'webhooks', engine: ENGINE, rate: RATE, latency: [brief(latencyOne), brief(latencyMany)], throughput: [briefT(throughputOne), briefT(throughputMany)], loadAtEnd: loadAverage() }))
// The PostgreSQL harness keeps a client (and the cluster's watcher) open: the run is over.
process.exit(0)
