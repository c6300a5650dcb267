// The statements and round trips to PostgreSQL of one session issue, one
// claim that does not decide and one that does (a rated single elimination,
// as the benches' claims), each listed in the order they are sent:
//
//   bun bench/round-trips.ts            (PostgreSQL: the test harness's cluster)
//
// Counted from postgres.js's `debug` hook on the app's pool (every statement a
// unit of work or a read outside one sends, BEGIN and COMMIT included; not the
// rate limiter's own connections, listed apart by the route's one INSERT).
// Statements sent on one connection in the same turn of the event loop go out
// together (postgres.js pipelines them): they are one round trip. A statement
// sent unnamed with parameters (more than MAX_PREPARED_PARAMETERS, or with
// ARENA_DATABASE_PREPARE=false) costs a second one (Parse and Describe, then
// Bind and Execute), and so does a named one the first time on a connection;
// the figures are taken after a warm-up, so only the first kind is left.
//
// Settings (environment): BENCH_RATED (1; 0: the tournament is unrated),
// BENCH_SHOW (1: print each statement's text, cut to 160 characters).
import { createTestApp, postJson, type TestApp } from '../test/helpers/app'
import { ADMIN_TOKEN, admin } from '../test/helpers/arena'
import { MAX_PREPARED_PARAMETERS } from '../src/db/postgres/connection'

const RATED = process.env.BENCH_RATED !== '0'
const SHOW = process.env.BENCH_SHOW === '1'
const PASSWORD = 'correct horse battery'

async function json<T>(res: Response, expected: number): Promise<T> {
  const text = await res.text()
  if (res.status !== expected) throw new Error(`expected ${expected}, got ${res.status}: ${text}`)
  return JSON.parse(text) as T
}

interface Sent {
  connection: number
  turn: number
  text: string
  parameters: number
}

const ctx: TestApp = await createTestApp({ engine: 'postgres', env: { ARENA_ADMIN_TOKEN: ADMIN_TOKEN, ARENA_LOG_LEVEL: 'warn' } })
let recording: Sent[] | null = null
// A turn of the event loop: statements built in the same one leave together.
let turn = 0
let turnScheduled = false
;(ctx.postgres.sql.options as { debug?: unknown }).debug = (connection: number, text: string, parameters: unknown[]) => {
  if (!turnScheduled) {
    turnScheduled = true
    setImmediate(() => {
      turn++
      turnScheduled = false
    })
  }
  recording?.push({ connection, turn, text, parameters: parameters.length })
}

async function recorded<T>(name: string, run: () => Promise<T>): Promise<T> {
  recording = []
  const result = await run()
  const sent = recording
  recording = null
  const trips = new Set(sent.map((s) => `${s.connection}:${s.turn}`)).size
  const unnamed = sent.filter((s) => s.parameters > MAX_PREPARED_PARAMETERS).length
  console.log(`\n${name}: ${sent.length} statements, ${trips + unnamed} round trips (${trips} sends${unnamed ? `, ${unnamed} unnamed with parameters: one more each` : ''})`)
  let last = ''
  for (const s of sent) {
    const key = `${s.connection}:${s.turn}`
    const text = s.text.replace(/\s+/g, ' ').trim()
    const shown = SHOW ? text.slice(0, 160) : summarize(text)
    console.log(`  ${key === last ? '  +' : '   '} [c${s.connection}] ${shown}${s.parameters > MAX_PREPARED_PARAMETERS ? ` (${s.parameters} parameters, unnamed)` : ''}`)
    last = key
  }
  return result
}

/** A statement's verb and its tables, short enough to list. */
function summarize(text: string): string {
  const verb = text.split(' ', 1)[0]!.toLowerCase()
  if (['begin', 'commit', 'rollback'].includes(verb)) return text.toLowerCase()
  const tables = [...text.matchAll(/(?:from|into|update|join)\s+"?([a-z_]+)"?/gi)].map((m) => m[1]!)
  const locking = /for (no key )?update|for share/i.exec(text)?.[0]
  return `${verb} ${[...new Set(tables)].join(', ')}${locking ? ` (${locking.toLowerCase()})` : ''}${/pg_advisory_xact_lock/.test(text) ? ' (advisory lock)' : ''}${/pg_notify|NOTIFY/i.test(text) ? ' (notify)' : ''}`
}

const { game, gameKey } = await json<{ game: { id: string }; gameKey: string }>(await ctx.handle(postJson('/api/v1/admin/games', { name: 'Round trips' }, admin)), 201)
const players: { id: string; bearer: string }[] = []
for (let i = 0; i < 8; i++) {
  const username = `trips${i}_${Math.floor(Math.random() * 1e6)}`
  const { user } = await json<{ user: { id: string } }>(
    await ctx.handle(postJson('/api/v1/user/register', { email: `${username}@example.com`, username, password: PASSWORD, country: 'DE', accept_terms: true })),
    201,
  )
  const { accessToken } = await json<{ accessToken: string }>(await ctx.handle(postJson('/api/v1/user/login', { identifier: username, password: PASSWORD })), 200)
  players.push({ id: user.id, bearer: accessToken })
}

type View = { id: string; participants: { id: string; userId: string }[]; matches: { id: string; status: string; slot1ParticipantId: string | null; slot2ParticipantId: string | null }[] }
async function runningSeats() {
  const { tournament } = await json<{ tournament: View }>(
    await ctx.handle(postJson('/api/v1/admin/tournaments', { gameId: game.id, name: 'Cup', format: 'single_elimination', participants: players.map((p) => p.id), ...(RATED ? {} : { options: { rated: false } }) }, admin)),
    201,
  )
  const started = (await json<{ tournament: View }>(await ctx.handle(postJson(`/api/v1/admin/tournaments/${tournament.id}/start`, {}, admin)), 200)).tournament
  const bearerOf = new Map(started.participants.map((p) => [p.id, players.find((q) => q.id === p.userId)!.bearer]))
  return started.matches.filter((m) => m.status === 'running').map((m) => ({ matchId: m.id, seats: [m.slot1ParticipantId!, m.slot2ParticipantId!].map((pid) => ({ participantId: pid, bearer: bearerOf.get(pid)! })) }))
}

const issue = (matchId: string, bearer: string) => ctx.handle(postJson(`/api/v1/game-sdk/${game.id}/sessions`, { matchId }, { authorization: `Bearer ${bearer}`, 'x-game-key': gameKey }))
const claim = (token: string, bearer: string, winner: string) =>
  ctx.handle(postJson(`/api/v1/game-sdk/${game.id}/results`, { outcome: 'WIN', winnerParticipantId: winner }, { authorization: `Bearer ${bearer}`, 'x-game-key': gameKey, 'x-session-token': token }))

async function playMatch(match: { matchId: string; seats: { participantId: string; bearer: string }[] }, record: boolean) {
  const [a, b] = match.seats as [{ participantId: string; bearer: string }, { participantId: string; bearer: string }]
  const step = <T>(name: string, run: () => Promise<T>) => (record ? recorded(name, run) : run())
  const ta = (await json<{ token: string }>(await step('session issue', () => issue(match.matchId, a.bearer)), 201)).token
  const tb = (await json<{ token: string }>(await issue(match.matchId, b.bearer), 201)).token
  const first = await json<{ decision: string }>(await step('claim, not deciding', () => claim(ta, a.bearer, a.participantId)), 200)
  const second = await json<{ decision: string }>(await step(`claim, deciding (${RATED ? 'rated' : 'unrated'})`, () => claim(tb, b.bearer, a.participantId)), 200)
  if (first.decision !== 'pending' || second.decision !== 'game_advance') throw new Error(`unexpected decisions ${first.decision}, ${second.decision}`)
}

// Warm-up: every statement prepared on the connections the measured requests use (one at a time: the first open connection).
const warm = await runningSeats()
for (const match of warm) await playMatch(match, false)
const measured = await runningSeats()
await playMatch(measured[0]!, true)
await ctx.close()
