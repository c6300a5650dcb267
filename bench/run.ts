// npm run bench: load the compiled binary and a bare Bun.serve reference with
// the same bounded HTTP load, in the same run, and report both absolute
// figures and arena's ratio to the reference (absolute numbers drift between
// machines; the ratio is what to compare).
//
// Options (environment): BENCH_SECONDS (10), BENCH_CONNECTIONS (32).
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BINARY, buildBinary, startServe, type ServerProcess } from '../test/helpers/process'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32)

interface Result {
  name: string
  requests: number
  errors: number
  rps: number
  p50: number
  p99: number
  peakRssMiB: number
}

/** Pins the server to the last core when taskset exists, leaving the others to the load generator. */
function pinned(command: string[]): string[] {
  const cores = navigator.hardwareConcurrency
  return Bun.which('taskset') && cores > 1 ? ['taskset', '-c', String(cores - 1), ...command] : command
}

function rssMiB(pid: number): number {
  try {
    const status = require('node:fs').readFileSync(`/proc/${pid}/status`, 'utf8') as string
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0)
    return Math.round((kb / 1024) * 10) / 10
  } catch {
    return 0
  }
}

async function load(name: string, server: ServerProcess, path: string): Promise<Result> {
  const url = server.url + path
  const latencies: number[] = []
  let errors = 0
  let peak = 0
  const sampler = setInterval(() => (peak = Math.max(peak, rssMiB(server.proc.pid))), 200)
  // Warm-up: JIT, connection pool.
  const warmUntil = performance.now() + 1000
  await Promise.all(Array.from({ length: CONNECTIONS }, async () => {
    while (performance.now() < warmUntil) await (await fetch(url)).arrayBuffer()
  }))
  const started = performance.now()
  const until = started + SECONDS * 1000
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < until) {
        const t0 = performance.now()
        try {
          const res = await fetch(url)
          await res.arrayBuffer()
          if (res.status !== 200) errors++
        } catch {
          errors++
        }
        latencies.push(performance.now() - t0)
      }
    }),
  )
  const elapsed = (performance.now() - started) / 1000
  clearInterval(sampler)
  latencies.sort((a, b) => a - b)
  const at = (q: number) => Math.round((latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0) * 100) / 100
  return { name, requests: latencies.length, errors, rps: Math.round(latencies.length / elapsed), p50: at(0.5), p99: at(0.99), peakRssMiB: peak }
}

// Always measure the current source, never a stale binary.
await buildBinary()

const reference = await startServe(pinned([process.execPath, join(import.meta.dir, 'reference-server.ts')]), {})
const bare = await load('bare Bun.serve GET', reference, '/')
await reference.signal('SIGTERM')

// Default log level (info): the access-log line per request is part of what is measured.
const arena = await startServe(pinned([BINARY, 'serve']), {
  ARENA_DATA_DIR: mkdtempSync(join(tmpdir(), 'arena-bench-')),
})
const health = await load('arena GET /healthz', arena, '/healthz')
await arena.signal('SIGTERM')

console.log(`\n${SECONDS}s per scenario, ${CONNECTIONS} concurrent connections, ${navigator.hardwareConcurrency} cores, Bun ${Bun.version}\n`)
console.log('| scenario | req/s | ratio to bare | p50 ms | p99 ms | errors | server peak RSS MiB |')
console.log('|---|---|---|---|---|---|---|')
for (const r of [bare, health]) {
  console.log(`| ${r.name} | ${r.rps} | ${(r.rps / bare.rps).toFixed(2)} | ${r.p50} | ${r.p99} | ${r.errors} | ${r.peakRssMiB} |`)
}
