// npm run bench:flood: one account floods each per-account write route of the
// compiled binary as fast as it can, and the database's growth is measured
// before and after each flood and set beside the bound docs/operations.md
// writes down ("How the database's growth is bounded").
//
//   bun bench/flood.ts [--seconds 60] [--concurrency 16] [--engine sqlite|postgres] [--only pin,game,report,refresh,login] [--limits defaults|off]
//
// The server runs with the default rate limits (a studio's), unlike the other
// benches: the flood measures what one account can store with every bound in
// force. `--limits off` shows what the per-account row bounds hold alone.
//
// SQLite: the data dir's arena.sqlite plus its -wal, and the rows per table
// (read through a read-only connection beside the server). PostgreSQL (a
// throwaway cluster, as `npm run bench -- --engine postgres`):
// pg_total_relation_size and the rows of every table.
import { Database } from 'bun:sqlite'
import { existsSync, mkdtempSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { buildBinary } from '../test/helpers/process'
import { postgresConnectOptions, startPostgres } from '../test/helpers/postgres'
import { admin, api, log, PASSWORD, PIN, startArena } from './harness'

const option = (name: string) => {
  const at = process.argv.indexOf(name)
  return at === -1 ? undefined : process.argv[at + 1]
}
const SECONDS = Number(option('--seconds') ?? 60)
const CONCURRENCY = Number(option('--concurrency') ?? 16)
const ENGINE = option('--engine') ?? 'sqlite'
const ONLY = option('--only')?.split(',')
const LIMITS = option('--limits') ?? 'defaults'
if (!(SECONDS > 0) || !(CONCURRENCY > 0) || (ENGINE !== 'sqlite' && ENGINE !== 'postgres') || (LIMITS !== 'defaults' && LIMITS !== 'off')) {
  throw new Error('usage: bun bench/flood.ts [--seconds N] [--concurrency N] [--engine sqlite|postgres] [--only pin,game,report,refresh,login] [--limits defaults|off]')
}

await buildBinary()
const dataDir = mkdtempSync(join(tmpdir(), 'arena-flood-'))
let engineEnv: Record<string, string> = {}
let pg: postgres.Sql | undefined
if (ENGINE === 'postgres') {
  const cluster = await startPostgres({ durable: true })
  await cluster.createDatabase('arena_flood')
  engineEnv = { ARENA_DATABASE_URL: cluster.url('arena_flood'), ARENA_MASTER_KEY: Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex') }
  // postgres.js does not read the URL's socket `host` itself (test/helpers/postgres.ts).
  const target = postgresConnectOptions(cluster.url('arena_flood'))
  pg = postgres(target.url, { ...(target.path ? { path: target.path } : {}), max: 1, onnotice: () => {} })
}
const arena = await startArena(dataDir, undefined, { ...engineEnv, ARENA_RATE_LIMITS: LIMITS === 'off' ? '{"*":false}' : '{}' })
const base = arena.url
log(`arena on ${base}, data dir ${dataDir}, engine ${ENGINE}, rate limits ${LIMITS}; ${SECONDS} s per route, ${CONCURRENCY} requests in flight`)

// ---------------------------------------------------------------- the database's size

interface Snapshot {
  /** SQLite: arena.sqlite + -wal; PostgreSQL: the sum of pg_total_relation_size. */
  bytes: number
  /** SQLite only: the -wal alone (reused after each checkpoint, so it stops growing at its checkpoint size). */
  walBytes: number
  rows: Map<string, number>
  /** PostgreSQL only: bytes per table. */
  tableBytes: Map<string, number>
}

async function snapshot(): Promise<Snapshot> {
  if (pg) {
    const tables = await pg<{ name: string; bytes: string }[]>`
      SELECT c.relname AS name, pg_total_relation_size(c.oid) AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind = 'r' AND n.nspname = 'public'`
    const rows = new Map<string, number>()
    for (const t of tables) rows.set(t.name, Number((await pg.unsafe(`SELECT count(*) AS n FROM "${t.name}"`))[0]!.n))
    return { bytes: tables.reduce((sum, t) => sum + Number(t.bytes), 0), walBytes: 0, rows, tableBytes: new Map(tables.map((t) => [t.name, Number(t.bytes)])) }
  }
  const file = join(dataDir, 'arena.sqlite')
  const size = (path: string) => (existsSync(path) ? statSync(path).size : 0)
  const db = new Database(file, { readonly: true })
  try {
    const rows = new Map<string, number>()
    for (const { name } of db.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all()) {
      rows.set(name, db.query<{ n: number }, []>(`SELECT count(*) AS n FROM "${name}"`).get()!.n)
    }
    return { bytes: size(file) + size(`${file}-wal`), walBytes: size(`${file}-wal`), rows, tableBytes: new Map() }
  } finally {
    db.close()
  }
}

// ---------------------------------------------------------------- one account, and what it may flood

const username = `flood_${Date.now().toString(36)}`
const { user } = await api<{ user: { id: string } }>(base, 'POST', '/api/v1/user/register', { email: `${username}@bench.test`, username, password: PASSWORD, country: 'DE', accept_terms: true })
const signIn = () => api<{ accessToken: string; refreshToken: string }>(base, 'POST', '/api/v1/user/login', { identifier: username, password: PASSWORD })
const me = await signIn()
const auth = { authorization: `Bearer ${me.accessToken}` }
await api(base, 'PUT', '/api/v1/security/pin', { pin: PIN, password: PASSWORD }, auth)
// A running match for the game-session route: the account against a second player.
const rivalName = `rival_${Date.now().toString(36)}`
const { user: rival } = await api<{ user: { id: string } }>(base, 'POST', '/api/v1/user/register', { email: `${rivalName}@bench.test`, username: rivalName, password: PASSWORD, country: 'DE', accept_terms: true })
const { game, gameKey } = await api<{ game: { id: string }; gameKey: string }>(base, 'POST', '/api/v1/admin/games', { name: 'Flood Duel' }, admin)
const { tournament } = await api<{ tournament: { id: string } }>(base, 'POST', '/api/v1/admin/tournaments', { gameId: game.id, name: 'Flood cup', format: 'single_elimination', participants: [user.id, rival.id] }, admin)
const started = await api<{ tournament: { matches: { id: string; status: string }[] } }>(base, 'POST', `/api/v1/admin/tournaments/${tournament.id}/start`, undefined, admin)
const matchId = started.tournament.matches.find((m) => m.status === 'running')!.id

interface Route {
  key: string
  name: string
  /** The tables this route writes, and what docs/operations.md says one account may hold there. */
  tables: string[]
  bound: string
  /** One request; `lane` is the flooding loop's number (the refresh route keeps one token chain per lane). */
  send: (lane: number) => Promise<Response>
  prepare?: () => Promise<void>
}

const post = (path: string, body: unknown, headers: Record<string, string> = auth) =>
  fetch(base + path, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) })

// One refresh-token chain per lane: a token can be rotated once, so a lane rotates its own.
const chains: { accessToken: string; refreshToken: string }[] = []

const routes: Route[] = [
  {
    key: 'pin',
    name: 'POST /security/pin-session',
    tables: ['pin_sessions'],
    bound: '20 live; expired ones kept a day (at most 20 per PIN-session lifetime, 5 min)',
    send: () => post('/api/v1/security/pin-session', {}),
  },
  {
    key: 'game',
    name: 'POST /game-sdk/{gameId}/sessions',
    tables: ['game_sessions'],
    bound: '5 open per game (older ones superseded); used or expired ones kept a day',
    send: () => post(`/api/v1/game-sdk/${game.id}/sessions`, { matchId }, { ...auth, 'x-game-key': gameKey }),
  },
  {
    key: 'report',
    name: 'POST /security/events (8 KiB details)',
    tables: ['security_events'],
    bound: '20 client reports per rolling day, kept 90 days (ARENA_SECURITY_LOG_RETENTION_DAYS)',
    send: (lane) => post('/api/v1/security/events', { kind: 'FLOOD', level: 'SAFE', details: { lane, blob: 'x'.repeat(8 * 1024 - 64) } }),
  },
  {
    key: 'refresh',
    name: 'POST /auth/validate (refresh rotation)',
    tables: ['refresh_tokens'],
    bound: '100 per session (the current one and the 99 newest spent), 100 sessions per account',
    prepare: async () => {
      for (let i = chains.length; i < CONCURRENCY; i++) chains.push(await signIn())
    },
    send: async (lane) => {
      const chain = chains[lane]!
      const res = await post('/api/v1/auth/validate', { refreshToken: chain.refreshToken }, { authorization: `Bearer ${chain.accessToken}` })
      if (res.status === 200) {
        const next = (await res.clone().json()) as { accessToken: string; refreshToken: string }
        chain.accessToken = next.accessToken
        chain.refreshToken = next.refreshToken
      }
      return res
    },
  },
  {
    key: 'login',
    name: 'POST /user/login (auth sessions)',
    tables: ['auth_sessions', 'refresh_tokens'],
    bound: '100 session rows per account (a login past it ends the oldest), each with its refresh tokens',
    send: () => post('/api/v1/user/login', { identifier: username, password: PASSWORD }, {}),
  },
]

// ---------------------------------------------------------------- flood, measure

const mib = (bytes: number) => (bytes / 1048576).toFixed(2)
const results: string[] = []
for (const route of routes) {
  if (ONLY && !ONLY.includes(route.key)) continue
  await route.prepare?.()
  await Bun.sleep(1000) // the security log's buffer flushes every 250 ms
  const before = await snapshot()
  const statuses = new Map<number, number>()
  const deadline = performance.now() + SECONDS * 1000
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, lane) => {
      while (performance.now() < deadline) {
        const res = await route.send(lane)
        await res.arrayBuffer()
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
      }
    }),
  )
  await Bun.sleep(1000)
  const after = await snapshot()
  const total = [...statuses.values()].reduce((a, b) => a + b, 0)
  const grown = [...after.rows].map(([t, n]) => [t, n - (before.rows.get(t) ?? 0)] as const).filter(([, d]) => d !== 0)
  const tableBytes = route.tables.map((t) => (pg ? `${t} ${mib((after.tableBytes.get(t) ?? 0) - (before.tableBytes.get(t) ?? 0))} MiB` : '')).filter(Boolean)
  const line =
    `| ${route.name} | ${total} (${Math.round(total / SECONDS)}/s) | ${[...statuses].sort().map(([s, n]) => `${s}: ${n}`).join(', ')} | ` +
    `${route.tables.map((t) => `${t} +${(after.rows.get(t) ?? 0) - (before.rows.get(t) ?? 0)}`).join(', ')} | ` +
    `${grown.filter(([t]) => !route.tables.includes(t)).map(([t, d]) => `${t} ${d > 0 ? '+' : ''}${d}`).join(', ') || '–'} | ` +
    `${mib(before.bytes)} → ${mib(after.bytes)} MiB${pg ? '' : ` (WAL ${mib(before.walBytes)} → ${mib(after.walBytes)})`}${tableBytes.length ? ` (${tableBytes.join(', ')})` : ''} | ${route.bound} |`
  log(line)
  results.push(line)
}

await arena.stop()
await pg?.end()
console.log(`\n${new Date().toISOString()}; engine ${ENGINE}; one account; ${SECONDS} s per route; ${CONCURRENCY} requests in flight; Bun ${Bun.version}\n`)
console.log(`| route | requests | answers | rows added (the route's tables) | other tables | database ${ENGINE === 'sqlite' ? 'file + WAL' : 'total relation size'} before → after | the account's bound |`)
console.log('|---|---|---|---|---|---|---|')
for (const line of results) console.log(line)
process.exit(0)
