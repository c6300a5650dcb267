// Integrity signals and held payouts (contract §17, docs/integrity.md), on
// the engine under test: each signal raised by a scripted pattern and not by
// an ordinary one; a flagged staked win holds its winnings (nothing settled,
// the pot in escrow), released it pays exactly once (rake and payout under
// their references), voided both stakes come back; a flagged prize winner's
// prize is held at finalization and released or voided; the ledger check
// holds in every state; a second decision is 409 payout_not_held; a
// moderator cannot decide; the wallet history lists the hold; release and
// void racing on two instances: one wins, the money moves once.
import { afterAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { postJson, req, type Handler, type TestApp } from '../helpers/app'
import { admin, createArenaApp, createGame, players, playOut, tournament, twoInstances, type Player, type TournamentView } from '../helpers/arena'
import { login } from '../helpers/auth'
import { balanceOf, errorCode, expectLedgerSound, fund, rawSqlOf, seatOf, snapshotOf, stakeProblems } from '../helpers/matchmaking'
import { decide, holdOfMatch, holdsOf, rakedGame, references, stakedMatch, stakedWin } from '../helpers/integrity'
import { registerServer, setResults, signedResult } from '../helpers/game-servers'
import { bearer as operatorBearer, signedInOperator } from '../helpers/operators'
import { eventsOf, securityEventsOf } from '../helpers/accounts'
import { INITIAL_ROW } from '../../src/modules/ratings/view'
import { sha256Hex } from '../../src/shared/crypto'
import type { PayoutHold } from '../../src/modules/integrity/model'

const HOUR = 3_600_000
const bearer = (p: Player) => ({ authorization: `Bearer ${p.tokens.accessToken}` })

async function flagSignals(ctx: TestApp, matchId: string): Promise<string[] | null> {
  const { integrityFlags } = ctx.peek.tables
  const [row] = await ctx.peek.db.select().from(integrityFlags).where(eq(integrityFlags.matchId, matchId))
  return row ? row.signals.map((s) => s.signal) : null
}

async function soundEverywhere(ctx: TestApp): Promise<void> {
  await expectLedgerSound(ctx)
  expect(await stakeProblems(snapshotOf(ctx))).toEqual([])
}

describe('signals on staked matches', () => {
  let ctx: TestApp
  const setup = (async () => {
    ctx = await createArenaApp({ ARENA_INTEGRITY_PAIR_LIMIT: '3', ARENA_INTEGRITY_STAKE_REVIEW: '2', ARENA_TRUST_PROXY: 'true' })
    return ctx
  })()
  afterAll(async () => (await setup).close())

  test('pair_limit: three wins of one pair in a day are ordinary and paid; the fourth is flagged and held', async () => {
    await setup
    const { game, gameKey } = await rakedGame(ctx, 'Pair limit')
    const [a, b] = await players(ctx, 2)
    await fund(ctx, [a!, b!], '100')
    const ordinary = [await stakedWin(ctx, game, gameKey, a!, b!, '5'), await stakedWin(ctx, game, gameKey, a!, b!, '5'), await stakedWin(ctx, game, gameKey, b!, a!, '5')]
    for (const m of ordinary) expect(await flagSignals(ctx, m)).toBeNull()
    expect(await references(ctx, `stake_payout:${ordinary[0]}`)).toHaveLength(1)
    // a: 100 - 15 + 9 + 9 = 103; b: 100 - 15 + 9 = 94.
    expect([await balanceOf(ctx, a!), await balanceOf(ctx, b!)]).toEqual(['103', '94'])
    const fourth = await stakedWin(ctx, game, gameKey, a!, b!, '5')
    expect(await flagSignals(ctx, fourth)).toEqual(['pair_limit'])
    const hold = (await holdOfMatch(ctx, fourth))!
    expect(hold).toMatchObject({ kind: 'stake', status: 'held', userId: a!.userId, username: a!.username, amount: '9', asset: 'USDC', tournamentId: null, rank: null, decidedAt: null })
    expect(hold.signals).toEqual([{ signal: 'pair_limit', detail: { matches: 4, limit: 3, windowHours: 24 } }])
    // Nothing settled: no payout, no rake, the escrow keeps the pot; the winner is told and sees it held.
    expect(await references(ctx, `stake_payout:${fourth}`)).toEqual([])
    expect(await references(ctx, `rake:${fourth}`)).toEqual([])
    expect(await balanceOf(ctx, a!)).toBe('98')
    expect(await ctx.storage.read.wallet.postingsTotal(`escrow:${fourth}:USDC`)).toBe(10_000_000n)
    expect(await eventsOf(ctx, a!.userId, 'wallet.payout_held')).toEqual([{ holdId: hold.id, kind: 'stake', amount: '9', asset: 'USDC', matchId: fourth, tournamentId: null }])
    const history = (await (await ctx.handle(req('/api/v1/wallet/transactions', { headers: bearer(a!) }))).json()) as { held: unknown[] }
    expect(history.held).toEqual([{ holdId: hold.id, kind: 'stake_payout', amount: '9', asset: 'USDC', matchId: fourth, tournamentId: null, heldAt: hold.createdAt }])
    const loserHistory = (await (await ctx.handle(req('/api/v1/wallet/transactions', { headers: bearer(b!) }))).json()) as { held: unknown[] }
    expect(loserHistory.held).toEqual([])
    const logged = await securityEventsOf(ctx, a!.userId, 'INTEGRITY_SIGNAL')
    expect(logged.map((e) => e.details)).toEqual([{ matchId: fourth, tournamentId: null, opponentUserId: b!.userId, signals: ['pair_limit'] }])
    await soundEverywhere(ctx)

    // Released by finance: paid exactly as the decision would have (9 to a, 1 rake), once; a second decision is 409.
    const finance = await signedInOperator(ctx, 'finance')
    const moderator = await signedInOperator(ctx, 'moderator')
    expect((await decide(ctx, hold.id, 'release', operatorBearer(moderator.token))).status).toBe(403)
    expect((await decide(ctx, hold.id, 'release', operatorBearer(finance.token), '')).status).toBe(422)
    const released = await decide(ctx, hold.id, 'release', operatorBearer(finance.token))
    expect(released.status).toBe(200)
    expect(((await released.json()) as { payout: PayoutHold }).payout).toMatchObject({ id: hold.id, status: 'released', decidedBy: finance.operator.name, reason: 'reviewed the replays' })
    for (const how of ['release', 'void'] as const) {
      const again = await decide(ctx, hold.id, how)
      expect([again.status, await errorCode(again)]).toEqual([409, 'payout_not_held'])
    }
    expect(await references(ctx, `stake_payout:${fourth}`)).toEqual([`stake_payout:${fourth}`])
    expect(await references(ctx, `rake:${fourth}`)).toEqual([`rake:${fourth}`])
    expect(await balanceOf(ctx, a!)).toBe('107')
    expect(await ctx.storage.read.wallet.postingsTotal(`escrow:${fourth}:USDC`)).toBe(0n)
    expect((await eventsOf(ctx, a!.userId, 'wallet.payout_released')).map((e) => e.holdId)).toEqual([hold.id])
    const after = (await (await ctx.handle(req('/api/v1/wallet/transactions', { headers: bearer(a!) }))).json()) as { held: unknown[] }
    expect(after.held).toEqual([])
    const audit = await rawSqlOf(ctx)("SELECT target, operator_name, reason FROM audit_log WHERE action = 'payout.release'")
    expect(audit.map((r) => [r.target, r.operator_name, r.reason])).toEqual([[hold.id, finance.operator.name, 'reviewed the replays']])
    await soundEverywhere(ctx)
  })

  test('alternating: the fourth staked win of a pair taking turns is flagged (a day apart each: no pair_limit); three turns are not; voided, both stakes come back', async () => {
    await setup
    const { game, gameKey } = await rakedGame(ctx, 'Alternating')
    const [c, d] = await players(ctx, 2)
    await fund(ctx, [c!, d!], '50')
    const winners = [c!, d!, c!, d!]
    const matches: string[] = []
    for (const [i, w] of winners.entries()) {
      if (i > 0) {
        ctx.clock.advance(25 * HOUR)
        for (const p of [c!, d!]) p.tokens = await login(ctx, p.username)
      }
      matches.push(await stakedWin(ctx, game, gameKey, w, w === c ? d! : c!, '2'))
    }
    for (const m of matches.slice(0, 3)) expect(await flagSignals(ctx, m)).toBeNull()
    expect(await flagSignals(ctx, matches[3]!)).toEqual(['alternating'])
    const hold = (await holdOfMatch(ctx, matches[3]!))!
    expect(hold).toMatchObject({ userId: d!.userId, amount: '3.6', status: 'held' })
    await soundEverywhere(ctx)
    const voided = await decide(ctx, hold.id, 'void', admin, 'collusion confirmed')
    expect(voided.status).toBe(200)
    expect(((await voided.json()) as { payout: PayoutHold }).payout).toMatchObject({ status: 'voided', reason: 'collusion confirmed' })
    expect(await references(ctx, `stake_refund:${matches[3]}`)).toEqual([c!.userId, d!.userId].sort().map((u) => `stake_refund:${matches[3]}:${u}`))
    expect(await references(ctx, `stake_payout:${matches[3]}`)).toEqual([])
    // Three paid wins (3.6 each, the pot of 4 less 10 %) and the fourth's stakes back: c 50 − 6 + 7.2 = 51.2, d 50 − 6 + 3.6 = 47.6.
    expect(await balanceOf(ctx, c!)).toBe('51.2')
    expect(await balanceOf(ctx, d!)).toBe('47.6')
    expect(await eventsOf(ctx, d!.userId, 'wallet.payout_voided')).toEqual([
      { holdId: hold.id, kind: 'stake', amount: '3.6', asset: 'USDC', matchId: matches[3], tournamentId: null, reason: 'collusion confirmed' },
    ])
    expect([(await decide(ctx, hold.id, 'release')).status]).toEqual([409])
    await soundEverywhere(ctx)
  })

  test('upset: a provisional winner far below the loser with more than the review amount at stake is flagged; the same win for less, or the favourite winning, is not', async () => {
    await setup
    const { game, gameKey } = await rakedGame(ctx, 'Upsets')
    const [e, f] = await players(ctx, 2)
    await fund(ctx, [e!, f!], '50')
    // f is an established strong player of the game (display 1900); e has never been rated (800, provisional).
    await ctx.storage.write(async (tx) => {
      const { seasonId } = (await tx.ratings.ratingContext(game.id))!
      await tx.ratings.ensureRatings([{ ...INITIAL_ROW(ctx.clock.now()), gameId: game.id, userId: f!.userId, seasonId, rating: 2000, deviation: 50, matches: 40 }])
    })
    const cheap = await stakedWin(ctx, game, gameKey, e!, f!, '2')
    const favourite = await stakedWin(ctx, game, gameKey, f!, e!, '5')
    const upset = await stakedWin(ctx, game, gameKey, e!, f!, '5')
    expect(await flagSignals(ctx, cheap)).toBeNull()
    expect(await flagSignals(ctx, favourite)).toBeNull()
    expect(await flagSignals(ctx, upset)).toEqual(['upset'])
    expect((await holdOfMatch(ctx, upset))!.signals).toEqual([{ signal: 'upset', detail: { winnerDisplay: 800, loserDisplay: 1900, gap: 400, atStake: '5' } }])
    await soundEverywhere(ctx)
  })

  test('shared_address and shared_device: players signed in from one address, or holding one device, are flagged; from different places they are not', async () => {
    await setup
    const { game, gameKey } = await rakedGame(ctx, 'Shared places')
    const [g, h, i, j] = await players(ctx, 4)
    await fund(ctx, [g!, h!, i!, j!], '20')
    // g and h sign in from one address (behind the trusted proxy); i and j from two others.
    g!.tokens = await login(ctx, g!.username, undefined, { 'x-forwarded-for': '198.51.100.7' })
    h!.tokens = await login(ctx, h!.username, undefined, { 'x-forwarded-for': '198.51.100.7' })
    i!.tokens = await login(ctx, i!.username, undefined, { 'x-forwarded-for': '198.51.100.8' })
    j!.tokens = await login(ctx, j!.username, undefined, { 'x-forwarded-for': '198.51.100.9' })
    const apart = await stakedWin(ctx, game, gameKey, i!, j!, '1')
    expect(await flagSignals(ctx, apart)).toBeNull()
    const together = await stakedWin(ctx, game, gameKey, g!, h!, '1')
    expect(await flagSignals(ctx, together)).toEqual(['shared_address'])
    // i and j then share one device token (as a sign-in remembers it: its hash, under each account).
    const device = sha256Hex(`device:${'d'.repeat(43)}`)
    await ctx.storage.write(async (tx) => {
      for (const p of [i!, j!]) await tx.auth.rememberPlace({ subject: `user:${p.userId}`, kind: 'device', placeHash: device, lastSeenAt: ctx.clock.now() }, 10)
    })
    const sameDevice = await stakedWin(ctx, game, gameKey, j!, i!, '1')
    expect(await flagSignals(ctx, sameDevice)).toEqual(['shared_device'])
    expect((await holdOfMatch(ctx, sameDevice))!.signals).toEqual([{ signal: 'shared_device', detail: { places: 1 } }])
    await soundEverywhere(ctx)
  })

  test('GET /admin/payouts: viewers list (by status, paged) and read; an unknown hold is 404, a bad cursor 422', async () => {
    await setup
    const viewer = await signedInOperator(ctx, 'viewer')
    const held = await holdsOf(ctx, 'held', operatorBearer(viewer.token))
    expect(held.length).toBeGreaterThanOrEqual(3)
    expect(held.every((h) => h.status === 'held')).toBe(true)
    const first = await ctx.handle(req('/api/v1/admin/payouts?limit=1', { headers: operatorBearer(viewer.token) }))
    const page = (await first.json()) as { payouts: PayoutHold[]; cursor?: string }
    expect(page.payouts.map((h) => h.id)).toEqual([held[0]!.id])
    const next = (await (await ctx.handle(req(`/api/v1/admin/payouts?limit=100&after=${page.cursor}`, { headers: admin }))).json()) as { payouts: PayoutHold[]; cursor?: string }
    expect(next.payouts.map((h) => h.id)).toEqual(held.slice(1).map((h) => h.id))
    expect(next.cursor).toBeUndefined()
    const one = await ctx.handle(req(`/api/v1/admin/payouts/${held[0]!.id}`, { headers: operatorBearer(viewer.token) }))
    expect(((await one.json()) as { payout: PayoutHold }).payout).toEqual(held[0]!)
    expect((await decide(ctx, held[0]!.id, 'release', operatorBearer(viewer.token))).status).toBe(403)
    for (const path of ['/api/v1/admin/payouts/hld_00000000000000000000000000000000', '/api/v1/admin/payouts/nonsense']) expect((await ctx.handle(req(path, { headers: admin }))).status).toBe(404)
    expect((await decide(ctx, 'hld_00000000000000000000000000000000', 'release')).status).toBe(404)
    expect((await ctx.handle(req('/api/v1/admin/payouts?after=nonsense', { headers: admin }))).status).toBe(422)
    expect((await ctx.handle(req('/api/v1/admin/payouts?status=lost', { headers: admin }))).status).toBe(422)
  })
})

describe('prize tournaments, game servers, signals switched off', () => {
  let ctx: TestApp
  const setup = (async () => {
    ctx = await createArenaApp({ ARENA_INTEGRITY_PAIR_LIMIT: '1' })
    return ctx
  })()
  afterAll(async () => (await setup).close())

  /** A funded single elimination of two with prizes 5 and 2, started. */
  async function prizeCup(game: { id: string }, people: Player[]): Promise<TournamentView> {
    const created = await ctx.handle(postJson('/api/v1/admin/tournaments', { gameId: game.id, name: 'Prize cup', format: 'single_elimination', participants: people.map((p) => p.userId), prizes: ['5', '2'] }, admin))
    expect(created.status).toBe(201)
    const { tournament: t } = (await created.json()) as { tournament: TournamentView }
    expect((await ctx.handle(postJson(`/api/v1/admin/tournaments/${t.id}/fund`, { amount: '7', reference: `cup-${t.id}` }, admin))).status).toBe(200)
    expect((await ctx.handle(postJson(`/api/v1/admin/tournaments/${t.id}/start`, {}, admin))).status).toBe(200)
    return tournament(ctx, t.id)
  }

  test('a prize winner flagged in the tournament: the prize held at finalization (the runner-up paid), the rest to the house; released it is paid once, voided it goes to the house', async () => {
    await setup
    const { game, gameKey } = await createGame(ctx, 'Prize holds')
    const [p, q] = await players(ctx, 2)
    const house = () => ctx.storage.read.wallet.postingsTotal('system:house:USDC')
    const escrowOf = (id: string) => ctx.storage.read.wallet.postingsTotal(`escrow:${id}:USDC`)
    /** A cup of p and q (p seeded first), its final won by p, finalized. */
    const playedCup = async () => {
      const t = await prizeCup(game, [p!, q!])
      const final = t.matches.find((m) => m.status === 'running')!
      expect(t.participants.find((x) => x.id === final.slot1ParticipantId)!.userId).toBe(p!.userId)
      await playOut(ctx, game.id, gameKey, t, [p!, q!], final, final.slot1ParticipantId!)
      await ctx.runJobs()
      expect((await tournament(ctx, t.id)).status).toBe('completed')
      return { t, final }
    }
    // The first cup: the pair had not met; nothing flagged, both prizes paid, the escrow empty.
    const first = await playedCup()
    expect(await flagSignals(ctx, first.final.id)).toBeNull()
    expect(await escrowOf(first.t.id)).toBe(0n)
    expect([await balanceOf(ctx, p!), await balanceOf(ctx, q!)]).toEqual(['5', '2'])
    // The second: they met already today, pair_limit (1) flags the final; p's prize held in escrow, q's paid, nothing more to the house.
    const houseBefore = await house()
    const second = await playedCup()
    expect(await flagSignals(ctx, second.final.id)).toEqual(['pair_limit'])
    expect(await escrowOf(second.t.id)).toBe(5_000_000n)
    expect(await house()).toBe(houseBefore)
    expect([await balanceOf(ctx, p!), await balanceOf(ctx, q!)]).toEqual(['5', '4'])
    const [hold] = await holdsOf(ctx)
    expect(hold).toMatchObject({ kind: 'prize', status: 'held', tournamentId: second.t.id, rank: 1, matchId: second.final.id, userId: p!.userId, amount: '5' })
    expect((await eventsOf(ctx, p!.userId, 'wallet.payout_held')).map((e) => e.holdId)).toEqual([hold!.id])
    const history = (await (await ctx.handle(req('/api/v1/wallet/transactions', { headers: bearer(p!) }))).json()) as { held: { kind: string; tournamentId: string }[] }
    expect(history.held).toMatchObject([{ kind: 'prize', tournamentId: second.t.id, amount: '5' }])
    await expectLedgerSound(ctx)
    // Released: the prize under its own reference, once; the escrow empty.
    expect((await decide(ctx, hold!.id, 'release')).status).toBe(200)
    expect((await decide(ctx, hold!.id, 'release')).status).toBe(409)
    expect(await references(ctx, `prize:${second.t.id}:`)).toEqual([`prize:${second.t.id}:1`, `prize:${second.t.id}:2`])
    expect(await balanceOf(ctx, p!)).toBe('10')
    expect(await escrowOf(second.t.id)).toBe(0n)
    await expectLedgerSound(ctx)
    // The third, voided: the prize to the house, never to p.
    const third = await playedCup()
    const [again] = await holdsOf(ctx)
    expect(again).toMatchObject({ tournamentId: third.t.id, rank: 1 })
    await expectLedgerSound(ctx)
    const houseThen = await house()
    expect((await decide(ctx, again!.id, 'void')).status).toBe(200)
    expect(await house()).toBe(houseThen + 5_000_000n)
    expect(await references(ctx, `prize_void:${third.t.id}:`)).toEqual([`prize_void:${third.t.id}:1`])
    expect(await references(ctx, `prize:${third.t.id}:1`)).toEqual([])
    expect(await balanceOf(ctx, p!)).toBe('10')
    expect(await escrowOf(third.t.id)).toBe(0n)
    await expectLedgerSound(ctx)
  })

  test('a game server\'s signed result of a flagged staked match holds the winnings as agreed claims do', async () => {
    await setup
    const { game } = await rakedGame(ctx, 'Server results held')
    await setResults(ctx, game.id, 'either')
    const signer = await registerServer(ctx, game.id)
    const [a, b] = await players(ctx, 2)
    await fund(ctx, [a!, b!], '10')
    const report = async (winner: Player, loser: Player) => {
      const match = await stakedMatch(ctx, game, winner, loser, '1')
      const res = await ctx.handle(await signedResult(game.id, signer, { matchId: match.id, outcome: 'WIN', winnerParticipantId: seatOf(match, winner) }, ctx.clock.now()))
      expect(res.status).toBe(200)
      return match.id
    }
    const first = await report(a!, b!)
    expect(await flagSignals(ctx, first)).toBeNull()
    expect(await references(ctx, `stake_payout:${first}`)).toEqual([`stake_payout:${first}`])
    const second = await report(a!, b!)
    expect(await flagSignals(ctx, second)).toEqual(['pair_limit'])
    expect(await references(ctx, `stake_payout:${second}`)).toEqual([])
    expect(await holdOfMatch(ctx, second)).toMatchObject({ kind: 'stake', status: 'held', userId: a!.userId, amount: '1.8' })
    await soundEverywhere(ctx)
  })

  test('ARENA_INTEGRITY_SIGNALS=none: the same pattern raises nothing, the pot is paid at once', async () => {
    await setup
    const off = await createArenaApp({ ARENA_INTEGRITY_PAIR_LIMIT: '1', ARENA_INTEGRITY_SIGNALS: 'none' })
    try {
      const { game, gameKey } = await rakedGame(off, 'Signals off')
      const [a, b] = await players(off, 2)
      await fund(off, [a!, b!], '10')
      const matches = [await stakedWin(off, game, gameKey, a!, b!, '1'), await stakedWin(off, game, gameKey, a!, b!, '1'), await stakedWin(off, game, gameKey, b!, a!, '1')]
      for (const m of matches) expect(await flagSignals(off, m)).toBeNull()
      expect(await holdsOf(off)).toEqual([])
      expect(await balanceOf(off, a!)).toBe('10.6')
      await soundEverywhere(off)
    } finally {
      await off.close()
    }
  })
})

describe('release against void on two instances', () => {
  test('each held payout released on one instance while voided on the other: exactly one decides, the money moves once', async () => {
    const { one, two } = await twoInstances({ ARENA_INTEGRITY_PAIR_LIMIT: '1' })
    const { game, gameKey } = await rakedGame(one, 'Race')
    const [a, b] = await players(one, 2)
    await fund(one, [a!, b!], '100')
    await stakedWin(one, game, gameKey, a!, b!, '1')
    for (let i = 0; i < 6; i++) await stakedWin(one, game, gameKey, i % 2 === 0 ? b! : a!, i % 2 === 0 ? a! : b!, '1')
    const held = await holdsOf(one)
    expect(held).toHaveLength(6)
    for (const [i, hold] of held.entries()) {
      const [x, y] = i % 2 === 0 ? [one, two] : [two, one]
      const answers = await Promise.all([decide(x, hold.id, 'release'), decide(y, hold.id, 'void')])
      const statuses = answers.map((r) => r.status).sort()
      expect(statuses).toEqual([200, 409])
      const lost = answers.find((r) => r.status === 409)!
      expect(await errorCode(lost)).toBe('payout_not_held')
      const won = answers[0]!.status === 200 ? 'released' : 'voided'
      const payouts = await references(one, `stake_payout:${hold.matchId}`)
      const refunds = await references(one, `stake_refund:${hold.matchId}`)
      expect([payouts.length, refunds.length]).toEqual(won === 'released' ? [1, 0] : [0, 2])
    }
    expect(await holdsOf(one)).toEqual([])
    await soundEverywhere(one)
  })
})
