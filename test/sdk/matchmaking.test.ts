// The SDK's matchmaking clients (arena.queues, arena.matches,
// arena.challenges) against an in-process app, on both engines: two players
// join a staked queue through the SDK, the matcher pairs them, both confirm
// the ready check, play it through the game client and the winner is paid;
// challenges created, declined, withdrawn and accepted; the server's
// refusals as ApiError codes, and the events as typed KnownEvents.
import { afterAll, describe, expect, test } from 'bun:test'
import { isEvent, type ArenaClient } from '@arena/sdk'
import { createArenaApp, createGame } from '../helpers/arena'
import { creditSurely } from '../helpers/accounts'
import { PASSWORD, registerUser } from '../helpers/auth'
import { createQueue, expectLedgerSound } from '../helpers/matchmaking'
import { apiError, sdkClient } from '../helpers/sdk'

const ctx = await createArenaApp()
afterAll(() => ctx.close())

async function signedIn(funds?: string) {
  const user = await registerUser(ctx)
  const { client, sent } = sdkClient(ctx)
  await client.auth.login(user.username, PASSWORD)
  if (funds !== undefined) expect(await creditSurely(ctx, user.id, `fund-${user.id}`, funds)).toBe(200)
  return { client, sent, user }
}

/** The status events the client has not read yet. */
const statusEvents = (client: ArenaClient) => client.events.poll({ topics: ['status'] })

describe('arena.queues and arena.matches', () => {
  test('two players join a staked queue, are paired, confirm the ready check, play it: the winner paid the pot less the rake', async () => {
    const { game, gameKey } = await createGame(ctx, 'SDK Queue')
    await createQueue(ctx, game.id, { name: 'duel.1', stake: '4', rake: '0.25' })
    const alice = await signedIn('10')
    const bob = await signedIn('10')

    expect((await alice.client.queues.list(game.id)).map((q) => ({ name: q.name, stake: q.stake, rake: q.rake, closedAt: q.closedAt }))).toEqual([
      { name: 'duel.1', stake: '4', rake: '0.25', closedAt: null },
    ])
    const ticket = await alice.client.queues.join(game.id, 'duel.1')
    expect(ticket).toMatchObject({ gameId: game.id, queue: 'duel.1', status: 'open', matchId: null, closedAt: null, closeReason: null })
    expect(alice.sent.some((r) => r.method === 'POST' && r.path === `/api/v1/games/${game.id}/queues/duel.1/tickets` && r.body === undefined)).toBe(true)
    expect((await apiError(alice.client.queues.join(game.id, 'duel.1'))).code).toBe('ticket_open')
    expect(await alice.client.queues.current(game.id, 'duel.1')).toMatchObject({ id: ticket.id, status: 'open' })
    await bob.client.queues.join(game.id, 'duel.1')

    expect(await ctx.services.matchmaking.matchTick()).toBe(1)
    const found = (await statusEvents(alice.client)).filter((e) => isEvent(e, 'match.found'))
    expect(found.map((e) => e.data)).toEqual([{ matchId: expect.any(String), gameId: game.id, queue: 'duel.1', readyBy: expect.any(String), stake: '4' }])
    const matchId = found[0]!.data.matchId
    // Matched: no open ticket left; both stakes in escrow.
    expect((await apiError(alice.client.queues.current(game.id, 'duel.1'))).code).toBe('not_found')
    expect((await alice.client.wallet()).balance).toBe('6')

    let match = await bob.client.matches.get(matchId)
    expect(match).toMatchObject({ id: matchId, kind: 'queue', gameId: game.id, tournamentId: null, queue: 'duel.1', challengeId: null, status: 'waiting', stake: '4', rake: '0.25', decision: null })
    expect(match.readyBy).toBe(found[0]!.data.readyBy)
    expect(match.players.map((p) => p.userId).sort()).toEqual([alice.user.id, bob.user.id].sort())

    match = await alice.client.matches.ready(matchId)
    expect(match.status).toBe('waiting')
    expect(match.players.find((p) => p.userId === alice.user.id)!.ready).toBe(true)
    match = await bob.client.matches.ready(matchId)
    expect(match.status).toBe('running')
    expect(match.readyBy).toBeNull()
    expect((await statusEvents(alice.client)).filter((e) => isEvent(e, 'match.ready')).map((e) => e.data)).toEqual([{ tournamentId: null, matchId, round: 1 }])
    expect((await alice.client.myMatches()).map((m) => ({ matchId: m.matchId, kind: m.kind, tournamentId: m.tournamentId }))).toEqual([{ matchId, kind: 'queue', tournamentId: null }])

    // Played through the game client: the seats are the match view's participant ids.
    const winner = match.players.find((p) => p.userId === alice.user.id)!.participantId
    const decisions = []
    for (const side of [alice, bob]) {
      const play = side.client.game(game.id, gameKey)
      const session = await play.openSession(matchId)
      expect(session.context).toMatchObject({ tournamentId: null, matchId })
      decisions.push(await play.submitResult(session, { outcome: 'WIN', winnerParticipantId: winner }))
    }
    expect(decisions.map((d) => d.decision)).toEqual(['pending', 'game_advance'])
    expect(decisions[1]).toMatchObject({ tournamentId: null, matchId, outcome: 'WIN', winnerParticipantId: winner })
    expect((await bob.client.matches.get(matchId)).decision).toMatchObject({ outcome: 'WIN', winnerParticipantId: winner, decidedBy: 'played' })
    // Pot 8, rake 25 % = 2 to the house: alice 6 + 6, bob 6.
    expect((await alice.client.wallet()).balance).toBe('12')
    expect((await bob.client.wallet()).balance).toBe('6')
    expect((await alice.client.wallet.transactions()).transactions.map((t) => [t.kind, t.amount, t.reference])).toEqual([
      ['credit', '10', `fund-${alice.user.id}`],
      ['stake', '-4', matchId],
      ['stake_payout', '6', matchId],
    ])
    // Once decided, a ready check is no longer answered.
    expect((await apiError(bob.client.matches.ready(matchId))).code).toBe('match_not_waiting')
    await expectLedgerSound(ctx)
  })

  test('leave closes the ticket; the refusals: a queue whose stake the wallet lacks, an unknown queue, game or match', async () => {
    const { game } = await createGame(ctx, 'SDK Queue refusals')
    await createQueue(ctx, game.id, { name: 'free' })
    await createQueue(ctx, game.id, { name: 'staked', stake: '50' })
    const carol = await signedIn('1')
    await carol.client.queues.join(game.id, 'free')
    expect(await carol.client.queues.leave(game.id, 'free')).toMatchObject({ status: 'cancelled', closeReason: 'left' })
    expect((await apiError(carol.client.queues.leave(game.id, 'free'))).code).toBe('not_found')
    const short = await apiError(carol.client.queues.join(game.id, 'staked'))
    expect([short.status, short.code]).toEqual([422, 'insufficient_funds'])
    expect((await apiError(carol.client.queues.join(game.id, 'no-such-queue'))).code).toBe('not_found')
    expect((await apiError(carol.client.queues.list('gam_none'))).code).toBe('not_found')
    expect((await apiError(carol.client.matches.get('mat_none'))).code).toBe('not_found')
    expect((await apiError(carol.client.matches.ready('mat_none'))).code).toBe('not_found')
  })
})

describe('arena.challenges', () => {
  test('a challenge declined, one withdrawn and one accepted: the events, the match it makes, and the refusals', async () => {
    const { game } = await createGame(ctx, 'SDK Challenges')
    const alice = await signedIn('5')
    const bob = await signedIn('1')

    const declined = await alice.client.challenges.create(game.id, { opponent: bob.user.username, stake: '1', expiresInS: 600 })
    expect(declined).toMatchObject({ gameId: game.id, challenger: { userId: alice.user.id }, opponent: { userId: bob.user.id, username: bob.user.username }, stake: '1', status: 'open', matchId: null })
    expect(JSON.parse(alice.sent.find((r) => r.method === 'POST' && r.path === `/api/v1/games/${game.id}/challenges`)!.body!)).toEqual({ opponent: bob.user.username, stake: '1', expiresInS: 600 })
    const received = (await statusEvents(bob.client)).filter((e) => isEvent(e, 'challenge.received'))
    expect(received.map((e) => e.data)).toEqual([
      { challengeId: declined.id, gameId: game.id, challengerId: alice.user.id, challengerUsername: alice.user.username, stake: '1', expiresAt: declined.expiresAt },
    ])
    expect((await bob.client.challenges.mine({ status: 'open' })).map((c) => c.id)).toEqual([declined.id])
    expect(await bob.client.challenges.get(declined.id)).toEqual(declined)
    // Only the opponent answers; only the challenger withdraws.
    expect((await apiError(alice.client.challenges.accept(declined.id))).code).toBe('forbidden')
    expect((await apiError(bob.client.challenges.cancel(declined.id))).code).toBe('forbidden')
    expect(await bob.client.challenges.decline(declined.id)).toMatchObject({ id: declined.id, status: 'declined' })
    const closed = await apiError(bob.client.challenges.accept(declined.id))
    expect([closed.status, closed.code]).toEqual([409, 'challenge_closed'])
    expect((await statusEvents(alice.client)).filter((e) => isEvent(e, 'challenge.declined')).map((e) => e.data)).toEqual([{ challengeId: declined.id, gameId: game.id }])

    const withdrawn = await alice.client.challenges.create(game.id, { opponent: bob.user.id })
    expect(withdrawn.stake).toBeNull()
    expect(await alice.client.challenges.cancel(withdrawn.id)).toMatchObject({ status: 'cancelled' })
    expect((await statusEvents(bob.client)).filter((e) => isEvent(e, 'challenge.cancelled')).map((e) => e.data)).toEqual([{ challengeId: withdrawn.id, gameId: game.id, reason: 'withdrawn' }])

    // Bob holds 1: a stake of 2 is refused at his accept, and the challenge stays open.
    const accepted = await alice.client.challenges.create(game.id, { opponent: bob.user.username, stake: '2' })
    expect((await apiError(bob.client.challenges.accept(accepted.id))).code).toBe('insufficient_funds')
    expect(await creditSurely(ctx, bob.user.id, `fund-more-${bob.user.id}`, '1')).toBe(200)
    const answer = await bob.client.challenges.accept(accepted.id)
    // (Checked apart: bun's toMatchObject writes an asymmetric matcher over the field it matched.)
    expect([answer.id, answer.status, typeof answer.matchId]).toEqual([accepted.id, 'accepted', 'string'])
    const match = await alice.client.matches.get(answer.matchId!)
    expect(match).toMatchObject({ kind: 'challenge', challengeId: accepted.id, queue: null, tournamentId: null, status: 'running', rated: false, stake: '2', readyBy: null })
    expect((await statusEvents(alice.client)).filter((e) => isEvent(e, 'challenge.accepted')).map((e) => e.data)).toEqual([{ challengeId: accepted.id, gameId: game.id, matchId: answer.matchId! }])
    expect((await alice.client.wallet()).balance).toBe('3')
    expect((await bob.client.wallet()).balance).toBe('0')

    expect((await alice.client.challenges.mine()).map((c) => [c.id, c.status])).toEqual([
      [accepted.id, 'accepted'],
      [withdrawn.id, 'cancelled'],
      [declined.id, 'declined'],
    ])
    expect(await alice.client.challenges.mine({ status: 'open' })).toEqual([])
    expect((await apiError(alice.client.challenges.create(game.id, { opponent: alice.user.username }))).code).toBe('validation_failed')
    expect((await apiError(alice.client.challenges.create(game.id, { opponent: 'nobody_by_that_name' }))).code).toBe('not_found')
    expect((await apiError(alice.client.challenges.get('chl_none'))).code).toBe('not_found')
    await expectLedgerSound(ctx)
  })
})

test('every player route of matchmaking has its SDK call, and every call of the SDK’s matchmaking clients is a route the server serves', async () => {
  const { client, sent } = await signedIn()
  const calls = [
    client.queues.list('gam_x'),
    client.queues.join('gam_x', 'q'),
    client.queues.current('gam_x', 'q'),
    client.queues.leave('gam_x', 'q'),
    client.matches.get('mat_x'),
    client.matches.ready('mat_x'),
    client.challenges.create('gam_x', { opponent: 'nobody_by_that_name' }),
    client.challenges.get('chl_x'),
    client.challenges.mine(),
    client.challenges.accept('chl_x'),
    client.challenges.decline('chl_x'),
    client.challenges.cancel('chl_x'),
  ]
  await Promise.allSettled(calls)
  const pattern = (path: string) => new RegExp(`^${path.replace(/:[A-Za-z]+/g, '[^/]+')}$`)
  const routes = ctx.app.routes
    .filter((r) => (r.hooks as { detail?: { tags?: string[] } }).detail?.tags?.includes('matchmaking') && !r.path.startsWith('/api/v1/admin/'))
    .map((r) => ({ route: `${r.method} ${r.path}`, method: r.method, matches: pattern(r.path) }))
  expect(routes.length).toBe(12)
  const requests = sent.slice(1).map((r) => ({ method: r.method, path: r.path.split('?')[0]! }))
  expect(requests).toHaveLength(calls.length)
  const called = (route: (typeof routes)[number]) => requests.some((r) => r.method === route.method && route.matches.test(r.path))
  expect(routes.filter((route) => !called(route)).map((r) => r.route)).toEqual([])
  expect(requests.filter((r) => !routes.some((route) => route.method === r.method && route.matches.test(r.path)))).toEqual([])
})
