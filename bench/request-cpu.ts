// Where a request's CPU goes: the arena processes' and, on PostgreSQL, the
// database server's (all its processes), per request, under the bench's load
// for one scenario, with the instances pinned as in npm run bench.
//
//   bun bench/request-cpu.ts
//
// Settings (environment): BENCH_SCENARIO (login: 8 connections, players in
// turn; me: GET /api/v1/me, 32 connections; poll: a caught-up GET
// /api/v1/events, 32 connections), BENCH_ENGINE (postgres or sqlite),
// BENCH_INSTANCES (1; 2 on PostgreSQL, each on a core of its own),
// BENCH_SECONDS (10), BENCH_USERS (64), BENCH_BINARY (dist/arena).
//
// Prints requests per second, and each process group's CPU per request and
// its share of the run's wall time (1.0: one core busy all the time).
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildBinary } from '../test/helpers/process'
import { startPostgres } from '../test/helpers/postgres'
import { api, inBatches, instanceCpu, LOAD_CPU, log, PASSWORD, startArena } from './harness'
import { ensureWrk, requestFile, wrkAcross } from './wrk'

const SCENARIO = process.env.BENCH_SCENARIO ?? 'login'
const ENGINE = process.env.BENCH_ENGINE ?? 'postgres'
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const USERS = Number(process.env.BENCH_USERS ?? 64)
const INSTANCES = Number(process.env.BENCH_INSTANCES ?? 1)
if (!['login', 'me', 'poll'].includes(SCENARIO) || !['postgres', 'sqlite'].includes(ENGINE) || (ENGINE === 'sqlite' && INSTANCES !== 1)) {
  throw new Error('BENCH_SCENARIO login|me|poll, BENCH_ENGINE postgres|sqlite, BENCH_INSTANCES 1 (or more on postgres)')
}
const TICKS_PER_S = 100 // USER_HZ

/** CPU seconds (user + system) of the processes whose command line matches. */
function cpuOf(match: (cmdline: string) => boolean): number {
  let ticks = 0
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ')
      if (!match(cmdline)) continue
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
      ticks += Number(fields[11]) + Number(fields[12])
    } catch {
      // gone
    }
  }
  return ticks / TICKS_PER_S
}

await ensureWrk()
await buildBinary()
let env: Record<string, string> = {}
if (ENGINE === 'postgres') {
  const cluster = await startPostgres({ durable: true })
  await cluster.createDatabase('arena_cpu')
  env = { ARENA_DATABASE_URL: cluster.url('arena_cpu'), ARENA_MASTER_KEY: Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex') }
}
const dataDir = join(mkdtempSync(join(tmpdir(), 'arena-cpu-')), 'data')
const instances: Awaited<ReturnType<typeof startArena>>[] = []
for (let i = 0; i < INSTANCES; i++) instances.push(await startArena(dataDir, process.env.BENCH_BINARY, env, instanceCpu(i)))
const base = instances[0]!.url
const players = await inBatches(Array.from({ length: SCENARIO === 'login' ? USERS : 1 }, (_, i) => `cpu_${i}`), 4, async (username) => {
  await api(base, 'POST', '/api/v1/user/register', { email: `${username}@bench.test`, username, password: PASSWORD, country: 'DE', accept_terms: true })
  return username
})

let lines: Parameters<typeof requestFile>[1]
let connections = 32
if (SCENARIO === 'login') {
  lines = players.map((identifier) => ({ method: 'POST', path: '/api/v1/user/login', body: { identifier, password: PASSWORD } }))
  connections = 8
} else {
  const { accessToken } = await api<{ accessToken: string }>(base, 'POST', '/api/v1/user/login', { identifier: players[0], password: PASSWORD })
  const auth = { authorization: `Bearer ${accessToken}` }
  if (SCENARIO === 'me') lines = [{ method: 'GET', path: '/api/v1/me', headers: auth }]
  else {
    let cursor = ''
    for (;;) {
      const page = await api<{ events: unknown[]; cursor: string }>(base, 'GET', `/api/v1/events?wait=0${cursor ? `&after=${cursor}` : ''}`, undefined, auth)
      cursor = page.cursor
      if (page.events.length === 0) break
    }
    lines = [{ method: 'GET', path: `/api/v1/events?after=${cursor}&wait=0&topics=session,wallet,status`, headers: auth }]
  }
}
const file = requestFile(`cpu-${SCENARIO}.tsv`, lines)
const isArena = (c: string) => c.includes('arena serve')
const isPostgres = (c: string) => c.startsWith('postgres')
const before = { arena: cpuOf(isArena), postgres: cpuOf(isPostgres) }
const result = await wrkAcross(instances.map((a) => a.url), { script: 'replay', seconds: SECONDS, connections, cpus: LOAD_CPU, env: { BENCH_REQUESTS: file } })
const after = { arena: cpuOf(isArena), postgres: cpuOf(isPostgres) }
const answered = result.requests - result.errors
const usPer = (s: number) => Math.round((s * 1e6) / answered)
const busy = (s: number) => Math.round((s / result.seconds) * 100) / 100
log(`${SCENARIO} on ${ENGINE}, ${INSTANCES} instance(s): ${answered} answered in ${result.seconds} s (${result.rps}/s, ${result.errors} errors, p99 ${result.p99ms} ms)`)
console.log(
  JSON.stringify({
    scenario: SCENARIO,
    engine: ENGINE,
    instances: INSTANCES,
    perSecond: result.rps,
    p99ms: result.p99ms,
    arenaCpuUsPerRequest: usPer(after.arena - before.arena),
    postgresCpuUsPerRequest: usPer(after.postgres - before.postgres),
    arenaCores: busy(after.arena - before.arena),
    postgresCores: busy(after.postgres - before.postgres),
  }),
)
for (const arena of instances) await arena.stop()
process.exit(0)
