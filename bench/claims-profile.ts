// In-process profile of the two group-committed game-SDK writes: session
// issue (POST /game-sdk/{id}/sessions) and result claims (POST
// /game-sdk/{id}/results, each session used once, both players claiming that
// slot 1 won, as bench/harness.ts's claimRequests). The real app on a real
// SQLite data dir (test/helpers/app.ts: synchronous=FULL, the group
// committer), driven through `app.handle` with BENCH_INFLIGHT requests in
// flight, no HTTP server and no load generator competing for the core. Run it
// pinned, so the figure is one core's:
//
//   taskset -c 1 bun bench/claims-profile.ts
//   taskset -c 1 bun --cpu-prof --cpu-prof-dir=/tmp/prof bench/claims-profile.ts
//   bun bench/cpuprofile-summary.ts /tmp/prof/<file>.cpuprofile /tmp/prof/<file>.cpuprofile.windows.json claims
//
// Reported per round: µs of this process's CPU (user + system, from
// process.cpuUsage) per request, wall rate, and with BENCH_TIMINGS=1 a
// breakdown by phase measured inside the process (see `phases` below). The
// request objects are built before a round is timed; reading the answers is
// inside it (a few µs). With --cpu-prof the measured windows are written
// beside the profile, so the summary counts only the samples taken in them.
//
// Settings (environment): BENCH_PLAYERS (256: each tournament is a single
// elimination of them), BENCH_TOURNAMENTS (5 per round, and at most 5: an
// account holds at most MAX_OPEN_GAME_SESSIONS open sessions per game, and a
// sixth would supersede a session before its claim), BENCH_ROUNDS (3,
// after one warm-up round), BENCH_INFLIGHT (32), BENCH_ENGINE (sqlite; the
// test engine otherwise), BENCH_RATED (1; 0: the tournaments are unrated,
// `options.rated: false`, so a decision rates no one: the difference between
// the two is what rating the decided matches costs), BENCH_SQL (statements
// run on the writer after setting up: an experiment, such as DROP INDEX, to
// see what an index costs), BENCH_FRAMES (1: automatic checkpoints off, and
// per round the WAL frames the claims wrote, then, summed over the rounds,
// by the b-tree each frame's page belongs to: where a commit's writes go),
// BENCH_COMMITS (1: how long each COMMIT statement held the event loop).
import { Database } from 'bun:sqlite'
import { readFileSync, writeFileSync } from 'node:fs'
import { createTestApp, postJson, type TestApp } from '../test/helpers/app'
import { ADMIN_TOKEN, admin } from '../test/helpers/arena'
import { MAX_OPEN_GAME_SESSIONS } from '../src/modules/matches/service'

const PLAYERS = Number(process.env.BENCH_PLAYERS ?? 256)
const TOURNAMENTS = Math.min(MAX_OPEN_GAME_SESSIONS, Number(process.env.BENCH_TOURNAMENTS ?? MAX_OPEN_GAME_SESSIONS))
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const INFLIGHT = Number(process.env.BENCH_INFLIGHT ?? 32)
const PASSWORD = 'correct horse battery'
const RATED = process.env.BENCH_RATED !== '0'

const log = (message: string) => console.error(`[claims-profile] ${message}`)

async function json<T>(res: Response, expected: number): Promise<T> {
  const text = await res.text()
  if (res.status !== expected) throw new Error(`expected ${expected}, got ${res.status}: ${text}`)
  return JSON.parse(text) as T
}

interface Player {
  id: string
  bearer: string
}
interface Seat {
  bearer: string
  matchId: string
  participantId: string
}

async function setUp(ctx: TestApp) {
  const { game, gameKey } = await json<{ game: { id: string }; gameKey: string }>(await ctx.handle(postJson('/api/v1/admin/games', { name: 'Profile' }, admin)), 201)
  const players: Player[] = []
  // A few at a time: the app's argon2id gate refuses what it cannot queue.
  let next = 0
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let i = next++; i < PLAYERS; i = next++) {
      const username = `prof${i}_${Math.floor(Math.random() * 1e6)}`
      const { user } = await json<{ user: { id: string } }>(
        await ctx.handle(postJson('/api/v1/user/register', { email: `${username}@example.com`, username, password: PASSWORD, country: 'DE', accept_terms: true })),
        201,
      )
      const { accessToken } = await json<{ accessToken: string }>(await ctx.handle(postJson('/api/v1/user/login', { identifier: username, password: PASSWORD })), 200)
      players.push({ id: user.id, bearer: accessToken })
      }
    }),
  )
  return { gameId: game.id, gameKey, players }
}

/** Started single eliminations of every player; both seats of each running first-round match. */
async function seats(ctx: TestApp, gameId: string, players: Player[], count: number): Promise<Seat[][]> {
  const byUser = new Map(players.map((p) => [p.id, p]))
  const pairs: Seat[][] = []
  for (let i = 0; i < count; i++) {
    type View = { id: string; participants: { id: string; userId: string }[]; matches: { id: string; status: string; slot1ParticipantId: string | null; slot2ParticipantId: string | null }[] }
    const { tournament } = await json<{ tournament: View }>(
      await ctx.handle(postJson('/api/v1/admin/tournaments', { gameId, name: `Profile cup ${i}`, format: 'single_elimination', participants: players.map((p) => p.id), ...(RATED ? {} : { options: { rated: false } }) }, admin)),
      201,
    )
    const started = (await json<{ tournament: View }>(await ctx.handle(postJson(`/api/v1/admin/tournaments/${tournament.id}/start`, {}, admin)), 200)).tournament
    const userOf = new Map(started.participants.map((p) => [p.id, byUser.get(p.userId)!]))
    for (const m of started.matches) {
      if (m.status !== 'running') continue
      pairs.push([m.slot1ParticipantId!, m.slot2ParticipantId!].map((pid) => ({ bearer: userOf.get(pid)!.bearer, matchId: m.id, participantId: pid })))
    }
  }
  return pairs
}

interface Measured<T> {
  answers: T[]
  cpuUs: number
  wallMs: number
  window: [number, number]
  /** Units of work per commit. */
  batch: number
}

/** Runs the requests INFLIGHT at a time; CPU and wall time of the whole. */
async function drive<T>(ctx: TestApp, requests: Request[], expected: number): Promise<Measured<T>> {
  const answers: T[] = new Array(requests.length)
  let next = 0
  Bun.gc(true)
  batches.count = batches.items = 0
  const start = performance.now()
  const cpu = process.cpuUsage()
  await Promise.all(
    Array.from({ length: Math.min(INFLIGHT, requests.length) }, async () => {
      while (next < requests.length) {
        const i = next++
        answers[i] = await json<T>(await ctx.handle(requests[i]!), expected)
      }
    }),
  )
  const used = process.cpuUsage(cpu)
  const end = performance.now()
  return { answers, cpuUs: used.user + used.system, wallMs: end - start, window: [start, end], batch: Math.round(batches.items / Math.max(1, batches.count)) }
}

// BENCH_COMMITS=1: time every COMMIT statement and the committer's own
// checkpoints (the event loop is blocked for exactly that long: with
// synchronous=FULL COMMIT includes the WAL's fsync and SQLite's automatic
// checkpoint) and print, per round of claims, the commits, the mean and
// longest time a commit held the loop, and the share of the round's wall time.
const commitTimes = { count: 0, ms: 0, max: 0 }
if (process.env.BENCH_COMMITS === '1') {
  const prepare = Database.prototype.prepare
  Database.prototype.prepare = function (this: Database, sql: string, ...rest: unknown[]) {
    const statement = (prepare as (...a: unknown[]) => ReturnType<Database['prepare']>).call(this, sql, ...rest)
    if (sql !== 'COMMIT' && sql !== 'PRAGMA wal_checkpoint(PASSIVE)') return statement
    for (const method of ['run', 'get'] as const) {
      const original = (statement[method] as (...a: unknown[]) => unknown).bind(statement)
      ;(statement as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
        const started = performance.now()
        try {
          return original(...args)
        } finally {
          const ms = performance.now() - started
          if (sql === 'COMMIT') commitTimes.count++
          commitTimes.ms += ms
          commitTimes.max = Math.max(commitTimes.max, ms)
        }
      }
    }
    return statement
  } as typeof prepare
}

const ctx = await createTestApp({ env: { ARENA_ADMIN_TOKEN: ADMIN_TOKEN, ARENA_LOG_LEVEL: 'info' }, ...(process.env.BENCH_ENGINE ? { engine: process.env.BENCH_ENGINE as 'sqlite' | 'postgres' } : {}) })
// BENCH_SYNC=NORMAL: the same without the fsync at each commit, to see what the flush costs (not a setting arena offers).
if (process.env.BENCH_SYNC) ctx.sqlite.writer.sqlite.run(`PRAGMA synchronous = ${process.env.BENCH_SYNC === 'NORMAL' ? 'NORMAL' : 'FULL'}`)
// BENCH_AUTOCHECKPOINT=<pages>: the WAL's automatic checkpoint threshold (SQLite's default 1000), to see what checkpoints cost.
if (process.env.BENCH_AUTOCHECKPOINT) ctx.sqlite.writer.sqlite.run(`PRAGMA wal_autocheckpoint = ${Number(process.env.BENCH_AUTOCHECKPOINT)}`)
// Batch sizes and commit times of the group committer, per measured window.
const batches = { count: 0, items: 0 }
ctx.storage.observe({
  committed: (units) => {
    batches.count += 1
    batches.items += units
  },
  retried: () => {},
})
const { gameId, gameKey, players } = await setUp(ctx)
// BENCH_SQL=<statements>: run on the writer after setting up (an experiment: DROP INDEX …, to see what an index costs).
if (process.env.BENCH_SQL) ctx.sqlite.writer.sqlite.run(process.env.BENCH_SQL)
const FRAMES = process.env.BENCH_FRAMES === '1'
const writer = FRAMES ? ctx.sqlite.writer.sqlite : null!
if (FRAMES) writer.run('PRAGMA wal_autocheckpoint = 0')
/** Frames in the WAL by the b-tree their page belongs to (SQLite's dbstat), summed over the measured rounds. */
const framesByTree = new Map<string, number>()
function countFrames() {
  const wal = readFileSync(`${writer.filename}-wal`)
  const pageSize = wal.readUInt32BE(8)
  const owner = new Map((writer.query('SELECT name, pageno FROM dbstat').all() as { name: string; pageno: number }[]).map((r) => [r.pageno, r.name]))
  for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
    const name = owner.get(wal.readUInt32BE(at)) ?? '(free)'
    framesByTree.set(name, (framesByTree.get(name) ?? 0) + 1)
  }
}
log(`engine ${ctx.storage.engine}, ${PLAYERS} players, ${TOURNAMENTS} ${RATED ? 'rated' : 'unrated'} tournaments a round, ${INFLIGHT} in flight`)

const windows: { name: string; start: number; end: number }[] = []
const results: { round: number; sessions: number; sessionUs: number; sessionRate: number; claims: number; claimUs: number; claimRate: number; claimBatch: number; claimFrames: number }[] = []
for (let round = 0; round <= ROUNDS; round++) {
  const pairs = await seats(ctx, gameId, players, TOURNAMENTS)
  const flat = pairs.flat()
  const sessionRequests = flat.map((s) =>
    postJson(`/api/v1/game-sdk/${gameId}/sessions`, { matchId: s.matchId }, { authorization: `Bearer ${s.bearer}`, 'x-game-key': gameKey }),
  )
  const issued = await drive<{ token: string }>(ctx, sessionRequests, 201)
  // Both claim that slot 1 won, in the bench's order: the first answer is pending, the second decides.
  const claimRequests = flat.map((s, i) =>
    postJson(
      `/api/v1/game-sdk/${gameId}/results`,
      { outcome: 'WIN', winnerParticipantId: pairs[Math.floor(i / 2)]![0]!.participantId },
      { authorization: `Bearer ${s.bearer}`, 'x-game-key': gameKey, 'x-session-token': issued.answers[i]!.token },
    ),
  )
  // BENCH_FRAMES=1: the WAL frames (pages) the claims wrote, counted from an emptied WAL with automatic checkpoints off.
  if (FRAMES) writer.run('PRAGMA wal_checkpoint(TRUNCATE)')
  commitTimes.count = commitTimes.ms = commitTimes.max = 0
  const claimed = await drive<{ decision: string }>(ctx, claimRequests, 200)
  const frames = FRAMES ? (writer.query('PRAGMA wal_checkpoint(PASSIVE)').get() as { log: number }).log : 0
  if (FRAMES && round > 0) countFrames()
  const decided = claimed.answers.filter((a) => a.decision === 'game_advance').length
  if (decided !== pairs.length) throw new Error(`expected ${pairs.length} decisions, got ${decided}`)
  if (round === 0) {
    log('warm-up round done')
    continue
  }
  windows.push({ name: 'sessions', start: issued.window[0], end: issued.window[1] }, { name: 'claims', start: claimed.window[0], end: claimed.window[1] })
  const row = {
    round,
    sessions: flat.length,
    sessionUs: Math.round(issued.cpuUs / flat.length),
    sessionRate: Math.round(flat.length / (issued.wallMs / 1000)),
    claims: flat.length,
    claimUs: Math.round(claimed.cpuUs / flat.length),
    claimRate: Math.round(flat.length / (claimed.wallMs / 1000)),
    claimBatch: claimed.batch,
    claimFrames: Math.round((frames / flat.length) * 100) / 100,
  }
  results.push(row)
  if (process.env.BENCH_COMMITS === '1')
    log(`round ${round} claims: ${commitTimes.count} COMMITs, ${(commitTimes.ms / Math.max(1, commitTimes.count)).toFixed(3)} ms each on the event loop (longest ${commitTimes.max.toFixed(3)}), ${((commitTimes.ms / claimed.wallMs) * 100).toFixed(1)} % of the round's wall time`)
  log(`round ${round}: session issue ${row.sessionUs} µs CPU each (${row.sessionRate}/s), claims ${row.claimUs} µs CPU each (${row.claimRate}/s, ${row.claimBatch} a commit${FRAMES ? `, ${row.claimFrames} WAL frames a claim` : ''})`)
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
// The median, and the least (the round least disturbed by anything else on the machine).
const summary = { engine: ctx.storage.engine, rated: RATED, sessionUs: median(results.map((r) => r.sessionUs)), claimUs: median(results.map((r) => r.claimUs)), sessionUsMin: Math.min(...results.map((r) => r.sessionUs)), claimUsMin: Math.min(...results.map((r) => r.claimUs)), claimRate: median(results.map((r) => r.claimRate)), rounds: results }
// Beside the CPU profile (bun --cpu-prof --cpu-prof-dir=DIR): the measured windows, ms since the process's time origin.
if (process.env.BENCH_WINDOWS) writeFileSync(process.env.BENCH_WINDOWS, JSON.stringify({ timeOrigin: performance.timeOrigin, windows }))
if (FRAMES) log(`WAL frames of the measured claims by b-tree: ${JSON.stringify(Object.fromEntries([...framesByTree].sort((a, b) => b[1] - a[1])))}`)
await ctx.close()
console.log(JSON.stringify(summary))
