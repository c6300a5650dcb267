// Where a request's CPU goes: the arena processes' and, on PostgreSQL, the
// database server's (all the bench cluster's processes), per request, under
// the bench's load for one scenario, with the instances pinned as in npm run
// bench. Only this run's processes are counted (by pid: the instances, and the
// cluster's postmaster and its children), not another run's on the machine.
//
//   bun bench/request-cpu.ts
//
// Settings (environment): BENCH_SCENARIO (login: 8 connections, players in
// turn; me: GET /api/v1/me, 32 connections; poll: a caught-up GET
// /api/v1/events, 32 connections), BENCH_ENGINE (postgres or sqlite),
// BENCH_INSTANCES (1; 2 on PostgreSQL, each on a core of its own),
// BENCH_SECONDS (10), BENCH_USERS (64: the players logging in, or whose
// sessions the reads use in turn), BENCH_BINARY (dist/arena),
// BENCH_CONNECTIONS (the scenario's: 8 or 32; 1 measures a lone request's latency),
// BENCH_REFERENCE=1: each round also loads the bare Bun.serve GET
// (bench/reference-server.ts, on the first instance's core, the same
// connections) and prints each side's ratio to it, the figure issue 43's
// targets are given in, taken minutes apart at most on a shared machine.
//
// An interleaved A/B: BENCH_BINARY=<a>,<b> (a binary built from an earlier
// commit, and dist/arena) and BENCH_ROUNDS (1): each binary gets its data (a
// data dir, on PostgreSQL a database of its own on the one cluster) and its
// instances, started once; the rounds then load them in turn, A B, B A, …,
// so that the machine's drift falls on both alike. Each round's figures are
// printed, then each binary's medians.
//
// Prints requests per second, and each process group's CPU per request and
// its share of the run's wall time (1.0: one core busy all the time).
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startPostgres } from '../test/helpers/postgres'
import { BINARY, buildBinary, startServe } from '../test/helpers/process'
import { api, inBatches, instanceCpu, LOAD_CPU, loadAverage, log, onServerCpu, PASSWORD, startArena } from './harness'
import { ensureWrk, requestFile, wrkAcross } from './wrk'

const SCENARIO = process.env.BENCH_SCENARIO ?? 'login'
const ENGINE = process.env.BENCH_ENGINE ?? 'postgres'
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const USERS = Number(process.env.BENCH_USERS ?? 64)
const INSTANCES = Number(process.env.BENCH_INSTANCES ?? 1)
const BINARIES = (process.env.BENCH_BINARY ?? BINARY).split(',')
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1)
if (!['login', 'me', 'poll'].includes(SCENARIO) || !['postgres', 'sqlite'].includes(ENGINE) || (ENGINE === 'sqlite' && INSTANCES !== 1)) {
  throw new Error('BENCH_SCENARIO login|me|poll, BENCH_ENGINE postgres|sqlite, BENCH_INSTANCES 1 (or more on postgres)')
}
const TICKS_PER_S = 100 // USER_HZ

/** /proc/<pid>/stat's fields after the command name (field 3 onward). */
function statOf(pid: number | string): string[] | null {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  } catch {
    return null // gone
  }
}

/** CPU seconds (user + system, all threads) of these processes. */
function cpuOfPids(pids: readonly number[]): number {
  let ticks = 0
  for (const pid of pids) {
    const fields = statOf(pid)
    if (fields) ticks += Number(fields[11]) + Number(fields[12])
  }
  return ticks / TICKS_PER_S
}

/**
 * CPU seconds of a PostgreSQL cluster: its postmaster with the children it
 * has reaped (a backend that closed during the run counts) and its live
 * children (the backends, the WAL writer, the checkpointer…).
 */
function cpuOfCluster(postmaster: number): number {
  const own = statOf(postmaster)
  if (!own) return 0
  let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14])
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue
    const fields = statOf(pid)
    if (fields && Number(fields[1]) === postmaster) ticks += Number(fields[11]) + Number(fields[12])
  }
  return ticks / TICKS_PER_S
}

await ensureWrk()
await buildBinary()
const cluster = ENGINE === 'postgres' ? await startPostgres({ durable: true }) : undefined
const postmaster = cluster ? Number(readFileSync(join(cluster.socketDir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]) : 0
const masterKey = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex')

interface Side {
  binary: string
  instances: Awaited<ReturnType<typeof startArena>>[]
  file: string
}

/** A binary's instances on data of their own, set up for the scenario, and its request list. */
async function setUp(binary: string, n: number): Promise<Side> {
  let env: Record<string, string> = {}
  if (cluster) {
    await cluster.createDatabase(`arena_cpu_${n}`)
    env = { ARENA_DATABASE_URL: cluster.url(`arena_cpu_${n}`), ARENA_MASTER_KEY: masterKey }
  }
  const dataDir = join(mkdtempSync(join(tmpdir(), 'arena-cpu-')), 'data')
  const instances: Side['instances'] = []
  for (let i = 0; i < INSTANCES; i++) instances.push(await startArena(dataDir, binary, env, instanceCpu(i)))
  const base = instances[0]!.url
  const players = await inBatches(Array.from({ length: USERS }, (_, i) => `cpu_${i}`), 4, async (username) => {
    await api(base, 'POST', '/api/v1/user/register', { email: `${username}@bench.test`, username, password: PASSWORD, country: 'DE', accept_terms: true })
    return username
  })
  let lines: Parameters<typeof requestFile>[1]
  if (SCENARIO === 'login') {
    lines = players.map((identifier) => ({ method: 'POST', path: '/api/v1/user/login', body: { identifier, password: PASSWORD } }))
  } else {
    // Every player's session in turn: 32 connections on one session would let
    // PostgreSQL's batched reads (one statement a turn) read one row for all.
    const auths = await inBatches(players, 4, async (identifier) => {
      const { accessToken } = await api<{ accessToken: string }>(base, 'POST', '/api/v1/user/login', { identifier, password: PASSWORD })
      return { authorization: `Bearer ${accessToken}` }
    })
    if (SCENARIO === 'me') lines = auths.map((auth) => ({ method: 'GET', path: '/api/v1/me', headers: auth }))
    else {
      lines = await inBatches(auths, 4, async (auth) => {
        let cursor = ''
        for (;;) {
          const page = await api<{ events: unknown[]; cursor: string }>(base, 'GET', `/api/v1/events?wait=0${cursor ? `&after=${cursor}` : ''}`, undefined, auth)
          cursor = page.cursor
          if (page.events.length === 0) break
        }
        return { method: 'GET', path: `/api/v1/events?after=${cursor}&wait=0&topics=session,wallet,status`, headers: auth }
      })
    }
  }
  return { binary, instances, file: requestFile(`cpu-${SCENARIO}-${n}.tsv`, lines) }
}

interface Figures {
  perSecond: number
  p50ms: number
  p99ms: number
  arenaCpuUsPerRequest: number
  postgresCpuUsPerRequest: number
  arenaCores: number
  postgresCores: number
  /** With BENCH_REFERENCE: perSecond over the round's bare GET. */
  ratioToBareGet?: number
}

async function measure(side: Side): Promise<Figures> {
  const pids = side.instances.map((arena) => arena.proc.pid)
  const connections = Number(process.env.BENCH_CONNECTIONS ?? (SCENARIO === 'login' ? 8 : 32))
  const before = { arena: cpuOfPids(pids), postgres: postmaster ? cpuOfCluster(postmaster) : 0 }
  const result = await wrkAcross(side.instances.map((a) => a.url), { script: 'replay', seconds: SECONDS, connections, cpus: LOAD_CPU, env: { BENCH_REQUESTS: side.file } })
  const after = { arena: cpuOfPids(pids), postgres: postmaster ? cpuOfCluster(postmaster) : 0 }
  const answered = result.requests - result.errors
  const usPer = (s: number) => Math.round((s * 1e6) / answered)
  const busy = (s: number) => Math.round((s / result.seconds) * 100) / 100
  log(`${side.binary}: ${SCENARIO} on ${ENGINE}, ${INSTANCES} instance(s): ${answered} answered in ${result.seconds} s (${result.rps}/s, ${result.errors} errors, p99 ${result.p99ms} ms)`)
  return {
    perSecond: result.rps,
    p50ms: result.p50ms,
    p99ms: result.p99ms,
    arenaCpuUsPerRequest: usPer(after.arena - before.arena),
    postgresCpuUsPerRequest: usPer(after.postgres - before.postgres),
    arenaCores: busy(after.arena - before.arena),
    postgresCores: busy(after.postgres - before.postgres),
  }
}

const reference = process.env.BENCH_REFERENCE === '1' ? await startServe(onServerCpu([process.execPath, join(import.meta.dir, 'reference-server.ts')], instanceCpu(0)), {}) : undefined
const referenceFile = requestFile('cpu-bare-get.tsv', [{ method: 'GET', path: '/' }])
/** The bare GET's rate now (0 without BENCH_REFERENCE). */
async function bareGet(): Promise<number> {
  if (!reference) return 0
  const connections = Number(process.env.BENCH_CONNECTIONS ?? (SCENARIO === 'login' ? 8 : 32))
  const result = await wrkAcross([`${reference.url}/`], { script: 'replay', seconds: SECONDS, connections, cpus: LOAD_CPU, env: { BENCH_REQUESTS: referenceFile } })
  return result.rps
}

const sides: Side[] = []
for (const [n, binary] of BINARIES.entries()) sides.push(await setUp(binary, n))
const taken = sides.map(() => [] as Figures[])
for (let round = 0; round < ROUNDS; round++) {
  // A B, then B A: neither side always runs first.
  const order = sides.map((_, i) => i)
  if (round % 2 === 1) order.reverse()
  const bare = await bareGet()
  for (const i of order) {
    const figures = await measure(sides[i]!)
    if (reference) figures.ratioToBareGet = Math.round((figures.perSecond / bare) * 1000) / 1000
    taken[i]!.push(figures)
    console.log(JSON.stringify({ round, binary: sides[i]!.binary, scenario: SCENARIO, engine: ENGINE, instances: INSTANCES, load: loadAverage(), ...(reference ? { bareGet: bare } : {}), ...figures }))
  }
}
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid]! : Math.round(((sorted[mid - 1]! + sorted[mid]!) / 2) * 100) / 100
}
if (ROUNDS > 1 || sides.length > 1) {
  for (const [i, side] of sides.entries()) {
    // A round whose instance got no core (another run pinned there) answered nothing: left out.
    const valid = taken[i]!.filter((f) => f.perSecond > 0)
    const medians = Object.fromEntries((Object.keys(taken[i]![0]!) as (keyof Figures)[]).map((key) => [key, valid.length ? median(valid.map((f) => f[key] ?? 0)) : null]))
    console.log(JSON.stringify({ median: true, rounds: ROUNDS, counted: valid.length, binary: side.binary, scenario: SCENARIO, engine: ENGINE, instances: INSTANCES, load: loadAverage(), ...medians }))
  }
}
for (const side of sides) for (const arena of side.instances) await arena.stop()
await reference?.signal('SIGTERM')
process.exit(0)
