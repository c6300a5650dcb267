// Contract §16 end to end through HTTP, on both engines: a staked, raked
// queue from tickets to payout; the ready check's timeout; a draw refunded;
// a dispute holding the escrow until an operator resolves it; funds refused
// at the ticket and a player dropped at pairing. After each, `arena ledger
// check` holds (every settled match's escrow is zero).
import { afterAll, describe, expect, test } from 'bun:test'
import { postJson } from '../helpers/app'
import { admin, claim, createArenaApp, createGame, players } from '../helpers/arena'
import { eventsOf } from '../helpers/account'
import { agree, balanceOf, challenge, createQueue, expectLedgerSound, fund, joined, joinQueue, leaveQueue, matchOf, ready, seatOf } from '../helpers/matchmaking'

const ctx = await createArenaApp()
afterAll(() => ctx.close())

describe('a staked queue', () => {
  test('tickets → found → ready → claims → the winner paid the pot less the rake, exactly once', async () => {
    const { game, gameKey } = await createGame(ctx, 'Staked duel')
    const queue = await createQueue(ctx, game.id, { stake: '5', rake: '0.1' })
    expect(queue).toMatchObject({ name: 'ranked', stake: '5', rake: '0.1', readyCheckS: 30, draws: 'replay', closedAt: null })
    const people = await players(ctx, 2)
    const [a, b] = people as [(typeof people)[0], (typeof people)[0]]
    await fund(ctx, people, '10')

    const ticket = await joined(ctx, game.id, 'ranked', a)
    expect(ticket).toMatchObject({ status: 'open', queue: 'ranked', matchId: null })
    // One open ticket per player and game.
    const again = await joinQueue(ctx, game.id, 'ranked', a)
    expect(again.status).toBe(409)
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe('ticket_open')
    await joined(ctx, game.id, 'ranked', b)

    expect(await ctx.services.matchmaking.matchTick()).toBe(1)
    // A second tick pairs nothing more: both tickets are matched.
    expect(await ctx.services.matchmaking.matchTick()).toBe(0)
    const found = (await eventsOf(ctx, a.userId, 'match.found')) as { data: { matchId: string; readyBy: string; stake: string } }[]
    expect(found).toHaveLength(1)
    expect(found[0]!.data.stake).toBe('5')
    expect(await eventsOf(ctx, b.userId, 'match.found')).toHaveLength(1)
    const matchId = found[0]!.data.matchId
    // Both stakes in escrow from the pairing.
    expect(await balanceOf(ctx, a)).toBe('5')
    expect(await balanceOf(ctx, b)).toBe('5')

    let match = await matchOf(ctx, matchId, a)
    expect(match).toMatchObject({ kind: 'queue', tournamentId: null, queue: 'ranked', status: 'waiting', stake: '5', rake: '0.1', decision: null })
    expect(match.players.map((p) => p.ready)).toEqual([false, false])

    expect((await ready(ctx, matchId, a)).status).toBe(200)
    match = await matchOf(ctx, matchId, b)
    expect(match.status).toBe('waiting')
    expect((await ready(ctx, matchId, b)).status).toBe(200)
    match = await matchOf(ctx, matchId, b)
    expect(match.status).toBe('running')
    expect(await eventsOf(ctx, a.userId, 'match.ready')).toHaveLength(1)

    const decision = await agree(ctx, game.id, gameKey, match, people, a)
    expect(decision).toMatchObject({ decision: 'game_advance', tournamentId: null, matchId, outcome: 'WIN', winnerParticipantId: seatOf(match, a) })
    // Pot 10, rake 10 % = 1 to the house, 9 to the winner.
    expect(await balanceOf(ctx, a)).toBe('14')
    expect(await balanceOf(ctx, b)).toBe('5')
    expect((await matchOf(ctx, matchId)).decision).toMatchObject({ outcome: 'WIN', winnerParticipantId: seatOf(match, a), decidedBy: 'played' })
    await expectLedgerSound(ctx)
    // The match is over: a correction cannot take the paid pot back.
    const corrected = await ctx.handle(postJson(`/api/v1/admin/matches/${matchId}/correct`, { winnerParticipantId: seatOf(match, b), reason: 'wrong' }, admin))
    expect(corrected.status).toBe(409)
  })

  test('a ready check not confirmed in time: the match cancelled, stakes back, the one who confirmed keeps their place', async () => {
    const { game } = await createGame(ctx, 'Ready or not')
    await createQueue(ctx, game.id, { stake: '2' })
    const people = await players(ctx, 2)
    const [a, b] = people as [(typeof people)[0], (typeof people)[0]]
    await fund(ctx, people, '2')
    const ticketA = await joined(ctx, game.id, 'ranked', a)
    ctx.clock.advance(1000)
    await joined(ctx, game.id, 'ranked', b)
    expect(await ctx.services.matchmaking.matchTick()).toBe(1)
    const { data } = (await eventsOf(ctx, a.userId, 'match.found'))[0] as { data: { matchId: string } }
    expect(await balanceOf(ctx, a)).toBe('0')
    expect((await ready(ctx, data.matchId, a)).status).toBe(200)
    ctx.clock.advance(30_000)
    const late = await ready(ctx, data.matchId, b)
    expect(late.status).toBe(409)
    expect(((await late.json()) as { error: { code: string } }).error.code).toBe('ready_check_over')
    expect(await ctx.runJobs()).toBeGreaterThanOrEqual(1)
    expect((await matchOf(ctx, data.matchId)).status).toBe('cancelled')
    expect(await balanceOf(ctx, a)).toBe('2')
    expect(await balanceOf(ctx, b)).toBe('2')
    expect(await eventsOf(ctx, b.userId, 'ticket.cancelled')).toHaveLength(1)
    expect(await eventsOf(ctx, a.userId, 'match.cancelled')).toHaveLength(1)
    // A's ticket is open again, with its place in line; B's is closed.
    const current = await ctx.handle(new Request(`http://localhost/api/v1/games/${game.id}/queues/ranked/tickets/current`, { headers: { authorization: `Bearer ${a.tokens.accessToken}` } }))
    expect(current.status).toBe(200)
    const reopened = ((await current.json()) as { ticket: { id: string; waitingSince: string; status: string } }).ticket
    expect(reopened).toMatchObject({ id: ticketA.id, waitingSince: ticketA.waitingSince, status: 'open' })
    expect((await leaveQueue(ctx, game.id, 'ranked', b)).status).toBe(404)
    await expectLedgerSound(ctx)
  })

  test('a draw that is a result refunds both; a dispute holds the escrow until an operator resolves it', async () => {
    const { game, gameKey } = await createGame(ctx, 'Even odds')
    await createQueue(ctx, game.id, { stake: '3', draws: 'result' })
    const people = await players(ctx, 4)
    await fund(ctx, people, '3')
    for (const p of people) await joined(ctx, game.id, 'ranked', p)
    expect(await ctx.services.matchmaking.matchTick()).toBe(2)
    const matchIds = [...new Set(await Promise.all(people.map(async (p) => ((await eventsOf(ctx, p.userId, 'match.found'))[0] as { data: { matchId: string } }).data.matchId)))]
    expect(matchIds).toHaveLength(2)
    for (const id of matchIds) {
      const m = await matchOf(ctx, id)
      for (const seat of m.players) expect((await ready(ctx, id, people.find((p) => p.userId === seat.userId)!)).status).toBe(200)
    }
    const [drawn, disputed] = await Promise.all(matchIds.map((id) => matchOf(ctx, id)))
    const decision = await agree(ctx, game.id, gameKey, drawn!, people, null)
    expect(decision).toMatchObject({ decision: 'game_advance', outcome: 'DRAW' })
    for (const seat of drawn!.players) expect(await balanceOf(ctx, people.find((p) => p.userId === seat.userId)!)).toBe('3')

    const [x, y] = disputed!.players.map((seat) => people.find((p) => p.userId === seat.userId)!)
    expect((await claim(ctx, game.id, gameKey, x!, disputed!.id, { outcome: 'WIN', winnerParticipantId: seatOf(disputed!, x!) })).decision).toBe('pending')
    expect((await claim(ctx, game.id, gameKey, y!, disputed!.id, { outcome: 'WIN', winnerParticipantId: seatOf(disputed!, y!) })).decision).toBe('dispute')
    expect(await balanceOf(ctx, x!)).toBe('0')
    expect(await balanceOf(ctx, y!)).toBe('0')
    await expectLedgerSound(ctx)
    const resolved = await ctx.handle(postJson(`/api/v1/admin/matches/${disputed!.id}/resolve`, { winnerParticipantId: seatOf(disputed!, y!) }, admin))
    expect(resolved.status).toBe(200)
    expect(await balanceOf(ctx, y!)).toBe('6')
    expect(await balanceOf(ctx, x!)).toBe('0')
    await expectLedgerSound(ctx)
  })

  test('insufficient funds: refused at the ticket; a player who spent it meanwhile dropped at pairing, the other keeps their place', async () => {
    const { game } = await createGame(ctx, 'Broke')
    await createQueue(ctx, game.id, { stake: '4' })
    const people = await players(ctx, 3)
    const [a, b, c] = people as [(typeof people)[0], (typeof people)[0], (typeof people)[0]]
    const refused = await joinQueue(ctx, game.id, 'ranked', a)
    expect(refused.status).toBe(422)
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('insufficient_funds')
    await fund(ctx, [a, b], '4')
    await joined(ctx, game.id, 'ranked', a)
    const ticketB = await joined(ctx, game.id, 'ranked', b)
    // A's money leaves before the pairing (an operator adjustment).
    const adjusted = await ctx.handle(postJson(`/api/v1/admin/wallets/${a.userId}/adjust`, { amount: '-4', reason: 'chargeback', reference: `adj-${a.userId}` }, admin))
    expect(adjusted.status).toBe(200)
    expect(await ctx.services.matchmaking.matchTick()).toBe(0)
    expect(((await eventsOf(ctx, a.userId, 'ticket.cancelled'))[0] as { data: { reason: string } }).data.reason).toBe('insufficient_funds')
    // B waits on, and pairs with the next player who can pay.
    await fund(ctx, [c], '4')
    await joined(ctx, game.id, 'ranked', c)
    expect(await ctx.services.matchmaking.matchTick()).toBe(1)
    const found = (await eventsOf(ctx, b.userId, 'match.found')) as { data: { matchId: string } }[]
    expect(found).toHaveLength(1)
    expect((await matchOf(ctx, found[0]!.data.matchId)).players.map((p) => p.userId).sort()).toEqual([b.userId, c.userId].sort())
    expect(ticketB.status).toBe('open')
    await expectLedgerSound(ctx)
  })
})

describe('an account deleted', () => {
  test('its open ticket closes (account_closed) and its open challenges are cancelled, the other player told', async () => {
    const { game } = await createGame(ctx, 'Farewell')
    await createQueue(ctx, game.id)
    const people = await players(ctx, 3)
    const [leaver, challenger, opponent] = people as [(typeof people)[0], (typeof people)[0], (typeof people)[0]]
    const ticket = await joined(ctx, game.id, 'ranked', leaver)
    const made = await challenge(ctx, game.id, leaver, { opponent: opponent.username })
    const received = await challenge(ctx, game.id, challenger, { opponent: leaver.userId })
    expect([made.status, received.status]).toEqual([201, 201])
    const deleted = await ctx.handle(postJson(`/api/v1/admin/users/${leaver.userId}/delete`, { reason: 'asked to' }, admin))
    expect(deleted.status).toBe(200)
    const [stored] = await ctx.storage.read.matchmaking.ticketsByIds([ticket.id])
    expect(stored).toMatchObject({ status: 'cancelled', closeReason: 'account_closed' })
    for (const other of [challenger, opponent]) {
      const told = (await eventsOf(ctx, other.userId, 'challenge.cancelled')) as { data: { reason: string } }[]
      expect(told.map((e) => e.data.reason)).toEqual(['account_closed'])
    }
    // Nothing left for the matcher: a second player alone is not paired with a deleted one.
    await joined(ctx, game.id, 'ranked', opponent)
    expect(await ctx.services.matchmaking.matchTick()).toBe(0)
  })
})
