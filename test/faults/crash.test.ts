// Invariant: a SIGKILL at any moment, under concurrent logins, operator
// credits, match claims and PIN withdrawals, loses nothing that was
// acknowledged and leaves nothing half-done. After every restart on the same
// data dir:
// - PRAGMA integrity_check is ok and `arena ledger check` passes;
// - every request answered 2xx before the kill is still there: its login
//   session, its credit, its claim, its decision and bracket move, its
//   withdrawal;
// - every withdrawal the kill left pending_signature ends signed (or failed
//   and reversed), and each balance equals the credits minus the withdrawals
//   recorded for it;
// - every decided match's winner stands in its next match, and no tournament
//   stays in `finalizing`.
// ARENA_CRASH_KILLS sets the number of kills (5 in the suite, where every
// check runs after each of them; the long run, npm run test:faults, uses 200).
//
// The kill moments, the players each worker picks and the tournaments' entrants
// come from the seed printed at the start (ARENA_TEST_SEED replays it, as far
// as the timing of a real process allows): each worker draws from its own
// stream, so the interleaving does not change what it picks. The first kill
// waits for one acknowledged request of every kind, so every check after every
// restart has something to check, however early the kills fall.
import { afterAll, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { join } from 'node:path'
import { postJson, remote, req, tempDir } from '../helpers/app'
import { testOnEngine } from '../helpers/engine'
import { ADMIN_TOKEN, admin, createGame, openSession, players, playerOf, startedTournament, submit, type Player, type TournamentView } from '../helpers/arena'
import { PASSWORD } from '../helpers/auth'
import { mintRaw, PIN, someAddress, verify } from '../helpers/purchases'
import { BINARY, buildBinary, run, startServe, type ServerProcess } from '../helpers/process'
import { chooseSeed, pickWith, seededRandom, shuffleWith } from '../helpers/seed'

const KILLS = Number(process.env.ARENA_CRASH_KILLS ?? 5)
const SEED = chooseSeed('ARENA_TEST_SEED', 'crash')
/** How long the first kill may wait for one acknowledged request of every kind. */
const FIRST_ACKS_MS = 60_000
const INITIAL_FUNDS = 1000_000_000n // 1000 USDC in minor units
const started: ServerProcess[] = []
afterAll(() => started.forEach((s) => s.proc.kill('SIGKILL')))

/** What the server acknowledged with a 2xx before a kill. */
interface Acknowledged {
  /** Auth session ids (the `sid` of each access token a login returned). */
  logins: Set<string>
  /** Credit references, with their user. */
  credits: Map<string, string>
  withdrawals: Set<string>
  /** `match/participant` of claims answered `pending` or deciding. */
  claims: Set<string>
  /** Decided matches and the agreed winner. */
  decisions: Map<string, string>
}

interface Decision {
  decision: string
  matchId: string
  winnerParticipantId?: string
}

const sidOf = (accessToken: string) => (JSON.parse(Buffer.from(accessToken.split('.')[1]!, 'base64url').toString()) as { sid: string }).sid

/** The kinds of acknowledged request nothing has been recorded of yet. */
const missingKinds = (ack: Acknowledged) =>
  Object.entries({ logins: ack.logins.size, credits: ack.credits.size, withdrawals: ack.withdrawals.size, claims: ack.claims.size, decisions: ack.decisions.size })
    .filter(([, n]) => n === 0)
    .map(([kind]) => kind)

// SQLite's data dir under SIGKILL; the PostgreSQL run has its own fault tests (test/scale/).
testOnEngine('sqlite', `${KILLS} SIGKILLs under logins, credits, claims and withdrawals: nothing acknowledged is lost, nothing is left half-done`, async () => {
  await buildBinary()
  const dataDir = tempDir('arena-crash-')
  const env = { ARENA_DATA_DIR: dataDir, ARENA_ADMIN_TOKEN: ADMIN_TOKEN }
  let server: ServerProcess
  const serve = async () => {
    server = await startServe([BINARY, 'serve'], env)
    started.push(server)
  }
  await serve()
  const ctx = remote(() => server.url)
  const auth = (p: Player) => ({ authorization: `Bearer ${p.tokens.accessToken}` })

  const { game, gameKey } = await createGame(ctx)
  const people = await players(ctx, 8)
  const buyers = people.slice(0, 3)
  for (const p of buyers) {
    const set = await ctx.handle(new Request('http://localhost/api/v1/security/pin', { method: 'PUT', headers: { ...auth(p), 'content-type': 'application/json' }, body: JSON.stringify({ pin: PIN, password: PASSWORD }) }))
    expect(set.status).toBe(200)
  }
  for (const p of people) {
    expect((await ctx.handle(postJson(`/api/v1/admin/wallets/${p.userId}/credit`, { amount: '1000', reference: `seed-${p.userId}` }, admin))).status).toBe(200)
    // The custody key now, so the rounds spend their time on withdrawals.
    expect((await ctx.handle(req('/api/v1/wallet', { headers: auth(p) }))).status).toBe(200)
  }
  const tournaments: string[] = []

  const ack: Acknowledged = { logins: new Set(), credits: new Map(), withdrawals: new Set(), claims: new Set(), decisions: new Map() }
  const totals = { requests: 0, acknowledged: 0, cut: 0 }
  let seq = 0

  for (let kill = 0; kill < KILLS; kill++) {
    // This round's draws: stream 0 for the round itself, one stream per worker.
    const roundRandom = seededRandom(SEED, kill, 0)
    let streams = 0
    const stream = () => seededRandom(SEED, kill, ++streams)
    // Keep two tournaments with matches to claim.
    const views = await Promise.all(tournaments.map(async (id) => ((await (await ctx.handle(req(`/api/v1/admin/tournaments/${id}`, { headers: admin }))).json()) as { tournament: TournamentView }).tournament))
    const running = views.filter((t) => t.status === 'running')
    while (running.length < 2) {
      const t = await startedTournament(ctx, game.id, shuffleWith(roundRandom, people).slice(0, 4))
      tournaments.push(t.id)
      running.push(t)
    }

    let alive = true
    /** One request: counted; null when the kill cut it (and then every loop stops). */
    const send = async (request: () => Promise<Response>): Promise<Response | null> => {
      totals.requests++
      try {
        const res = await request()
        if (res.ok) totals.acknowledged++
        return res
      } catch {
        totals.cut++
        alive = false
        return null
      }
    }
    const loop = async (step: () => Promise<void>) => {
      while (alive) await step()
    }

    const loginPicks = stream()
    const creditPicks = stream()
    const workers = [
      // Logins of any player: each answered one is a session that must survive.
      loop(async () => {
        const p = pickWith(loginPicks, people)
        const res = await send(() => ctx.handle(postJson('/api/v1/user/login', { identifier: p.username, password: PASSWORD })))
        if (res?.status === 200) ack.logins.add(sidOf(((await res.json()) as { accessToken: string }).accessToken))
      }),
      // Operator credits with fresh references.
      loop(async () => {
        const p = pickWith(creditPicks, people)
        const reference = `crash-${seq++}`
        const res = await send(() => ctx.handle(postJson(`/api/v1/admin/wallets/${p.userId}/credit`, { amount: '2.5', reference }, admin)))
        if (res?.status === 200) ack.credits.set(reference, p.userId)
      }),
      // PIN withdrawals, one flow per buyer.
      ...buyers.map((p) =>
        loop(async () => {
          const minted = await send(() => mintRaw(ctx, p))
          if (minted?.status !== 201) return
          const session = (await minted.json()) as { sessionId: string; sessionToken: string }
          const res = await send(() => verify(ctx, p, session, { pin: PIN, amount: '1.5', destinationAddress: someAddress(), idempotencyKey: `crash-${seq++}` }))
          if (res?.status === 200) {
            const body = (await res.json()) as { withdrawal?: { id: string } }
            if (body.withdrawal) ack.withdrawals.add(body.withdrawal.id)
          }
        }),
      ),
      // Claims: both players of a running match agree that slot 1 won.
      ...running.map((t) => {
        const matchPicks = stream()
        return loop(async () => {
          const view = await send(() => ctx.handle(req(`/api/v1/admin/tournaments/${t.id}`, { headers: admin })))
          if (view?.status !== 200) return
          const { tournament } = (await view.json()) as { tournament: TournamentView }
          const open = tournament.matches.filter((m) => m.status === 'running')
          if (open.length === 0) return void (await Bun.sleep(5))
          const match = pickWith(matchPicks, open)
          for (const participantId of [match.slot1ParticipantId!, match.slot2ParticipantId!]) {
            const player = playerOf(tournament, people, participantId)
            const issued = await send(() => openSession(ctx, game.id, gameKey, player, match.id))
            if (issued?.status !== 201) return
            const { token } = (await issued.json()) as { token: string }
            const res = await send(() => submit(ctx, game.id, gameKey, player, token, { outcome: 'WIN', winnerParticipantId: match.slot1ParticipantId }))
            // A claim whose answer a kill cut is there (409 already_claimed): the opponent's turn.
            if (res?.status === 409) continue
            if (res?.status !== 200) return
            const decision = (await res.json()) as Decision
            ack.claims.add(`${match.id}/${participantId}`)
            if (decision.decision.startsWith('game_advance')) ack.decisions.set(match.id, decision.winnerParticipantId!)
          }
        })
      }),
    ]

    // Anywhere from the first requests to well into the load.
    await Bun.sleep(150 + Math.floor(roundRandom() * 900))
    // The first kill also waits for one acknowledged request of every kind, so
    // the checks below have something of each to check from the first restart on.
    if (kill === 0) {
      const deadline = performance.now() + FIRST_ACKS_MS
      while (missingKinds(ack).length > 0 && performance.now() < deadline) await Bun.sleep(10)
    }
    server!.proc.kill('SIGKILL')
    await server!.proc.exited
    alive = false
    await Promise.all(workers)
    expect({ kill, unacknowledgedKinds: missingKinds(ack) }).toEqual({ kill, unacknowledgedKinds: [] })
    expect(server!.lines.filter((l) => l.level === 'error')).toEqual([])

    await serve()
    const db = new Database(join(dataDir, 'arena.sqlite'), { readonly: true })
    try {
      expect(db.query('PRAGMA integrity_check').get()).toEqual({ integrity_check: 'ok' })
      const count = (sql: string) => (db.query(sql).get() as { n: number }).n
      // The resumer signs what the kill left pending; the job worker finishes tournaments.
      for (let i = 0; i < 150; i++) {
        if (count("SELECT count(*) AS n FROM withdrawals WHERE status = 'pending_signature'") + count("SELECT count(*) AS n FROM tournaments WHERE status = 'finalizing'") === 0) break
        await Bun.sleep(100)
      }
      expect(count("SELECT count(*) AS n FROM withdrawals WHERE status NOT IN ('signed', 'failed')")).toBe(0)
      expect(count("SELECT count(*) AS n FROM tournaments WHERE status = 'finalizing'")).toBe(0)

      const check = await run([BINARY, 'ledger', 'check', '--json'], env)
      expect({ code: check.code, report: JSON.parse(check.stdout) }).toMatchObject({ code: 0, report: { ok: true } })

      // Acknowledged logins, credits and withdrawals are all there.
      const sessions = new Set((db.query('SELECT id FROM auth_sessions').all() as { id: string }[]).map((r) => r.id))
      expect([...ack.logins].filter((sid) => !sessions.has(sid))).toEqual([])
      const credits = new Map((db.query("SELECT reference, memo FROM ledger_transactions WHERE kind = 'credit'").all() as { reference: string; memo: string }[]).map((r) => [r.reference.replace(/^credit:/, ''), JSON.parse(r.memo) as { userId: string; amount: string }]))
      expect([...ack.credits].filter(([reference, userId]) => credits.get(reference)?.userId !== userId)).toEqual([])
      const withdrawals = db.query('SELECT id, user_id, amount, status FROM withdrawals').all() as { id: string; user_id: string; amount: string; status: string }[]
      const withdrawalIds = new Set(withdrawals.map((w) => w.id))
      expect([...ack.withdrawals].filter((id) => !withdrawalIds.has(id))).toEqual([])

      // Each balance is its recorded credits minus its recorded withdrawals.
      for (const p of people) {
        const credited = [...credits.values()].filter((c) => c.userId === p.userId).reduce((sum, c) => sum + BigInt(c.amount), 0n)
        const spent = withdrawals.filter((w) => w.user_id === p.userId && w.status !== 'failed').reduce((sum, w) => sum + BigInt(w.amount), 0n)
        const { balance } = db.query('SELECT balance FROM ledger_accounts WHERE id = ?').get(`user:${p.userId}:USDC`) as { balance: string }
        expect({ user: p.username, balance: BigInt(balance) }).toEqual({ user: p.username, balance: credited - spent })
        expect(credited).toBeGreaterThanOrEqual(INITIAL_FUNDS)
      }

      // Acknowledged claims and decisions are there; every bracket move is whole.
      const claims = new Set((db.query('SELECT match_id, participant_id FROM match_claims').all() as { match_id: string; participant_id: string }[]).map((r) => `${r.match_id}/${r.participant_id}`))
      expect([...ack.claims].filter((c) => !claims.has(c))).toEqual([])
      const matches = db.query('SELECT id, status, winner_participant_id AS winner, next_match_id AS next, slot1_participant_id AS s1, slot2_participant_id AS s2 FROM matches').all() as { id: string; status: string; winner: string | null; next: string | null; s1: string | null; s2: string | null }[]
      const byId = new Map(matches.map((m) => [m.id, m]))
      for (const [matchId, winner] of ack.decisions) expect({ matchId, status: byId.get(matchId)?.status, winner: byId.get(matchId)?.winner }).toEqual({ matchId, status: 'decided', winner })
      for (const m of matches.filter((m) => m.status === 'decided' && m.next)) {
        const next = byId.get(m.next!)!
        expect({ match: m.id, placed: next.s1 === m.winner || next.s2 === m.winner }).toEqual({ match: m.id, placed: true })
      }
    } finally {
      db.close()
    }
  }

  console.log(
    `crash (seed ${SEED}): ${KILLS} kills survived; ${totals.requests} requests (${totals.acknowledged} acknowledged, ${totals.cut} cut by a kill); ` +
      `checked after every restart: ${ack.logins.size} logins, ${ack.credits.size} credits, ${ack.withdrawals.size} withdrawals, ${ack.claims.size} claims, ${ack.decisions.size} decisions, ${tournaments.length} tournaments`,
  )
  expect((await server!.signal('SIGTERM')).code).toBe(0)
}, 60_000 + KILLS * 6_000)
