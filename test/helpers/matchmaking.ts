// Matchmaking through HTTP (contract §16): queues, tickets, the matcher, the
// ready check, challenges, and the money they move. Shared by the tests in
// test/matchmaking.
import { Database } from 'bun:sqlite'
import { expect } from 'bun:test'
import type postgres from 'postgres'
import { rakeShare } from '../../src/modules/matchmaking/stakes'
import { checkLedger } from '../../src/modules/wallet/ledger'
import type { Challenge, MatchView, Queue, Ticket } from '../../src/modules/matchmaking/model'
import type { DecisionResponse } from '../../src/modules/matches/model'
import { postJson, req, type Handler, type TestApp } from './app'
import { admin, claim, type Player } from './arena'
import { creditSurely } from './accounts'
import { eventsOf } from './account'

export type { Challenge, MatchView, Queue, Ticket }

const bearer = (p: Player) => ({ authorization: `Bearer ${p.tokens.accessToken}` })

/** A queue of the game; the settings the test does not give are a wide window, a 30 s ready check, unrated, unstaked. */
export async function createQueue(ctx: Handler, gameId: string, settings: Record<string, unknown> = {}): Promise<Queue> {
  const body = { name: 'ranked', rated: false, window: { initial: 100, widenPerSecond: 10, max: 400 }, readyCheckS: 30, ...settings }
  const res = await ctx.handle(postJson(`/api/v1/admin/games/${gameId}/queues`, body, admin))
  expect(res.status).toBe(201)
  return ((await res.json()) as { queue: Queue }).queue
}

/** Joins the queue; the raw answer (201 with the ticket, or a refusal). */
export function joinQueue(ctx: Handler, gameId: string, queue: string, player: Player): Promise<Response> {
  return ctx.handle(postJson(`/api/v1/games/${gameId}/queues/${queue}/tickets`, {}, bearer(player)))
}

export async function joined(ctx: Handler, gameId: string, queue: string, player: Player): Promise<Ticket> {
  const res = await joinQueue(ctx, gameId, queue, player)
  expect(res.status).toBe(201)
  return ((await res.json()) as { ticket: Ticket }).ticket
}

export function leaveQueue(ctx: Handler, gameId: string, queue: string, player: Player): Promise<Response> {
  return ctx.handle(req(`/api/v1/games/${gameId}/queues/${queue}/tickets/current`, { method: 'DELETE', headers: bearer(player) }))
}

export function ready(ctx: Handler, matchId: string, player: Player): Promise<Response> {
  return ctx.handle(postJson(`/api/v1/matches/${matchId}/ready`, {}, bearer(player)))
}

export async function matchOf(ctx: Handler, matchId: string, player?: Player): Promise<MatchView> {
  const res = await ctx.handle(req(player ? `/api/v1/matches/${matchId}` : `/api/v1/admin/matches/${matchId}`, { headers: player ? bearer(player) : admin }))
  expect(res.status).toBe(200)
  return ((await res.json()) as { match: MatchView }).match
}

/** The wallet balance of a player, as they see it. */
export async function balanceOf(ctx: Handler, player: Player): Promise<string> {
  const res = await ctx.handle(req('/api/v1/wallet', { headers: bearer(player) }))
  expect(res.status).toBe(200)
  return ((await res.json()) as { balance: string }).balance
}

/** Credits each player `amount` (an operator credit). */
export async function fund(ctx: Handler, people: readonly Player[], amount: string): Promise<void> {
  for (const p of people) expect(await creditSurely(ctx, p.userId, `fund-${p.userId}-${crypto.randomUUID()}`, amount)).toBe(200)
}

/** The seat of `player` in the match (its participant id). */
export function seatOf(match: MatchView, player: Player): string {
  return match.players.find((p) => p.userId === player.userId)!.participantId
}

/** Both players claim the same result (a winner, or null: a draw); the second claim's decision. */
export async function agree(ctx: Handler, gameId: string, gameKey: string, match: MatchView, people: readonly Player[], winner: Player | null): Promise<DecisionResponse> {
  const [a, b] = match.players.map((seat) => people.find((p) => p.userId === seat.userId)!)
  const body = winner === null ? { outcome: 'DRAW' } : { outcome: 'WIN', winnerParticipantId: seatOf(match, winner) }
  expect((await claim(ctx, gameId, gameKey, a!, match.id, body)).decision).toBe('pending')
  return claim(ctx, gameId, gameKey, b!, match.id, body)
}

/** `arena ledger check` holds: every settled match's escrow is zero, every balance its postings' sum. */
export async function expectLedgerSound(ctx: TestApp): Promise<void> {
  const report = await checkLedger(ctx.storage.read.wallet)
  expect(report.problems).toEqual([])
  expect(report.ok).toBe(true)
}

export async function challenge(ctx: Handler, gameId: string, from: Player, body: Record<string, unknown>): Promise<Response> {
  return ctx.handle(postJson(`/api/v1/games/${gameId}/challenges`, body, bearer(from)))
}

export function answerChallenge(ctx: Handler, id: string, how: 'accept' | 'decline' | 'cancel', player: Player): Promise<Response> {
  return ctx.handle(postJson(`/api/v1/challenges/${id}/${how}`, {}, bearer(player)))
}

/**
 * Raw SQL on a test's database, whichever the engine (the tables and columns
 * have the same names on both): rows as plain objects. A compiled server's
 * database is read through sqliteFileSnapshot or postgresSnapshot.
 */
export type RawSql = (text: string) => Promise<Record<string, unknown>[]>

/**
 * Runs `read` on one consistent view of the database (a read transaction),
 * so that a check of several tables is not misled by a server committing
 * between its queries.
 */
export type Snapshot = <T>(read: (sql: RawSql) => Promise<T>) => Promise<T>

/** RawSql on a test app's own database. */
export function rawSqlOf(ctx: TestApp): RawSql {
  if (ctx.config.databaseUrl !== undefined) return async (text) => [...(await ctx.postgres.sql.unsafe(text))] as Record<string, unknown>[]
  return async (text) => ctx.db.sqlite.query(text).all() as Record<string, unknown>[]
}

/** A Snapshot of a test app's database (on SQLite the app's own connection: call it while nothing is being written). */
export function snapshotOf(ctx: TestApp): Snapshot {
  if (ctx.config.databaseUrl !== undefined) return (read) => postgresSnapshot(ctx.postgres.sql, read)
  return (read) => read(rawSqlOf(ctx))
}

/** A Snapshot through a postgres.js client: one REPEATABLE READ, read-only transaction. */
export async function postgresSnapshot<T>(client: postgres.Sql, read: (sql: RawSql) => Promise<T>): Promise<T> {
  let out!: T
  await client.begin('isolation level repeatable read read only', async (tx) => {
    out = await read(async (text) => [...(await tx.unsafe(text))] as Record<string, unknown>[])
  })
  return out
}

/** A Snapshot of a SQLite file another process writes: a read-only connection, one read transaction (WAL keeps its view). */
export function sqliteFileSnapshot(path: string): Snapshot {
  return async (read) => {
    const db = new Database(path, { readonly: true })
    try {
      db.run('BEGIN')
      return await read(async (text) => db.query(text).all() as Record<string, unknown>[])
    } finally {
      if (db.inTransaction) db.run('COMMIT')
      db.close()
    }
  }
}

const MONEY_KINDS = new Set(['stake', 'stake_payout', 'stake_refund', 'rake'])

/**
 * Every stake escrowed exactly once and paid or refunded exactly once, read
 * from the rows of one snapshot (answers the problems found, none when all hold):
 * - no ledger reference twice;
 * - each staked match of a queue or a challenge has one `stake` movement per
 *   player and nothing else of its players; while it waits, runs or is
 *   disputed its escrow holds both stakes and nothing has left it; decided
 *   with a winner, the pot less the rake paid once (and the rake once);
 *   decided as a draw or cancelled, each stake refunded once; its escrow then
 *   zero; a win whose winnings are held for review keeps the pot in escrow
 *   (paid once released, refunded once voided);
 * - each player's balance is what their other movements (credits, ...) and
 *   their matches say: minus the stake of every match they are in, plus the
 *   pot less the rake of each they won, plus their stake back from each
 *   draw or cancellation;
 * - tickets: at most one open per player and game; an open ticket points at
 *   no match or at a cancelled one (the ready check put it back in line);
 *   each queue match has its two players' tickets and no other (a cancelled
 *   one may have lost a ticket put back in line and paired again);
 * - challenges: one accepted has exactly its match (and that match names
 *   it); no other challenge has a match.
 */
export async function stakeProblems(snapshot: Snapshot): Promise<string[]> {
  return snapshot(problemsIn)
}

async function problemsIn(sql: RawSql): Promise<string[]> {
  const problems: string[] = []
  const dup = await sql('SELECT reference, count(*) AS n FROM ledger_transactions WHERE reference IS NOT NULL GROUP BY reference HAVING count(*) > 1')
  for (const row of dup) problems.push(`reference ${row.reference} ${row.n} times`)

  const matches = (
    await sql(
      `SELECT m.id, m.kind, m.status, m.stake, m.terms, m.winner_participant_id AS winner, m.outcome, p1.id AS p1, p1.user_id AS u1, p2.id AS p2, p2.user_id AS u2
       FROM matches m JOIN participants p1 ON p1.id = m.slot1_participant_id JOIN participants p2 ON p2.id = m.slot2_participant_id
       WHERE m.kind <> 'tournament'`,
    )
  ).map((r) => ({
    id: String(r.id),
    kind: String(r.kind),
    status: String(r.status),
    stake: r.stake == null ? null : BigInt(String(r.stake)),
    terms: (typeof r.terms === 'string' ? JSON.parse(r.terms) : (r.terms ?? {})) as { rake?: string; challengeId?: string },
    winner: r.winner == null ? null : String(r.winner),
    seats: [
      { participantId: String(r.p1), userId: String(r.u1) },
      { participantId: String(r.p2), userId: String(r.u2) },
    ],
  }))
  // Postings with their movement's kind and reference.
  const postings = (
    await sql('SELECT p.account_id AS account, p.amount, t.kind, t.reference FROM ledger_postings p JOIN ledger_transactions t ON t.id = p.transaction_id')
  ).map((r) => ({ account: String(r.account), amount: BigInt(String(r.amount)), kind: String(r.kind), reference: r.reference == null ? '' : String(r.reference) }))
  const refs = new Set(postings.map((p) => p.reference))
  const escrow = new Map<string, bigint>()
  for (const p of postings) if (p.account.startsWith('escrow:')) escrow.set(p.account, (escrow.get(p.account) ?? 0n) + p.amount)

  const expected = new Map<string, bigint>()
  const add = (userId: string, amount: bigint) => expected.set(userId, (expected.get(userId) ?? 0n) + amount)
  for (const p of postings) {
    if (MONEY_KINDS.has(p.kind) || !p.account.startsWith('user:')) continue
    add(p.account.split(':')[1]!, p.amount)
  }
  const stakeRefs = postings.filter((p) => MONEY_KINDS.has(p.kind)).map((p) => p.reference)
  const known = new Set<string>()
  // Winnings held for review (docs/integrity.md): held, the escrow keeps the pot; released, paid as a win; voided, both stakes back.
  const holds = new Map((await sql("SELECT match_id, status FROM payout_holds WHERE kind = 'stake'")).map((r) => [String(r.match_id), String(r.status)]))
  for (const m of matches) {
    if (m.stake === null) continue
    const hold = holds.get(m.id)
    const live = ['waiting', 'running', 'disputed'].includes(m.status) || hold === 'held'
    const won = m.status === 'decided' && m.winner !== null && (hold === undefined || hold === 'released')
    const refunded = m.status === 'cancelled' || (m.status === 'decided' && m.winner === null) || hold === 'voided'
    const pot = m.stake * 2n
    const rake = rakeShare(pot, m.terms.rake ?? '0')
    const want = [
      ...m.seats.map((s) => `stake:${m.id}:${s.userId}`),
      ...(won ? [`stake_payout:${m.id}`, ...(rake > 0n ? [`rake:${m.id}`] : [])] : []),
      ...(refunded ? m.seats.map((s) => `stake_refund:${m.id}:${s.userId}`) : []),
    ]
    for (const r of want) known.add(r)
    const missing = want.filter((r) => !refs.has(r))
    if (missing.length > 0) problems.push(`match ${m.id} (${m.status}): missing ${missing.join(', ')}`)
    const held = escrow.get(`escrow:${m.id}:USDC`) ?? 0n
    if (held !== (live ? pot : 0n)) problems.push(`match ${m.id} (${m.status}): escrow holds ${held}, not ${live ? pot : 0n}`)
    for (const s of m.seats) {
      add(s.userId, -m.stake)
      if (refunded) add(s.userId, m.stake)
      if (won && s.participantId === m.winner) add(s.userId, pot - rake)
    }
  }
  // A stake movement no match accounts for: a second escrow, a payout of a match still running.
  for (const r of stakeRefs) if (!known.has(r)) problems.push(`movement ${r} that no match's state accounts for`)

  for (const row of await sql("SELECT id, balance FROM ledger_accounts WHERE id LIKE 'user:%'")) {
    const userId = String(row.id).split(':')[1]!
    const want = expected.get(userId) ?? 0n
    if (BigInt(String(row.balance)) !== want) problems.push(`user ${userId}: balance ${row.balance}, the matches say ${want}`)
  }

  const tickets = (await sql('SELECT id, user_id, game_id, status, match_id FROM tickets')).map((r) => ({
    id: String(r.id),
    userId: String(r.user_id),
    gameId: String(r.game_id),
    status: String(r.status),
    matchId: r.match_id == null ? null : String(r.match_id),
  }))
  const byId = new Map(matches.map((m) => [m.id, m]))
  const open = new Map<string, number>()
  for (const t of tickets.filter((x) => x.status === 'open')) {
    const key = `${t.userId} ${t.gameId}`
    open.set(key, (open.get(key) ?? 0) + 1)
    if (t.matchId !== null && byId.get(t.matchId)?.status !== 'cancelled') problems.push(`ticket ${t.id} open and in match ${t.matchId} (${byId.get(t.matchId)?.status})`)
  }
  for (const [key, n] of open) if (n > 1) problems.push(`${n} open tickets of ${key}`)
  for (const m of matches.filter((x) => x.kind === 'queue')) {
    const users = tickets.filter((t) => t.matchId === m.id).map((t) => t.userId).sort()
    const seated = m.seats.map((s) => s.userId).sort()
    // A cancelled match's confirmed player went back in line: their ticket may since be in a newer match.
    const whole = m.status === 'cancelled' ? users.every((u) => seated.includes(u)) && new Set(users).size === users.length : JSON.stringify(users) === JSON.stringify(seated)
    if (!whole) problems.push(`queue match ${m.id} (${m.status}): tickets of ${users.join(', ')}`)
  }

  const challenges = await sql('SELECT id, status, match_id FROM challenges')
  const matchesOfChallenge = new Map<string, string[]>()
  for (const m of matches.filter((x) => x.kind === 'challenge')) matchesOfChallenge.set(m.terms.challengeId ?? '', [...(matchesOfChallenge.get(m.terms.challengeId ?? '') ?? []), m.id])
  for (const c of challenges) {
    const made = matchesOfChallenge.get(String(c.id)) ?? []
    const want = c.status === 'accepted' ? [String(c.match_id)] : []
    if (JSON.stringify(made) !== JSON.stringify(want)) problems.push(`challenge ${c.id} (${c.status}, match ${c.match_id}): matches ${made.join(', ')}`)
  }
  return problems
}

/** An operator's PATCH of `path` (a game's or a queue's settings): the raw answer. */
export function adminPatch(ctx: Handler, path: string, body: unknown): Promise<Response> {
  return ctx.handle(req(path, { method: 'PATCH', headers: { 'content-type': 'application/json', ...admin }, body: JSON.stringify(body) }))
}

/** An operator's DELETE of `path` (closing a queue): the raw answer. */
export function adminDelete(ctx: Handler, path: string): Promise<Response> {
  return ctx.handle(req(path, { method: 'DELETE', headers: admin }))
}

/** The error code of a refusal. */
export async function errorCode(res: Response): Promise<string> {
  return ((await res.json()) as { error: { code: string } }).error.code
}

/** Both players join the queue and one matcher tick pairs them: the match found (waiting for the ready check), or running once both confirmed it (`readied`). */
export async function pairedMatch(ctx: TestApp, gameId: string, queue: string, pair: readonly [Player, Player], readied = false): Promise<MatchView> {
  for (const p of pair) await joined(ctx, gameId, queue, p)
  expect(await ctx.services.matchmaking.matchTick()).toBe(1)
  const found = (await eventsOf(ctx, pair[0].userId, 'match.found')).at(-1) as { data: { matchId: string } }
  if (readied) for (const p of pair) expect((await ready(ctx, found.data.matchId, p)).status).toBe(200)
  return matchOf(ctx, found.data.matchId)
}
