// Two instances of the compiled binary on one PostgreSQL database, as a
// studio runs them behind a load balancer (issue 17). Whatever instance a
// request lands on, the answer is the one a single instance would give:
// - both start at once on an empty database and migrate it once;
// - the two claims of one match, sent to different instances at the same
//   moment, give one decision, and the bracket advances once;
// - a round robin whose two claims of each match go to different instances
//   (draws among them) plays to completion, and both instances show the
//   same standings, the ones worked out by hand;
// - a logout on one instance ends the access token on the other at once;
// - a ban through one instance ends the user's access token on the other at
//   once, and a login there is 403 account_banned;
// - a long poll on one is woken by a write on the other within 100 ms (the
//   poll's own re-read runs every second: only NOTIFY is that fast);
// - concurrent withdrawals from one balance on both never overdraw it;
// - a finalization job whose instance is SIGKILLed mid-run is completed by
//   the other, once;
// - `arena ledger check`, `arena security verify-log` and `arena audit verify`
//   pass at the end (the operator actions above went to every instance).
//
// The two share nothing but the database and their environment: the
// tokens' key (ARENA_JWT_SECRET), the operator token (ARENA_ADMIN_TOKEN) and
// the master key sealing the secrets kept in the database (the chain key, the
// custody shares: ARENA_MASTER_KEY); each has a data dir of its own.
//
// Each instance names itself to PostgreSQL by the URL's application_name
// (libpq's parameter, which postgres.js honours over arena's default), so a
// test connection can tell which instance a blocked transaction belongs to.
//
// Which instance gets which request, the pauses before the long-poll writes
// and the withdrawal amounts come from the seed printed at the start
// (ARENA_TEST_SEED replays it, as far as the timing of real processes allows).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync, rmSync } from 'node:fs'
import postgres from 'postgres'
import { MasterKey } from '../../src/shared/sealed'
import { EMBEDDED_MIGRATIONS, MIGRATIONS_SCHEMA, MIGRATIONS_TABLE } from '../../src/db/postgres/migrate'
import { tempDir } from '../helpers/app'
import { findPostgresBinaries, postgresConnectOptions, startPostgres } from '../helpers/postgres'
import { BINARY, buildBinary, run, startServe, type ServerProcess } from '../helpers/process'
import { chooseSeed, seededRandom } from '../helpers/seed'
import { waitFor } from '../helpers/wait'
import { parseMetrics } from '../helpers/metrics'
import {
  ADMIN_TOKEN,
  client,
  createGame,
  gameHeaders,
  PASSWORD,
  randomAddress,
  sendVerify,
  setUpPlayer,
  startTournament,
  type Call,
  type PinTicket,
  type Player,
  type Tournament,
} from '../faults/helpers'

const required = process.env.ARENA_TEST_ENGINE === 'postgres'
const skip = !required && findPostgresBinaries() === null
if (skip) console.log('multi-instance test skipped: no PostgreSQL >= 15 under /usr/lib/postgresql (Debian package postgresql)')

const SEED = skip ? 0 : chooseSeed('ARENA_TEST_SEED', 'multi-instance')
const JWT_SECRET = 'multi-instance-signing-secret-0123456789abcdef'
const admin = { 'x-admin-token': ADMIN_TOKEN }
/** Both instances' long polls wake through NOTIFY within this (the re-read backstop is 1 s). */
const WAKE_LIMIT_MS = 100

interface Instance {
  name: string
  server: ServerProcess
  call: Call
}

let databaseUrl = ''
let databaseName = ''
let serverLog = ''
/** Each instance's data dir (and the operator commands'), by name. */
const dataDirs = new Map<string, string>()
let sql: postgres.Sql
const instances: Instance[] = []
const everyServer: ServerProcess[] = []
const clients: postgres.Sql[] = []

afterAll(async () => {
  for (const server of everyServer) server.proc.kill('SIGKILL')
  await Promise.all(everyServer.map((server) => server.proc.exited))
  await Promise.all(clients.map((c) => c.end({ timeout: 1 })))
  for (const dir of dataDirs.values()) rmSync(dir, { recursive: true, force: true })
})

function open(url: string, max = 4): postgres.Sql {
  const { url: plain, path } = postgresConnectOptions(url)
  const c = postgres(plain, { path, max, onnotice: () => {} })
  clients.push(c)
  return c
}

/** The database URL an instance is given: the same database, the instance's name as its application_name. */
function instanceUrl(name: string): string {
  const url = new URL(databaseUrl)
  url.searchParams.set('application_name', name)
  return url.toString()
}

const MASTER_KEY = MasterKey.generateHex()
const METRICS_TOKEN = 'multi-instance-metrics-token-0123456789ab'

function dataDirOf(name: string): string {
  if (!dataDirs.has(name)) dataDirs.set(name, tempDir(`arena-multi-${name}-`))
  return dataDirs.get(name)!
}

function serverEnv(name: string): Record<string, string> {
  return {
    ARENA_DATABASE_URL: instanceUrl(name),
    ARENA_DATA_DIR: dataDirOf(name),
    ARENA_MASTER_KEY: MASTER_KEY,
    ARENA_JWT_SECRET: JWT_SECRET,
    ARENA_ADMIN_TOKEN: ADMIN_TOKEN,
    ARENA_METRICS_TOKEN: METRICS_TOKEN,
  }
}

async function startInstance(name: string): Promise<Instance> {
  const server = await startServe([BINARY, 'serve'], serverEnv(name), { timeoutMs: 30_000 })
  everyServer.push(server)
  return { name, server, call: client(server.url) }
}

function expectStatus(what: string, answer: { status: number; text: string }, status: number): void {
  if (answer.status !== status) throw new Error(`${what}: expected ${status}, got ${answer.status} ${answer.text}`)
}

/**
 * A row lock held by a test connection in a transaction of its own, until
 * release(): the transaction is rolled back, so the row is left as it was.
 * `pid` is known before the lock is asked for, so a test can see it wait.
 */
class RowLock {
  readonly pid: Promise<number>
  readonly held: Promise<void>
  private release_!: () => void
  private readonly ended: Promise<void>

  constructor(db: postgres.Sql, table: string, id: string) {
    let pidKnown!: (pid: number) => void
    let locked!: () => void
    this.pid = new Promise((resolve) => (pidKnown = resolve))
    this.held = new Promise((resolve) => (locked = resolve))
    const released = new Promise<void>((resolve) => (this.release_ = resolve))
    const rollback = new Error('rollback')
    this.ended = db
      .begin(async (tx) => {
        const [row] = await tx<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`
        pidKnown(row!.pid)
        await tx`SELECT 1 FROM ${tx(table)} WHERE id = ${id} FOR UPDATE`
        locked()
        await released
        throw rollback
      })
      .then(
        () => {},
        (error: unknown) => {
          if (error !== rollback) throw error
        },
      )
  }

  /** Rolls the holder back; resolves once the lock is gone. */
  async release(): Promise<void> {
    this.release_()
    await this.ended
  }
}

/** Whom backend `pid` waits for: lock B queues behind the claim, which holds the row's place in line. */
async function blockersOf(pid: number): Promise<number[]> {
  const [row] = await sql<{ pids: number[] }[]>`SELECT pg_blocking_pids(${pid}::int) AS pids`
  return row!.pids
}

interface Backend {
  pid: number
  application_name: string
  query: string
}

/** The backends of this database waiting for a lock `holder` holds. */
async function blockedBy(holder: number): Promise<Backend[]> {
  return [
    ...(await sql<Backend[]>`
      SELECT pid, application_name, query FROM pg_stat_activity
      WHERE datname = current_database() AND ${holder}::int = ANY(pg_blocking_pids(pid))`),
  ]
}

/**
 * Transactions of this database PostgreSQL failed for losing a race (40001),
 * from its log: each was a unit of work run again. Printed as the measure of
 * how hard a test raced, not asserted (timing decides it).
 */
function serializationFailures(): number {
  const marker = ` ${databaseName} ERROR:  could not serialize access`
  return readFileSync(serverLog, 'utf8').split('\n').filter((line) => line.includes(marker)).length
}

/** Registers `count` players, alternating between the instances, each with a PIN when asked. */
async function playersOn(prefix: string, count: number, options: { pin?: boolean } = {}): Promise<Player[]> {
  const out: Player[] = []
  for (let i = 0; i < count; i++) out.push(await setUpPlayer(instances[i % 2]!.call, `${prefix}${i}`, options))
  return out
}

const playerOfParticipant = (t: Tournament, people: Player[], participantId: string) =>
  people.find((p) => p.id === t.participants.find((x) => x.id === participantId)!.userId)!

describe.skipIf(skip)('two instances on one PostgreSQL database', () => {
  beforeAll(async () => {
    await buildBinary()
    const cluster = await startPostgres()
    // An empty database of our own: freshDatabaseUrl() hands out copies of
    // the migrated template once another file in this run has asked for it.
    databaseName = `arena_multi_${process.pid}_${Date.now()}`
    await cluster.createDatabase(databaseName)
    databaseUrl = cluster.url(databaseName)
    serverLog = cluster.logFile
    sql = open(databaseUrl)
  }, 60_000)

  test('two instances starting at once on an empty database both start and migrate it once', async () => {
    const [a, b] = await Promise.all([startInstance('arena-a'), startInstance('arena-b')])
    instances.push(a, b)
    const rows = [...(await sql<{ hash: string; n: number }[]>`SELECT hash, count(*)::int AS n FROM ${sql(MIGRATIONS_SCHEMA)}.${sql(MIGRATIONS_TABLE)} GROUP BY hash`)]
    expect(rows.length).toBe(EMBEDDED_MIGRATIONS.length)
    expect(rows.every((r) => r.n === 1)).toBe(true)
    expect(new Set(rows.map((r) => r.hash))).toEqual(new Set(EMBEDDED_MIGRATIONS.map((m) => m.hash)))
    // Each says what it applied itself: one all of them, the other none.
    const applied = [a, b].map((i) => Number(i.server.lines.find((l) => l.msg === 'migrations')?.applied)).sort((x, y) => x - y)
    expect(applied).toEqual([0, EMBEDDED_MIGRATIONS.length])
    for (const { call } of [a, b]) expect((await call('GET', '/readyz')).status).toBe(200)
  }, 60_000)

  test('the two claims of one match sent to different instances at once give one decision; the bracket advances once', async () => {
    const random = seededRandom(SEED, 1)
    const people = await playersOn('claim_', 16)
    const game = await createGame(instances[0]!.call, 'Multi Duel')
    const started = await startTournament(instances[1]!.call, game, people, 'Multi Cup')
    const tournamentId = started.id
    const decisions: string[] = []
    const failuresBefore = serializationFailures()

    // Rounds 1 to 3 (8, 4, then 2 matches), each round's claims all at once.
    for (let round = 1; round <= 3; round++) {
      const shown = (await instances[0]!.call('GET', `/api/v1/admin/tournaments/${tournamentId}`, undefined, admin)).body.tournament as Tournament
      const matches = shown.matches.filter((m) => m.round === round)
      expect(matches.every((m) => m.status === 'running')).toBe(true)
      // For each match: which slot wins, and which instance each player's claim goes to (never the same one).
      const plans = matches.map((match) => {
        const winner = random() < 0.5 ? match.slot1ParticipantId : match.slot2ParticipantId
        const first = random() < 0.5 ? 0 : 1
        return { match, winner, seats: [match.slot1ParticipantId, match.slot2ParticipantId].map((participantId, i) => ({ participantId, instance: instances[(first + i) % 2]! })) }
      })
      const tickets = await Promise.all(
        plans.flatMap((plan) =>
          plan.seats.map(async ({ participantId, instance }) => {
            const player = playerOfParticipant(shown, people, participantId)
            const session = await instance.call('POST', `/api/v1/game-sdk/${game.game.id}/sessions`, { matchId: plan.match.id }, gameHeaders(game, player))
            expectStatus('match session', session, 201)
            return { plan, player, instance, token: session.body.token as string }
          }),
        ),
      )
      const answers = await Promise.all(
        tickets.map((t) =>
          t.instance.call('POST', `/api/v1/game-sdk/${game.game.id}/results`, { outcome: 'WIN', winnerParticipantId: t.plan.winner }, { ...gameHeaders(game, t.player), 'x-session-token': t.token }),
        ),
      )
      for (const plan of plans) {
        const mine = answers.filter((_, i) => tickets[i]!.plan === plan)
        for (const answer of mine) expectStatus(`claim in match ${plan.match.id}`, answer, 200)
        // Exactly one of the two claims decided; the other saw no opponent's claim yet.
        expect(mine.map((a) => a.body.decision as string).sort()).toEqual(['game_advance', 'pending'])
        const decided = mine.find((a) => a.body.decision !== 'pending')!.body
        expect(decided.winnerParticipantId).toBe(plan.winner)
        decisions.push(decided.decision)
      }

      // The bracket, as the other instance shows it: every match of the round
      // decided for its agreed winner, each winner in its next match's slot.
      const after = (await instances[1]!.call('GET', `/api/v1/admin/tournaments/${tournamentId}`, undefined, admin)).body.tournament as {
        matches: (Tournament['matches'][number] & { winnerParticipantId: string | null; nextMatchId: string | null })[]
      }
      for (const plan of plans) {
        const match = after.matches.find((m) => m.id === plan.match.id)!
        expect({ status: match.status, winner: match.winnerParticipantId }).toEqual({ status: 'decided', winner: plan.winner })
        const next = after.matches.find((m) => m.id === match.nextMatchId)!
        expect([next.slot1ParticipantId, next.slot2ParticipantId]).toContain(plan.winner)
      }
      for (const next of after.matches.filter((m) => m.round === round + 1)) expect(next.status).toBe('running')
    }
    expect(decisions.length).toBe(14)
    console.log(`claims: 28 on two instances, 14 decisions; ${serializationFailures() - failuresBefore} transactions lost a race and ran again`)

    // Once in the database too: one claim per seat, and each decision's events
    // written once (match.decided to each of the two players; match.ready to
    // each player of every match the winners opened).
    const claims = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM match_claims c JOIN matches m ON m.id = c.match_id WHERE m.tournament_id = ${tournamentId}`
    expect(claims[0]!.n).toBe(28)
    const events = await sql<{ type: string; match_id: string; user_id: string; n: number }[]>`
      SELECT type, data->>'matchId' AS match_id, user_id, count(*)::int AS n FROM outbox_events
      WHERE data->>'tournamentId' = ${tournamentId} AND type IN ('match.decided', 'match.ready')
      GROUP BY type, data->>'matchId', user_id`
    expect(events.filter((e) => e.n !== 1)).toEqual([])
    expect(events.filter((e) => e.type === 'match.decided').length).toBe(14 * 2)
    // match.ready: the 8 first-round matches at the start, then the 4 + 2 + 1 the winners opened.
    expect(events.filter((e) => e.type === 'match.ready').length).toBe(15 * 2)
  }, 60_000)

  test('a round robin of 4 whose claims alternate between the instances plays to completion; both show the same standings', async () => {
    const people = await playersOn('robin_', 4)
    const game = await createGame(instances[0]!.call, 'Multi Robin')
    const created = await instances[1]!.call(
      'POST',
      '/api/v1/admin/tournaments',
      { gameId: game.game.id, name: 'Multi Robin', format: 'round_robin', participants: people.map((p) => p.id) },
      admin,
    )
    expectStatus('create tournament', created, 201)
    const tournamentId = created.body.tournament.id as string
    expectStatus('start tournament', await instances[0]!.call('POST', `/api/v1/admin/tournaments/${tournamentId}/start`, {}, admin), 200)
    interface RobinMatch {
      id: string
      status: string
      slot1ParticipantId: string
      slot2ParticipantId: string
      winnerParticipantId: string | null
      outcome: string | null
    }
    interface Robin {
      status: string
      participants: { id: string; userId: string; seed: number }[]
      matches: RobinMatch[]
      standings: { participantId: string; rank: number; wins: number; draws: number; losses: number; points: number }[]
      winnerParticipantId: string | null
    }
    const read = async (instance: Instance): Promise<Robin> => {
      const shown = await instance.call('GET', `/api/v1/admin/tournaments/${tournamentId}`, undefined, admin)
      expectStatus(`GET tournament on ${instance.name}`, shown, 200)
      return shown.body.tournament as Robin
    }
    let t = await read(instances[1]!)
    // p1..p4 in seed order (the order they were listed in).
    const name = (participantId: string) => `p${t.participants.find((p) => p.id === participantId)!.seed}`
    const idOf = (n: string) => t.participants.find((p) => p.seed === Number(n.slice(1)))!.id
    // Each pairing's result: the winner, or a draw.
    const results: Record<string, string> = { 'p1-p2': 'p1', 'p1-p3': 'draw', 'p1-p4': 'p1', 'p2-p3': 'p2', 'p2-p4': 'p4', 'p3-p4': 'draw' }

    const decisions: string[] = []
    for (let played = 0; ; played++) {
      const match = t.matches.find((m) => m.status === 'running')
      if (!match) break
      expect(played).toBeLessThan(6)
      const pair = [name(match.slot1ParticipantId), name(match.slot2ParticipantId)].sort((a, b) => Number(a.slice(1)) - Number(b.slice(1))).join('-')
      const result = results[pair]!
      const claim = result === 'draw' ? { outcome: 'DRAW' } : { outcome: 'WIN', winnerParticipantId: idOf(result) }
      // Slot 1's player goes through the first instance, slot 2's through the second; who claims first alternates.
      const seats = [
        { participantId: match.slot1ParticipantId, instance: instances[0]! },
        { participantId: match.slot2ParticipantId, instance: instances[1]! },
      ]
      if (played % 2 === 1) seats.reverse()
      const answers = []
      for (const { participantId, instance } of seats) {
        const player = playerOfParticipant(t as unknown as Tournament, people, participantId)
        const session = await instance.call('POST', `/api/v1/game-sdk/${game.game.id}/sessions`, { matchId: match.id }, gameHeaders(game, player))
        expectStatus(`match session on ${instance.name}`, session, 201)
        const answer = await instance.call('POST', `/api/v1/game-sdk/${game.game.id}/results`, claim, { ...gameHeaders(game, player), 'x-session-token': session.body.token })
        expectStatus(`claim in ${pair} on ${instance.name}`, answer, 200)
        answers.push(answer.body)
      }
      expect(answers[0].decision).toBe('pending')
      expect({ pair, outcome: answers[1].outcome, winner: answers[1].winnerParticipantId }).toEqual({
        pair,
        outcome: result === 'draw' ? 'DRAW' : 'WIN',
        winner: result === 'draw' ? undefined : idOf(result),
      })
      decisions.push(answers[1].decision)
      // Read back through the instance that did not take the deciding claim.
      t = await read(seats[0]!.instance)
      const after = t.matches.find((m) => m.id === match.id)!
      expect({ pair, status: after.status, outcome: after.outcome }).toEqual({ pair, status: 'decided', outcome: result === 'draw' ? 'DRAW' : 'WIN' })
    }
    expect(decisions).toEqual([...Array(5).fill('game_advance'), 'game_advance_pending_finalization'])

    // Either instance's worker finalizes it; both then show the same tournament.
    for (const instance of instances) {
      await waitFor(`the round robin completed, as ${instance.name} shows it`, async () => ((await read(instance)).status === 'completed' ? true : undefined), 15_000)
    }
    const [one, two] = await Promise.all(instances.map(read))
    expect(two).toEqual(one!)
    expect(one!.standings.map((s) => ({ ...s, participantId: name(s.participantId) }))).toEqual([
      { participantId: 'p1', rank: 1, wins: 2, draws: 1, losses: 0, points: 7 },
      { participantId: 'p4', rank: 2, wins: 1, draws: 1, losses: 1, points: 4 },
      { participantId: 'p2', rank: 3, wins: 1, draws: 0, losses: 2, points: 3 },
      { participantId: 'p3', rank: 4, wins: 0, draws: 2, losses: 1, points: 2 },
    ])
    expect(one!.winnerParticipantId).toBe(idOf('p1'))
    // Finalized once: one tournament.completed event for each player, with their place.
    const events = [...(await sql<{ user_id: string; place: number; n: number }[]>`
      SELECT user_id, (data->>'place')::int AS place, count(*)::int AS n FROM outbox_events
      WHERE type = 'tournament.completed' AND data->>'tournamentId' = ${tournamentId} GROUP BY user_id, data->>'place'`)]
    const placeOf = (userId: string) => one!.standings.find((s) => s.participantId === one!.participants.find((p) => p.userId === userId)!.id)!.rank
    expect(events.map((e) => ({ user: e.user_id, place: e.place, n: e.n })).sort((a, b) => a.place - b.place)).toEqual(
      people.map((p) => ({ user: p.id, place: placeOf(p.id), n: 1 })).sort((a, b) => a.place - b.place),
    )
  }, 60_000)

  test('a logout on one instance ends the access token on the other at once', async () => {
    const [player] = await playersOn('logout_', 1)
    for (const [from, to] of [
      [instances[0]!, instances[1]!],
      [instances[1]!, instances[0]!],
    ] as const) {
      const login = await from.call('POST', '/api/v1/user/login', { identifier: player!.username, password: PASSWORD })
      expectStatus('login', login, 200)
      const auth = { authorization: `Bearer ${login.body.accessToken}` }
      expectStatus(`GET /me on ${to.name} before the logout`, await to.call('GET', '/api/v1/me', undefined, auth), 200)
      const logout = await from.call('POST', '/api/v1/user/s/logout', {}, auth)
      expectStatus(`logout on ${from.name}`, logout, 200)
      expect(logout.body.revoked).toBe(1)
      const after = await to.call('GET', '/api/v1/me', undefined, auth)
      expect({ on: to.name, status: after.status, code: after.body?.error?.code }).toEqual({ on: to.name, status: 401, code: 'unauthorized' })
      // Nor can its refresh token be rotated there.
      const rotated = await to.call('POST', '/api/v1/auth/validate', { refreshToken: login.body.refreshToken }, auth)
      expect(rotated.status).toBe(401)
    }
  }, 30_000)

  test('a ban through one instance ends the access token on the other at once, and a login there is 403 account_banned', async () => {
    const [player] = await playersOn('banned_', 1)
    for (const [from, to] of [
      [instances[0]!, instances[1]!],
      [instances[1]!, instances[0]!],
    ] as const) {
      const login = await to.call('POST', '/api/v1/user/login', { identifier: player!.username, password: PASSWORD })
      expectStatus('login', login, 200)
      const auth = { authorization: `Bearer ${login.body.accessToken}` }
      expectStatus(`GET /me on ${to.name} before the ban`, await to.call('GET', '/api/v1/me', undefined, auth), 200)
      const ban = await from.call('POST', `/api/v1/admin/users/${player!.id}/ban`, { reason: 'multi-instance ban' }, admin)
      expectStatus(`ban on ${from.name}`, ban, 200)
      // The very next request on the other instance: no cache, no delay.
      const after = await to.call('GET', '/api/v1/me', undefined, auth)
      expect({ on: to.name, status: after.status, code: after.body?.error?.code }).toEqual({ on: to.name, status: 401, code: 'unauthorized' })
      const refused = await to.call('POST', '/api/v1/user/login', { identifier: player!.username, password: PASSWORD })
      expect({ on: to.name, status: refused.status, code: refused.body?.error?.code, until: refused.body?.error?.until }).toEqual({
        on: to.name,
        status: 403,
        code: 'account_banned',
        until: null,
      })
      expectStatus(`unban on ${to.name}`, await to.call('POST', `/api/v1/admin/users/${player!.id}/unban`, {}, admin), 200)
      expectStatus(`login on ${from.name} after the unban`, await from.call('POST', '/api/v1/user/login', { identifier: player!.username, password: PASSWORD }), 200)
    }
  }, 30_000)

  test(`a long poll on one instance is woken by a write on the other within ${WAKE_LIMIT_MS} ms`, async () => {
    const random = seededRandom(SEED, 3)
    const [player] = await playersOn('poller_', 1)
    const latencies: number[] = []
    let cursor = ''
    for (let i = 0; i < 8; i++) {
      // Alternate: poll on a and write on b, then the other way round.
      const [poller, writer] = i % 2 === 0 ? [instances[0]!, instances[1]!] : [instances[1]!, instances[0]!]
      let answered = 0
      const poll = poller.call('GET', `/api/v1/events?wait=10&topics=wallet${cursor ? `&after=${cursor}` : ''}`, undefined, player!.auth).then((answer) => {
        answered = performance.now()
        return answer
      })
      // The write lands anywhere in the poll's 1 s re-read cycle.
      await Bun.sleep(150 + Math.floor(random() * 850))
      const reference = `wake-${i}`
      const credit = await writer.call('POST', `/api/v1/admin/wallets/${player!.id}/credit`, { amount: '1', reference }, admin)
      const written = performance.now()
      expectStatus('credit', credit, 200)
      const answer = await poll
      expectStatus('poll', answer, 200)
      expect(answer.body.events.map((e: { type: string; data: { reference: string } }) => `${e.type} ${e.data.reference}`)).toEqual([`wallet.credited ${reference}`])
      cursor = answer.body.cursor
      latencies.push(answered - written)
    }
    console.log(`long-poll wake-up across instances, ms after the write's answer: ${latencies.map((ms) => ms.toFixed(1)).join(', ')}`)
    // Every round should be under the limit; one in eight may miss it when a
    // loaded machine stalls a process (seen once at 134 ms under a load of
    // 14 on 2 cores). The re-read alone would answer a round this fast about
    // one time in eight (the write lands 150 to 1000 ms into its 1 s cycle),
    // so seven of eight cannot come from it (p ≈ 2e-6).
    expect(latencies.filter((ms) => ms >= WAKE_LIMIT_MS).length).toBeLessThanOrEqual(1)
  }, 30_000)

  test('concurrent withdrawals from one balance on both instances never overdraw it', async () => {
    const random = seededRandom(SEED, 5)
    const [player] = await playersOn('spender_', 1, { pin: true })
    const credit = 10_000_000n // 10 USDC in micro-units
    expectStatus('credit', await instances[1]!.call('POST', `/api/v1/admin/wallets/${player!.id}/credit`, { amount: '10', reference: 'spend-fund' }, admin), 200)
    expectStatus('wallet', await instances[0]!.call('GET', '/api/v1/wallet', undefined, player!.auth), 200)

    // 16 withdrawals of 0.5 to 2 USDC (about twice the balance), half on each instance.
    const tickets: { ticket: PinTicket; instance: Instance; micro: bigint }[] = []
    for (let i = 0; i < 16; i++) {
      const instance = instances[i % 2]!
      const minted = await instance.call('POST', '/api/v1/security/pin-session', {}, player!.auth)
      expectStatus('pin session', minted, 201)
      const micro = BigInt(500_000 * (1 + Math.floor(random() * 4)))
      const amount = (Number(micro) / 1_000_000).toString()
      tickets.push({ instance, micro, ticket: { player: player!, id: minted.body.sessionId, token: minted.body.sessionToken, key: `spend-${i}`, address: randomAddress(), amount } })
    }
    const failuresBefore = serializationFailures()
    const answers = await Promise.all(tickets.map(({ instance, ticket }) => sendVerify(instance.call, ticket)))

    let accepted = 0n
    const refused: bigint[] = []
    answers.forEach((answer, i) => {
      const { micro, instance } = tickets[i]!
      if (answer.status === 200) {
        expect({ valid: answer.body.valid, status: answer.body.withdrawal?.status }).toEqual({ valid: true, status: 'signed' })
        accepted += micro
      } else {
        expect({ on: instance.name, status: answer.status, code: answer.body?.error?.code }).toEqual({ on: instance.name, status: 422, code: 'insufficient_funds' })
        refused.push(micro)
      }
    })
    const balances = await Promise.all(instances.map(async ({ call }) => (await call('GET', '/api/v1/wallet', undefined, player!.auth)).body.balance as string))
    const balance = BigInt(Math.round(Number(balances[0]) * 1_000_000))
    console.log(`withdrawals: ${answers.filter((a) => a.status === 200).length} accepted (${Number(accepted) / 1e6} USDC), ${refused.length} refused, balance left ${balances[0]}; ${serializationFailures() - failuresBefore} transactions lost a race and ran again`)
    expect(balances[1]).toBe(balances[0]!)
    expect(accepted).toBeLessThanOrEqual(credit)
    expect(balance).toBeGreaterThanOrEqual(0n)
    expect(balance).toBe(credit - accepted)
    // The balance only went down during the burst, so each refusal saw at
    // most its amount less one micro-unit; it ends no higher than that.
    for (const amount of refused) expect(balance).toBeLessThan(amount)
    // The ledger agrees: one withdrawal row per accepted answer.
    const [rows] = await sql<{ n: number; total: string | null }[]>`SELECT count(*)::int AS n, sum(amount)::text AS total FROM withdrawals WHERE user_id = ${player!.id}`
    expect({ n: rows!.n, total: BigInt(rows!.total ?? '0') }).toEqual({ n: answers.filter((a) => a.status === 200).length, total: accepted })
  }, 60_000)

  test('a finalization job whose instance is SIGKILLed mid-run is completed by the other, once', async () => {
    const people = await playersOn('final_', 2)
    const game = await createGame(instances[0]!.call, 'Kill Duel')
    const t = await startTournament(instances[0]!.call, game, people, 'Kill Cup')
    const final = t.matches[0]!
    const winner = final.slot1ParticipantId
    const claimOn = async (instance: Instance, player: Player) => {
      const session = await instance.call('POST', `/api/v1/game-sdk/${game.game.id}/sessions`, { matchId: final.id }, gameHeaders(game, player))
      expectStatus('match session', session, 201)
      return instance.call('POST', `/api/v1/game-sdk/${game.game.id}/results`, { outcome: 'WIN', winnerParticipantId: winner }, { ...gameHeaders(game, player), 'x-session-token': session.body.token })
    }
    const [first, second] = [playerOfParticipant(t, people, final.slot1ParticipantId), playerOfParticipant(t, people, final.slot2ParticipantId)]
    expect((await claimOn(instances[0]!, first)).body.decision).toBe('pending')

    // The job only exists once the deciding claim commits, and either
    // instance's worker (polling every 200 ms) may take it. To have it block
    // inside its transaction whichever takes it, the tournament row's lock is
    // handed on in line: lock A holds the row, so the deciding claim waits
    // for it; lock B queues behind the claim; A lets go, the claim commits
    // (enqueuing the job), and B, already waiting for the claim's
    // transaction, takes the row the moment it ends, while a job needs a
    // poll and two round trips more to ask for it. The job then waits on B
    // where it reads or updates the tournament, its lease written, uncommitted.
    const lockA = new RowLock(sql, 'tournaments', t.id)
    await lockA.held
    const claim = claimOn(instances[1]!, second)
    const lockAPid = await lockA.pid
    await waitFor('the deciding claim to wait for lock A', async () => ((await blockedBy(lockAPid)).length > 0 ? true : undefined))
    const lockB = new RowLock(sql, 'tournaments', t.id)
    const lockBPid = await lockB.pid
    await waitFor('lock B to queue for the row', async () => ((await blockersOf(lockBPid)).length > 0 ? true : undefined))
    await lockA.release()
    const decided = await claim
    expectStatus('deciding claim', decided, 200)
    expect(decided.body.decision).toBe('game_advance_pending_finalization')
    await lockB.held

    const job = await waitFor('a finalization job to wait for lock B', async () => (await blockedBy(lockBPid)).find((b) => /"tournaments"/.test(b.query)))
    const victim = instances.find((i) => i.name === job.application_name)
    const survivor = instances.find((i) => i !== victim)!
    expect(victim).toBeDefined()
    console.log(`finalization job running on ${victim!.name} (backend ${job.pid}); killing it`)
    await victim!.server.signal('SIGKILL')
    await lockB.release()

    const killedAt = performance.now()
    const completed = await waitFor(
      'the tournament to be completed by the surviving instance',
      async () => {
        const shown = await survivor.call('GET', `/api/v1/tournaments/${t.id}`, undefined, first.auth)
        return shown.body.tournament.status === 'completed' ? shown.body.tournament : undefined
      },
      15_000,
    )
    console.log(`completed by ${survivor.name} ${(performance.now() - killedAt).toFixed(0)} ms after the release`)
    expect(completed.winnerParticipantId).toBe(winner)

    // Exactly once: one job, done on its first committed attempt (the killed
    // one was rolled back with its lease), done by the survivor; one
    // tournament.completed event for each participant.
    const jobs = [...(await sql<{ id: string; status: string; attempts: number }[]>`SELECT id, status, attempts FROM jobs WHERE payload->>'tournamentId' = ${t.id}`)]
    expect(jobs.map((j) => ({ status: j.status, attempts: j.attempts }))).toEqual([{ status: 'done', attempts: 1 }])
    const doneBy = (i: Instance) => i.server.lines.filter((l) => l.msg === 'job done' && l.jobId === jobs[0]!.id).length
    expect({ survivor: doneBy(survivor), victim: doneBy(victim!) }).toEqual({ survivor: 1, victim: 0 })
    const events = [...(await sql<{ user_id: string; n: number }[]>`SELECT user_id, count(*)::int AS n FROM outbox_events WHERE type = 'tournament.completed' AND data->>'tournamentId' = ${t.id} GROUP BY user_id`)]
    expect(events.map((e) => e.n)).toEqual([1, 1])
    expect(new Set(events.map((e) => e.user_id))).toEqual(new Set(people.map((p) => p.id)))
    // PostgreSQL noticed the killed instance's connections and rolled its transaction back.
    await waitFor(`no backend of ${victim!.name} left`, async () => {
      const [left] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = ${victim!.name}`
      return left!.n === 0 ? true : undefined
    })
    instances.splice(instances.indexOf(victim!), 1)
  }, 60_000)

  test('each instance answers GET /metrics for itself in the Prometheus text format', async () => {
    for (const { call } of instances) {
      expect((await call('GET', '/readyz')).status).toBe(200)
      expect((await call('GET', '/metrics')).status).toBe(401)
      const answer = await call('GET', '/metrics', undefined, { authorization: `Bearer ${METRICS_TOKEN}` })
      expect(answer.status).toBe(200)
      const samples = parseMetrics(answer.text)
      // The /readyz above is counted by its template; no route label carries an id.
      expect(samples.some((s) => s.name === 'arena_http_requests_total' && s.labels.route === '/readyz' && s.value >= 1)).toBe(true)
      for (const s of samples) if (s.labels.route !== undefined) expect(s.labels.route).not.toMatch(/(usr|mat|trn|wdr)_[0-9a-f]{8}/)
      expect(samples.some((s) => s.name === 'arena_withdrawals' && s.labels.status === 'pending_signature')).toBe(true)
      expect(samples.some((s) => s.name === 'arena_process_resident_memory_bytes')).toBe(true)
      // Every instance wrote (claims alternated between them): its own commits, on the one shared database.
      const one = (name: string, labels: Record<string, string> = {}) => samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value
      expect(one('arena_db_commit_batch_size_count')).toBeGreaterThan(0)
      expect(one('arena_db_commit_batch_size_sum')).toBe(one('arena_db_commit_batch_size_count')!)
      expect(one('arena_db_retries_total')).toBeGreaterThanOrEqual(0)
      expect(one('arena_db_size_bytes')).toBeGreaterThan(1024 * 1024)
      expect(one('arena_jobs', { state: 'due' })).toBeGreaterThanOrEqual(0)
      expect(one('arena_job_lag_seconds')).toBeGreaterThanOrEqual(0)
      expect(one('arena_event_polls_waiting')).toBeGreaterThanOrEqual(0)
      expect(one('arena_nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0)
    }
  })

  test('arena ledger check, arena security verify-log and arena audit verify pass on the shared database', async () => {
    // Security reports through every instance still running, so the chain was written by more than one flusher.
    const [player] = await playersOn('reporter_', 1)
    const reports = await Promise.all(
      Array.from({ length: 10 }, (_, i) => instances[i % instances.length]!.call('POST', '/api/v1/security/events', { kind: 'MULTI_INSTANCE_CHECK', details: { i } }, player!.auth)),
    )
    for (const r of reports) expect(r.status).toBe(202)
    for (const instance of instances) expect((await instance.server.signal('SIGTERM')).code).toBe(0)
    const env = { ARENA_DATABASE_URL: databaseUrl, ARENA_MASTER_KEY: MASTER_KEY, ARENA_DATA_DIR: dataDirOf('operator') }
    const ledger = await run([BINARY, 'ledger', 'check', '--json'], env)
    expect({ code: ledger.code, stderr: ledger.stderr }).toEqual({ code: 0, stderr: '' })
    const chain = await run([BINARY, 'security', 'verify-log', '--json'], env)
    expect({ code: chain.code, stderr: chain.stderr }).toEqual({ code: 0, stderr: '' })
    // The operator actions (games, tournaments, credits, bans) sent to every instance, each appended to the one audit chain.
    const audit = await run([BINARY, 'audit', 'verify', '--json'], env)
    expect({ code: audit.code, stderr: audit.stderr }).toEqual({ code: 0, stderr: '' })
    expect((JSON.parse(audit.stdout) as { rows: number }).rows).toBeGreaterThan(0)
    console.log(`ledger check: ${ledger.stdout.trim()}\nverify-log: ${chain.stdout.trim()}\naudit verify: ${audit.stdout.trim()}`)
  }, 30_000)
})
