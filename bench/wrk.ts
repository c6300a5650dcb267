// Runs wrk with one of the Lua scenario scripts (plus report.lua, which writes
// its summary as JSON) and returns the figures.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface WrkResult {
  requests: number
  seconds: number
  rps: number
  /** Successes a script counted itself (claims answered 2xx, withdrawals valid), when it counts. */
  counted: number
  errors: number
  p50ms: number
  p90ms: number
  p99ms: number
  maxMs: number
}

/** Finds wrk, installing the Debian package when this is a root shell with apt-get; otherwise says how and exits. */
export async function ensureWrk(): Promise<string> {
  const found = Bun.which('wrk')
  if (found) return found
  if (process.getuid?.() === 0 && Bun.which('apt-get')) {
    console.error('wrk not found: installing the Debian package (apt-get install -y wrk)')
    const install = Bun.spawnSync(['apt-get', 'install', '-y', '-q', 'wrk'], { stdout: 'ignore', stderr: 'inherit' })
    const after = Bun.which('wrk')
    if (install.exitCode === 0 && after) return after
  }
  console.error('npm run bench needs wrk (https://github.com/wg/wrk): `sudo apt-get install wrk` on Debian/Ubuntu, `brew install wrk` on macOS.')
  process.exit(2)
}

const work = mkdtempSync(join(tmpdir(), 'arena-bench-wrk-'))
let runs = 0

export async function wrk(options: {
  url: string
  script: 'replay' | 'purchase'
  seconds: number
  connections: number
  env: Record<string, string>
  /** CPUs the load generator may use (taskset), e.g. "0". */
  cpus?: string
  timeoutS?: number
}): Promise<WrkResult> {
  runs++
  const script = join(work, `scenario-${runs}.lua`)
  writeFileSync(script, readFileSync(join(import.meta.dir, 'wrk', `${options.script}.lua`), 'utf8') + '\n' + readFileSync(join(import.meta.dir, 'wrk', 'report.lua'), 'utf8'))
  const report = join(work, `report-${runs}.json`)
  const command = ['wrk', '-t1', `-c${options.connections}`, `-d${options.seconds}s`, `--timeout`, `${options.timeoutS ?? 10}s`, '-s', script, options.url]
  const pinned = options.cpus && Bun.which('taskset') ? ['taskset', '-c', options.cpus, ...command] : command
  const proc = Bun.spawn(pinned, { env: { ...process.env, ...options.env, BENCH_REPORT: report }, stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  if (code !== 0) throw new Error(`wrk exited with ${code}:\n${out}\n${err}`)
  const r = JSON.parse(readFileSync(report, 'utf8')) as Record<string, number>
  const seconds = r.durationUs! / 1e6
  const ms = (us: number) => Math.round(us / 10) / 100
  return {
    requests: r.requests!,
    seconds: Math.round(seconds * 100) / 100,
    rps: Math.round(r.requests! / seconds),
    counted: r.counted!,
    errors: r.connectErrors! + r.readErrors! + r.writeErrors! + r.statusErrors! + r.timeouts!,
    p50ms: ms(r.p50Us!),
    p90ms: ms(r.p90Us!),
    p99ms: ms(r.p99Us!),
    maxMs: ms(r.maxUs!),
  }
}

/**
 * wrk against every instance at once (several instances behind no balancer:
 * each gets its share of the connections and of the request list, line i to
 * instance i mod n, so a single-use request is still sent once), combined:
 * rates, counts and errors add up, percentiles are the worst instance's.
 * Answers saved by the runs (BENCH_SAVE) end up in the one file asked for.
 */
export async function wrkAcross(urls: readonly string[], options: Omit<Parameters<typeof wrk>[0], 'url'>): Promise<WrkResult> {
  if (urls.length === 1) return wrk({ ...options, url: urls[0]! })
  const list = options.env.BENCH_REQUESTS ? readFileSync(options.env.BENCH_REQUESTS, 'utf8').trimEnd().split('\n') : undefined
  const saved = options.env.BENCH_SAVE
  const results = await Promise.all(
    urls.map((url, i) => {
      const env = { ...options.env }
      if (list) {
        env.BENCH_REQUESTS = join(work, `part-${++runs}.tsv`)
        // A list shorter than the instances (one request, replayed) goes to every instance whole.
        const share = list.length < urls.length ? list : list.filter((_, n) => n % urls.length === i)
        writeFileSync(env.BENCH_REQUESTS, share.join('\n') + '\n')
      }
      if (saved) env.BENCH_SAVE = `${saved}.${i}`
      return wrk({ ...options, url, env, connections: Math.max(1, Math.round(options.connections / urls.length)) })
    }),
  )
  if (saved) writeFileSync(saved, urls.map((_, i) => (existsSync(`${saved}.${i}`) ? readFileSync(`${saved}.${i}`, 'utf8') : '')).join(''))
  const sum = (key: keyof WrkResult) => results.reduce((total, r) => total + r[key], 0)
  const worst = (key: keyof WrkResult) => Math.max(...results.map((r) => r[key]))
  return { requests: sum('requests'), seconds: worst('seconds'), rps: sum('rps'), counted: sum('counted'), errors: sum('errors'), p50ms: worst('p50ms'), p90ms: worst('p90ms'), p99ms: worst('p99ms'), maxMs: worst('maxMs') }
}

/** Writes a request list for replay.lua. */
export function requestFile(name: string, lines: { method: string; path: string; headers?: Record<string, string>; body?: unknown }[]): string {
  const file = join(work, name)
  writeFileSync(
    file,
    lines
      .map((l) => [l.method, l.path, Object.entries(l.headers ?? {}).map(([k, v]) => `${k}: ${v}`).join('|'), l.body === undefined ? '' : JSON.stringify(l.body)].join('\t'))
      .join('\n') + '\n',
  )
  return file
}

export function scratchFile(name: string): string {
  return join(work, name)
}
