// npm run bench: the compiled binary under load, scenario by scenario, with
// the ceilings of this machine measured in the same run by the same harness.
//
// - The server runs pinned to the last core, wrk (one thread) to core 0,
//   the reference processes on the server's core.
// - Everything arena is set up through its real API: users, a game,
//   tournaments, PINs, wallets.
// - Every arena figure is printed absolute and as a ratio to its reference,
//   because absolute numbers drift between machines.
//
// Settings (environment): BENCH_SECONDS (10, per scenario), BENCH_CONNECTIONS
// (32), BENCH_USERS (256).
//
// `npm run bench -- --engine postgres [--instances 2]` runs the same scenarios
// with the data in PostgreSQL (a throwaway cluster from Debian's postgresql,
// started here as in the tests), on one instance or on several sharing one
// database; with several, each scenario's connections and requests are split
// across the instances (bench/wrk.ts wrkAcross), as a load balancer would.
//
// `npm run bench -- --against <commit>` instead compares this source with an
// earlier commit, interleaved in one run (bench/ab.ts); add `--engine postgres`
// for the same on PostgreSQL. `npm run bench -- --rated-vs-unrated [--engine
// postgres]`: the same interleaved run of this source against itself, A's
// tournaments unrated, B's rated (what rating a decision costs).
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildBinary, startServe } from '../test/helpers/process'
import { startPostgres } from '../test/helpers/postgres'
import { admin, api, bucketQuantile, bucketsSince, canPin, claimRequests, cores, histogram, inBatches, instanceCpu, LOAD_CPU, log, METRICS_TOKEN, onServerCpu, PASSWORD, PIN, rssKiB, runJson, sampled, SERVER_CPU, sessionRequests, startArena, tournaments, type Issued, type Player } from './harness'
import { ensureWrk, requestFile, scratchFile, wrk, wrkAcross, type WrkResult } from './wrk'

const against = process.argv.indexOf('--against')
if (against !== -1 || process.argv.includes('--rated-vs-unrated')) {
  const commit = against === -1 ? 'rated-vs-unrated' : process.argv[against + 1]
  if (!commit) throw new Error('usage: npm run bench -- --against <commit> | --rated-vs-unrated')
  const at = process.argv.indexOf('--engine')
  const engine = at === -1 ? 'sqlite' : process.argv[at + 1]
  if (engine !== 'sqlite' && engine !== 'postgres') throw new Error('usage: npm run bench -- --against <commit> [--engine sqlite|postgres]')
  await (await import('./ab')).abBench(commit, engine)
  process.exit(0)
}

const option = (name: string) => {
  const at = process.argv.indexOf(name)
  return at === -1 ? undefined : process.argv[at + 1]
}
const ENGINE = option('--engine') ?? 'sqlite'
if (ENGINE !== 'sqlite' && ENGINE !== 'postgres') throw new Error('usage: npm run bench -- [--engine sqlite|postgres] [--instances N]')
const INSTANCES = Number(option('--instances') ?? 1)
if (!Number.isInteger(INSTANCES) || INSTANCES < 1 || (ENGINE === 'sqlite' && INSTANCES > 1)) throw new Error('--instances N: N ≥ 1, and more than one needs --engine postgres (one SQLite data dir serves one instance)')

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32)
const USERS = Number(process.env.BENCH_USERS ?? 256)

interface Row {
  scenario: string
  result: WrkResult
  /** What the ratio divides by, and its name. */
  reference?: { name: string; perSecond: number }
  /** The rate this row is about when it is not requests (withdrawals, claims). */
  perSecond?: number
  target?: string
  peakRssMiB?: number
  peakAnonMiB?: number
  note?: string
}

const rows: Row[] = []

// ---------------------------------------------------------------- long-poll wake-ups

/**
 * `count` wake-ups, one at a time: player 1's poll (wallet topic, caught up,
 * wait=30) is parked, then an operator credit for player 1 is sent; measured
 * from sending the credit to the poll's answer. With several instances the
 * poll and the credit go to different ones (the wake-up crosses instances).
 */
async function wakeLatencies(count: number): Promise<{ result: WrkResult; afterAnswerP99ms: number }> {
  const target = players[1]!
  const auth = { authorization: `Bearer ${target.bearer}` }
  let after = ''
  for (;;) {
    const page = await api<{ events: unknown[]; cursor: string }>(base, 'GET', `/api/v1/events?wait=0&topics=wallet${after ? `&after=${after}` : ''}`, undefined, auth)
    after = page.cursor
    if (page.events.length === 0) break
  }
  const latencies: number[] = []
  /** From the credit's own answer to the poll's (0 when the poll answered first): a lower bound of commit → answer. */
  const afterAnswer: number[] = []
  let errors = 0
  const started = performance.now()
  for (let k = 0; k < count; k++) {
    const pollUrl = urls[k % urls.length]!
    const writeUrl = urls[(k + 1) % urls.length]!
    const answer = api<{ events: unknown[]; cursor: string }>(pollUrl, 'GET', `/api/v1/events?wait=30&topics=wallet&after=${after}`, undefined, auth)
    // Parked: the poll has read its empty page and waits (an idle server gets there in well under a millisecond).
    await Bun.sleep(20)
    const sent = performance.now()
    const credit = api(writeUrl, 'POST', `/api/v1/admin/wallets/${target.id}/credit`, { amount: '1', reference: `wake-${k}` }, admin).then(() => performance.now())
    const page = await answer
    const answered = performance.now()
    latencies.push(answered - sent)
    afterAnswer.push(Math.max(0, answered - (await credit)))
    if (page.events.length !== 1) errors++
    after = page.cursor
  }
  const seconds = (performance.now() - started) / 1000
  const at = (values: number[], q: number) => {
    const sorted = [...values].sort((a, b) => a - b)
    return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! * 100) / 100
  }
  return {
    result: { requests: count, seconds: Math.round(seconds * 100) / 100, rps: Math.round(count / seconds), counted: count - errors, errors, p50ms: at(latencies, 0.5), p90ms: at(latencies, 0.9), p99ms: at(latencies, 0.99), maxMs: at(latencies, 1) },
    afterAnswerP99ms: at(afterAnswer, 0.99),
  }
}

// ---------------------------------------------------------------- the run

const wrkPath = await ensureWrk()
log(`wrk: ${wrkPath}; ${cores} cores; server on cpu ${canPin ? SERVER_CPU : 'any'}, load on cpu ${canPin ? LOAD_CPU : 'any'}; ${SECONDS} s per scenario`)
log('building dist/arena from the current source')
await buildBinary()
const root = mkdtempSync(join(tmpdir(), 'arena-bench-'))

// References first, on an idle machine.
log('reference: bare Bun.serve GET and POST')
const bare = await startServe(onServerCpu([process.execPath, join(import.meta.dir, 'reference-server.ts')]), {})
const bareGet = await wrk({ url: `${bare.url}/`, script: 'replay', seconds: SECONDS, connections: CONNECTIONS, cpus: LOAD_CPU, env: { BENCH_REQUESTS: requestFile('bare-get.tsv', [{ method: 'GET', path: '/' }]) } })
const barePost = await wrk({ url: `${bare.url}/`, script: 'replay', seconds: SECONDS, connections: CONNECTIONS, cpus: LOAD_CPU, env: { BENCH_REQUESTS: requestFile('bare-post.tsv', [{ method: 'POST', path: '/', body: { matchId: 'mat_0123456789abcdef0123456789abcdef' } }]) } })
await bare.signal('SIGTERM')
rows.push({ scenario: 'reference: bare Bun.serve GET', result: bareGet })
rows.push({ scenario: 'reference: bare Bun.serve POST (JSON)', result: barePost })

log('reference: bun:sqlite single-row write transactions, synchronous FULL and NORMAL')
const sqliteOut = Bun.spawn(onServerCpu([process.execPath, join(import.meta.dir, 'sqlite-reference.ts'), root, String(SECONDS)]), { stdout: 'pipe', stderr: 'inherit' })
const sqliteLines = (await new Response(sqliteOut.stdout).text()).trim().split('\n').map((l) => JSON.parse(l) as { mode: string; txPerSecond: number })
const fullTx = sqliteLines.find((l) => l.mode === 'FULL')!.txPerSecond
const normalTx = sqliteLines.find((l) => l.mode === 'NORMAL')!.txPerSecond

log('reference: raw Bun.password.verify (argon2id, arena parameters)')
const argon = await runJson([process.execPath, join(import.meta.dir, 'argon2-reference.ts'), String(SECONDS)])

// arena, fresh data dir (and a fresh PostgreSQL database).
const dataDir = join(root, 'data')
// The metrics endpoint on: the long-poll scenario reads the server's own wake-up histogram.
let engineEnv: Record<string, string> = { ARENA_METRICS_TOKEN: METRICS_TOKEN }
if (ENGINE === 'postgres') {
  // Durable, as a studio runs it: fsync and full-page writes on (the tests' cluster has them off).
  const cluster = await startPostgres({ durable: true })
  await cluster.createDatabase('arena_bench')
  engineEnv = { ...engineEnv, ARENA_DATABASE_URL: cluster.url('arena_bench'), ARENA_MASTER_KEY: Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex') }
  log(`PostgreSQL: throwaway cluster (fsync on), socket in ${cluster.socketDir}; ${INSTANCES} instance(s) on one database`)
}
// Several instances share one data dir only for what is not in the database.
// Each instance has a core of its own (the second shares the load core).
const instances = [await startArena(dataDir, undefined, engineEnv, instanceCpu(0))]
for (let i = 1; i < INSTANCES; i++) instances.push(await startArena(dataDir, undefined, engineEnv, instanceCpu(i)))
let arena = instances[0]!
const base = arena.url
const urls = instances.map((a) => a.url)
log(`arena ready in ${arena.startMs} ms (fresh database: migrations included); setting up ${USERS} players through the API`)

const players: Player[] = await inBatches(Array.from({ length: USERS }, (_, i) => i), 4, async (i) => {
  const username = `bench_${i}`
  const { user } = await api<{ user: { id: string } }>(base, 'POST', '/api/v1/user/register', { email: `${username}@bench.test`, username, password: PASSWORD, country: 'DE', accept_terms: true })
  const tokens = await api<{ accessToken: string }>(base, 'POST', '/api/v1/user/login', { identifier: username, password: PASSWORD })
  return { id: user.id, username, bearer: tokens.accessToken }
})
const buyer = players[0]!
await api(base, 'PUT', '/api/v1/security/pin', { pin: PIN, password: PASSWORD }, { authorization: `Bearer ${buyer.bearer}` })
await api(base, 'POST', `/api/v1/admin/wallets/${buyer.id}/credit`, { amount: '1000000', reference: 'bench' }, admin)
const destination = (await api<{ address: string }>(base, 'GET', '/api/v1/wallet', undefined, { authorization: `Bearer ${players[1]!.bearer}` })).address

// (1) Authenticated read.
log('scenario: authenticated read GET /api/v1/me')
// Every player's token in turn: 32 connections reading one session would let
// what reads a turn's requests together (PostgreSQL) read one row for all.
const meFile = requestFile('me.tsv', players.map((p) => ({ method: 'GET', path: '/api/v1/me', headers: { authorization: `Bearer ${p.bearer}` } })))
const me = await sampled(arena.proc.pid, () => wrkAcross(urls, { script: 'replay', seconds: SECONDS, connections: CONNECTIONS, cpus: LOAD_CPU, env: { BENCH_REQUESTS: meFile } }))
rows.push({ scenario: 'authenticated read GET /me', result: me.value, reference: { name: 'bare GET', perSecond: bareGet.rps }, target: '≥ 0.30', peakRssMiB: me.peakRssMiB, peakAnonMiB: me.peakAnonMiB })

// p99 at half the maximum, three times: 64 connections, each spaced to reach about half the rate above.
const halfConnections = 64
const delayMs = Math.max(1, Math.round((1000 * halfConnections) / (me.value.rps / 2)))
for (let run = 1; run <= 3; run++) {
  log(`scenario: authenticated read at half its maximum, ${run} of 3 (${halfConnections} connections, ${delayMs} ms apart)`)
  const half = await wrkAcross(urls, { script: 'replay', seconds: SECONDS, connections: halfConnections, cpus: LOAD_CPU, env: { BENCH_REQUESTS: meFile, BENCH_DELAY_MS: String(delayMs) } })
  rows.push({ scenario: `authenticated read at ~half rate, ${run} of 3 (${half.rps} req/s)`, result: half, target: 'p99 ≤ 5 ms', note: `${Math.round((half.rps / me.value.rps) * 100)}% of the maximum` })
}

// (2) Session issue: calibrate on a small list, then a list long enough never to repeat.
log('scenario: session issue (calibration)')
const firstPairs = await tournaments(base, players, 1)
const calibration = await wrkAcross(urls, { script: 'replay', seconds: 2, connections: CONNECTIONS, cpus: LOAD_CPU, env: { BENCH_REQUESTS: requestFile('sessions-calibrate.tsv', sessionRequests(firstPairs.flat())) } })
const pairsPerTournament = Math.floor(USERS / 2)
const sessionTournaments = Math.ceil((calibration.rps * SECONDS * 1.4) / (pairsPerTournament * 2))
log(`scenario: session issue (${sessionTournaments} tournaments of ${USERS})`)
const sessionPairs = await tournaments(base, players, sessionTournaments)
const saved = scratchFile('sessions.jsonl')
const sessions = await sampled(arena.proc.pid, () =>
  wrkAcross(urls, { script: 'replay', seconds: SECONDS, connections: CONNECTIONS, cpus: LOAD_CPU, env: { BENCH_REQUESTS: requestFile('sessions.tsv', sessionRequests(sessionPairs.flat())), BENCH_SAVE: saved } }),
)
rows.push({ scenario: 'session issue POST /game-sdk/{id}/sessions', result: sessions.value, reference: { name: 'bare POST', perSecond: barePost.rps }, peakRssMiB: sessions.peakRssMiB, peakAnonMiB: sessions.peakAnonMiB })

// (3) Claim pairs, each session used once; the run ends when the supply does.
const issued = readFileSync(saved, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Issued)
let claimLines = claimRequests(issued, sessionPairs)
// wrk runs for the full -d even when a thread stopped early, so a run counts
// only if the supply lasted: fewer claims answered than listed. Otherwise
// issue more sessions (not measured) and run again.
const claimRun = (lines: typeof claimLines, name: string) =>
  sampled(arena.proc.pid, () => wrkAcross(urls, { script: 'replay', seconds: SECONDS, connections: CONNECTIONS, cpus: LOAD_CPU, env: { BENCH_REQUESTS: requestFile(name, lines), BENCH_MODE: 'once' } }))
log(`scenario: claims (${claimLines.length} claims from the issued sessions)`)
let claims = await claimRun(claimLines, 'claims-0.tsv')
for (let attempt = 1; claims.value.counted >= claimLines.length * 0.98 && attempt <= 3; attempt++) {
  const needed = Math.ceil((claimLines.length * 2.5) / 2)
  const more = await tournaments(base, players, Math.ceil(needed / pairsPerTournament))
  log(`scenario: claims used up all ${claimLines.length} sessions within ${SECONDS} s; issuing ${more.length * 2} more (not measured) and running again`)
  const moreSaved = scratchFile(`sessions-more-${attempt}.jsonl`)
  const issueSeconds = Math.ceil((more.length * 2) / Math.max(1, sessions.value.rps) * 1.5) + 2
  await wrkAcross(urls, { script: 'replay', seconds: issueSeconds, connections: CONNECTIONS, cpus: LOAD_CPU, env: { BENCH_REQUESTS: requestFile(`sessions-more-${attempt}.tsv`, sessionRequests(more.flat())), BENCH_SAVE: moreSaved, BENCH_MODE: 'once' } })
  claimLines = claimRequests(readFileSync(moreSaved, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Issued), more)
  claims = await claimRun(claimLines, `claims-${attempt}.tsv`)
}
rows.push({
  scenario: 'claims POST /game-sdk/{id}/results (durable, FULL)',
  result: claims.value,
  perSecond: Math.round(claims.value.counted / claims.value.seconds),
  // (counted 2xx answers over the -d seconds: the supply lasted the whole run)
  reference: { name: 'one FULL tx per request', perSecond: fullTx },
  target: '≥ 1.5',
  peakRssMiB: claims.peakRssMiB,
  peakAnonMiB: claims.peakAnonMiB,
  note: `${claims.value.counted} of ${claimLines.length} claims answered 2xx`,
})

// (4) Login: argon2id-bound; players in turn, so no account has several guesses in flight.
log('scenario: login')
const loginFile = requestFile('login.tsv', players.map((p) => ({ method: 'POST', path: '/api/v1/user/login', body: { identifier: p.username, password: PASSWORD } })))
const login = await sampled(arena.proc.pid, () => wrkAcross(urls, { script: 'replay', seconds: SECONDS, connections: 8, cpus: LOAD_CPU, env: { BENCH_REQUESTS: loginFile } }))
rows.push({ scenario: 'login POST /user/login (8 connections)', result: login.value, reference: { name: 'raw argon2id verify', perSecond: argon.verifyPerSecond! }, target: '≥ 0.85', peakRssMiB: login.peakRssMiB, peakAnonMiB: login.peakAnonMiB })

log('scenario: 500 simultaneous logins')
const burst = await sampled(arena.proc.pid, () => wrkAcross(urls, { script: 'replay', seconds: 5, connections: 500, cpus: LOAD_CPU, timeoutS: 30, env: { BENCH_REQUESTS: loginFile } }))
// The gate's admitted logins finish after wrk stops: let them drain before the next scenario.
await Bun.sleep(3000)
rows.push({ scenario: 'login burst, 500 connections', result: burst.value, target: 'peak RSS ≤ 250 MiB; 429/503 not swap', peakRssMiB: burst.peakRssMiB, peakAnonMiB: burst.peakAnonMiB, note: `${burst.value.errors} answered non-2xx (refused with Retry-After)` })

// (5) PIN mint + verify with a withdrawal.
log('scenario: PIN purchase (mint + verify + withdrawal)')
const purchase = await sampled(arena.proc.pid, () =>
  wrkAcross(urls, { script: 'purchase', seconds: SECONDS, connections: 8, cpus: LOAD_CPU, env: { BENCH_BEARER: buyer.bearer, BENCH_ADDRESS: destination, BENCH_PIN: PIN } }),
)
rows.push({
  scenario: 'PIN purchase: mint + verify + withdrawal (8 connections)',
  result: purchase.value,
  perSecond: Math.round((purchase.value.counted / purchase.value.seconds) * 10) / 10,
  reference: { name: 'raw argon2id verify', perSecond: argon.verifyPerSecond! },
  target: '≥ 0.85',
  peakRssMiB: purchase.peakRssMiB,
  peakAnonMiB: purchase.peakAnonMiB,
  note: `${purchase.value.counted} withdrawals; req/s counts mints and verifies`,
})

// (6) Event-plane poll of a caught-up client (wait=0). The purchases wrk
// left in flight finish after it stopped, each appending the buyer's wallet
// events: let them drain first, or the "caught-up" poll reads those every time.
await Bun.sleep(2000)
log('scenario: event-plane poll')
// 64 players in turn, each at its own end (one player's poll on every
// connection would let PostgreSQL's batched page read serve them all at once).
const pollTopics = 'topics=session,wallet,status'
const pollers = await inBatches(players.slice(0, 64), 4, async (player) => {
  const auth = { authorization: `Bearer ${player.bearer}` }
  let cursor = ''
  for (;;) {
    const page = await api<{ events: unknown[]; cursor: string }>(base, 'GET', `/api/v1/events?wait=0&${pollTopics}${cursor ? `&after=${cursor}` : ''}`, undefined, auth)
    cursor = page.cursor
    if (page.events.length === 0) break
  }
  return { auth, cursor }
})
const poll = await sampled(arena.proc.pid, () =>
  wrkAcross(urls, { script: 'replay', seconds: SECONDS, connections: CONNECTIONS, cpus: LOAD_CPU, env: { BENCH_REQUESTS: requestFile('poll.tsv', pollers.map(({ auth, cursor }) => ({ method: 'GET', path: `/api/v1/events?after=${cursor}&wait=0&${pollTopics}`, headers: auth }))) } }),
)
let late = 0
for (const { auth, cursor } of pollers) late += (await api<{ events: unknown[] }>(base, 'GET', `/api/v1/events?after=${cursor}&wait=0&${pollTopics}`, undefined, auth)).events.length
if (late > 0) log(`event poll: ${late} events arrived during the run; it was not caught up all along`)
rows.push({ scenario: 'event poll GET /events (caught up, wait=0)', result: poll.value, reference: { name: 'bare GET', perSecond: bareGet.rps }, target: '≥ 0.20, p99 ≤ 10 ms', peakRssMiB: poll.peakRssMiB, peakAnonMiB: poll.peakAnonMiB })

// (7) A long poll woken by a write: a poll waits (wait=30) on a caught-up
// cursor; an operator credit appends a wallet event for its user; the time
// from sending the credit to the poll's answer bounds from above the time
// from the credit's commit to the answer. One poll at a time, on players in
// turn, each on its own instance in turn when there are several.
log('scenario: long poll woken by a write')
const wokenBefore = await histogram(urls, 'arena_event_wake_seconds')
const wake = await wakeLatencies(500)
const woken = bucketsSince(wokenBefore, await histogram(urls, 'arena_event_wake_seconds'))
const wokenTotal = woken.at(-1)?.[1] ?? 0
const wokenP99 = bucketQuantile(woken, 0.99)
const within5ms = woken.find(([le]) => le === 0.005)?.[1] ?? 0
rows.push({
  scenario: 'long poll woken by a write (credit sent → poll answered)',
  result: wake.result,
  target: 'p99 ≤ 5 ms',
  note:
    `${wake.result.requests} wake-ups, one at a time; an upper bound of commit → answer (the credit's own answer → the poll's: p99 ${wake.afterAnswerP99ms} ms, a lower bound). ` +
    `The server's arena_event_wake_seconds (commit → the poll's page): ${within5ms} of ${wokenTotal} within 5 ms, p99 ≤ ${wokenP99 === undefined ? '?' : `${wokenP99 * 1000} ms`}`,
})

const hwmMiB = Math.round(rssKiB(arena.proc.pid, 'VmHWM') / 102.4) / 10
for (const instance of instances) await instance.stop()

// Start-up on the existing data dir, and idle RSS.
log('start-up: binary start to /readyz 200 on the existing data dir (5 starts)')
const starts: number[] = []
let idleMiB = 0
let idleAnonMiB = 0
for (let i = 0; i < 5; i++) {
  arena = await startArena(dataDir, undefined, engineEnv)
  starts.push(arena.startMs)
  if (i === 4) {
    await Bun.sleep(2000)
    idleMiB = Math.round(rssKiB(arena.proc.pid, 'VmRSS') / 102.4) / 10
    idleAnonMiB = Math.round(rssKiB(arena.proc.pid, 'RssAnon') / 102.4) / 10
  }
  await arena.stop()
}
starts.sort((a, b) => a - b)

// ---------------------------------------------------------------- report
const fmt = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(1))
console.log(`\n${new Date().toISOString()}; ${cores} cores; Bun ${Bun.version}; engine ${ENGINE}${ENGINE === 'postgres' ? `, ${INSTANCES} instance(s)` : ''}; wrk -t1${INSTANCES > 1 ? ` per instance` : ''}; ${SECONDS} s per scenario; ${CONNECTIONS} connections unless said\n`)
console.log('| scenario | rate /s | reference /s | ratio | target | p50 ms | p99 ms | errors | peak RSS MiB (anon) | note |')
console.log('|---|---|---|---|---|---|---|---|---|---|')
for (const r of rows) {
  const rate = r.perSecond ?? r.result.rps
  const ratio = r.reference ? (rate / r.reference.perSecond).toFixed(2) : ''
  const ref = r.reference ? `${fmt(r.reference.perSecond)} (${r.reference.name})` : ''
  console.log(`| ${r.scenario} | ${fmt(rate)} | ${ref} | ${ratio} | ${r.target ?? ''} | ${r.result.p50ms} | ${r.result.p99ms} | ${r.result.errors} | ${r.peakRssMiB === undefined ? '' : `${r.peakRssMiB} (${r.peakAnonMiB})`} | ${r.note ?? ''} |`)
}
console.log(`| reference: bun:sqlite write tx, synchronous=FULL | ${fullTx} | | | | | | | | one fsync per commit |`)
console.log(`| reference: bun:sqlite write tx, synchronous=NORMAL | ${normalTx} | | | | | | | | |`)
console.log(`| reference: raw argon2id verify | ${argon.verifyPerSecond} | | | | | | | | concurrency ${argon.concurrency} |`)
console.log(`\n- start to /readyz 200 on the existing data dir: median ${starts[2]} ms (min ${starts[0]}, max ${starts[4]}); target ≤ 300 ms`)
console.log(`- idle RSS after start: ${idleMiB} MiB (anonymous ${idleAnonMiB} MiB); target ≤ 80 MiB`)
console.log(`- server peak RSS over the whole run (VmHWM): ${hwmMiB} MiB`)
console.log(`- data and server log: ${root}`)
// The PostgreSQL harness keeps a client (and the cluster's watcher) open: the run is over.
process.exit(0)
