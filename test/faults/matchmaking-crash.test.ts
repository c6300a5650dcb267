// Invariant: a SIGKILL of the compiled server while its matcher pairs a
// staked queue, or while staked matches are being paid out, loses no stake
// and pays none twice. After every restart on the same data dir (and
// database, on PostgreSQL):
// - `arena ledger check` passes;
// - every staked match waiting, running or disputed has both stakes in its
//   escrow (one `stake` movement per player, nothing out yet); every decided
//   or cancelled one has an empty escrow, its pot paid once (less the rake,
//   paid once) or both stakes refunded once; no ledger reference twice;
// - every player's balance is their credit less the stakes of their matches
//   plus what the decided and cancelled ones gave back;
// - no player has two open tickets in the game, no open ticket is in a match
//   that is not cancelled, each match has its two players' tickets;
// - what the server acknowledged is there: each ticket answered 201, each
//   ready check confirmation answered 200, each decision and resolve
//   answered 200 with the winner it named.
// (stakeProblems in test/helpers/matchmaking.ts reads these from the rows.)
//
// Each round has two kills. Pairing: every player joins the queue at once
// and the server is killed while its matcher loop (every second) makes the
// matches, either at a random moment or a few milliseconds after the first
// match of the round is committed, when the rest of the tick is in flight.
// Paying out: the running matches' deciding claims (a win, or a second claim
// that disputes it) and the operator's resolves of the disputes left from
// the round before are sent at once, and the server is killed in the middle
// of the burst. One match in five (and the first of each round) has a player
// who never confirms the ready check, so the ready-check job cancels it (both
// stakes refunded) while the next rounds run. After the last round every
// match is settled and every escrow empty.
//
// ARENA_CRASH_KILLS sets the number of kills (4 under `npm test`; `npm run
// test:faults` sets 200). The kill moments, the winners and the disputes
// come from the seed printed at the start (ARENA_TEST_SEED replays it, as
// far as the timing of a real process allows).
import { afterAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import postgres from 'postgres'
import { postJson, remote, req, tempDir, testDatabaseEnv, TEST_ENGINE } from '../helpers/app'
import { admin, ADMIN_TOKEN, createGame, openSession, players, submit, type Player } from '../helpers/arena'
import { createQueue, fund, joinQueue, postgresSnapshot, ready, sqliteFileSnapshot, stakeProblems, type RawSql, type Snapshot } from '../helpers/matchmaking'
import { postgresConnectOptions } from '../helpers/postgres'
import { BINARY, buildBinary, run, startServe, type ServerProcess } from '../helpers/process'
import { chooseSeed, seededRandom } from '../helpers/seed'

const KILLS = Math.max(2, Number(process.env.ARENA_CRASH_KILLS ?? 4))
const ROUNDS = Math.ceil(KILLS / 2)
const SEED = chooseSeed('ARENA_TEST_SEED', 'matchmaking crash')
const PLAYERS = 24
const QUEUE = 'staked'
/** Seconds the players have to confirm a match found (the smallest a queue allows). */
const READY_CHECK_S = 5
const started: ServerProcess[] = []
let client: postgres.Sql | undefined
afterAll(async () => {
  for (const s of started) s.proc.kill('SIGKILL')
  await client?.end({ timeout: 1 })
})

interface Acknowledged {
  tickets: Set<string>
  /** `matchId/userId` of each confirmation answered 200. */
  readies: Set<string>
  /** Matches a claim or a resolve answered 200 as decided, and the winner it named. */
  decisions: Map<string, string>
}

interface Seat {
  participantId: string
  userId: string
}

interface MatchRow {
  id: string
  status: string
  seats: [Seat, Seat]
}

test(`${KILLS} SIGKILLs while pairing a staked queue and while paying out its matches (${TEST_ENGINE}): every stake in escrow or paid, exactly once`, async () => {
  await buildBinary()
  const dataDir = tempDir('arena-mm-crash-')
  const env: Record<string, string> = { ARENA_DATA_DIR: dataDir, ARENA_ADMIN_TOKEN: ADMIN_TOKEN, ...(await testDatabaseEnv()) }
  let server!: ServerProcess
  const serve = async () => {
    server = await startServe([BINARY, 'serve'], env, { timeoutMs: 30_000 })
    started.push(server)
  }
  await serve()
  const ctx = remote(() => server.url)

  // The rows, read beside the running server: SQLite's file read-only, or the PostgreSQL database.
  let snapshot: Snapshot
  if (env.ARENA_DATABASE_URL !== undefined) {
    const { url, path } = postgresConnectOptions(env.ARENA_DATABASE_URL)
    const pg = postgres(url, { path, max: 2, onnotice: () => {} })
    client = pg
    snapshot = (read) => postgresSnapshot(pg, read)
  } else {
    snapshot = sqliteFileSnapshot(join(dataDir, 'arena.sqlite'))
  }
  const sql: RawSql = (text) => snapshot((s) => s(text))
  const count = async (text: string) => Number((await sql(text))[0]!.n)

  const { game, gameKey } = await createGame(ctx, 'Staked crash')
  await createQueue(ctx, game.id, { name: QUEUE, stake: '1', rake: '0.1', readyCheckS: READY_CHECK_S, window: { initial: 10_000, widenPerSecond: 0, max: 10_000 } })
  const people = (await Promise.all([0, 1, 2, 3].map(() => players(ctx, PLAYERS / 4)))).flat()
  await fund(ctx, people, '1000')
  const byUser = new Map(people.map((p) => [p.userId, p]))

  const ack: Acknowledged = { tickets: new Set(), readies: new Set(), decisions: new Map() }
  const totals = { requests: 0, acknowledged: 0, cut: 0, cutMidTick: 0, burst: 0, settledInBurst: 0, decidedAfter: 0 }
  /** One request, its answer read whole: counted; null when a kill cut it. */
  const send = async (request: () => Promise<Response>): Promise<{ status: number; body: Record<string, any> } | null> => {
    totals.requests++
    try {
      const res = await request()
      const text = await res.text()
      if (res.ok) totals.acknowledged++
      return { status: res.status, body: text === '' ? {} : JSON.parse(text) }
    } catch {
      totals.cut++
      return null
    }
  }
  const kill = async () => {
    server.proc.kill('SIGKILL')
    await server.proc.exited
  }

  /**
   * Kills the server either at a random moment within `spanMs`, or (half the
   * time) a few milliseconds after `begun` first answers true: when the
   * first unit of work of a burst has committed and the rest are in flight.
   */
  const killWhen = async (random: () => number, spanMs: number, begun: () => Promise<boolean>) => {
    if (random() < 0.5) {
      await Bun.sleep(Math.floor(random() * spanMs))
    } else {
      const deadline = performance.now() + 2000
      while (performance.now() < deadline && !(await begun())) await Bun.sleep(2)
      await Bun.sleep(Math.floor(random() * 10))
    }
    await kill()
  }

  const queueMatches = async (where: string): Promise<MatchRow[]> =>
    (
      await sql(
        `SELECT m.id, m.status, p1.id AS p1, p1.user_id AS u1, p2.id AS p2, p2.user_id AS u2 FROM matches m
         JOIN participants p1 ON p1.id = m.slot1_participant_id JOIN participants p2 ON p2.id = m.slot2_participant_id
         WHERE m.kind = 'queue' AND ${where} ORDER BY m.id`,
      )
    ).map((r) => ({
      id: String(r.id),
      status: String(r.status),
      seats: [
        { participantId: String(r.p1), userId: String(r.u1) },
        { participantId: String(r.p2), userId: String(r.u2) },
      ],
    }))

  /** Everything the top of this file promises, on the store as the restart found it. */
  const check = async (label: string) => {
    const ledger = await run([BINARY, 'ledger', 'check', '--json'], env)
    expect({ label, code: ledger.code, report: JSON.parse(ledger.stdout || '{}') }).toMatchObject({ label, code: 0, report: { ok: true } })
    expect({ label, problems: await stakeProblems(snapshot) }).toEqual({ label, problems: [] })
    const tickets = new Set((await sql('SELECT id FROM tickets')).map((r) => String(r.id)))
    expect({ label, lost: [...ack.tickets].filter((id) => !tickets.has(id)) }).toEqual({ label, lost: [] })
    const confirmed = new Set(
      (
        await sql(
          `SELECT m.id, p.user_id FROM matches m JOIN participants p ON (p.id = m.slot1_participant_id AND m.slot1_ready_at IS NOT NULL) OR (p.id = m.slot2_participant_id AND m.slot2_ready_at IS NOT NULL) WHERE m.kind = 'queue'`,
        )
      ).map((r) => `${r.id}/${r.user_id}`),
    )
    expect({ label, lost: [...ack.readies].filter((x) => !confirmed.has(x)) }).toEqual({ label, lost: [] })
    const decided = new Map((await sql("SELECT id, winner_participant_id AS w FROM matches WHERE kind = 'queue' AND status = 'decided'")).map((r) => [String(r.id), String(r.w)]))
    expect({ label, lost: [...ack.decisions].filter(([id, winner]) => decided.get(id) !== winner) }).toEqual({ label, lost: [] })
    expect({ label, errors: started.flatMap((s) => s.lines).filter((l) => l.level === 'error' || l.level === 'fatal') }).toEqual({ label, errors: [] })
  }

  const auth = (p: Player) => ({ authorization: `Bearer ${p.tokens.accessToken}` })
  const handled = new Set<string>()
  /** Sessions of the matches being played: `matchId/userId` → token. */
  const sessions = new Map<string, string>()
  /** The second claim of each match being decided, to send again when a kill cut it. */
  let pending: { matchId: string; player: Player; winner: string }[] = []
  const claimOf = (winner: string) => ({ outcome: 'WIN', winnerParticipantId: winner })
  const secondClaim = async (c: (typeof pending)[number]) => {
    const res = await send(() => submit(ctx, game.id, gameKey, c.player, sessions.get(`${c.matchId}/${c.player.userId}`)!, claimOf(c.winner)))
    if (res?.status !== 200) return res
    const body = res.body as { decision: string; winnerParticipantId?: string }
    if (body.decision === 'game_advance') ack.decisions.set(c.matchId, body.winnerParticipantId!)
    return res
  }
  const resolve = async (matchId: string, winner: string) => {
    const res = await send(() => ctx.handle(postJson(`/api/v1/admin/matches/${matchId}/resolve`, { winnerParticipantId: winner }, admin)))
    if (res?.status === 200) ack.decisions.set(matchId, winner)
    return res
  }

  for (let round = 0; round < ROUNDS; round++) {
    const random = seededRandom(SEED, round)

    // ---- Pairing, killed. ----
    const before = (await queueMatches('1 = 1')).length
    const joins = Promise.all(
      people.map(async (p) => {
        const res = await send(() => joinQueue(ctx, game.id, QUEUE, p))
        if (res?.status === 201) ack.tickets.add((res.body as { ticket: { id: string } }).ticket.id)
      }),
    )
    // Just after the tick's first match commits, with the rest of its pairs in flight; or anywhere in the next second or so.
    await killWhen(random, 1200, async () => (await queueMatches('1 = 1')).length > before)
    await joins
    await serve()
    const madeBeforeKill = (await queueMatches('1 = 1')).length - before
    const openLeft = await count(`SELECT count(*) AS n FROM tickets WHERE status = 'open'`)
    if (madeBeforeKill > 0 && openLeft >= 2) totals.cutMidTick++
    await check(`round ${round}: killed while pairing (${madeBeforeKill} matches made before the kill, ${openLeft} tickets left open)`)
    // The restarted matcher pairs the rest.
    for (let i = 0; i < 100 && (await count(`SELECT count(*) AS n FROM tickets WHERE status = 'open'`)) >= 2; i++) await Bun.sleep(50)

    // ---- Ready checks: both confirm, or (the first match, then one in five) only the first. ----
    const waiting = (await queueMatches("m.status = 'waiting'")).filter((m) => !handled.has(m.id))
    await Promise.all(
      waiting.flatMap((m, i) => {
        handled.add(m.id)
        const who = i === 0 || random() < 0.2 ? m.seats.slice(0, 1) : m.seats
        return who.map(async (seat) => {
          const res = await send(() => ready(ctx, m.id, byUser.get(seat.userId)!))
          // A slow machine may see a check run out; the job then cancels the match.
          expect([200, 409]).toContain(res?.status ?? 0)
          if (res?.status === 200) ack.readies.add(`${m.id}/${seat.userId}`)
        })
      }),
    )

    // ---- Paying out, killed. ----
    const running = await queueMatches("m.status = 'running'")
    const disputed = await queueMatches("m.status = 'disputed'")
    pending = []
    await Promise.all(
      running.map(async (m) => {
        const [first, second] = (random() < 0.5 ? [m.seats[0], m.seats[1]] : [m.seats[1], m.seats[0]]).map((s) => byUser.get(s.userId)!) as [Player, Player]
        const winner = m.seats[random() < 0.5 ? 0 : 1].participantId
        // One in six is disputed: the second player claims the win for themself.
        const disputes = random() < 1 / 6
        for (const p of [first, second]) {
          const issued = await openSession(ctx, game.id, gameKey, p, m.id)
          expect(issued.status).toBe(201)
          sessions.set(`${m.id}/${p.userId}`, ((await issued.json()) as { token: string }).token)
        }
        const claimed = await submit(ctx, game.id, gameKey, first, sessions.get(`${m.id}/${first.userId}`)!, claimOf(winner))
        expect(claimed.status).toBe(200)
        const secondSeat = m.seats.find((s) => s.userId === second.userId)!
        pending.push({ matchId: m.id, player: second, winner: disputes ? secondSeat.participantId : winner })
      }),
    )
    const resolves = disputed.map((m) => ({ matchId: m.id, winner: m.seats[random() < 0.5 ? 0 : 1].participantId }))
    const burst = Promise.all([...pending.map(secondClaim), ...resolves.map((r) => resolve(r.matchId, r.winner))])
    const burstIds = [...pending.map((c) => c.matchId), ...resolves.map((r) => r.matchId)]
    const inBurst = (status: string) => queueMatches(`m.status IN (${status}) AND m.id IN (${burstIds.map((id) => `'${id}'`).join(', ') || "''"})`)
    await killWhen(random, 300, async () => (await inBurst("'decided', 'disputed'")).length > disputed.length)
    await burst
    await serve()
    totals.burst += burstIds.length
    totals.settledInBurst += (await inBurst("'decided'")).length
    await check(`round ${round}: killed while paying out (${pending.length} claims and ${resolves.length} resolves in the burst)`)
    // What the kill cut, sent again: a claim that committed before the kill has spent its session (401), so it is not counted twice.
    for (const c of pending) {
      const res = await secondClaim(c)
      expect([200, 401, 409]).toContain(res?.status ?? 0)
    }
    const undecided = await queueMatches(`m.status = 'running' AND m.id IN (${pending.map((c) => `'${c.matchId}'`).join(', ') || "''"})`)
    expect(undecided.map((m) => m.id)).toEqual([])
    totals.decidedAfter = await count(`SELECT count(*) AS n FROM matches WHERE kind = 'queue' AND status = 'decided'`)
    await check(`round ${round}: the cut claims sent again`)
  }

  // ---- The end: the disputes resolved, the ready checks left run out; every stake paid or refunded. ----
  for (const m of await queueMatches("m.status = 'disputed'")) expect((await resolve(m.id, m.seats[0].participantId))?.status).toBe(200)
  for (let i = 0; i < 200 && (await count(`SELECT count(*) AS n FROM matches WHERE kind = 'queue' AND status = 'waiting'`)) > 0; i++) await Bun.sleep(50)
  // Tickets still open (an odd one out) leave, so nothing pairs after the last look.
  for (const p of people) await ctx.handle(req(`/api/v1/games/${game.id}/queues/${QUEUE}/tickets/current`, { method: 'DELETE', headers: auth(p) }))
  for (let i = 0; i < 200 && (await count(`SELECT count(*) AS n FROM matches WHERE kind = 'queue' AND status IN ('waiting', 'running', 'disputed')`)) > 0; i++) {
    // A match paired just before the tickets left: confirmed and played out by both.
    for (const m of await queueMatches("m.status = 'waiting'")) for (const s of m.seats) await ready(ctx, m.id, byUser.get(s.userId)!)
    for (const m of await queueMatches("m.status = 'running'")) {
      for (const s of m.seats) {
        const p = byUser.get(s.userId)!
        const issued = await openSession(ctx, game.id, gameKey, p, m.id)
        if (issued.status === 201) await submit(ctx, game.id, gameKey, p, ((await issued.json()) as { token: string }).token, claimOf(m.seats[0].participantId))
      }
    }
    await Bun.sleep(50)
  }
  await check('the end')
  const settled = await sql("SELECT status, count(*) AS n FROM matches WHERE kind = 'queue' GROUP BY status ORDER BY status")
  expect(settled.filter((r) => !['decided', 'cancelled'].includes(String(r.status)))).toEqual([])
  expect(await count("SELECT count(*) AS n FROM ledger_transactions WHERE kind = 'stake_refund'")).toBeGreaterThan(0)
  expect(totals.decidedAfter).toBeGreaterThan(0)
  console.log(
    `matchmaking crash (seed ${SEED}, ${TEST_ENGINE}): ${ROUNDS * 2} kills survived; ${totals.requests} requests (${totals.acknowledged} acknowledged, ${totals.cut} cut by a kill); ` +
      `${totals.cutMidTick} pairing kills left a tick half done; payout kills let ${totals.settledInBurst} of ${totals.burst} matches in their bursts be decided; matches ${settled.map((r) => `${r.status} ${r.n}`).join(', ')}`,
  )
  expect((await server.signal('SIGTERM')).code).toBe(0)
}, 90_000 + KILLS * 15_000)
