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
import { mkdirSync, mkdtempSync, openSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { BINARY, buildBinary, ROOT, startServe } from '../test/helpers/process'
import { ensureWrk, requestFile, scratchFile, wrk, type WrkResult } from './wrk'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32)
const USERS = Number(process.env.BENCH_USERS ?? 256)
const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef0123456789'
const PASSWORD = 'correct horse battery'
const PIN = '582047'

const cores = navigator.hardwareConcurrency
const SERVER_CPU = String(cores - 1)
const LOAD_CPU = '0'
const canPin = cores > 1 && Bun.which('taskset') !== null
const onServerCpu = (command: string[]) => (canPin ? ['taskset', '-c', SERVER_CPU, ...command] : command)

const log = (message: string) => console.error(`[bench] ${message}`)

interface Row {
  scenario: string
  result: WrkResult
  /** What the ratio divides by, and its name. */
  reference?: { name: string; perSecond: number }
  /** The rate this row is about when it is not requests (withdrawals, claims). */
  perSecond?: number
  target?: string
  peakRssMiB?: number
  note?: string
}

const rows: Row[] = []

// ---------------------------------------------------------------- processes

function rssKiB(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0)
  } catch {
    return 0
  }
}

async function freePort(): Promise<number> {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = probe.port!
  await probe.stop(true)
  return port
}

interface Arena {
  proc: Subprocess
  url: string
  startMs: number
  stop(): Promise<void>
}

/** Starts the binary on the data dir, stdout to a log file (the harness must not spend the load core reading it), and waits for /readyz. */
async function startArena(dataDir: string): Promise<Arena> {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  mkdirSync(dataDir, { recursive: true })
  const out = openSync(join(dataDir, 'server.log'), 'a')
  const started = performance.now()
  const proc = Bun.spawn(onServerCpu([BINARY, 'serve']), {
    env: { ...process.env, ARENA_DATA_DIR: dataDir, ARENA_PORT: String(port), ARENA_HOST: '127.0.0.1', ARENA_ADMIN_TOKEN: ADMIN_TOKEN },
    stdout: out,
    stderr: out,
    stdin: 'ignore',
  })
  for (;;) {
    try {
      if ((await fetch(`${url}/readyz`)).status === 200) break
    } catch {
      // not listening yet
    }
    if (proc.exitCode !== null) throw new Error(`arena exited with ${proc.exitCode}; see ${join(dataDir, 'server.log')}`)
    if (performance.now() - started > 20_000) throw new Error('arena did not become ready in 20 s')
    await Bun.sleep(2)
  }
  return {
    proc,
    url,
    startMs: Math.round(performance.now() - started),
    async stop() {
      proc.kill('SIGTERM')
      await proc.exited
    },
  }
}

/** Samples the server's RSS while `work` runs; returns its result and the peak in MiB. */
async function sampled<T>(pid: number, work: () => Promise<T>): Promise<{ value: T; peakRssMiB: number }> {
  let peak = rssKiB(pid, 'VmRSS')
  const timer = setInterval(() => (peak = Math.max(peak, rssKiB(pid, 'VmRSS'))), 250)
  try {
    const value = await work()
    return { value, peakRssMiB: Math.round(peak / 102.4) / 10 }
  } finally {
    clearInterval(timer)
  }
}

async function runJson(command: string[]): Promise<Record<string, number>> {
  const proc = Bun.spawn(onServerCpu(command), { cwd: ROOT, stdout: 'pipe', stderr: 'inherit' })
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited])
  if (code !== 0) throw new Error(`${command.join(' ')} exited with ${code}`)
  return JSON.parse(out.trim().split('\n').at(-1)!) as Record<string, number>
}

// ---------------------------------------------------------------- the API

async function api<T>(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
  const res = await fetch(base + path, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await res.text()
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`)
  return JSON.parse(text) as T
}

async function inBatches<T, R>(items: T[], width: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length)
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) {
        const i = next++
        out[i] = await fn(items[i]!, i)
      }
    }),
  )
  return out
}

interface Player {
  id: string
  username: string
  bearer: string
}
interface TournamentView {
  id: string
  participants: { id: string; userId: string }[]
  matches: { id: string; status: string; slot1ParticipantId: string | null; slot2ParticipantId: string | null }[]
}
interface Seat {
  bearer: string
  matchId: string
  participantId: string
}

const admin = { 'x-admin-token': ADMIN_TOKEN }

/** Tournaments of every player; returns both seats of every running first-round match. */
async function tournaments(base: string, gameId: string, players: Player[], count: number): Promise<Seat[][]> {
  const byUser = new Map(players.map((p) => [p.id, p]))
  const started = await inBatches(Array.from({ length: count }, (_, i) => i), 4, async (i) => {
    const { tournament } = await api<{ tournament: TournamentView }>(base, 'POST', '/api/v1/admin/tournaments', { gameId, name: `Bench cup ${i}`, format: 'single_elimination', participants: players.map((p) => p.id) }, admin)
    return (await api<{ tournament: TournamentView }>(base, 'POST', `/api/v1/admin/tournaments/${tournament.id}/start`, undefined, admin)).tournament
  })
  const pairs: Seat[][] = []
  for (const t of started) {
    const userOf = new Map(t.participants.map((p) => [p.id, byUser.get(p.userId)!]))
    for (const m of t.matches) {
      if (m.status !== 'running') continue
      pairs.push([m.slot1ParticipantId!, m.slot2ParticipantId!].map((pid) => ({ bearer: userOf.get(pid)!.bearer, matchId: m.id, participantId: pid })))
    }
  }
  return pairs
}

function sessionRequests(gameId: string, gameKey: string, seats: Seat[]) {
  return seats.map((s) => ({
    method: 'POST',
    path: `/api/v1/game-sdk/${gameId}/sessions`,
    headers: { authorization: `Bearer ${s.bearer}`, 'x-game-key': gameKey },
    body: { matchId: s.matchId },
  }))
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

// arena, fresh data dir.
const dataDir = join(root, 'data')
let arena = await startArena(dataDir)
const base = arena.url
log(`arena ready in ${arena.startMs} ms (fresh data dir: migrations included); setting up ${USERS} players through the API`)

const { game, gameKey } = await api<{ game: { id: string }; gameKey: string }>(base, 'POST', '/api/v1/admin/games', { name: 'Bench' }, admin)
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
const auth0 = { authorization: `Bearer ${buyer.bearer}` }

// (1) Authenticated read.
log('scenario: authenticated read GET /api/v1/me')
const meFile = requestFile('me.tsv', [{ method: 'GET', path: '/api/v1/me', headers: auth0 }])
const me = await sampled(arena.proc.pid, () => wrk({ url: base, script: 'replay', seconds: SECONDS, connections: CONNECTIONS, cpus: LOAD_CPU, env: { BENCH_REQUESTS: meFile } }))
rows.push({ scenario: 'authenticated read GET /me', result: me.value, reference: { name: 'bare GET', perSecond: bareGet.rps }, target: '≥ 0.30', peakRssMiB: me.peakRssMiB })

// p99 at half the maximum: 64 connections, each spaced to reach about half the rate above.
const halfConnections = 64
const delayMs = Math.max(1, Math.round((1000 * halfConnections) / (me.value.rps / 2)))
log(`scenario: authenticated read at half its maximum (${halfConnections} connections, ${delayMs} ms apart)`)
const half = await wrk({ url: base, script: 'replay', seconds: SECONDS, connections: halfConnections, cpus: LOAD_CPU, env: { BENCH_REQUESTS: meFile, BENCH_DELAY_MS: String(delayMs) } })
rows.push({ scenario: `authenticated read at ~half rate (${half.rps} req/s)`, result: half, target: 'p99 ≤ 5 ms', note: `${Math.round((half.rps / me.value.rps) * 100)}% of the maximum` })

// (2) Session issue: calibrate on a small list, then a list long enough never to repeat.
log('scenario: session issue (calibration)')
const firstPairs = await tournaments(base, game.id, players, 1)
const calibration = await wrk({ url: base, script: 'replay', seconds: 2, connections: CONNECTIONS, cpus: LOAD_CPU, env: { BENCH_REQUESTS: requestFile('sessions-calibrate.tsv', sessionRequests(game.id, gameKey, firstPairs.flat())) } })
const pairsPerTournament = Math.floor(USERS / 2)
const sessionTournaments = Math.ceil((calibration.rps * SECONDS * 1.4) / (pairsPerTournament * 2))
log(`scenario: session issue (${sessionTournaments} tournaments of ${USERS})`)
const sessionPairs = await tournaments(base, game.id, players, sessionTournaments)
const saved = scratchFile('sessions.jsonl')
const sessions = await sampled(arena.proc.pid, () =>
  wrk({ url: base, script: 'replay', seconds: SECONDS, connections: CONNECTIONS, cpus: LOAD_CPU, env: { BENCH_REQUESTS: requestFile('sessions.tsv', sessionRequests(game.id, gameKey, sessionPairs.flat())), BENCH_SAVE: saved } }),
)
rows.push({ scenario: 'session issue POST /game-sdk/{id}/sessions', result: sessions.value, reference: { name: 'bare POST', perSecond: barePost.rps }, peakRssMiB: sessions.peakRssMiB })

// (3) Claim pairs, each session used once; the run ends when the supply does.
interface Issued {
  token: string
  context: { matchId: string; participantId: string }
}
function claimRequests(issued: Issued[], seats: Seat[][]) {
  const bySeat = new Map<string, Issued>()
  for (const s of issued) bySeat.set(`${s.context.matchId}/${s.context.participantId}`, s)
  const lines: { method: string; path: string; headers: Record<string, string>; body: unknown }[] = []
  for (const [a, b] of seats) {
    const sa = bySeat.get(`${a!.matchId}/${a!.participantId}`)
    const sb = bySeat.get(`${b!.matchId}/${b!.participantId}`)
    if (!sa || !sb) continue
    // Both claim that slot 1 won: the first answer is pending, the second decides.
    for (const [seat, session] of [[a!, sa], [b!, sb]] as const) {
      lines.push({
        method: 'POST',
        path: `/api/v1/game-sdk/${game.id}/results`,
        headers: { authorization: `Bearer ${seat.bearer}`, 'x-game-key': gameKey, 'x-session-token': session.token },
        body: { outcome: 'WIN', winnerParticipantId: a!.participantId },
      })
    }
  }
  return lines
}
const issued = readFileSync(saved, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Issued)
let claimLines = claimRequests(issued, sessionPairs)
// wrk runs for the full -d even when a thread stopped early, so a run counts
// only if the supply lasted: fewer claims answered than listed. Otherwise
// issue more sessions (not measured) and run again.
const claimRun = (lines: typeof claimLines, name: string) =>
  sampled(arena.proc.pid, () => wrk({ url: base, script: 'replay', seconds: SECONDS, connections: CONNECTIONS, cpus: LOAD_CPU, env: { BENCH_REQUESTS: requestFile(name, lines), BENCH_MODE: 'once' } }))
log(`scenario: claims (${claimLines.length} claims from the issued sessions)`)
let claims = await claimRun(claimLines, 'claims-0.tsv')
for (let attempt = 1; claims.value.counted >= claimLines.length * 0.98 && attempt <= 3; attempt++) {
  const needed = Math.ceil((claimLines.length * 2.5) / 2)
  const more = await tournaments(base, game.id, players, Math.ceil(needed / pairsPerTournament))
  log(`scenario: claims used up all ${claimLines.length} sessions within ${SECONDS} s; issuing ${more.length * 2} more (not measured) and running again`)
  const moreSaved = scratchFile(`sessions-more-${attempt}.jsonl`)
  const issueSeconds = Math.ceil((more.length * 2) / Math.max(1, sessions.value.rps) * 1.5) + 2
  await wrk({ url: base, script: 'replay', seconds: issueSeconds, connections: CONNECTIONS, cpus: LOAD_CPU, env: { BENCH_REQUESTS: requestFile(`sessions-more-${attempt}.tsv`, sessionRequests(game.id, gameKey, more.flat())), BENCH_SAVE: moreSaved, BENCH_MODE: 'once' } })
  claimLines = claimRequests(readFileSync(moreSaved, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Issued), more)
  claims = await claimRun(claimLines, `claims-${attempt}.tsv`)
}
rows.push({
  scenario: 'claims POST /game-sdk/{id}/results (durable, FULL)',
  result: claims.value,
  perSecond: Math.round(claims.value.counted / claims.value.seconds),
  // (counted 2xx answers over the -d seconds: the supply lasted the whole run)
  reference: { name: 'one FULL tx per request', perSecond: fullTx },
  target: '≥ 2.5',
  peakRssMiB: claims.peakRssMiB,
  note: `${claims.value.counted} of ${claimLines.length} claims answered 2xx`,
})

// (4) Login: argon2id-bound; players in turn, so no account has several guesses in flight.
log('scenario: login')
const loginFile = requestFile('login.tsv', players.map((p) => ({ method: 'POST', path: '/api/v1/user/login', body: { identifier: p.username, password: PASSWORD } })))
const login = await sampled(arena.proc.pid, () => wrk({ url: base, script: 'replay', seconds: SECONDS, connections: 8, cpus: LOAD_CPU, env: { BENCH_REQUESTS: loginFile } }))
rows.push({ scenario: 'login POST /user/login (8 connections)', result: login.value, reference: { name: 'raw argon2id verify', perSecond: argon.verifyPerSecond! }, target: '≥ 0.85', peakRssMiB: login.peakRssMiB })

log('scenario: 500 simultaneous logins')
const burst = await sampled(arena.proc.pid, () => wrk({ url: base, script: 'replay', seconds: 5, connections: 500, cpus: LOAD_CPU, timeoutS: 30, env: { BENCH_REQUESTS: loginFile } }))
// The gate's admitted logins finish after wrk stops: let them drain before the next scenario.
await Bun.sleep(3000)
rows.push({ scenario: 'login burst, 500 connections', result: burst.value, target: 'RSS < 1 GiB; 429/503 not swap', peakRssMiB: burst.peakRssMiB, note: `${burst.value.errors} answered non-2xx (refused with Retry-After)` })

// (5) PIN mint + verify with a withdrawal.
log('scenario: PIN purchase (mint + verify + withdrawal)')
const purchase = await sampled(arena.proc.pid, () =>
  wrk({ url: base, script: 'purchase', seconds: SECONDS, connections: 8, cpus: LOAD_CPU, env: { BENCH_BEARER: buyer.bearer, BENCH_ADDRESS: destination, BENCH_PIN: PIN } }),
)
rows.push({
  scenario: 'PIN purchase: mint + verify + withdrawal (8 connections)',
  result: purchase.value,
  perSecond: Math.round((purchase.value.counted / purchase.value.seconds) * 10) / 10,
  reference: { name: 'raw argon2id verify', perSecond: argon.verifyPerSecond! },
  target: '≥ 0.85',
  peakRssMiB: purchase.peakRssMiB,
  note: `${purchase.value.counted} withdrawals; req/s counts mints and verifies`,
})

// (6) Event-plane poll of a caught-up client (wait=0).
log('scenario: event-plane poll')
let cursor = ''
for (;;) {
  const page = await api<{ events: unknown[]; cursor: string }>(base, 'GET', `/api/v1/events?wait=0${cursor ? `&after=${cursor}` : ''}`, undefined, auth0)
  cursor = page.cursor
  if (page.events.length === 0) break
}
const poll = await sampled(arena.proc.pid, () =>
  wrk({ url: base, script: 'replay', seconds: SECONDS, connections: CONNECTIONS, cpus: LOAD_CPU, env: { BENCH_REQUESTS: requestFile('poll.tsv', [{ method: 'GET', path: `/api/v1/events?after=${cursor}&wait=0&topics=session,wallet,status`, headers: auth0 }]) } }),
)
rows.push({ scenario: 'event poll GET /events (caught up, wait=0)', result: poll.value, reference: { name: 'bare GET', perSecond: bareGet.rps }, peakRssMiB: poll.peakRssMiB })

const hwmMiB = Math.round(rssKiB(arena.proc.pid, 'VmHWM') / 102.4) / 10
await arena.stop()

// Start-up on the existing data dir, and idle RSS.
log('start-up: binary start to /readyz 200 on the existing data dir (5 starts)')
const starts: number[] = []
let idleMiB = 0
for (let i = 0; i < 5; i++) {
  arena = await startArena(dataDir)
  starts.push(arena.startMs)
  if (i === 4) {
    await Bun.sleep(2000)
    idleMiB = Math.round(rssKiB(arena.proc.pid, 'VmRSS') / 102.4) / 10
  }
  await arena.stop()
}
starts.sort((a, b) => a - b)

// ---------------------------------------------------------------- report
const fmt = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(1))
console.log(`\n${new Date().toISOString()}; ${cores} cores; Bun ${Bun.version}; wrk -t1; ${SECONDS} s per scenario; ${CONNECTIONS} connections unless said\n`)
console.log('| scenario | rate /s | reference /s | ratio | target | p50 ms | p99 ms | errors | peak RSS MiB | note |')
console.log('|---|---|---|---|---|---|---|---|---|---|')
for (const r of rows) {
  const rate = r.perSecond ?? r.result.rps
  const ratio = r.reference ? (rate / r.reference.perSecond).toFixed(2) : ''
  const ref = r.reference ? `${fmt(r.reference.perSecond)} (${r.reference.name})` : ''
  console.log(`| ${r.scenario} | ${fmt(rate)} | ${ref} | ${ratio} | ${r.target ?? ''} | ${r.result.p50ms} | ${r.result.p99ms} | ${r.result.errors} | ${r.peakRssMiB ?? ''} | ${r.note ?? ''} |`)
}
console.log(`| reference: bun:sqlite write tx, synchronous=FULL | ${fullTx} | | | | | | | | one fsync per commit |`)
console.log(`| reference: bun:sqlite write tx, synchronous=NORMAL | ${normalTx} | | | | | | | | |`)
console.log(`| reference: raw argon2id verify | ${argon.verifyPerSecond} | | | | | | | | concurrency ${argon.concurrency} |`)
console.log(`\n- start to /readyz 200 on the existing data dir: median ${starts[2]} ms (min ${starts[0]}, max ${starts[4]}); target ≤ 300 ms`)
console.log(`- idle RSS after start: ${idleMiB} MiB; target ≤ 120 MB`)
console.log(`- server peak RSS over the whole run (VmHWM): ${hwmMiB} MiB`)
console.log(`- data and server log: ${root}`)
