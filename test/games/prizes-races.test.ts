// Invariant: a tournament's money stays right when two instances of one
// database (two SQLite connections to one file, or two PostgreSQL pools to
// one database) race: concurrent joins with a fee for the last seats seat
// exactly the places there are and charge exactly the players seated (the
// others keep their money), a player is never charged twice nor below zero,
// and the finalize job run by both instances at once pays every prize once.
// The ledger check passes after every race.
import { describe, expect, test } from 'bun:test'
import { asc } from 'drizzle-orm'
import { checkLedger, escrowAccountId } from '../../src/modules/wallet/ledger'
import { newId } from '../../src/shared/ids'
import { postJson, type TestApp } from '../helpers/app'
import { admin, createGame, playOut, players, tournament, twoInstances, type Player, type TournamentView } from '../helpers/arena'

const { one, two } = await twoInstances()
/** The instance the i-th request of a race goes to: they alternate. */
const instance = (i: number): TestApp => (i % 2 === 0 ? one : two)
const { game, gameKey } = await createGame(one, 'Prize Races')
const wallet = one.services.storage.read.wallet
const U = 1_000_000n
const MIN = 6_000
const at = (msFromNow: number) => new Date(one.clock.now().getTime() + msFromNow).toISOString()

async function fundedPlayers(count: number, amount: string): Promise<Player[]> {
  const people = await players(one, count)
  for (const p of people) {
    const res = await one.handle(postJson(`/api/v1/admin/wallets/${p.userId}/credit`, { amount, reference: `credit-${newId('participant')}` }, admin))
    expect(res.status).toBe(200)
  }
  return people
}

async function create(body: Record<string, unknown>): Promise<TournamentView> {
  const res = await one.handle(postJson('/api/v1/admin/tournaments', { gameId: game.id, name: 'Race Cup', format: 'single_elimination', ...body }, admin))
  expect(res.status).toBe(201)
  return ((await res.json()) as { tournament: TournamentView }).tournament
}

const registration = (maxPlayers: number) => ({ registration: { closesAt: at(50 * MIN), maxPlayers }, startsAt: at(60 * MIN) })
const join = (on: TestApp, id: string, p: Player) => on.handle(postJson(`/api/v1/tournaments/${id}/registration`, {}, { authorization: `Bearer ${p.tokens.accessToken}` }))

async function answers(requests: (() => Promise<Response>)[]) {
  return Promise.all(
    requests.map(async (send) => {
      const res = await send()
      const body = (await res.json()) as { error?: { code: string } }
      return { status: res.status, code: body.error?.code ?? null }
    }),
  )
}

const balanceOf = (p: Player) => wallet.balance(`user:${p.userId}:USDC`)

async function ledgerOk(): Promise<void> {
  const report = await checkLedger(wallet)
  expect(report.problems).toEqual([])
  expect(report.ok).toBe(true)
}

describe('entry fees on two instances', () => {
  test('eight players with one fee each race for the last four seats: four seated and charged, four turned away with their money', async () => {
    for (let round = 0; round < 3; round++) {
      const early = await fundedPlayers(2, '10')
      const racers = await fundedPlayers(8, '10')
      const t = await create({ ...registration(6), entryFee: '10' })
      for (const p of early) expect((await join(one, t.id, p)).status).toBe(201)
      const results = await answers(racers.map((p, i) => () => join(instance(i), t.id, p)))
      const seated = racers.filter((_, i) => results[i]!.status === 201)
      expect(seated.length).toBe(4)
      expect(results.filter((r) => r.status !== 201).map((r) => [r.status, r.code])).toEqual(Array(4).fill([409, 'tournament_full']))
      for (const p of racers) expect(await balanceOf(p)).toBe(seated.includes(p) ? 0n : 10n * U)
      const now = await tournament(one, t.id)
      expect(now.participants.map((p) => p.userId).sort()).toEqual([...early, ...seated].map((p) => p.userId).sort())
      expect(await wallet.postingsTotal(escrowAccountId(t.id, 'USDC'))).toBe(60n * U)
    }
    await ledgerOk()
  })

  test('one player joins one tournament on both instances at once, and two tournaments with money for one fee: charged once, never below zero', async () => {
    for (let round = 0; round < 4; round++) {
      const [p, q] = await fundedPlayers(2, '10')
      const t = await create({ ...registration(8), entryFee: '10' })
      const u = await create({ ...registration(8), entryFee: '10' })
      const same = await answers([() => join(one, t.id, p!), () => join(two, t.id, p!)])
      expect(same.map((r) => r.status).sort()).toEqual([201, 409])
      expect(same.find((r) => r.status === 409)!.code).toBe('already_registered')
      expect(await balanceOf(p!)).toBe(0n)
      const both = await answers([() => join(one, t.id, q!), () => join(two, u.id, q!)])
      expect(both.map((r) => [r.status, r.code]).sort()).toEqual([
        [201, null],
        [422, 'insufficient_funds'],
      ])
      expect(await balanceOf(q!)).toBe(0n)
      const escrows = [await wallet.postingsTotal(escrowAccountId(t.id, 'USDC')), await wallet.postingsTotal(escrowAccountId(u.id, 'USDC'))]
      // p's one fee and q's one.
      expect(escrows[0]! + escrows[1]!).toBe(20n * U)
    }
    await ledgerOk()
  })
})

describe('finalization on two instances', () => {
  test('the finalize jobs of several tournaments run by both instances at once: each prize paid once, every escrow zero', async () => {
    const finished: { t: TournamentView; people: Player[] }[] = []
    for (let i = 0; i < 6; i++) {
      // Wallets with money already (each a ledger account the payout and the adjustment both update), and
      // for every other tournament none (an account the first of them opens).
      const people = i % 2 === 0 ? await fundedPlayers(2, '1') : await players(one, 2)
      const t = await create({ participants: people.map((p) => p.userId), prizes: ['3', '1'] })
      expect((await one.handle(postJson(`/api/v1/admin/tournaments/${t.id}/fund`, { amount: '5', reference: `race-${t.id}` }, admin))).status).toBe(200)
      const started = (await (await one.handle(postJson(`/api/v1/admin/tournaments/${t.id}/start`, {}, admin))).json()) as { tournament: TournamentView }
      const final = started.tournament.matches.find((m) => m.status === 'running')!
      await playOut(one, game.id, gameKey, started.tournament, people, final, final.slot1ParticipantId!)
      expect((await tournament(one, t.id)).status).toBe('finalizing')
      finished.push({ t: started.tournament, people })
    }
    // Meanwhile an operator adjusts every player's wallet on either instance: a prize paid (in the job's
    // READ COMMITTED unit of work on PostgreSQL) and an adjustment of one wallet never lose one another.
    const adjustments = finished.flatMap(({ people }) =>
      people.map((p, i) => () => instance(i + 1).handle(postJson(`/api/v1/admin/wallets/${p.userId}/adjust`, { amount: '2', reason: 'race', reference: `race-${p.userId}` }, admin))),
    )
    const [adjusted] = await Promise.all([answers(adjustments), one.runJobs(), two.runJobs(), one.runJobs(), two.runJobs()])
    expect(adjusted.filter((r) => r.status !== 200)).toEqual([])
    const { ledgerTransactions } = one.peek.tables
    const all = await one.peek.db.select().from(ledgerTransactions).orderBy(asc(ledgerTransactions.id))
    for (const { t, people } of finished) {
      expect((await tournament(one, t.id)).status).toBe('completed')
      const mine = all.filter((m) => (m.memo as { tournamentId?: string } | null)?.tournamentId === t.id)
      expect(mine.map((m) => m.kind).sort()).toEqual(['escrow_release', 'prize', 'prize', 'prize_funding'])
      const champion = t.participants.find((p) => p.id === t.matches.find((m) => m.status === 'running')!.slot1ParticipantId)!.userId
      const start = finished.indexOf(finished.find((f) => f.t.id === t.id)!) % 2 === 0 ? 1n * U : 0n
      for (const p of people) expect(await balanceOf(p)).toBe(start + (p.userId === champion ? 5n * U : 3n * U))
      expect(await wallet.postingsTotal(escrowAccountId(t.id, 'USDC'))).toBe(0n)
    }
    await ledgerOk()
  })
})
