// Queue to `match.found` (issue 39) against the compiled binary: BENCH_PLAYERS
// players join one queue over BENCH_SECONDS at an even rate, through HTTP,
// each with an event socket open on the `status` topic; for each player, the
// time from its join's answer arriving to its `match.found` frame arriving.
// The server's matcher loop runs as in production (every 1 s, one tick pairs
// every open queue's waiting tickets, each pair its own unit of work).
//
//   npx bun bench/matchmaking.ts [--engine postgres]
//
// The queue: a staked one (BENCH_STAKE each, rake 0.05: the escrow moves with
// each pairing, as it would for money), a window wide enough for every pair
// (new players share the default display), a 60 s ready check (nobody
// confirms: the ready check is not what is measured). Each player is
// registered and logged in through the API, then credited through the
// operator API.
//
// Prints: how many players found their match, the latency p50/p99/max (ms),
// how many `match.found` frames came before the join's answer (counted as 0),
// the bursts of frames (one a matcher tick: how many, and how long each took
// from its first frame to its last: the tick's own work), and the server's
// arena_matchmaking_wait_seconds (waitingSince → pairing, by its buckets).
// docs/performance.md, "Matchmaking (issue 39)", has the figures.
//
// Settings (environment): BENCH_PLAYERS (1000, even), BENCH_SECONDS (10),
// BENCH_STAKE ("1"; "0" for an unstaked queue), BENCH_SETTLE_S (60: how long
// to wait for the last match.found after the last join; a player not told by
// then counts as not found and is left out of the latencies). The server runs pinned to the
// last core, this client to core 0 once the server is started.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildBinary } from '../test/helpers/process'
import { startPostgres } from '../test/helpers/postgres'
import { admin, api, type Arena, bucketQuantile, bucketsSince, canPin, cores, histogram, inBatches, LOAD_CPU, loadAverage, log, METRICS_TOKEN, PASSWORD, SERVER_CPU, startArena, type Player } from './harness'

const option = (name: string) => {
  const at = process.argv.indexOf(name)
  return at === -1 ? undefined : process.argv[at + 1]
}
const ENGINE = option('--engine') ?? 'sqlite'
const PLAYERS = Number(process.env.BENCH_PLAYERS ?? 1000)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const STAKE = process.env.BENCH_STAKE ?? '1'
const SETTLE_S = Number(process.env.BENCH_SETTLE_S ?? 60)
if ((ENGINE !== 'sqlite' && ENGINE !== 'postgres') || !Number.isInteger(PLAYERS) || PLAYERS < 2 || PLAYERS % 2 !== 0 || !(SECONDS > 0) || !(SETTLE_S > 0) || !/^\d+(\.\d+)?$/.test(STAKE)) {
  throw new Error('usage: npx bun bench/matchmaking.ts [--engine sqlite|postgres]; BENCH_PLAYERS: an even integer ≥ 2, BENCH_SECONDS > 0, BENCH_SETTLE_S > 0, BENCH_STAKE: an amount ("0": unstaked)')
}
const staked = Number(STAKE) > 0

log('building dist/arena from the current source')
await buildBinary()
const dataDir = join(mkdtempSync(join(tmpdir(), 'arena-bench-matchmaking-')), 'data')
let engineEnv: Record<string, string> = { ARENA_METRICS_TOKEN: METRICS_TOKEN, ARENA_SOCKETS_MAX: String(Math.max(10_000, PLAYERS * 2)) }
if (ENGINE === 'postgres') {
  const cluster = await startPostgres({ durable: true })
  await cluster.createDatabase('arena_bench')
  engineEnv = { ...engineEnv, ARENA_DATABASE_URL: cluster.url('arena_bench'), ARENA_MASTER_KEY: Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex') }
  log(`PostgreSQL: throwaway cluster (fsync on), socket in ${cluster.socketDir}`)
}
const arena: Arena = await startArena(dataDir, undefined, engineEnv)
const base = arena.url
const wsBase = base.replace(/^http/, 'ws')
if (canPin) await Bun.spawn(['taskset', '-a', '-cp', LOAD_CPU, String(process.pid)], { stdout: 'ignore' }).exited
log(`arena on ${base} (engine ${ENGINE}), server on cpu ${canPin ? SERVER_CPU : 'any'}, this client on cpu ${canPin ? LOAD_CPU : 'any'}; setting up ${PLAYERS} players through the API`)

// ---------------------------------------------------------------- set-up

const { game } = await api<{ game: { id: string } }>(base, 'POST', '/api/v1/admin/games', { name: 'Bench queue' }, admin)
const QUEUE = 'ranked'
await api(
  base,
  'POST',
  `/api/v1/admin/games/${game.id}/queues`,
  { name: QUEUE, rated: false, window: { initial: 400, widenPerSecond: 0, max: 400 }, readyCheckS: 60, ...(staked ? { stake: STAKE, rake: '0.05' } : {}) },
  admin,
)
const players: Player[] = await inBatches(Array.from({ length: PLAYERS }, (_, i) => i), 4, async (i) => {
  const username = `mm_${i}`
  const { user } = await api<{ user: { id: string } }>(base, 'POST', '/api/v1/user/register', { email: `${username}@bench.test`, username, password: PASSWORD, country: 'DE', accept_terms: true })
  const tokens = await api<{ accessToken: string }>(base, 'POST', '/api/v1/user/login', { identifier: username, password: PASSWORD })
  if (staked) await api(base, 'POST', `/api/v1/admin/wallets/${user.id}/credit`, { amount: String(Number(STAKE) * 10), reference: `bench-${i}` }, admin)
  if (i > 0 && i % 200 === 0) log(`${i} players`)
  return { id: user.id, username, bearer: tokens.accessToken }
})

// ---------------------------------------------------------------- sockets

/** Per player (by index): when its join was answered, when its match.found arrived, and how many arrived. */
const answeredAt = new Array<number>(PLAYERS).fill(NaN)
const foundAt = new Array<number>(PLAYERS).fill(NaN)
const foundCount = new Array<number>(PLAYERS).fill(0)
let unexpectedCloses = 0
let leaving = false

function connect(i: number, ticket: string): Promise<WebSocket> {
  const ws = new WebSocket(`${wsBase}/api/v1/events/socket?ticket=${encodeURIComponent(ticket)}`)
  return new Promise((resolve, reject) => {
    let first = true
    ws.addEventListener('open', () => ws.send(JSON.stringify({ type: 'subscribe', topics: ['status'] })))
    ws.addEventListener('message', (message) => {
      const at = performance.now()
      const frame = JSON.parse(String(message.data)) as { type: string; events?: { type: string }[] }
      if (frame.type !== 'events') return
      if (first) {
        first = false
        resolve(ws)
      }
      for (const event of frame.events!) {
        if (event.type !== 'match.found') continue
        foundCount[i]!++
        if (Number.isNaN(foundAt[i]!)) foundAt[i] = at
      }
    })
    ws.addEventListener('close', (event) => {
      if (!leaving) unexpectedCloses++
      reject(new Error(`socket closed with ${event.code} before its subscribe was answered`))
    })
  })
}

log(`opening ${PLAYERS} event sockets (topic status)`)
const sockets = await inBatches(players, 50, async (p, i) => {
  const { ticket } = await api<{ ticket: string }>(base, 'POST', '/api/v1/events/socket-ticket', {}, { authorization: `Bearer ${p.bearer}` })
  return connect(i, ticket)
})

// ---------------------------------------------------------------- the joins

const waitBefore = await histogram([base], 'arena_matchmaking_wait_seconds')
const commitsBefore = await histogram([base], 'arena_db_commit_duration_seconds')
const counter = (text: string, name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN)
const retriesBefore = counter(await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text(), 'arena_db_retries_total')
log(`${PLAYERS} joins over ${SECONDS} s (one every ${((SECONDS * 1000) / PLAYERS).toFixed(1)} ms)`)
const start = performance.now()
const spacing = (SECONDS * 1000) / PLAYERS
let refused = 0
const joins: Promise<void>[] = []
for (let i = 0; i < PLAYERS; i++) {
  const due = start + i * spacing
  const now = performance.now()
  if (due > now) await Bun.sleep(due - now)
  joins.push(
    fetch(`${base}/api/v1/games/${game.id}/queues/${QUEUE}/tickets`, { method: 'POST', headers: { authorization: `Bearer ${players[i]!.bearer}`, 'content-type': 'application/json' }, body: '{}' }).then(async (res) => {
      answeredAt[i] = performance.now()
      if (res.status !== 201) {
        refused++
        log(`join ${i}: ${res.status} ${await res.text()}`)
      } else await res.arrayBuffer()
    }),
  )
}
await Promise.all(joins)
const joinedIn = (performance.now() - start) / 1000
// Every player found, or BENCH_SETTLE_S after the last answer.
const settleBy = performance.now() + SETTLE_S * 1000
while (foundAt.some(Number.isNaN) && performance.now() < settleBy) await Bun.sleep(20)
const waits = bucketsSince(waitBefore, await histogram([base], 'arena_matchmaking_wait_seconds'))
const commits = bucketsSince(commitsBefore, await histogram([base], 'arena_db_commit_duration_seconds'))
const metricsText = await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text()
const matchesMade = Number(/^arena_matchmaking_matches_total\{kind="queue"\} (\d+)$/m.exec(metricsText)?.[1] ?? NaN)
const stillOpen = Number(new RegExp(`^arena_matchmaking_tickets_open\\{game="${game.id}",queue="${QUEUE}"\\} (\\d+)$`, 'm').exec(metricsText)?.[1] ?? NaN)
const retries = counter(metricsText, 'arena_db_retries_total') - retriesBefore
const load = loadAverage()
leaving = true
for (const ws of sockets) ws.close()
await arena.stop()

// ---------------------------------------------------------------- figures

const round = (n: number) => Math.round(n)
function quantiles(values: number[]): { p50: number; p99: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b)
  const at = (q: number) => round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN)
  return { p50: at(0.5), p99: at(0.99), max: round(sorted.at(-1) ?? NaN) }
}
const found = foundAt.filter((t) => !Number.isNaN(t)).length
const repeated = foundCount.filter((n) => n > 1).length
const latencies: number[] = []
let beforeAnswer = 0
for (let i = 0; i < PLAYERS; i++) {
  if (Number.isNaN(foundAt[i]!) || Number.isNaN(answeredAt[i]!)) continue
  const ms = foundAt[i]! - answeredAt[i]!
  if (ms < 0) beforeAnswer++
  latencies.push(Math.max(0, ms))
}
const latency = quantiles(latencies)
// Bursts: the frames of one tick arrive together; a gap over 300 ms starts the next (ticks are 1 s apart).
const arrivals = foundAt.filter((t) => !Number.isNaN(t)).sort((a, b) => a - b)
const bursts: { frames: number; ms: number }[] = []
for (let i = 0; i < arrivals.length; i++) {
  if (i === 0 || arrivals[i]! - arrivals[i - 1]! > 300) bursts.push({ frames: 0, ms: 0 })
  const burst = bursts.at(-1)!
  burst.frames++
  burst.ms = arrivals[i]! - arrivals[i - bursts.at(-1)!.frames + 1]!
}
const burstMs = quantiles(bursts.map((b) => b.ms))
const burstFrames = quantiles(bursts.map((b) => b.frames))
const serverQ = (q: number, buckets = waits, unit = 1, suffix = 's') => {
  const le = bucketQuantile(buckets, q)
  return le === undefined ? '–' : `≤ ${le * unit} ${suffix}`
}

console.log(`\n${new Date().toISOString()}; ${cores} cores; Bun ${Bun.version}; engine ${ENGINE}; ${PLAYERS} players joining over ${SECONDS} s (${STAKE === '0' ? 'unstaked' : `stake ${STAKE}, rake 0.05`}); load ${load}\n`)
console.log('| players | found | join → match.found p50 ms | p99 ms | max ms | found before the answer | ticks with frames | frames a tick (p50 / max) | a tick\'s frames, first to last ms (p50 / max) | arena_matchmaking_wait_seconds p50 / p99 |')
console.log('|---|---|---|---|---|---|---|---|---|---|')
console.log(
  `| ${PLAYERS} | ${found} | ${latency.p50} | ${latency.p99} | ${latency.max} | ${beforeAnswer} | ${bursts.length} | ${burstFrames.p50} / ${burstFrames.max} | ${burstMs.p50} / ${burstMs.max} | ${serverQ(0.5)} / ${serverQ(0.99)} |`,
)
console.log(
  `\n- joins sent over ${joinedIn.toFixed(1)} s, refused: ${refused}; matches made (arena_matchmaking_matches_total): ${matchesMade}; tickets still open: ${stillOpen}; players told more than once: ${repeated}; sockets closed by the server: ${unexpectedCloses}; ` +
    `units of work run again (arena_db_retries_total): ${retries}; commits (arena_db_commit_duration_seconds) p50 ${serverQ(0.5, commits, 1000, 'ms')}, p99 ${serverQ(0.99, commits, 1000, 'ms')}, ${commits.at(-1)?.[1] ?? 0} in all`,
)
