// npm run bench -- --against <commit>: this source (B) against an earlier
// commit (A) in one run, on the scenarios a refactor of the request path must
// not slow down: GET /me, session issue, result claims, a caught-up event
// poll. Both binaries are built here (A in a temporary git worktree with its
// own npm ci), each gets its own data dir set up through the API, and the
// measurements interleave: round after round, A then B, then B then A, so
// drift of the machine (heat, other load) falls on both alike. Reported: the
// median of each side's rounds and B/A.
//
// `--against <commit> --engine postgres` runs the same with each side's data
// in a database of its own on one throwaway PostgreSQL cluster (fsync on, as
// a studio runs it): both sides meet the same server, so its drift, too,
// falls on both alike.
//
// `--rated-vs-unrated [--engine postgres]` (no commit) runs one binary, this
// source's, on both sides: A's tournaments unrated (`options.rated: false`),
// B's rated (the default), every other step the same; so B/A of the claims is
// what rating a decision costs over HTTP (issue 43: a rated claim within 10 %
// of an unrated one), the other scenarios read the run's noise.
//
// Settings (environment): BENCH_ROUNDS (5), BENCH_SECONDS (5 per scenario and
// round), BENCH_CONNECTIONS (32), BENCH_USERS (256).
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BINARY, buildBinary, ROOT } from '../test/helpers/process'
import { admin, api, claimRequests, cores, inBatches, LOAD_CPU, log, PASSWORD, sessionRequests, startArena, tournaments, type Issued, type Player } from './harness'
import { ensureWrk, requestFile, scratchFile, wrk, type WrkResult } from './wrk'
import { startPostgres } from '../test/helpers/postgres'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32)
const USERS = Number(process.env.BENCH_USERS ?? 256)

/** The session or claim rate the first round's seats are sized for (then the fastest seen): more seats cost set-up time, too few end a run early. */
const FIRST_RATE = { sqlite: 10_000, postgres: 3_000 }

const SCENARIOS = ['GET /me', 'session issue', 'claims', 'event poll (caught up)'] as const
type Scenario = (typeof SCENARIOS)[number]

function sh(command: string[], cwd = ROOT): string {
  const result = Bun.spawnSync(command, { cwd, stdout: 'pipe', stderr: 'pipe' })
  if (result.exitCode !== 0) throw new Error(`${command.join(' ')} failed:\n${result.stdout.toString()}\n${result.stderr.toString()}`)
  return result.stdout.toString().trim()
}

/** Builds `commit`'s binary in a throwaway worktree; returns its path. */
function buildAt(commit: string, into: string): string {
  const tree = join(into, 'tree')
  sh(['git', 'worktree', 'add', '--detach', tree, commit])
  try {
    log(`A: npm ci and build at ${commit}`)
    sh(['npm', 'ci', '--no-audit', '--no-fund', '--loglevel=error'], tree)
    sh(['npm', 'run', 'build', '--silent'], tree)
    const binary = join(into, 'arena-a')
    copyFileSync(join(tree, 'dist', 'arena'), binary)
    return binary
  } finally {
    sh(['git', 'worktree', 'remove', '--force', tree])
  }
}

interface Side {
  name: 'A' | 'B'
  binary: string
  dataDir: string
  /** What the side's server is started with besides its data dir: on PostgreSQL, its database and master key. */
  env: Record<string, string | undefined>
  players: Player[]
  bearer: string
  cursor: string
  /** Whether its tournaments are rated (false only for A of --rated-vs-unrated). */
  rated: boolean
  /** The fastest session or claim rate seen, sizing the next round's supply. */
  fastest: number
  results: Record<Scenario, number[]>
}

/** A platform on a fresh data dir: a game, players logged in; the first player's events read to the end. */
async function setUp(name: Side['name'], binary: string, root: string, env: Record<string, string | undefined>, engine: 'sqlite' | 'postgres', rated = true): Promise<Side> {
  const dataDir = join(root, `data-${name}`)
  const arena = await startArena(dataDir, binary, env)
  try {
    const base = arena.url
    // Tokens outlive the run: the servers are started with a day-long ARENA_ACCESS_TTL_S (abBench), as the rounds take longer than a default access token lives.
    const players = await inBatches(Array.from({ length: USERS }, (_, i) => i), 4, async (i) => {
      const username = `ab_${i}`
      const { user } = await api<{ user: { id: string } }>(base, 'POST', '/api/v1/user/register', { email: `${username}@bench.test`, username, password: PASSWORD, country: 'DE', accept_terms: true })
      const tokens = await api<{ accessToken: string }>(base, 'POST', '/api/v1/user/login', { identifier: username, password: PASSWORD })
      return { id: user.id, username, bearer: tokens.accessToken }
    })
    await api(base, 'POST', `/api/v1/admin/wallets/${players[0]!.id}/credit`, { amount: '100', reference: 'bench' }, admin)
    const results = Object.fromEntries(SCENARIOS.map((s) => [s, [] as number[]])) as Record<Scenario, number[]>
    return { name, binary, dataDir, env, players, bearer: players[0]!.bearer, cursor: '', rated, fastest: FIRST_RATE[engine], results }
  } finally {
    await arena.stop()
  }
}

const run = (url: string, name: string, lines: Parameters<typeof requestFile>[1], extra: Record<string, string> = {}, seconds = SECONDS): Promise<WrkResult> =>
  wrk({ url, script: 'replay', seconds, connections: CONNECTIONS, cpus: LOAD_CPU, env: { BENCH_REQUESTS: requestFile(name, lines), ...extra } })

/**
 * The sessions wrk saved (one JSON line each). A line cut short (wrk stopped
 * while writing it: seen once on a loaded machine, and the run stopped on it)
 * is left out: its seat is neither reached nor claimed.
 */
function savedSessions(path: string): Issued[] {
  const sessions: Issued[] = []
  for (const line of readFileSync(path, 'utf8').trim().split('\n')) {
    try {
      sessions.push(JSON.parse(line) as Issued)
    } catch {
      log(`${path}: a saved session line cut short, left out`)
    }
  }
  return sessions
}

/** One round of every scenario on one side's binary. */
async function round(side: Side, index: number): Promise<void> {
  const arena = await startArena(side.dataDir, side.binary, side.env)
  const tag = `${side.name}-${index}`
  try {
    const base = arena.url
    const auth = { authorization: `Bearer ${side.bearer}` }
    // Every player's session in turn (one session on every connection would let PostgreSQL's batched lookup read one row for all).
    side.results['GET /me'].push((await run(base, `me-${tag}.tsv`, side.players.map((p) => ({ method: 'GET', path: '/api/v1/me', headers: { authorization: `Bearer ${p.bearer}` } })))).rps)

    for (;;) {
      const page = await api<{ events: unknown[]; cursor: string }>(base, 'GET', `/api/v1/events?wait=0${side.cursor ? `&after=${side.cursor}` : ''}`, undefined, auth)
      side.cursor = page.cursor
      if (page.events.length === 0) break
    }
    const poll = [{ method: 'GET', path: `/api/v1/events?after=${side.cursor}&wait=0&topics=session,wallet,status`, headers: auth }]
    side.results['event poll (caught up)'].push((await run(base, `poll-${tag}.tsv`, poll)).rps)

    // Sessions: enough fresh seats for the fastest rate seen so far (each seat
    // issued once), and as many claims as the sessions allow.
    // (one seat: one session, then one claim)
    const seatsNeeded = side.fastest * SECONDS * 1.5
    const perTournament = Math.floor(side.players.length / 2) * 2
    const seats = await tournaments(base, side.players, Math.ceil(seatsNeeded / perTournament), side.rated)
    const seatCount = seats.length * 2
    const saved = scratchFile(`sessions-${tag}.jsonl`)
    const issued = await run(base, `sessions-${tag}.tsv`, sessionRequests(seats.flat()), { BENCH_SAVE: saved, BENCH_MODE: 'once' })
    if (issued.requests >= seatCount * 0.98) log(`${tag}: session issue ran out of seats (${seatCount}); its figure is a lower bound`)
    side.results['session issue'].push(issued.rps)
    side.fastest = Math.max(side.fastest, issued.rps)

    // Claims from the sessions just issued, and from sessions for the seats
    // the measured run did not reach (issued now, not measured), so the
    // supply outlasts a claims run as fast as the fastest rate seen; each
    // session used once; the run ends when they are.
    const reached = new Set(savedSessions(saved).map((s) => `${s.context.matchId}/${s.context.participantId}`))
    const rest = seats.flat().filter((seat) => !reached.has(`${seat.matchId}/${seat.participantId}`))
    if (rest.length > 0) await run(base, `sessions-rest-${tag}.tsv`, sessionRequests(rest), { BENCH_SAVE: saved, BENCH_MODE: 'once' }, Math.ceil((rest.length / Math.max(1, issued.rps)) * 1.5) + 2)
    const sessions = savedSessions(saved)
    const claimLines = claimRequests(sessions, seats)
    const claims = await run(base, `claims-${tag}.tsv`, claimLines, { BENCH_MODE: 'once' })
    if (claims.counted >= claimLines.length * 0.98) log(`${tag}: claims ran out of sessions (${claimLines.length}); its figure is a lower bound`)
    side.results.claims.push(Math.round(claims.counted / claims.seconds))
    side.fastest = Math.max(side.fastest, Math.round(claims.counted / claims.seconds))
  } finally {
    await arena.stop()
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : Math.round((sorted[mid - 1]! + sorted[mid]!) / 2)
}

/** `against`: the commit A is built from; 'rated-vs-unrated': this source on both sides, A's tournaments unrated. */
export async function abBench(against: string, engine: 'sqlite' | 'postgres' = 'sqlite'): Promise<void> {
  const ratedVsUnrated = against === 'rated-vs-unrated'
  await ensureWrk()
  // Access tokens that outlive the run (15 min by default; a run of 3 rounds on a loaded machine took 17).
  const tokens = { ARENA_ACCESS_TTL_S: '86400' }
  const envs: Record<'A' | 'B', Record<string, string | undefined>> = { A: { ...tokens }, B: { ...tokens } }
  let stopCluster = async () => {}
  if (engine === 'postgres') {
    const cluster = await startPostgres({ durable: true })
    stopCluster = () => cluster.stop()
    for (const side of ['A', 'B'] as const) {
      const database = `arena_ab_${side.toLowerCase()}`
      await cluster.createDatabase(database)
      envs[side] = { ...tokens, ARENA_DATABASE_URL: cluster.url(database), ARENA_MASTER_KEY: Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex') }
    }
    log(`PostgreSQL: throwaway cluster (fsync on), socket in ${cluster.socketDir}; a database per side`)
  }
  const commitB = sh(['git', 'rev-parse', '--short', 'HEAD'])
  const commitA = ratedVsUnrated ? commitB : sh(['git', 'rev-parse', '--short', against])
  const dirty = sh(['git', 'status', '--porcelain', '--', 'src', 'package.json', 'package-lock.json']) !== ''
  const root = mkdtempSync(join(tmpdir(), 'arena-ab-'))
  const binaryA = ratedVsUnrated ? join(root, 'arena-b') : buildAt(commitA, root)
  // A commit from before the rate limiter (issue 33) refuses a setting it does not know.
  if (!ratedVsUnrated && !sh(['git', 'show', `${commitA}:src/config.ts`]).includes('ARENA_RATE_LIMITS')) envs.A.ARENA_RATE_LIMITS = undefined
  log('B: building dist/arena from the current source')
  await buildBinary()
  const binaryB = join(root, 'arena-b')
  copyFileSync(BINARY, binaryB)

  log(`setting up ${USERS} players on each side`)
  const a = await setUp('A', binaryA, root, envs.A, engine, !ratedVsUnrated)
  const b = await setUp('B', binaryB, root, envs.B, engine)
  for (let i = 0; i < ROUNDS; i++) {
    const order = i % 2 === 0 ? [a, b] : [b, a]
    for (const side of order) {
      log(`round ${i + 1}/${ROUNDS}: ${side.name}`)
      await round(side, i)
      log(`round ${i + 1} ${side.name}: ${SCENARIOS.map((s) => `${s} ${side.results[s].at(-1)}`).join(', ')}`)
    }
  }

  console.log(`\n${new Date().toISOString()}; ${cores} cores; Bun ${Bun.version}; wrk -t1, ${CONNECTIONS} connections; ${ROUNDS} interleaved rounds of ${SECONDS} s per scenario`)
  const sides = ratedVsUnrated ? `one binary (${commitB}${dirty ? ' + uncommitted changes' : ''}): A = unrated tournaments, B = rated` : `A = ${commitA}, B = ${commitB}${dirty ? ' + uncommitted changes' : ''}`
  console.log(`${sides}; ${engine === 'postgres' ? 'PostgreSQL (a database per side, one cluster)' : 'SQLite'}\n`)
  console.log('| scenario | A median /s | B median /s | B/A | A rounds | B rounds |')
  console.log('|---|---|---|---|---|---|')
  for (const s of SCENARIOS) {
    const ma = median(a.results[s])
    const mb = median(b.results[s])
    console.log(`| ${s} | ${ma} | ${mb} | ${(mb / ma).toFixed(2)} | ${a.results[s].join(', ')} | ${b.results[s].join(', ')} |`)
  }
  console.log(`\n(claims: 2xx answers per second; the others: requests per second. Data: ${root})`)
  const json: Record<string, unknown> = { bench: ratedVsUnrated ? 'rated-vs-unrated' : 'ab', engine, a: commitA, b: commitB, rounds: ROUNDS }
  for (const s of SCENARIOS) json[s] = { a: median(a.results[s]), b: median(b.results[s]), ratio: Math.round((median(b.results[s]) / median(a.results[s])) * 100) / 100, aRounds: a.results[s], bRounds: b.results[s] }
  console.log(JSON.stringify(json))
  if (!ratedVsUnrated) rmSync(binaryA)
  await stopCluster()
}
