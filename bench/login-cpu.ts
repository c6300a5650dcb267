// Where a login's CPU goes on PostgreSQL: the arena process's CPU and the
// database server's (all its processes), per login, under the bench's login
// load (8 connections, players in turn), with one instance pinned to the
// server core as in npm run bench -- --engine postgres.
//
//   bun bench/login-cpu.ts            (BENCH_SECONDS, 10; BENCH_USERS, 64;
//                                      BENCH_INSTANCES, 1: with 2, each on a core of its own)
//
// Prints logins per second, and each process group's CPU per login and its
// share of the run's wall time (1.0: one core busy all the time).
import { readdirSync, readFileSync } from 'node:fs'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildBinary } from '../test/helpers/process'
import { startPostgres } from '../test/helpers/postgres'
import { api, inBatches, instanceCpu, LOAD_CPU, log, PASSWORD, startArena } from './harness'
import { ensureWrk, requestFile, wrkAcross } from './wrk'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const USERS = Number(process.env.BENCH_USERS ?? 64)
const INSTANCES = Number(process.env.BENCH_INSTANCES ?? 1)
const TICK_S = 100 // USER_HZ

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
  return ticks / TICK_S
}

await ensureWrk()
await buildBinary()
const cluster = await startPostgres({ durable: true })
await cluster.createDatabase('arena_login')
const env = { ARENA_DATABASE_URL: cluster.url('arena_login'), ARENA_MASTER_KEY: Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex') }
const dataDir = join(mkdtempSync(join(tmpdir(), 'arena-login-')), 'data')
const instances: Awaited<ReturnType<typeof startArena>>[] = []
for (let i = 0; i < INSTANCES; i++) instances.push(await startArena(dataDir, process.env.BENCH_BINARY, env, instanceCpu(i)))
const players = await inBatches(Array.from({ length: USERS }, (_, i) => `login_${i}`), 4, async (username) => {
  await api(instances[0]!.url, 'POST', '/api/v1/user/register', { email: `${username}@bench.test`, username, password: PASSWORD, country: 'DE', accept_terms: true })
  return username
})
const file = requestFile('login-cpu.tsv', players.map((identifier) => ({ method: 'POST', path: '/api/v1/user/login', body: { identifier, password: PASSWORD } })))
const isArena = (c: string) => c.includes('arena serve')
const isPostgres = (c: string) => c.startsWith('postgres')
const before = { arena: cpuOf(isArena), postgres: cpuOf(isPostgres) }
const result = await wrkAcross(instances.map((a) => a.url), { script: 'replay', seconds: SECONDS, connections: 8, cpus: LOAD_CPU, env: { BENCH_REQUESTS: file } })
const after = { arena: cpuOf(isArena), postgres: cpuOf(isPostgres) }
const logins = result.requests - result.errors
const ms = (s: number) => Math.round((s * 1000 * 100) / logins) / 100
log(`${logins} logins in ${result.seconds} s (${result.rps}/s, ${result.errors} errors)`)
const busy = (s: number) => Math.round((s / result.seconds) * 100) / 100
console.log(JSON.stringify({ instances: INSTANCES, loginsPerSecond: result.rps, arenaCpuMsPerLogin: ms(after.arena - before.arena), postgresCpuMsPerLogin: ms(after.postgres - before.postgres), arenaCores: busy(after.arena - before.arena), postgresCores: busy(after.postgres - before.postgres) }))
for (const arena of instances) await arena.stop()
process.exit(0)
