// npm run bench:sockets: the event plane over WebSockets (issue 37) against
// the compiled binary, beside the long poll it is a second transport of.
//
//   npm run bench:sockets [-- --engine postgres]
//
// With BENCH_USERS players (each with BENCH_SOCKETS_PER_USER sockets
// subscribed to the wallet topic), set up through the real API:
//
// 1. Memory per idle socket: the server's VmRSS (and RssAnon) before and
//    after opening the sockets (each subscribed and answered), in
//    BENCH_MEMORY_ROUNDS rounds of as many sockets on top of each other; the
//    slope of the readings from the first round on is the figure (see below why
//    not the first round's). Twice: on the server started with its garbage
//    collector running often (BUN_GARBAGE_COLLECTOR_LEVEL=2, so that RSS
//    follows what is live), then restarted as in production. The client is
//    another process.
// 2. Latency at a moderate rate (BENCH_RATE writes/s for BENCH_SECONDS,
//    paced, not waiting for answers): each write is an operator credit
//    (POST /admin/wallets/{id}/credit, the write the long-poll scenario of
//    `npm run bench` uses), one `wallet.adjusted` event for one player, the
//    players in turn. Per event: from the credit's answer arriving to the
//    socket's frame (commit → delivery less commit → the answer's arrival:
//    negative when the event came first), and from sending the credit (an
//    upper bound of commit → delivery: the whole write is inside); and the
//    server's own arena_socket_fanout_seconds (the commit's wake-up → the
//    frame handed to the socket).
// 3. Throughput: BENCH_CONCURRENCY credits in flight for BENCH_SECONDS, as
//    fast as the server answers; events delivered across the sockets per
//    second, writes answered per second, and how long the sockets took to
//    catch up after the writes stopped.
// 4. One commit to every socket (BENCH_FANOUTS times): a tournament of all
//    the players cancelled, one `tournament.cancelled` for each in one unit of
//    work, so that one commit wakes every socket. Per fan-out: the server's
//    arena_socket_fanout_seconds (the commit's wake-up → each frame handed to
//    its socket), and the client's view: from the first socket's frame to
//    each one's (the fan-out's spread), from the cancel's answer and from
//    sending it.
// 5. The long poll at the same rate: the sockets closed, one waiting
//    GET /events?wait=25&topics=wallet per player, polled again on each
//    answer; the same two client-side latencies, and the server's
//    arena_event_wake_seconds. Also the RSS of the parked polls.
//
// Every event must arrive exactly once (on each of its user's sockets, or on
// its user's poll); the run says how many did not.
//
// Settings (environment): BENCH_USERS (1000), BENCH_SOCKETS_PER_USER (1),
// BENCH_RATE (200; 40 on PostgreSQL, where 200 credits a second is past what
// the credit path serializes on this machine), BENCH_SECONDS (10),
// BENCH_CONCURRENCY (16), BENCH_MEMORY_ROUNDS (5), BENCH_GC_LEVEL (2),
// BENCH_FANOUTS (20; 0 skips them), BENCH_BINARY (dist/arena: a wrapper script
// running the source under `bun --cpu-prof` profiles the server),
// BENCH_WINDOWS (a file: the fan-outs' windows for bench/cpuprofile-summary.ts).
// The server
// runs pinned to the last core, this client (its sockets, polls and writes)
// to core 0 once the server (and PostgreSQL, unpinned) are started.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildBinary } from '../test/helpers/process'
import { startPostgres } from '../test/helpers/postgres'
import { admin, api, type Arena, bucketQuantile, bucketsSince, canPin, cores, histogram, inBatches, LOAD_CPU, loadAverage, log, METRICS_TOKEN, PASSWORD, rssKiB, SERVER_CPU, startArena, type Buckets, type Player } from './harness'

// Bun's fetch keeps at most 256 requests in flight unless told otherwise at
// start: one long poll per player needs as many. Run again with it set.
const POLL_CONNECTIONS = 4096
if (process.env.BUN_CONFIG_MAX_HTTP_REQUESTS === undefined) {
  const child = Bun.spawn([process.execPath, import.meta.path, ...process.argv.slice(2)], {
    env: { ...process.env, BUN_CONFIG_MAX_HTTP_REQUESTS: String(POLL_CONNECTIONS) },
    stdio: ['inherit', 'inherit', 'inherit'],
  })
  process.exit(await child.exited)
}

const option = (name: string) => {
  const at = process.argv.indexOf(name)
  return at === -1 ? undefined : process.argv[at + 1]
}
const ENGINE = option('--engine') ?? 'sqlite'
const USERS = Number(process.env.BENCH_USERS ?? 1000)
const PER_USER = Number(process.env.BENCH_SOCKETS_PER_USER ?? 1)
const RATE = Number(process.env.BENCH_RATE ?? (ENGINE === 'postgres' ? 40 : 200))
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16)
const MEMORY_ROUNDS = Number(process.env.BENCH_MEMORY_ROUNDS ?? 5)
const FANOUTS = Number(process.env.BENCH_FANOUTS ?? 20)
const GC_LEVEL = process.env.BENCH_GC_LEVEL ?? '2'
if ((ENGINE !== 'sqlite' && ENGINE !== 'postgres') || ![USERS, PER_USER, RATE, SECONDS, CONCURRENCY, MEMORY_ROUNDS].every((n) => Number.isInteger(n) && n > 0) || PER_USER * MEMORY_ROUNDS > 100) {
  throw new Error('usage: npm run bench:sockets [-- --engine sqlite|postgres]; BENCH_USERS, BENCH_SOCKETS_PER_USER, BENCH_RATE, BENCH_SECONDS, BENCH_CONCURRENCY, BENCH_MEMORY_ROUNDS: positive integers (sockets per user × rounds ≤ 100)')
}
const SOCKETS = USERS * PER_USER

log('building dist/arena from the current source')
await buildBinary()
const dataDir = join(mkdtempSync(join(tmpdir(), 'arena-bench-sockets-')), 'data')
let engineEnv: Record<string, string> = {
  ARENA_METRICS_TOKEN: METRICS_TOKEN,
  ARENA_SOCKETS_PER_USER: String(Math.max(5, PER_USER * MEMORY_ROUNDS)),
  ARENA_SOCKETS_MAX: String(Math.max(10_000, SOCKETS * MEMORY_ROUNDS)),
}
if (ENGINE === 'postgres') {
  // Durable, as a studio runs it (and as `npm run bench -- --engine postgres`).
  const cluster = await startPostgres({ durable: true })
  await cluster.createDatabase('arena_bench')
  engineEnv = { ...engineEnv, ARENA_DATABASE_URL: cluster.url('arena_bench'), ARENA_MASTER_KEY: Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex') }
  log(`PostgreSQL: throwaway cluster (fsync on), socket in ${cluster.socketDir}`)
}
// The memory rounds run twice: first on a server whose garbage collector runs
// often (BUN_GARBAGE_COLLECTOR_LEVEL, 2 by default: its RSS follows what is live), then
// on the same data dir restarted as it runs in production, for the rest.
let arena: Arena
let base = ''
let wsBase = ''
let pid = 0
function serving(started: Arena): void {
  arena = started
  base = started.url
  wsBase = base.replace(/^http/, 'ws')
  pid = started.proc.pid!
}
serving(await startArena(dataDir, process.env.BENCH_BINARY, { ...engineEnv, BUN_GARBAGE_COLLECTOR_LEVEL: GC_LEVEL }))
// This client on the load core from here on (every thread: -a); the server is on its own, PostgreSQL where it started.
if (canPin) await Bun.spawn(['taskset', '-a', '-cp', LOAD_CPU, String(process.pid)], { stdout: 'ignore' }).exited
log(`arena on ${base} (engine ${ENGINE}), server on cpu ${canPin ? SERVER_CPU : 'any'}, this client on cpu ${canPin ? LOAD_CPU : 'any'}; setting up ${USERS} players through the API`)

const players: Player[] = await inBatches(Array.from({ length: USERS }, (_, i) => i), 4, async (i) => {
  const username = `sock_${i}`
  const { user } = await api<{ user: { id: string } }>(base, 'POST', '/api/v1/user/register', { email: `${username}@bench.test`, username, password: PASSWORD, country: 'DE', accept_terms: true })
  const tokens = await api<{ accessToken: string }>(base, 'POST', '/api/v1/user/login', { identifier: username, password: PASSWORD })
  if (i > 0 && i % 200 === 0) log(`${i} players`)
  return { id: user.id, username, bearer: tokens.accessToken }
})

// ---------------------------------------------------------------- deliveries, matched to writes

/** Each write's reference → when its event arrived (the last of its user's sockets), and how many times. */
interface Arrival {
  count: number
  last: number
}
const arrivals = new Map<string, Arrival>()
let delivered = 0
function arrived(events: { data: { reference?: string } }[], at: number): void {
  for (const event of events) {
    const reference = event.data.reference
    if (reference === undefined) continue
    delivered++
    const seen = arrivals.get(reference)
    if (seen) {
      seen.count++
      seen.last = at
    } else arrivals.set(reference, { count: 1, last: at })
  }
}

/** Each fan-out's tournament → when its `tournament.cancelled` frame reached each socket. */
const fanoutArrivals = new Map<string, number[]>()
function fannedOut(tournamentId: string, at: number): void {
  const list = fanoutArrivals.get(tournamentId)
  if (list) list.push(at)
  else fanoutArrivals.set(tournamentId, [at])
}

interface Write {
  reference: string
  sentAt: number
  answeredAt: number
  ok: boolean
}

/** 503s answered to credits (and sent again), all phases: on PostgreSQL concurrent credits can fail to serialize more often than the server retries. */
let retried = 0

/**
 * One operator credit of 1 for player `k mod USERS`: one wallet.adjusted
 * event carrying `reference`. A 503 is sent again after a pause, as the
 * answer tells a client to (at most 10 times); `sentAt` is the first send.
 */
async function credit(k: number, reference: string): Promise<Write> {
  const sentAt = performance.now()
  for (let attempt = 1; ; attempt++) {
    const res = await fetch(`${base}/api/v1/admin/wallets/${players[k % USERS]!.id}/credit`, {
      method: 'POST',
      headers: { ...admin, 'content-type': 'application/json' },
      body: JSON.stringify({ amount: '1', reference }),
    })
    await res.arrayBuffer()
    if (res.status === 503 && attempt < 10) {
      retried++
      await Bun.sleep(50 * attempt)
      continue
    }
    return { reference, sentAt, answeredAt: performance.now(), ok: res.ok }
  }
}

/** `count` credits at `rate` a second, each sent at its time whether or not the earlier ones were answered. */
async function paced(prefix: string, count: number, rate: number): Promise<Write[]> {
  const writes: Promise<Write>[] = []
  const start = performance.now()
  for (let k = 0; k < count; k++) {
    const wait = start + (k * 1000) / rate - performance.now()
    if (wait > 0) await Bun.sleep(wait)
    writes.push(credit(k, `${prefix}-${k}`))
  }
  return Promise.all(writes)
}

/** Resolves once every answered write's event arrived `expected` times, or after `ms`; false then. */
async function allArrived(writes: Write[], expected: number, ms = 30_000): Promise<boolean> {
  const deadline = performance.now() + ms
  for (;;) {
    if (writes.every((w) => !w.ok || (arrivals.get(w.reference)?.count ?? 0) >= expected)) return true
    if (performance.now() > deadline) return false
    await Bun.sleep(20)
  }
}

const round2 = (n: number) => Math.round(n * 100) / 100
function quantiles(values: number[]): { p50: number; p99: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b)
  const at = (q: number) => round2(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN)
  return { p50: at(0.5), p99: at(0.99), max: round2(sorted.at(-1) ?? NaN) }
}

/** A quantile from a histogram, in ms: the bound of its bucket. */
const upTo = (buckets: Buckets, q: number) => {
  const seconds = bucketQuantile(buckets, q)
  return seconds === undefined ? '–' : seconds === Infinity ? `> ${round2(buckets.at(-2)![0] * 1000)}` : `≤ ${round2(seconds * 1000)}`
}
const within = (buckets: Buckets, le: number) => `${buckets.find(([bound]) => bound === le)?.[1] ?? 0} of ${buckets.at(-1)?.[1] ?? 0}`

interface Latency {
  writes: number
  failed: number
  /** 503s sent again. */
  retries: number
  /** Events that never arrived, or arrived more often than once per socket. */
  missing: number
  repeated: number
  /** The credit's answer → the event (negative: the event came first), and how many came first. */
  afterAnswer: ReturnType<typeof quantiles>
  beforeAnswer: number
  /** Sending the credit → the event. */
  afterSend: ReturnType<typeof quantiles>
  /** The server's histogram over the phase. */
  server: Buckets
  load: string
}

async function latencyPhase(prefix: string, expected: number, metric: string): Promise<Latency> {
  const before = await histogram([base], metric)
  const load = loadAverage()
  const retriedBefore = retried
  const writes = await paced(prefix, RATE * SECONDS, RATE)
  const retries = retried - retriedBefore
  await allArrived(writes, expected)
  const server = bucketsSince(before, await histogram([base], metric))
  const ok = writes.filter((w) => w.ok)
  const came = ok.filter((w) => arrivals.has(w.reference))
  return {
    writes: writes.length,
    failed: writes.length - ok.length,
    retries,
    missing: ok.filter((w) => (arrivals.get(w.reference)?.count ?? 0) < expected).length,
    repeated: ok.filter((w) => (arrivals.get(w.reference)?.count ?? 0) > expected).length,
    afterAnswer: quantiles(came.map((w) => arrivals.get(w.reference)!.last - w.answeredAt)),
    beforeAnswer: came.filter((w) => arrivals.get(w.reference)!.last < w.answeredAt).length,
    afterSend: quantiles(came.map((w) => arrivals.get(w.reference)!.last - w.sentAt)),
    server,
    load,
  }
}

// ---------------------------------------------------------------- the server's memory

/** VmRSS and RssAnon, each the median of five readings 200 ms apart, in KiB. */
async function steady(): Promise<{ rss: number; anon: number }> {
  const rss: number[] = []
  const anon: number[] = []
  for (let i = 0; i < 5; i++) {
    rss.push(rssKiB(pid, 'VmRSS'))
    anon.push(rssKiB(pid, 'RssAnon'))
    await Bun.sleep(200)
  }
  const median = (values: number[]) => values.sort((a, b) => a - b)[2]!
  return { rss: median(rss), anon: median(anon) }
}

async function openSockets(): Promise<number> {
  const text = await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text()
  return Number(/^arena_sockets_open (\d+)$/m.exec(text)?.[1] ?? NaN)
}

// ---------------------------------------------------------------- 1. sockets: memory

interface Held {
  ws: WebSocket
  subscribed: Promise<void>
  closed: Promise<number>
  /** This client closes it: not counted as the server's close. */
  leaving: boolean
}
/** Closes by the server while the sockets were held, by code. */
const closes = new Map<number, number>()

function connect(ticket: string): Held {
  const ws = new WebSocket(`${wsBase}/api/v1/events/socket?ticket=${encodeURIComponent(ticket)}`)
  let answered: () => void = () => {}
  let failed: (error: Error) => void = () => {}
  const subscribed = new Promise<void>((resolve, reject) => {
    answered = resolve
    failed = reject
  })
  let first = true
  ws.addEventListener('open', () => ws.send(JSON.stringify({ type: 'subscribe', topics: ['wallet', 'status'] })))
  ws.addEventListener('message', (message) => {
    const at = performance.now()
    const frame = JSON.parse(String(message.data)) as { type: string; events?: { type: string; data: { reference?: string; tournamentId?: string } }[] }
    if (frame.type !== 'events') return
    if (first) {
      first = false
      answered()
    }
    arrived(frame.events!, at)
    for (const event of frame.events!) if (event.type === 'tournament.cancelled') fannedOut(event.data.tournamentId!, at)
  })
  const held: Held = {
    ws,
    subscribed,
    leaving: false,
    closed: new Promise<number>((resolve) =>
      ws.addEventListener('close', (event) => {
        if (!held.leaving) closes.set(event.code, (closes.get(event.code) ?? 0) + 1)
        failed(new Error(`socket closed with ${event.code} before its subscribe was answered`))
        resolve(event.code)
      }),
    ),
  }
  return held
}

async function leave(sockets: Held[]): Promise<void> {
  for (const socket of sockets) {
    socket.leaving = true
    socket.ws.close()
  }
  await Promise.all(sockets.map((socket) => socket.closed))
}

/**
 * One round: a ticket for each of the SOCKETS sockets (every player's
 * sockets in turn), then the sockets, 50 opening at a time, each subscribed
 * and answered; then the server's steady RSS.
 */
async function openRound(): Promise<{ sockets: Held[]; seconds: number; rss: number; anon: number }> {
  const tickets = await inBatches(Array.from({ length: SOCKETS }, (_, i) => i), 8, async (i) =>
    (await api<{ ticket: string }>(base, 'POST', '/api/v1/events/socket-ticket', {}, { authorization: `Bearer ${players[i % USERS]!.bearer}` })).ticket,
  )
  const opening = performance.now()
  const sockets = await inBatches(tickets, 50, async (ticket) => {
    const socket = connect(ticket)
    await socket.subscribed
    return socket
  })
  const seconds = (performance.now() - opening) / 1000
  await Bun.sleep(1000)
  return { sockets, seconds, ...(await steady()) }
}

// The server's heap reuses what the garbage of earlier requests freed, so the
// first round's growth says little (it can even be negative). Each further
// round opens as many sockets again on top, after the same requests (the
// tickets): the slope of the readings from the first round on, per socket, is the
// steady cost of one. The rounds of one server fit in the 25 s before the
// sockets' first ping tick: a tick checks every socket's session and pings it,
// work of the moment, not what an idle socket holds (when each socket sent a
// query of its own, 5 000 of them queued on PostgreSQL read as +55 MiB).
interface Reading {
  open: number
  rss: number
  anon: number
  seconds: number
}
async function memoryRounds(gc: string): Promise<{ readings: Reading[]; rounds: Held[][]; load: string; seconds: number }> {
  await Bun.sleep(1000)
  const load = loadAverage()
  const readings: Reading[] = [{ ...(await steady()), seconds: 0, open: 0 }]
  const rounds: Held[][] = []
  const started = performance.now()
  for (let round = 1; round <= MEMORY_ROUNDS; round++) {
    const opened = await openRound()
    rounds.push(opened.sockets)
    const open = await openSockets()
    if (open !== SOCKETS * round) throw new Error(`the server counts ${open} sockets open, not ${SOCKETS * round}`)
    readings.push({ rss: opened.rss, anon: opened.anon, seconds: opened.seconds, open })
    log(`sockets (${gc}): round ${round}, ${open} open (${SOCKETS} more in ${opened.seconds.toFixed(1)} s): server VmRSS ${(opened.rss / 1024).toFixed(1)} MiB, RssAnon ${(opened.anon / 1024).toFixed(1)} MiB`)
  }
  const seconds = (performance.now() - started) / 1000
  if (seconds > 24) log(`sockets (${gc}): the rounds took ${seconds.toFixed(1)} s: the last readings may include a ping tick (25 s)`)
  return { readings, rounds, load, seconds }
}
/** KiB per socket: the least-squares slope of the readings from `from` on (sockets open → KiB). */
function perSocket(readings: Reading[], from: number, to = readings.length - 1): { rss: number; anon: number } {
  const points = readings.slice(from, to + 1)
  const slope = (field: 'rss' | 'anon') => {
    const mx = points.reduce((sum, r) => sum + r.open, 0) / points.length
    const my = points.reduce((sum, r) => sum + r[field], 0) / points.length
    return points.reduce((sum, r) => sum + (r.open - mx) * (r[field] - my), 0) / points.reduce((sum, r) => sum + (r.open - mx) ** 2, 0)
  }
  return { rss: slope('rss'), anon: slope('anon') }
}

const collected = await memoryRounds(`GC level ${GC_LEVEL}`)
await leave(collected.rounds.flat())
await arena!.stop()
serving(await startArena(dataDir, process.env.BENCH_BINARY, engineEnv))
log(`arena restarted on ${base} with the default garbage collection`)
const normal = await memoryRounds('default GC')
// Only the first round's sockets stay for what follows.
const held = normal.rounds[0]!
await leave(normal.rounds.slice(1).flat())

// ---------------------------------------------------------------- 2. sockets: latency at a moderate rate

log(`sockets: latency, ${RATE} credits/s for ${SECONDS} s`)
const socketLatency = await latencyPhase('sl', PER_USER, 'arena_socket_fanout_seconds')

// ---------------------------------------------------------------- 3. sockets: throughput

log(`sockets: throughput, ${CONCURRENCY} credits in flight for ${SECONDS} s`)
const throughputLoad = loadAverage()
const fanoutBefore = await histogram([base], 'arena_socket_fanout_seconds')
const deliveredBefore = delivered
const floodRetriedBefore = retried
const flooded: Write[] = []
let next = 0
const floodStart = performance.now()
const floodEnd = floodStart + SECONDS * 1000
let deliveredAtEnd = 0
const stopCounting = setTimeout(() => (deliveredAtEnd = delivered), SECONDS * 1000)
await Promise.all(
  Array.from({ length: CONCURRENCY }, async () => {
    while (performance.now() < floodEnd) {
      const k = next++
      flooded.push(await credit(k, `tp-${k}`))
    }
  }),
)
clearTimeout(stopCounting)
if (deliveredAtEnd === 0) deliveredAtEnd = delivered
const floodSeconds = SECONDS
const writesAnswered = flooded.filter((w) => w.ok && w.answeredAt <= floodEnd).length
const caughtUp = await allArrived(flooded, PER_USER, 60_000)
const catchUpMs = Math.max(0, performance.now() - floodEnd)
const floodFanout = bucketsSince(fanoutBefore, await histogram([base], 'arena_socket_fanout_seconds'))
const throughput = {
  writesPerSecond: Math.round(writesAnswered / floodSeconds),
  eventsPerSecond: Math.round((deliveredAtEnd - deliveredBefore) / floodSeconds),
  failed: flooded.filter((w) => !w.ok).length,
  retries: retried - floodRetriedBefore,
  missing: flooded.filter((w) => w.ok && (arrivals.get(w.reference)?.count ?? 0) < PER_USER).length,
  repeated: flooded.filter((w) => w.ok && (arrivals.get(w.reference)?.count ?? 0) > PER_USER).length,
  caughtUp,
  catchUpMs: Math.round(catchUpMs),
  fanout: floodFanout,
  load: throughputLoad,
}
log(`sockets: ${throughput.writesPerSecond} writes/s, ${throughput.eventsPerSecond} events delivered/s; caught up ${caughtUp ? `${throughput.catchUpMs} ms after the writes stopped` : 'NOT within 60 s'}`)

// ---------------------------------------------------------------- 4. sockets: one commit to every socket

// One commit that appends an event for each of the USERS players: a
// tournament of all of them, cancelled (`tournament.cancelled` to every
// participant, in the cancel's one unit of work). Every socket is woken by the
// same commit and reads its own page: the fan-out is as wide as the sockets.
interface Fanout {
  /** Sockets that got the frame, of SOCKETS. */
  reached: number
  /** Frames past one per socket. */
  repeated: number
  /** The cancel's answer → each socket's frame (negative: the frame came first). */
  afterAnswer: ReturnType<typeof quantiles>
  /** Sending the cancel → each socket's frame. */
  afterSend: ReturnType<typeof quantiles>
  /** The first socket's frame → each socket's frame: the fan-out's own spread. */
  spread: ReturnType<typeof quantiles>
  /** The cancel's own time, sent → answered. */
  writeMs: number
  server: Buckets
}
const fanouts: Fanout[] = []
/** Each fan-out from sending the cancel to the last frame, for bench/cpuprofile-summary.ts (BENCH_WINDOWS). */
const fanoutWindows: { name: string; start: number; end: number }[] = []
const fanoutAll: Buckets[] = []
const fanoutLoad = loadAverage()
if (FANOUTS > 0) {
  log(`sockets: ${FANOUTS} fan-outs, one commit with an event for each of ${USERS} players (${SOCKETS} sockets)`)
  const { game } = await api<{ game: { id: string } }>(base, 'POST', '/api/v1/admin/games', { name: 'Fan-out game' }, admin)
  for (let f = 0; f < FANOUTS; f++) {
    const { tournament } = await api<{ tournament: { id: string } }>(base, 'POST', '/api/v1/admin/tournaments', { gameId: game.id, name: `Fan-out ${f}`, format: 'single_elimination', participants: players.map((p) => p.id) }, admin)
    await Bun.sleep(500)
    const before = await histogram([base], 'arena_socket_fanout_seconds')
    const sentAt = performance.now()
    await api(base, 'POST', `/api/v1/admin/tournaments/${tournament.id}/cancel`, { reason: 'bench fan-out' }, admin)
    const answeredAt = performance.now()
    for (const deadline = answeredAt + 30_000; (fanoutArrivals.get(tournament.id)?.length ?? 0) < SOCKETS && performance.now() < deadline; ) await Bun.sleep(5)
    await Bun.sleep(200)
    const server = bucketsSince(before, await histogram([base], 'arena_socket_fanout_seconds'))
    const at = fanoutArrivals.get(tournament.id) ?? []
    const first = Math.min(...at)
    fanouts.push({
      reached: Math.min(at.length, SOCKETS),
      repeated: Math.max(0, at.length - SOCKETS),
      afterAnswer: quantiles(at.map((t) => t - answeredAt)),
      afterSend: quantiles(at.map((t) => t - sentAt)),
      spread: quantiles(at.map((t) => t - first)),
      writeMs: round2(answeredAt - sentAt),
      server,
    })
    fanoutAll.push(server)
    fanoutWindows.push({ name: 'fanout', start: sentAt, end: Math.max(...at, answeredAt) })
    const last = fanouts.at(-1)!
    log(`fan-out ${f + 1}: ${last.reached} of ${SOCKETS} sockets; server p99 ${upTo(server, 0.99)} ms; first → last frame ${last.spread.max} ms; cancel answered in ${last.writeMs} ms`)
  }
}

if (process.env.BENCH_WINDOWS) await Bun.write(process.env.BENCH_WINDOWS, JSON.stringify({ timeOrigin: performance.timeOrigin, windows: fanoutWindows }))
await leave(held)
const unexpectedCloses = [...closes].map(([code, n]) => `${n} × ${code}`).join(', ') || 'none'

// ---------------------------------------------------------------- 4. the long poll at the same rate

log(`long poll: one waiting GET /events?wait=25 per player (${USERS})`)
const cursors = await inBatches(players, 8, async (p) => {
  let after = ''
  for (;;) {
    const page = await api<{ events: unknown[]; cursor: string }>(base, 'GET', `/api/v1/events?wait=0&topics=wallet${after ? `&after=${after}` : ''}`, undefined, { authorization: `Bearer ${p.bearer}` })
    after = page.cursor
    if (page.events.length === 0) return after
  }
})
await Bun.sleep(1000)
const pollRssBefore = (await steady()).rss
const stopPolls = new AbortController()
let pollErrors = 0
const polling = players.map(async (p, i) => {
  let after = cursors[i]!
  while (!stopPolls.signal.aborted) {
    try {
      const res = await fetch(`${base}/api/v1/events?wait=25&topics=wallet&after=${after}`, { headers: { authorization: `Bearer ${p.bearer}` }, signal: stopPolls.signal })
      const page = (await res.json()) as { events: { data: { reference?: string } }[]; cursor: string }
      const at = performance.now()
      if (!res.ok) {
        pollErrors++
        await Bun.sleep(100)
        continue
      }
      arrived(page.events, at)
      after = page.cursor
    } catch (error) {
      if (!stopPolls.signal.aborted) {
        pollErrors++
        log(`long poll failed: ${error instanceof Error ? error.message : String(error)}`)
        await Bun.sleep(100)
      }
    }
  }
})
async function pollsWaiting(): Promise<number> {
  const text = await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text()
  return Number(/^arena_event_polls_waiting (\d+)$/m.exec(text)?.[1] ?? NaN)
}
for (const deadline = performance.now() + 30_000; (await pollsWaiting()) < USERS; ) {
  if (performance.now() > deadline) throw new Error(`only ${await pollsWaiting()} of ${USERS} polls waiting after 30 s`)
  await Bun.sleep(100)
}
await Bun.sleep(1000)
const pollRssAfter = (await steady()).rss
log(`long poll: ${USERS} waiting; VmRSS +${((pollRssAfter - pollRssBefore) / 1024).toFixed(1)} MiB; latency, ${RATE} credits/s for ${SECONDS} s`)
const pollLatency = await latencyPhase('pl', 1, 'arena_event_wake_seconds')
stopPolls.abort()
await Promise.all(polling)

await arena!.stop()

// ---------------------------------------------------------------- report

const row = (name: string, l: Latency, serverName: string) =>
  `| ${name} | ${l.writes - l.failed} (${l.failed} failed, ${l.retries} retried) | ${l.afterAnswer.p50} / ${l.afterAnswer.p99} / ${l.afterAnswer.max} (${l.beforeAnswer} before the answer) | ` +
  `${l.afterSend.p50} / ${l.afterSend.p99} / ${l.afterSend.max} | ${serverName}: p50 ${upTo(l.server, 0.5)}, p99 ${upTo(l.server, 0.99)}, ${within(l.server, 0.005)} within 5 ms | ` +
  `${l.missing} / ${l.repeated} | ${l.load} |`

console.log(`\n${new Date().toISOString()}; ${cores} cores; Bun ${Bun.version}; engine ${ENGINE}; ${USERS} players × ${PER_USER} socket(s); the server's figures from its own /proc/<pid>/status and /metrics\n`)
const mib = (kib: number) => (kib / 1024).toFixed(1)
const perKiB = (cost: { rss: number; anon: number }) => `${cost.rss.toFixed(1)} KiB (RssAnon ${cost.anon.toFixed(1)} KiB)`
console.log('**Memory** (the server only; the client is another process), MiB, each reading the median of five 200 ms apart\n')
console.log(`| sockets open | GC level ${GC_LEVEL}: VmRSS | RssAnon | default GC: VmRSS | RssAnon |`)
console.log('|---|---|---|---|---|')
collected.readings.forEach((r, i) => console.log(`| ${r.open} | ${mib(r.rss)} | ${mib(r.anon)} | ${mib(normal.readings[i]!.rss)} | ${mib(normal.readings[i]!.anon)} |`))
const last = MEMORY_ROUNDS
console.log(
  `\nPer socket, the slope from ${SOCKETS} to ${SOCKETS * last} open (least squares): GC level ${GC_LEVEL} ${last > 1 ? perKiB(perSocket(collected.readings, 1)) : '–'}, default GC ${last > 1 ? perKiB(perSocket(normal.readings, 1)) : '–'}; ` +
    `the first ${SOCKETS}: ${perKiB(perSocket(collected.readings, 0, 1))} and ${perKiB(perSocket(normal.readings, 0, 1))}. ` +
    `Load ${collected.load} and ${normal.load}. Opening ${SOCKETS} (ticket spent, subscribe answered; 50 at a time) took ${normal.readings.slice(1).map((r) => r.seconds.toFixed(1)).join(' / ')} s; ` +
    `the rounds ${collected.seconds.toFixed(1)} and ${normal.seconds.toFixed(1)} s (the first ping tick comes 25 s after the first socket).`,
)
console.log(`\n${USERS} waiting long polls (default GC, one round): VmRSS ${mib(pollRssBefore)} → ${mib(pollRssAfter)} MiB, ${((pollRssAfter - pollRssBefore) / USERS).toFixed(1)} KiB a poll.\n`)
console.log(`**Latency at ${RATE} writes/s** for ${SECONDS} s (operator credits, paced; players in turn), ms\n`)
console.log('| transport | writes answered | event − the credit\'s answer: p50 / p99 / max | credit sent → event: p50 / p99 / max | the server\'s histogram | missing / repeated | load (1/5/15 min) |')
console.log('|---|---|---|---|---|---|---|')
console.log(row(`WebSocket (${SOCKETS})`, socketLatency, 'arena_socket_fanout_seconds'))
console.log(row(`long poll (${USERS}, wait=25)`, pollLatency, 'arena_event_wake_seconds'))
console.log(`\n**Throughput to ${SOCKETS} sockets**: ${CONCURRENCY} credits in flight for ${floodSeconds} s\n`)
console.log('| writes answered /s | events delivered /s | failed (retried) writes | missing / repeated | caught up after the writes stopped | arena_socket_fanout_seconds | load (1/5/15 min) |')
console.log('|---|---|---|---|---|---|---|')
console.log(
  `| ${throughput.writesPerSecond} | ${throughput.eventsPerSecond} | ${throughput.failed} (${throughput.retries}) | ${throughput.missing} / ${throughput.repeated} | ${throughput.caughtUp ? `${throughput.catchUpMs} ms` : 'no (60 s)'} | ` +
    `p50 ${upTo(throughput.fanout, 0.5)}, p99 ${upTo(throughput.fanout, 0.99)} | ${throughput.load} |`,
)
const fanoutServer: Buckets = (fanoutAll[0] ?? []).map(([le], i) => [le, fanoutAll.reduce((sum, b) => sum + (b[i]?.[1] ?? 0), 0)] as const)
const pooled = (pick: (f: Fanout) => ReturnType<typeof quantiles>, field: 'p50' | 'p99' | 'max') => quantiles(fanouts.map((f) => pick(f)[field]))
if (FANOUTS > 0) {
  console.log(`\n**One commit to every socket**: ${FANOUTS} fan-outs, each a tournament of the ${USERS} players cancelled (one \`tournament.cancelled\` each, one unit of work) with ${SOCKETS} sockets open, ms; load ${fanoutLoad} at the start\n`)
  console.log('| fan-out | sockets reached (repeated) | server: arena_socket_fanout_seconds p50 / p99, within 5 ms | first → each frame: p50 / p99 / max | the cancel\'s answer → frame: p50 / p99 / max | cancel sent → frame: p50 / p99 / max | the cancel, sent → answered |')
  console.log('|---|---|---|---|---|---|---|')
  fanouts.forEach((f, i) =>
    console.log(
      `| ${i + 1} | ${f.reached} (${f.repeated}) | ${upTo(f.server, 0.5)} / ${upTo(f.server, 0.99)}, ${within(f.server, 0.005)} | ${f.spread.p50} / ${f.spread.p99} / ${f.spread.max} | ` +
        `${f.afterAnswer.p50} / ${f.afterAnswer.p99} / ${f.afterAnswer.max} | ${f.afterSend.p50} / ${f.afterSend.p99} / ${f.afterSend.max} | ${f.writeMs} |`,
    ),
  )
  console.log(
    `\nAll ${FANOUTS} together, the server's histogram: p50 ${upTo(fanoutServer, 0.5)}, p99 ${upTo(fanoutServer, 0.99)}, ${within(fanoutServer, 0.005)} within 5 ms. ` +
      `Per fan-out, the median (and worst) of its p99 first → frame: ${pooled((f) => f.spread, 'p99').p50} (${pooled((f) => f.spread, 'p99').max}) ms; of its max: ${pooled((f) => f.spread, 'max').p50} (${pooled((f) => f.spread, 'max').max}) ms.`,
  )
}
console.log(`\n- sockets closed by the server while held: ${unexpectedCloses}; long-poll errors: ${pollErrors}; credits answered 503 and sent again: ${retried}`)
console.log(`- load average at the end: ${loadAverage()}`)
console.log(`- data and server log: ${dataDir}`)
const ms = (buckets: Buckets, q: number) => {
  const seconds = bucketQuantile(buckets, q)
  return seconds === undefined || seconds === Infinity ? null : round2(seconds * 1000)
}
const inside = (buckets: Buckets, le: number) => ({ within: buckets.find(([bound]) => bound === le)?.[1] ?? 0, of: buckets.at(-1)?.[1] ?? 0 })
console.log(
  JSON.stringify({
    bench: 'sockets',
    engine: ENGINE,
    sockets: SOCKETS,
    kibPerSocket: MEMORY_ROUNDS > 1 ? round2(perSocket(normal.readings, 1).rss) : null,
    latency: { rate: RATE, serverP99Ms: ms(socketLatency.server, 0.99), within5ms: inside(socketLatency.server, 0.005), afterSendP99Ms: socketLatency.afterSend.p99, missing: socketLatency.missing, repeated: socketLatency.repeated, load: socketLatency.load },
    poll: { serverP99Ms: ms(pollLatency.server, 0.99), within5ms: inside(pollLatency.server, 0.005), afterSendP99Ms: pollLatency.afterSend.p99, missing: pollLatency.missing, repeated: pollLatency.repeated, load: pollLatency.load },
    throughput: { writesPerSecond: throughput.writesPerSecond, eventsPerSecond: throughput.eventsPerSecond, catchUpMs: throughput.catchUpMs, missing: throughput.missing, load: throughput.load },
    fanout: {
      count: FANOUTS,
      serverP50Ms: ms(fanoutServer, 0.5),
      serverP99Ms: ms(fanoutServer, 0.99),
      within5ms: inside(fanoutServer, 0.005),
      spreadP99MsMedian: FANOUTS > 0 ? pooled((f) => f.spread, 'p99').p50 : null,
      spreadMaxMsWorst: FANOUTS > 0 ? pooled((f) => f.spread, 'max').max : null,
      reached: fanouts.reduce((sum, f) => sum + f.reached, 0),
      repeated: fanouts.reduce((sum, f) => sum + f.repeated, 0),
      load: fanoutLoad,
    },
    loadAtEnd: loadAverage(),
  }),
)
// The PostgreSQL harness keeps a client (and the cluster's watcher) open: the run is over.
process.exit(0)
