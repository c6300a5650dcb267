// Invariant: a tournament's money (contract §10) moves through its escrow and
// nowhere else: a registration takes the entry fee from the player in the
// join's unit of work (short of it, 422 insufficient_funds and nothing
// written); leaving before the start, being dropped at it and a cancellation
// give it back; operators fund the pool once per reference; a start waits
// for the escrow to cover the prizes (409 prize_pool_underfunded, or the
// start job cancels); finalization pays each prize by rank once and gives the
// rest to the house, so the escrow of every finished tournament is zero, and
// `arena ledger check` says so (and says when it is not). Through HTTP, on
// SQLite and, with ARENA_TEST_ENGINE=postgres, on PostgreSQL.
import { afterAll, describe, expect, test } from 'bun:test'
import { and, asc, eq, inArray } from 'drizzle-orm'
import { checkLedger, escrowAccountId, systemAccountId } from '../../src/modules/wallet/ledger'
import { newId } from '../../src/shared/ids'
import { postJson, req, type Handler } from '../helpers/app'
import { admin, createArenaApp, createGame, playOut, players, tournament, type Player, type TournamentView } from '../helpers/arena'
import { deleteUser } from '../helpers/accounts'

const ctx = await createArenaApp()
afterAll(() => ctx.close())
const { db, tables } = ctx.peek
const { ledgerTransactions, ledgerPostings, outboxEvents } = tables
const { game, gameKey } = await createGame(ctx, 'Prize Duel')

const MIN = 6_000
const at = (msFromNow: number) => new Date(ctx.clock.now().getTime() + msFromNow).toISOString()
const bearer = (p: Player) => ({ authorization: `Bearer ${p.tokens.accessToken}` })

interface Money {
  entryFee: string | null
  prizes: string[]
  options: Record<string, unknown>
  standings: { participantId: string; rank: number }[]
  registration: { closesAt: string; startsAt: string } | null
}
type T = TournamentView & Money

const wallet = ctx.services.storage.read.wallet
const balanceOf = async (p: Player) => wallet.balance(`user:${p.userId}:USDC`)
const escrow = (id: string) => wallet.postingsTotal(escrowAccountId(id, 'USDC'))
const U = 1_000_000n // minor units per USDC

async function credit(p: Player, amount: string): Promise<void> {
  const res = await ctx.handle(postJson(`/api/v1/admin/wallets/${p.userId}/credit`, { amount, reference: `credit-${newId('participant')}` }, admin))
  expect(res.status).toBe(200)
}

async function fundedPlayers(count: number, amount: string): Promise<Player[]> {
  const people = await players(ctx, count)
  for (const p of people) await credit(p, amount)
  return people
}

const createRaw = (body: Record<string, unknown>) => ctx.handle(postJson('/api/v1/admin/tournaments', { gameId: game.id, name: 'Prize Cup', format: 'single_elimination', ...body }, admin))

async function create(body: Record<string, unknown>): Promise<T> {
  const res = await createRaw(body)
  expect(res.status).toBe(201)
  return ((await res.json()) as { tournament: T }).tournament
}

const registration = (maxPlayers: number, extra: Record<string, unknown> = {}) => ({ registration: { closesAt: at(50 * MIN), maxPlayers, ...extra }, startsAt: at(60 * MIN) })
const join = (id: string, p: Player, on: Handler = ctx) => on.handle(postJson(`/api/v1/tournaments/${id}/registration`, {}, bearer(p)))
const leave = (id: string, p: Player) => ctx.handle(req(`/api/v1/tournaments/${id}/registration`, { method: 'DELETE', headers: bearer(p) }))
const fund = (id: string, amount: string, reference: string) => ctx.handle(postJson(`/api/v1/admin/tournaments/${id}/fund`, { amount, reference }, admin))
const start = (id: string) => ctx.handle(postJson(`/api/v1/admin/tournaments/${id}/start`, {}, admin))
const cancel = (id: string) => ctx.handle(postJson(`/api/v1/admin/tournaments/${id}/cancel`, { reason: 'venue closed' }, admin))
const show = (id: string) => tournament(ctx, id) as Promise<T>

async function errorOf(res: Response): Promise<{ code: string; status: number; details?: { path: string }[] }> {
  return ((await res.json()) as { error: { code: string; status: number; details?: { path: string }[] } }).error
}

async function ledgerOk(): Promise<void> {
  const report = await checkLedger(wallet)
  expect(report.problems).toEqual([])
  expect(report.ok).toBe(true)
}

async function history(p: Player) {
  const res = await ctx.handle(req('/api/v1/wallet/transactions?limit=100', { headers: bearer(p) }))
  expect(res.status).toBe(200)
  return ((await res.json()) as { transactions: { kind: string; amount: string; balanceAfter: string; reference: string | null }[] }).transactions
}

/** Every ledger movement made for the tournament, by kind, oldest first. */
async function movementsOf(tournamentId: string) {
  const rows = await db.select().from(ledgerTransactions).orderBy(asc(ledgerTransactions.createdAt), asc(ledgerTransactions.id))
  return rows.filter((t) => (t.memo as { tournamentId?: string } | null)?.tournamentId === tournamentId)
}

/** Plays every running match, slot 1 winning, until nothing runs; then runs the finalize job. */
async function playToTheEnd(t: T, people: Player[]): Promise<T> {
  for (;;) {
    const now = await show(t.id)
    const running = now.matches.filter((m) => m.status === 'running')
    if (running.length === 0) break
    for (const m of running) await playOut(ctx, game.id, gameKey, now, people, m, m.slot1ParticipantId!)
  }
  await ctx.runJobs()
  return show(t.id)
}

/** Closes a registration tournament's registration (the clock past closesAt) and starts it as an operator. */
async function closeAndStart(t: T): Promise<Response> {
  ctx.clock.set(t.registration!.closesAt)
  return start(t.id)
}

describe('creating a tournament with an entry fee and prizes', () => {
  test('shown on the tournament and in the list, canonical; the options keep only the format\'s own', async () => {
    const t = await create({ ...registration(8), entryFee: '5.50', prizes: ['20', '10.000000', '5'], options: { matchDeadlineS: 600 } })
    expect([t.entryFee, t.prizes, t.options]).toEqual(['5.5', ['20', '10', '5'], { matchDeadlineS: 600 }])
    const list = await ctx.handle(req('/api/v1/admin/tournaments/' + t.id, { headers: admin }))
    expect(((await list.json()) as { tournament: T }).tournament.entryFee).toBe('5.5')
    const page = (await (await ctx.handle(req('/api/v1/tournaments?status=registration&limit=100', { headers: bearer((await players(ctx, 1))[0]!) }))).json()) as {
      tournaments: { id: string; entryFee: string | null; prizes: string[] }[]
    }
    expect(page.tournaments.find((x) => x.id === t.id)).toMatchObject({ entryFee: '5.5', prizes: ['20', '10', '5'] })
    // Without either: null and [].
    const free = await create(registration(4))
    expect([free.entryFee, free.prizes, free.options]).toEqual([null, [], {}])
  })

  test('bad amounts, a fee without registration, more prizes than players: 422 naming each field, nothing created', async () => {
    const two = await players(ctx, 2)
    const listed = { participants: two.map((p) => p.userId) }
    const cases: [Record<string, unknown>, string[]][] = [
      [{ ...registration(4), entryFee: '0' }, ['body/entryFee']],
      [{ ...registration(4), entryFee: '-1' }, ['body/entryFee']],
      [{ ...registration(4), entryFee: '1.0000001' }, ['body/entryFee']],
      [{ ...registration(4), prizes: ['10', 'ten'] }, ['body/prizes/1']],
      [{ ...registration(4), prizes: ['10', '0'] }, ['body/prizes/1']],
      [{ ...registration(2), prizes: ['3', '2', '1'] }, ['body/prizes']],
      [{ ...listed, prizes: ['3', '2', '1'] }, ['body/prizes']],
      [{ ...listed, entryFee: '5' }, ['body/entryFee']],
      [{ ...registration(4), prizes: ['999999999999999999', '999999999999999999'] }, ['body/prizes']],
    ]
    for (const [body, paths] of cases) {
      const res = await createRaw(body)
      const error = await errorOf(res)
      expect({ body, status: res.status, paths: error.details?.map((d) => d.path) }).toEqual({ body, status: 422, paths })
    }
  })
})

describe('entry fees', () => {
  test('joining debits the fee into escrow; leaving refunds it; the history shows both with the tournament', async () => {
    const [p] = await fundedPlayers(1, '10')
    const t = await create({ ...registration(4), entryFee: '4' })
    expect((await join(t.id, p!)).status).toBe(201)
    expect([await balanceOf(p!), await escrow(t.id)]).toEqual([6n * U, 4n * U])
    expect((await leave(t.id, p!)).status).toBe(200)
    expect([await balanceOf(p!), await escrow(t.id)]).toEqual([10n * U, 0n])
    // Joining again pays again, for the new seat.
    expect((await join(t.id, p!)).status).toBe(201)
    expect(await balanceOf(p!)).toBe(6n * U)
    expect((await history(p!)).map((h) => [h.kind, h.amount, h.balanceAfter, h.reference])).toEqual([
      ['credit', '10', '10', expect.any(String)],
      ['entry_fee', '-4', '6', t.id],
      ['entry_fee_refund', '4', '10', t.id],
      ['entry_fee', '-4', '6', t.id],
    ])
    await ledgerOk()
  })

  test('short of the fee (or with no wallet money at all): 422 insufficient_funds, no registration, nothing written', async () => {
    const [poor] = await fundedPlayers(1, '3.999999')
    const [none] = await players(ctx, 1)
    const t = await create({ ...registration(4), entryFee: '4' })
    for (const p of [poor!, none!]) {
      const res = await join(t.id, p)
      expect(res.status).toBe(422)
      expect((await errorOf(res)).code).toBe('insufficient_funds')
    }
    expect((await show(t.id)).participants).toEqual([])
    expect(await movementsOf(t.id)).toEqual([])
    expect([await balanceOf(poor!), await balanceOf(none!), await escrow(t.id)]).toEqual([3_999_999n, 0n, 0n])
    await ledgerOk()
  })

  test('an operator cancel refunds every fee and returns the funding, in its unit of work', async () => {
    const people = await fundedPlayers(3, '10')
    const t = await create({ ...registration(4), entryFee: '2.5', prizes: ['20'] })
    for (const p of people) expect((await join(t.id, p)).status).toBe(201)
    expect((await fund(t.id, '15', `cancel-${t.id}`)).status).toBe(200)
    expect(await escrow(t.id)).toBe(22_500_000n)
    const funding = await wallet.postingsTotal(systemAccountId('funding', 'USDC'))
    const res = await cancel(t.id)
    expect(res.status).toBe(200)
    for (const p of people) expect(await balanceOf(p)).toBe(10n * U)
    expect(await escrow(t.id)).toBe(0n)
    expect(await wallet.postingsTotal(systemAccountId('funding', 'USDC'))).toBe(funding + 15n * U)
    expect((await movementsOf(t.id)).map((m) => m.kind)).toEqual(['entry_fee', 'entry_fee', 'entry_fee', 'prize_funding', 'entry_fee_refund', 'entry_fee_refund', 'entry_fee_refund', 'escrow_release'])
    // Cancelled twice: 409, nothing refunded again.
    expect((await cancel(t.id)).status).toBe(409)
    expect((await movementsOf(t.id)).length).toBe(8)
    await ledgerOk()
  })

  test('the start job drops who did not check in (refunded) and starts the rest; a refund owed to a deleted account goes to the house', async () => {
    const [a, b, c, gone] = await fundedPlayers(4, '5')
    const t = await create({ ...registration(4, { checkIn: { opensAt: at(40 * MIN), closesAt: at(55 * MIN) } }), entryFee: '5' })
    for (const p of [a!, b!, c!, gone!]) expect((await join(t.id, p)).status).toBe(201)
    // The account deletes itself while its fee is in escrow (its wallet is empty: allowed).
    expect((await deleteUser(ctx, gone!.userId)).status).toBe(200)
    ctx.clock.set(at(45 * MIN))
    for (const p of [a!, b!]) expect((await ctx.handle(postJson(`/api/v1/tournaments/${t.id}/check-in`, {}, bearer(p)))).status).toBe(200)
    ctx.clock.set(t.registration!.startsAt)
    await ctx.runJobs()
    const after = await show(t.id)
    expect(after.status).toBe('running')
    expect(after.participants.map((p) => p.userId).sort()).toEqual([a!.userId, b!.userId].sort())
    expect([await balanceOf(a!), await balanceOf(b!), await balanceOf(c!), await balanceOf(gone!)]).toEqual([0n, 0n, 5n * U, 0n])
    expect(await escrow(t.id)).toBe(10n * U)
    const released = (await movementsOf(t.id)).filter((m) => m.kind === 'escrow_release')
    expect(released.map((m) => m.memo)).toEqual([expect.objectContaining({ userId: gone!.userId, to: 'house', forfeited: 'account_deleted' })])
    await ledgerOk()
  })
})

describe('the prize pool', () => {
  test('funding is idempotent by reference; another amount or tournament under it is 409; bad input 422; unknown 404', async () => {
    const t = await create({ ...registration(4), prizes: ['10'] })
    const other = await create({ ...registration(4), prizes: ['10'] })
    const ref = `pool-${t.id}`
    for (let i = 0; i < 3; i++) {
      const res = await fund(t.id, '7.5', ref)
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({ tournamentId: t.id, escrow: '7.5', prizesTotal: '10' })
    }
    expect((await movementsOf(t.id)).map((m) => [m.kind, m.reference])).toEqual([['prize_funding', `prize_funding:${ref}`]])
    expect((await errorOf(await fund(t.id, '7', ref))).code).toBe('idempotency_key_reused')
    expect((await errorOf(await fund(other.id, '7.5', ref))).code).toBe('idempotency_key_reused')
    for (const [amount, reference, path] of [['0', 'x', 'body/amount'], ['1e3', 'x', 'body/amount'], ['5', '', 'body/reference']] as const) {
      const res = await fund(t.id, amount, reference)
      expect([res.status, (await errorOf(res)).details?.map((d) => d.path)]).toEqual([422, [path]])
    }
    expect((await fund('tournament_nope', '5', 'nope')).status).toBe(404)
    // A pool past the largest amount arena can express: 422, nothing moved.
    const huge = await fund(t.id, '999999999999999999.999999', `huge-${t.id}`)
    expect([huge.status, (await errorOf(huge)).details?.map((d) => d.path)]).toEqual([422, ['body/amount']])
    expect(await escrow(t.id)).toBe(7_500_000n)
    // Cancelled: no more funding (the earlier reference still answers).
    expect((await cancel(t.id)).status).toBe(200)
    expect((await errorOf(await fund(t.id, '1', `late-${t.id}`))).code).toBe('conflict')
    expect((await fund(t.id, '7.5', ref)).status).toBe(200)
    await ledgerOk()
  })

  test('a start while the escrow is short of the prizes: 409 prize_pool_underfunded, nothing changes; funded, it starts', async () => {
    const people = await players(ctx, 4)
    const t = await create({ participants: people.map((p) => p.userId), prizes: ['50', '30'] })
    let res = await start(t.id)
    expect([res.status, (await errorOf(res)).code]).toEqual([409, 'prize_pool_underfunded'])
    expect((await fund(t.id, '79.999999', `short-${t.id}`)).status).toBe(200)
    res = await start(t.id)
    expect([res.status, (await errorOf(res)).code]).toEqual([409, 'prize_pool_underfunded'])
    expect((await show(t.id)).status).toBe('draft')
    expect((await fund(t.id, '0.000001', `rest-${t.id}`)).status).toBe(200)
    expect((await start(t.id)).status).toBe(200)
  })

  test('a registration short at startsAt: the operator start is refused (drops undone); the start job cancels it and refunds every fee', async () => {
    const people = await fundedPlayers(3, '1')
    const t = await create({ ...registration(4), entryFee: '1', prizes: ['5'] })
    for (const p of people) expect((await join(t.id, p)).status).toBe(201)
    const res = await closeAndStart(t)
    expect([res.status, (await errorOf(res)).code]).toEqual([409, 'prize_pool_underfunded'])
    expect((await show(t.id)).status).toBe('registration')
    ctx.clock.set(t.registration!.startsAt)
    await ctx.runJobs()
    expect((await show(t.id)).status).toBe('cancelled')
    for (const p of people) expect(await balanceOf(p)).toBe(1n * U)
    const events = await db.select().from(outboxEvents).where(and(inArray(outboxEvents.userId, people.map((p) => p.userId)), eq(outboxEvents.type, 'tournament.cancelled')))
    expect(events.map((e) => e.data)).toEqual(people.map(() => ({ tournamentId: t.id, reason: 'prize_pool_underfunded' })))
    expect(await escrow(t.id)).toBe(0n)
    await ledgerOk()
  })
})

describe('payouts', () => {
  test('a single elimination of 4 with fees: prizes by rank, the rest to the house, the escrow zero, each paid once', async () => {
    const people = await fundedPlayers(4, '100')
    const t = await create({ ...registration(4), entryFee: '10', prizes: ['25', '10'] })
    for (const p of people) expect((await join(t.id, p)).status).toBe(201)
    expect(await escrow(t.id)).toBe(40n * U)
    expect((await closeAndStart(t)).status).toBe(200)
    const house = await wallet.postingsTotal(systemAccountId('house', 'USDC'))
    const done = await playToTheEnd(t, people)
    expect(done.status).toBe('completed')
    const userOfRank = (rank: number) => done.participants.find((p) => p.id === done.standings.find((s) => s.rank === rank)!.participantId)!.userId
    const expected = new Map([
      [userOfRank(1), 115n * U],
      [userOfRank(2), 100n * U],
      [userOfRank(3), 90n * U],
      [userOfRank(4), 90n * U],
    ])
    for (const p of people) expect(await balanceOf(p)).toBe(expected.get(p.userId)!)
    expect(await escrow(t.id)).toBe(0n)
    expect(await wallet.postingsTotal(systemAccountId('house', 'USDC'))).toBe(house + 5n * U)
    const prizes = (await movementsOf(t.id)).filter((m) => m.kind === 'prize')
    expect(prizes.map((m) => [m.reference, (m.memo as { userId: string }).userId, (m.memo as { amount: string }).amount])).toEqual([
      [`prize:${t.id}:1`, userOfRank(1), String(25n * U)],
      [`prize:${t.id}:2`, userOfRank(2), String(10n * U)],
    ])
    // The champion's history: the fee, then the prize, both naming the tournament.
    const champion = people.find((p) => p.userId === userOfRank(1))!
    expect((await history(champion)).slice(1).map((h) => [h.kind, h.amount, h.balanceAfter, h.reference])).toEqual([
      ['entry_fee', '-10', '90', t.id],
      ['prize', '25', '115', t.id],
    ])
    // The finalize job again (another attempt, another instance): nothing more is paid.
    await ctx.runJobs()
    expect((await movementsOf(t.id)).filter((m) => m.kind === 'prize' || m.kind === 'escrow_release').length).toBe(3)
    await ledgerOk()
  })

  test('a round robin of 3 funded by the operator: a disqualified player\'s prize goes to the house, ranks are not moved up', async () => {
    const people = await players(ctx, 3)
    const t = await create({ format: 'round_robin', participants: people.map((p) => p.userId), prizes: ['6', '3', '1'] })
    expect((await fund(t.id, '12', `rr-${t.id}`)).status).toBe(200)
    const started = (await (await start(t.id)).json()) as { tournament: T }
    const cheat = started.tournament.participants[2]!
    expect((await ctx.handle(postJson(`/api/v1/admin/tournaments/${t.id}/participants/${cheat.id}/disqualify`, { reason: 'cheating' }, admin))).status).toBe(200)
    const house = await wallet.postingsTotal(systemAccountId('house', 'USDC'))
    const done = await playToTheEnd(started.tournament, people)
    expect(done.status).toBe('completed')
    const rankOf = new Map(done.standings.map((s) => [done.participants.find((p) => p.id === s.participantId)!.userId, s.rank]))
    expect(rankOf.get(cheat.userId)).toBe(3)
    for (const p of people) expect(await balanceOf(p)).toBe({ 1: 6n * U, 2: 3n * U, 3: 0n }[rankOf.get(p.userId)!]!)
    // 12 funded − 9 paid: the forfeited 1 and the 2 beyond the prizes.
    expect(await wallet.postingsTotal(systemAccountId('house', 'USDC'))).toBe(house + 3n * U)
    const release = (await movementsOf(t.id)).find((m) => m.kind === 'escrow_release')!
    expect(release.memo).toEqual({ tournamentId: t.id, to: 'house', amount: String(3n * U), forfeited: [{ rank: 3, why: 'disqualified' }] })
    expect(await escrow(t.id)).toBe(0n)
    await ledgerOk()
  })
})

describe('arena ledger check', () => {
  test('reports a finished tournament whose escrow is not zero', async () => {
    const people = await players(ctx, 2)
    const t = await create({ participants: people.map((p) => p.userId), prizes: ['1'] })
    expect((await fund(t.id, '1', `tamper-${t.id}`)).status).toBe(200)
    expect((await cancel(t.id)).status).toBe(200)
    await ledgerOk()
    // Tampered: a balanced movement puts money back into the cancelled tournament's escrow.
    const id = newId('ledgerTransaction')
    await db.insert(ledgerTransactions).values({ id, kind: 'prize_funding', reference: null, memo: { tournamentId: t.id }, createdAt: ctx.clock.now() })
    await db.insert(ledgerPostings).values([
      { transactionId: id, accountId: systemAccountId('funding', 'USDC'), asset: 'USDC', amount: '-7', balanceAfter: null },
      { transactionId: id, accountId: escrowAccountId(t.id, 'USDC'), asset: 'USDC', amount: '7', balanceAfter: null },
    ])
    const report = await checkLedger(wallet)
    expect(report.ok).toBe(false)
    expect(report.problems).toEqual([`escrow ${escrowAccountId(t.id, 'USDC')} of finished tournament ${t.id} still holds 7`])
    // The tamper undone: the check passes again.
    await db.delete(ledgerPostings).where(eq(ledgerPostings.transactionId, id))
    await db.delete(ledgerTransactions).where(eq(ledgerTransactions.id, id))
    await ledgerOk()
  })
})
