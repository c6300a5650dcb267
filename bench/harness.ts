// What the benchmark scripts share: CPU pinning, starting a binary on a data
// dir, the API calls that set a platform up, and the request lists of the
// session and claim scenarios.
import { mkdirSync, openSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { BINARY, ROOT } from '../test/helpers/process'
import { MAX_OPEN_GAME_SESSIONS } from '../src/modules/matches/service'

export const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef0123456789'
/** The benched server's ARENA_METRICS_TOKEN: scenarios read its own histograms from GET /metrics. */
export const METRICS_TOKEN = 'bench-metrics-token-0123456789abcdef0123456789'
export const PASSWORD = 'correct horse battery'
export const PIN = '582047'

export const cores = navigator.hardwareConcurrency
export const SERVER_CPU = String(cores - 1)
export const LOAD_CPU = '0'
export const canPin = cores > 1 && Bun.which('taskset') !== null
export const onServerCpu = (command: string[], cpu = SERVER_CPU) => (canPin ? ['taskset', '-c', cpu, ...command] : command)
/** The core of the i-th instance: the first on the server core, the next ones on the cores below it (the last shares the load core). */
export const instanceCpu = (i: number) => String(Math.max(0, cores - 1 - i))

export const log = (message: string) => console.error(`[bench] ${message}`)

const OUT_OF_REACH = { limit: 10_000_000, windowS: 60 }
/**
 * The rate limits the benchmarked server runs with, unless ARENA_RATE_LIMITS
 * is set in the bench's environment: every limit out of reach, so the
 * limiter still counts and writes its headers on every request (its cost is
 * measured) but never refuses the load, which comes from one address and a
 * few accounts. `ARENA_RATE_LIMITS='{"*":false}'` measures without it.
 */
export const BENCH_RATE_LIMITS = JSON.stringify({ '*': { address: OUT_OF_REACH, account: OUT_OF_REACH, game: OUT_OF_REACH } })

// ---------------------------------------------------------------- processes

export function rssKiB(pid: number, field: 'VmRSS' | 'VmHWM' | 'RssAnon'): number {
  try {
    return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0)
  } catch {
    return 0
  }
}

export async function freePort(): Promise<number> {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = probe.port!
  await probe.stop(true)
  return port
}

export interface Arena {
  proc: Subprocess
  url: string
  startMs: number
  stop(): Promise<void>
}

/** Starts the binary on the data dir, stdout to a log file (the harness must not spend the load core reading it), and waits for /readyz. */
/** Starts … (env: a variable set to undefined is left out, for a binary that does not know it). */
export async function startArena(dataDir: string, binary = BINARY, env: Record<string, string | undefined> = {}, cpu = SERVER_CPU): Promise<Arena> {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  mkdirSync(dataDir, { recursive: true })
  const out = openSync(join(dataDir, 'server.log'), 'a')
  const started = performance.now()
  const proc = Bun.spawn(onServerCpu([binary, 'serve'], cpu), {
    env: Object.fromEntries(
      Object.entries({ ARENA_RATE_LIMITS: BENCH_RATE_LIMITS, ...process.env, ARENA_DATA_DIR: dataDir, ARENA_PORT: String(port), ARENA_HOST: '127.0.0.1', ARENA_ADMIN_TOKEN: ADMIN_TOKEN, ...env }).filter(
        (entry): entry is [string, string] => entry[1] !== undefined,
      ),
    ),
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

/**
 * Samples the server's RSS while `work` runs; returns its result and the peak
 * in MiB, with the peak of its anonymous part (RssAnon: the heap, sockets,
 * argon2 state) apart from the pages of the binary and of the mapped database
 * file, which the kernel can drop and share.
 */
export async function sampled<T>(pid: number, work: () => Promise<T>): Promise<{ value: T; peakRssMiB: number; peakAnonMiB: number }> {
  let peak = rssKiB(pid, 'VmRSS')
  let peakAnon = rssKiB(pid, 'RssAnon')
  const timer = setInterval(() => {
    peak = Math.max(peak, rssKiB(pid, 'VmRSS'))
    peakAnon = Math.max(peakAnon, rssKiB(pid, 'RssAnon'))
  }, 100)
  try {
    const value = await work()
    return { value, peakRssMiB: Math.round(peak / 102.4) / 10, peakAnonMiB: Math.round(peakAnon / 102.4) / 10 }
  } finally {
    clearInterval(timer)
  }
}

/** The machine's load average (1, 5, 15 min), printed beside figures taken while other work may share the cores. */
export function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
}

// ---------------------------------------------------------------- GET /metrics

/** Cumulative buckets of a histogram: [le, count], ascending, +Inf last. */
export type Buckets = (readonly [number, number])[]

/** A histogram's cumulative buckets read from GET /metrics, summed over the instances. */
export async function histogram(urls: string[], name: string): Promise<Buckets> {
  const totals = new Map<number, number>()
  const line = new RegExp(`^${name}_bucket\\{le="([^"]+)"\\} (\\d+)$`, 'gm')
  for (const url of urls) {
    const text = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text()
    for (const match of text.matchAll(line)) {
      const le = match[1] === '+Inf' ? Infinity : Number(match[1])
      totals.set(le, (totals.get(le) ?? 0) + Number(match[2]))
    }
  }
  return [...totals.entries()].sort((a, b) => a[0] - b[0])
}

/** What was observed between two readings of one histogram. */
export function bucketsSince(before: Buckets, after: Buckets): Buckets {
  return after.map(([le, count], i) => [le, count - (before[i]?.[1] ?? 0)] as const)
}

/** The upper bound (seconds) of the first bucket holding the q-quantile; undefined when nothing was observed. */
export function bucketQuantile(buckets: Buckets, q: number): number | undefined {
  const total = buckets.at(-1)?.[1] ?? 0
  if (total === 0) return undefined
  return buckets.find(([, count]) => count >= q * total)?.[0]
}

export async function runJson(command: string[]): Promise<Record<string, number>> {
  const proc = Bun.spawn(onServerCpu(command), { cwd: ROOT, stdout: 'pipe', stderr: 'inherit' })
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited])
  if (code !== 0) throw new Error(`${command.join(' ')} exited with ${code}`)
  return JSON.parse(out.trim().split('\n').at(-1)!) as Record<string, number>
}

// ---------------------------------------------------------------- the API

/**
 * One API call of the set-up; a 503 (a PostgreSQL unit of work that lost its
 * races more often than the server retries it, e.g. tournament starts four at
 * a time) is tried again, as the answer says a client should.
 */
export async function api<T>(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const res = await fetch(base + path, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    const text = await res.text()
    if (res.status === 503 && attempt < 10) {
      await Bun.sleep(50 * attempt)
      continue
    }
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`)
    return JSON.parse(text) as T
  }
}

export async function inBatches<T, R>(items: T[], width: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
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

export interface Player {
  id: string
  username: string
  bearer: string
}
export interface TournamentView {
  id: string
  participants: { id: string; userId: string }[]
  matches: { id: string; status: string; slot1ParticipantId: string | null; slot2ParticipantId: string | null }[]
}
export interface Seat {
  bearer: string
  gameId: string
  gameKey: string
  matchId: string
  participantId: string
}

export const admin = { 'x-admin-token': ADMIN_TOKEN }

/**
 * Tournaments of every player (rated, the default, unless `rated` is false); returns both seats of every running
 * first-round match. A player may hold MAX_OPEN_GAME_SESSIONS open game
 * sessions per game (issuing one more supersedes the oldest), and every
 * tournament seats each player once, so the tournaments are spread over
 * games of their own, that many to a game: every session the scenarios issue
 * stays open until its claim uses it.
 */
export async function tournaments(base: string, players: Player[], count: number, rated = true): Promise<Seat[][]> {
  const byUser = new Map(players.map((p) => [p.id, p]))
  const games = await inBatches(Array.from({ length: Math.ceil(count / MAX_OPEN_GAME_SESSIONS) }, (_, i) => i), 4, async (i) => {
    const { game, gameKey } = await api<{ game: { id: string }; gameKey: string }>(base, 'POST', '/api/v1/admin/games', { name: `Bench game ${i}` }, admin)
    return { gameId: game.id, gameKey }
  })
  const created = await inBatches(Array.from({ length: count }, (_, i) => i), 4, async (i) => {
    const game = games[Math.floor(i / MAX_OPEN_GAME_SESSIONS)]!
    const { tournament } = await api<{ tournament: TournamentView }>(base, 'POST', '/api/v1/admin/tournaments', { gameId: game.gameId, name: `Bench cup ${i}`, format: 'single_elimination', participants: players.map((p) => p.id), ...(rated ? {} : { options: { rated: false } }) }, admin)
    return { game, id: tournament.id }
  })
  // Started one at a time: on PostgreSQL, concurrent starts of 256-player
  // brackets abort each other under SERIALIZABLE more often than the server
  // retries (a 503 the set-up would stop on); a start is not what is measured.
  const started: { game: (typeof games)[number]; tournament: TournamentView }[] = []
  for (const { game, id } of created) started.push({ game, tournament: (await api<{ tournament: TournamentView }>(base, 'POST', `/api/v1/admin/tournaments/${id}/start`, undefined, admin)).tournament })
  const pairs: Seat[][] = []
  for (const { game, tournament: t } of started) {
    const userOf = new Map(t.participants.map((p) => [p.id, byUser.get(p.userId)!]))
    for (const m of t.matches) {
      if (m.status !== 'running') continue
      pairs.push([m.slot1ParticipantId!, m.slot2ParticipantId!].map((pid) => ({ bearer: userOf.get(pid)!.bearer, ...game, matchId: m.id, participantId: pid })))
    }
  }
  return pairs
}

export function sessionRequests(seats: Seat[]) {
  return seats.map((s) => ({
    method: 'POST',
    path: `/api/v1/game-sdk/${s.gameId}/sessions`,
    headers: { authorization: `Bearer ${s.bearer}`, 'x-game-key': s.gameKey },
    body: { matchId: s.matchId },
  }))
}


export interface Issued {
  token: string
  context: { matchId: string; participantId: string }
}
export function claimRequests(issued: Issued[], seats: Seat[][]) {
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
        path: `/api/v1/game-sdk/${seat.gameId}/results`,
        headers: { authorization: `Bearer ${seat.bearer}`, 'x-game-key': seat.gameKey, 'x-session-token': session.token },
        body: { outcome: 'WIN', winnerParticipantId: a!.participantId },
      })
    }
  }
  return lines
}
