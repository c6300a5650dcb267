// PostgreSQL going away under a running arena (the compiled binary), on a
// database of its own on the run's throwaway cluster:
// - its connection terminated in the middle of a unit of work (an operator's
//   pg_terminate_backend, a failover, an OOM kill of the backend): the request
//   is a clean 503 with Retry-After in the error envelope, and the unit of
//   work left nothing behind; the same claim sent again then succeeds;
// - the server restarted: requests while it is away are clean 503s, never a
//   500, and once it is back the same arena process serves again, cross-
//   instance wake-ups (LISTEN) included.
// PostgreSQL-specific, so it runs whatever ARENA_TEST_ENGINE says; it skips
// only where there are no PostgreSQL binaries (and fails there when the run
// asked for PostgreSQL). The restart cuts every connection of the cluster the
// whole test process shares; bun runs test files one after another, and the
// test waits until the cluster is back, so no other file sees it.
import { afterAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import postgres from 'postgres'
import { MasterKey } from '../../src/shared/sealed'
import { tempDir } from '../helpers/app'
import { findPostgresBinaries, freshDatabaseUrl, postgresConnectOptions, startPostgres } from '../helpers/postgres'
import { BINARY, buildBinary, startServe, type ServerProcess } from '../helpers/process'
import { ADMIN_TOKEN, client, PASSWORD, createGame, gameHeaders, notCleanUnavailable, setUpPlayer, startTournament, type Answer, type Call, type Player } from '../faults/helpers'
import { waitFor } from '../helpers/wait'

const required = process.env.ARENA_TEST_ENGINE === 'postgres'
const skip = !required && findPostgresBinaries() === null
if (skip) console.log('PostgreSQL fault tests skipped: no PostgreSQL >= 15 under /usr/lib/postgresql (Debian package postgresql)')

const JWT_SECRET = 'postgres-faults-signing-secret-0123456789abcdef'
const admin = { 'x-admin-token': ADMIN_TOKEN }

const servers: ServerProcess[] = []
const clients: postgres.Sql[] = []
const dataDirs: string[] = []
afterAll(async () => {
  for (const server of servers) server.proc.kill('SIGKILL')
  await Promise.all(servers.map((server) => server.proc.exited))
  await Promise.all(clients.map((c) => c.end({ timeout: 1 })))
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true })
})

function dataDir(prefix: string): string {
  const dir = tempDir(prefix)
  dataDirs.push(dir)
  return dir
}

function open(url: string): postgres.Sql {
  const { url: plain, path } = postgresConnectOptions(url)
  const c = postgres(plain, { path, max: 4, onnotice: () => {} })
  clients.push(c)
  return c
}

const MASTER_KEY = MasterKey.generateHex()

async function serve(databaseUrl: string, dir: string): Promise<{ server: ServerProcess; call: Call }> {
  const env = { ARENA_DATABASE_URL: databaseUrl, ARENA_DATA_DIR: dir, ARENA_JWT_SECRET: JWT_SECRET, ARENA_ADMIN_TOKEN: ADMIN_TOKEN, ARENA_MASTER_KEY: MASTER_KEY }
  const server = await startServe([BINARY, 'serve'], env, { timeoutMs: 30_000 })
  servers.push(server)
  return { server, call: client(server.url) }
}

/** A cursor past every wallet event the player has now (pages of 100). */
async function newestCursor(call: Call, player: Player): Promise<string> {
  let cursor = ''
  for (;;) {
    const page = await call('GET', `/api/v1/events?topics=wallet&after=${cursor}`, undefined, player.auth)
    expectStatus('events', page, 200)
    cursor = page.body.cursor
    if (page.body.events.length < 100) return cursor
  }
}

function expectStatus(what: string, answer: Answer, status: number): void {
  if (answer.status !== status) throw new Error(`${what}: expected ${status}, got ${answer.status} ${answer.text}`)
}

describe.skipIf(skip)('PostgreSQL faults under a running arena', () => {
  test("arena's connection terminated mid-transaction: a clean 503, nothing half-written, and the same claim then succeeds", async () => {
    await buildBinary()
    const databaseUrl = await freshDatabaseUrl()
    const sql = open(databaseUrl)
    const { call } = await serve(databaseUrl, dataDir('arena-pgfault-'))

    const people: Player[] = []
    for (const name of ['term_a', 'term_b', 'term_c', 'term_d']) people.push(await setUpPlayer(call, name))
    const game = await createGame(call, 'Terminate Duel')
    const t = await startTournament(call, game, people, 'Terminate Cup')
    const match = t.matches.find((m) => m.round === 1 && m.status === 'running')!
    const next = t.matches.find((m) => m.round === 2)!
    const seat = (participantId: string) => people.find((p) => p.id === t.participants.find((x) => x.id === participantId)!.userId)!
    const sessionFor = async (player: Player) => {
      const session = await call('POST', `/api/v1/game-sdk/${game.game.id}/sessions`, { matchId: match.id }, gameHeaders(game, player))
      expectStatus('match session', session, 201)
      return session.body.token as string
    }
    const winner = match.slot1ParticipantId
    const sendClaim = (player: Player, token: string) =>
      call('POST', `/api/v1/game-sdk/${game.game.id}/results`, { outcome: 'WIN', winnerParticipantId: winner }, { ...gameHeaders(game, player), 'x-session-token': token })
    const [first, second] = [seat(match.slot1ParticipantId), seat(match.slot2ParticipantId)]
    expect((await sendClaim(first, await sessionFor(first))).body.decision).toBe('pending')
    const token = await sessionFor(second)

    // The deciding claim spends its session, stores the claim, marks the
    // match decided and writes its events, then places the winner in the next
    // match: hold that row, and it waits there, most of its rows written.
    const holder = await sql.reserve()
    try {
      await holder`BEGIN`
      const [{ pid }] = (await holder<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`) as unknown as [{ pid: number }]
      await holder`SELECT 1 FROM matches WHERE id = ${next.id} FOR UPDATE`
      const claim = sendClaim(second, token)
      const blocked = await waitFor('the claim to wait for the next match', async () => {
        const rows = await sql<{ pid: number; application_name: string; query: string }[]>`
          SELECT pid, application_name, query FROM pg_stat_activity
          WHERE datname = current_database() AND ${pid}::int = ANY(pg_blocking_pids(pid))`
        return rows[0]
      })
      expect(blocked.application_name).toBe('arena')
      expect(blocked.query).toMatch(/"matches"/)
      const [terminated] = await sql<{ ok: boolean }[]>`SELECT pg_terminate_backend(${blocked.pid}::int) AS ok`
      expect(terminated!.ok).toBe(true)

      const answer = await claim
      expect(notCleanUnavailable(answer)).toBeNull()
      console.log(`terminated mid-claim: ${answer.status} Retry-After ${answer.headers.get('retry-after')} ${answer.text}`)
    } finally {
      await holder`ROLLBACK`
      holder.release()
    }

    // Nothing of it stayed: the session unspent, one claim, the match running, no event of a decision, the next match empty.
    const [session] = await sql<{ consumed: boolean }[]>`SELECT consumed_at IS NOT NULL AS consumed FROM game_sessions WHERE match_id = ${match.id} AND participant_id = ${match.slot2ParticipantId}`
    expect(session!.consumed).toBe(false)
    const claims = await sql<{ participant_id: string }[]>`SELECT participant_id FROM match_claims WHERE match_id = ${match.id}`
    expect(claims.map((c) => c.participant_id)).toEqual([match.slot1ParticipantId])
    const rows = await sql<{ id: string; status: string; winner: string | null; slot1: string | null; slot2: string | null }[]>`
      SELECT id, status, winner_participant_id AS winner, slot1_participant_id AS slot1, slot2_participant_id AS slot2 FROM matches WHERE id IN (${match.id}, ${next.id})`
    expect(rows.find((r) => r.id === match.id)).toMatchObject({ status: 'running', winner: null })
    expect(rows.find((r) => r.id === next.id)).toMatchObject({ status: 'waiting', slot1: null, slot2: null })
    const [decidedEvents] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM outbox_events WHERE type = 'match.decided' AND data->>'matchId' = ${match.id}`
    expect(decidedEvents!.n).toBe(0)

    // The client's retry, with the same token, on the same server: decided, once.
    const retried = await sendClaim(second, token)
    expectStatus('the claim sent again', retried, 200)
    expect(retried.body).toMatchObject({ decision: 'game_advance', winnerParticipantId: winner, nextMatchId: next.id })
    const [after] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM outbox_events WHERE type = 'match.decided' AND data->>'matchId' = ${match.id}`
    expect(after!.n).toBe(2)
  }, 30_000)

  test('a PostgreSQL restart: clean 503s while it is away, then the same arena processes serve again, wake-ups included', async () => {
    await buildBinary()
    const cluster = await startPostgres()
    const databaseUrl = await freshDatabaseUrl()
    const sql = open(databaseUrl)
    const [a, b] = [await serve(databaseUrl, dataDir('arena-pgrestart-a-')), await serve(databaseUrl, dataDir('arena-pgrestart-b-'))]
    const player = await setUpPlayer(a.call, 'restart_player', { wallet: true })

    // Reads and writes on both instances, without pause, for as long as the restart takes.
    let restarting = true
    let credits = 0
    const answers: { op: string; answer: Answer; reference?: string }[] = []
    const hammer = async (call: Call, name: string) => {
      while (restarting) {
        answers.push({ op: `${name} GET /me`, answer: await call('GET', '/api/v1/me', undefined, player.auth) })
        const reference = `restart-${name}-${credits++}`
        answers.push({ op: `${name} credit`, reference, answer: await call('POST', `/api/v1/admin/wallets/${player.id}/credit`, { amount: '1', reference }, admin) })
        answers.push({ op: `${name} GET /readyz`, answer: await call('GET', '/readyz') })
      }
    }
    const load = [hammer(a.call, 'a'), hammer(b.call, 'b'), hammer(a.call, 'a2'), hammer(b.call, 'b2')]
    await Bun.sleep(200)
    const started = performance.now()
    await cluster.restart()
    const restartMs = performance.now() - started
    restarting = false
    await Promise.all(load)

    const bad = answers.filter(({ answer }) => answer.status !== 200 && notCleanUnavailable(answer) !== null)
    const unavailable = answers.filter(({ answer }) => answer.status === 503).length
    console.log(`restart took ${restartMs.toFixed(0)} ms; ${answers.length} requests during it: ${answers.length - unavailable} answered 200, ${unavailable} a clean 503`)
    expect(bad.map(({ op, answer }) => `${op}: ${answer.status} ${answer.text.slice(0, 200)}`)).toEqual([])
    // The requests really met the server away, or this test proved nothing.
    expect(unavailable).toBeGreaterThan(0)

    // The same processes, still running, serve normally again; a first
    // request may still meet a connection cut by the restart: allow 5 s.
    for (const { server, call } of [a, b]) {
      expect(server.proc.exitCode).toBeNull()
      try {
        await waitFor(`${server.url} to answer /readyz 200`, async () => ((await call('GET', '/readyz')).status === 200 ? true : undefined), 5000)
        expectStatus('GET /me', await call('GET', '/api/v1/me', undefined, player.auth), 200)
        expectStatus('login', await call('POST', '/api/v1/user/login', { identifier: player.username, password: PASSWORD }), 200)
      } catch (error) {
        console.log(`${server.url} logged:\n${server.lines.filter((l) => l.level !== 'info').slice(-10).map((l) => JSON.stringify(l)).join('\n')}`)
        throw error
      }
    }
    // A 503 does not say the credit was not made: its COMMIT may have been
    // done when the connection was cut, before the answer came back. The
    // operator sends it again with the same reference, and it is made once:
    // every reference sent is in the balance exactly once.
    const credited = answers.filter(({ reference }) => reference !== undefined)
    const countCredits = async () => (await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM ledger_transactions WHERE kind = 'credit'`)[0]!.n
    const madeBeforeResending = await countCredits()
    let resent = 0
    let retried = 0
    for (const { reference, answer } of credited) {
      if (answer.status === 200) continue
      resent++
      // As an operator's script would: a clean 503 (a pooled connection the
      // restart cut, met for the first time) is sent again, a few times.
      let again = await a.call('POST', `/api/v1/admin/wallets/${player.id}/credit`, { amount: '1', reference }, admin)
      for (let attempt = 1; attempt < 5 && again.status === 503 && notCleanUnavailable(again) === null; attempt++) {
        retried++
        await Bun.sleep(200)
        again = await a.call('POST', `/api/v1/admin/wallets/${player.id}/credit`, { amount: '1', reference }, admin)
      }
      expectStatus(`credit ${reference} sent again`, again, 200)
    }
    if (retried > 0) console.log(`resending met ${retried} clean 503(s) from connections the restart cut; sent again`)
    const wallet = await a.call('GET', '/api/v1/wallet', undefined, player.auth)
    expect(wallet.body.balance).toBe(String(credited.length))
    console.log(
      `credits during the restart: ${credited.length - resent} answered 200, ${resent} answered 503 (of which ${madeBeforeResending - (credited.length - resent)} had been made) and were sent again; each made once`,
    )
    expect(await countCredits()).toBe(credited.length)

    // Each instance listens again: a poll on one is woken by a write on the other.
    const latencies: number[] = []
    for (const [poller, writer] of [
      [a, b],
      [b, a],
    ] as const) {
      const cursor = await newestCursor(poller.call, player)
      let answered = 0
      const poll = poller.call('GET', `/api/v1/events?topics=wallet&wait=10&after=${cursor}`, undefined, player.auth).then((answer) => {
        answered = performance.now()
        return answer
      })
      await Bun.sleep(300)
      expectStatus('credit', await writer.call('POST', `/api/v1/admin/wallets/${player.id}/credit`, { amount: '1', reference: `after-restart-${latencies.length}` }, admin), 200)
      const written = performance.now()
      const answer = await poll
      expect(answer.body.events.map((e: { type: string }) => e.type)).toEqual(['wallet.credited'])
      latencies.push(answered - written)
    }
    console.log(`wake-ups across instances after the restart: ${latencies.map((ms) => ms.toFixed(1)).join(', ')} ms`)
    // Through NOTIFY a wake-up takes milliseconds; without a listener the
    // poll would answer at its re-read, about 700 ms after the write.
    expect(latencies.every((ms) => ms < 250)).toBe(true)
  }, 30_000)
})
