// Queue administration and the match view (contract §16) through HTTP, on
// both engines: a queue created with every setting echoed (amounts written
// canonically), its validation, one open queue per name, changed and closed
// (waiting tickets cancelled, the name free again); the players' list; who
// sees a match; an operator's cancellation refunding both stakes; a queue
// match in /me/matches and refused a game session during its ready check.
import { afterAll, describe, expect, test } from 'bun:test'
import { postJson, req } from '../helpers/app'
import { admin, claim, createArenaApp, createGame, openSession, players, startedTournament, type Player } from '../helpers/arena'
import { eventsOf } from '../helpers/account'
import {
  adminDelete,
  adminPatch,
  agree,
  balanceOf,
  createQueue,
  errorCode,
  expectLedgerSound,
  fund,
  joined,
  joinQueue,
  matchOf,
  ready,
  type MatchView,
  type Queue,
} from '../helpers/matchmaking'

const ctx = await createArenaApp()
afterAll(() => ctx.close())

const bearer = (p: Player) => ({ authorization: `Bearer ${p.tokens.accessToken}` })
const base = { name: 'ranked', rated: false, window: { initial: 100, widenPerSecond: 10, max: 400 }, readyCheckS: 30 }

function postQueue(gameId: string, body: Record<string, unknown>): Promise<Response> {
  return ctx.handle(postJson(`/api/v1/admin/games/${gameId}/queues`, body, admin))
}

async function adminQueues(gameId: string, closed?: 'include'): Promise<Queue[]> {
  const res = await ctx.handle(req(`/api/v1/admin/games/${gameId}/queues${closed ? `?closed=${closed}` : ''}`, { headers: admin }))
  expect(res.status).toBe(200)
  return ((await res.json()) as { queues: Queue[] }).queues
}

async function playerQueues(gameId: string, player: Player): Promise<Response> {
  return ctx.handle(req(`/api/v1/games/${gameId}/queues`, { headers: bearer(player) }))
}

/** A pair matched in the queue (both joined, one tick): the match as the operator sees it. */
async function matched(gameId: string, queue: string, people: readonly Player[]): Promise<MatchView> {
  for (const p of people) await joined(ctx, gameId, queue, p)
  expect(await ctx.services.matchmaking.matchTick()).toBeGreaterThanOrEqual(1)
  const found = (await eventsOf(ctx, people[0]!.userId, 'match.found')) as { data: { matchId: string } }[]
  return matchOf(ctx, found.at(-1)!.data.matchId)
}

function cancelMatch(id: string, reason = 'the players asked'): Promise<Response> {
  return ctx.handle(postJson(`/api/v1/admin/matches/${id}/cancel`, { reason }, admin))
}

describe('queue administration', () => {
  test('create: 201 with every setting echoed, the stake and rake written canonically; listed to operators and players', async () => {
    const { game } = await createGame(ctx, 'Queues')
    const body = {
      name: 'blitz-1.v2',
      rated: true,
      stake: '2.50',
      rake: '0.050',
      window: { initial: 50, widenPerSecond: 2.5, max: 300 },
      readyCheckS: 45,
      matchDeadlineS: 3600,
      rematchCooldownS: 600,
      draws: 'result',
    }
    const res = await postQueue(game.id, body)
    expect(res.status).toBe(201)
    const { queue } = (await res.json()) as { queue: Queue }
    expect(queue).toEqual({
      id: expect.stringMatching(/^que_/),
      gameId: game.id,
      name: 'blitz-1.v2',
      rated: true,
      stake: '2.5',
      rake: '0.05',
      window: { initial: 50, widenPerSecond: 2.5, max: 300 },
      readyCheckS: 45,
      matchDeadlineS: 3600,
      rematchCooldownS: 600,
      draws: 'result',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      closedAt: null,
    })
    // The defaults: unstaked, no rake, no deadline, no cooldown, draws replayed.
    const plain = await createQueue(ctx, game.id)
    expect(plain).toMatchObject({ name: 'ranked', rated: false, stake: null, rake: '0', matchDeadlineS: null, rematchCooldownS: 0, draws: 'replay', closedAt: null })
    expect((await adminQueues(game.id)).map((q) => q.name).sort()).toEqual(['blitz-1.v2', 'ranked'])
    const [p] = await players(ctx, 1)
    const listed = await playerQueues(game.id, p!)
    expect(listed.status).toBe(200)
    expect(((await listed.json()) as { queues: Queue[] }).queues.map((q) => q.id).sort()).toEqual([queue.id, plain.id].sort())
  })

  test('validation: 422 with the path for a bad rake, a rake without a stake, a window shrinking, negative numbers, a ready check out of range, a bad name', async () => {
    const { game } = await createGame(ctx, 'Bad queues')
    const bad: [string, Record<string, unknown>][] = [
      ['rake over half', { ...base, stake: '1', rake: '0.6' }],
      ['rake not a number', { ...base, stake: '1', rake: 'abc' }],
      ['rake negative', { ...base, stake: '1', rake: '-0.1' }],
      ['rake without a stake', { ...base, rake: '0.1' }],
      ['max below initial', { ...base, window: { initial: 200, widenPerSecond: 1, max: 100 } }],
      ['negative initial', { ...base, window: { initial: -1, widenPerSecond: 1, max: 100 } }],
      ['negative widening', { ...base, window: { initial: 1, widenPerSecond: -1, max: 100 } }],
      ['negative cooldown', { ...base, rematchCooldownS: -1 }],
      ['stake negative', { ...base, stake: '-1' }],
      ['stake zero', { ...base, stake: '0' }],
      ['stake not an amount', { ...base, stake: 'five' }],
      ['ready check too short', { ...base, readyCheckS: 4 }],
      ['ready check too long', { ...base, readyCheckS: 601 }],
      ['ready check fractional', { ...base, readyCheckS: 30.5 }],
      ['name with a space', { ...base, name: 'two words' }],
      ['name empty', { ...base, name: '' }],
      ['name starting with a dot', { ...base, name: '.hidden' }],
      ['name too long', { ...base, name: 'x'.repeat(65) }],
      ['draws unknown', { ...base, draws: 'coin' }],
      ['no window', { name: 'ranked', rated: false, readyCheckS: 30 }],
    ]
    for (const [why, body] of bad) {
      const res = await postQueue(game.id, body)
      if (res.status !== 422) throw new Error(`${why}: ${res.status} ${await res.text()}`)
      const { error } = (await res.json()) as { error: { code: string; status: number; message: string } }
      expect(error).toMatchObject({ code: 'validation_failed', status: 422 })
    }
    const rake = await postQueue(game.id, { ...base, rake: '0.1' })
    expect(JSON.stringify(await rake.json())).toContain('body/rake')
    // The edges are allowed: a rake of one half, a window that does not widen.
    expect((await postQueue(game.id, { ...base, name: 'edge', stake: '1', rake: '0.5', window: { initial: 0, widenPerSecond: 0, max: 0 }, readyCheckS: 5 })).status).toBe(201)
    expect(await adminQueues(game.id)).toHaveLength(1)
    // An unknown game: 404 on every route.
    const unknown = await postQueue('game_nope', base)
    expect(unknown.status).toBe(404)
    expect(await errorCode(unknown)).toBe('not_found')
    expect((await ctx.handle(req('/api/v1/admin/games/game_nope/queues', { headers: admin }))).status).toBe(404)
    expect((await adminPatch(ctx, '/api/v1/admin/games/game_nope/queues/edge', { rated: true })).status).toBe(404)
    expect((await adminDelete(ctx, '/api/v1/admin/games/game_nope/queues/edge')).status).toBe(404)
    const [p] = await players(ctx, 1)
    expect((await playerQueues('game_nope', p!)).status).toBe(404)
    expect((await joinQueue(ctx, 'game_nope', 'edge', p!)).status).toBe(404)
  })

  test('one open queue per name (409 queue_exists); PATCH changes settings (checked as on create, 404 for an unknown queue); DELETE closes it: waiting tickets cancelled, the name free again', async () => {
    const { game } = await createGame(ctx, 'Lifecycle')
    const first = await createQueue(ctx, game.id, { stake: '1' })
    const again = await postQueue(game.id, base)
    expect(again.status).toBe(409)
    expect(await errorCode(again)).toBe('queue_exists')
    // Another game may use the name.
    const other = await createGame(ctx, 'Lifecycle elsewhere')
    await createQueue(ctx, other.game.id)

    ctx.clock.advance(1000)
    const patched = await adminPatch(ctx, `/api/v1/admin/games/${game.id}/queues/ranked`, { rake: '0.10', readyCheckS: 60, window: { initial: 10, widenPerSecond: 1, max: 20 }, draws: 'result', rated: true })
    expect(patched.status).toBe(200)
    const { queue: changed } = (await patched.json()) as { queue: Queue }
    expect(changed).toMatchObject({ id: first.id, stake: '1', rake: '0.1', readyCheckS: 60, window: { initial: 10, widenPerSecond: 1, max: 20 }, draws: 'result', rated: true, createdAt: first.createdAt })
    expect(changed.updatedAt).not.toBe(first.updatedAt)
    expect((await adminQueues(game.id))[0]).toEqual(changed)
    // A patch is checked against the queue as it stands: dropping the stake under a rake is refused.
    const rakeless = await adminPatch(ctx, `/api/v1/admin/games/${game.id}/queues/ranked`, { stake: null })
    expect(rakeless.status).toBe(422)
    expect((await adminPatch(ctx, `/api/v1/admin/games/${game.id}/queues/ranked`, { rake: '0.6' })).status).toBe(422)
    expect((await adminPatch(ctx, `/api/v1/admin/games/${game.id}/queues/ranked`, { window: { initial: 30, widenPerSecond: 1, max: 20 } })).status).toBe(422)
    expect((await adminQueues(game.id))[0]).toEqual(changed)
    const missing = await adminPatch(ctx, `/api/v1/admin/games/${game.id}/queues/casual`, { rated: true })
    expect(missing.status).toBe(404)
    expect(await errorCode(missing)).toBe('not_found')

    const people = await players(ctx, 2)
    await fund(ctx, people, '1')
    const tickets = [await joined(ctx, game.id, 'ranked', people[0]!), await joined(ctx, game.id, 'ranked', people[1]!)]
    const closed = await adminDelete(ctx, `/api/v1/admin/games/${game.id}/queues/ranked`)
    expect(closed.status).toBe(200)
    const { queue: gone } = (await closed.json()) as { queue: Queue }
    expect(gone.closedAt).not.toBeNull()
    for (const [i, p] of people.entries()) {
      const told = (await eventsOf(ctx, p.userId, 'ticket.cancelled')) as { data: { ticketId: string; reason: string; queue: string } }[]
      expect(told.map((e) => e.data)).toEqual([expect.objectContaining({ ticketId: tickets[i]!.id, reason: 'queue_closed', queue: 'ranked' })])
    }
    // Nothing left to pair; joining it is 404; closing it again is 404.
    expect(await ctx.services.matchmaking.matchTick()).toBe(0)
    expect((await joinQueue(ctx, game.id, 'ranked', people[0]!)).status).toBe(404)
    expect((await adminDelete(ctx, `/api/v1/admin/games/${game.id}/queues/ranked`)).status).toBe(404)
    expect((await adminPatch(ctx, `/api/v1/admin/games/${game.id}/queues/ranked`, { rated: false })).status).toBe(404)
    expect(await adminQueues(game.id)).toEqual([])
    expect(((await (await playerQueues(game.id, people[0]!)).json()) as { queues: Queue[] }).queues).toEqual([])
    expect((await adminQueues(game.id, 'include')).map((q) => [q.id, q.closedAt !== null])).toEqual([[first.id, true]])

    // The name is free: a new queue of it, and the players may join it (their old tickets are closed).
    const reborn = await createQueue(ctx, game.id)
    expect(reborn.id).not.toBe(first.id)
    await joined(ctx, game.id, 'ranked', people[0]!)
    expect((await adminQueues(game.id, 'include')).map((q) => q.id).sort()).toEqual([first.id, reborn.id].sort())
    expect(await balanceOf(ctx, people[0]!)).toBe('1')
    await expectLedgerSound(ctx)
  })
})

describe('matches without a tournament: who sees them, an operator cancelling them', () => {
  test('a player sees only their own match (404 otherwise); an operator sees any, a tournament\'s too', async () => {
    const { game } = await createGame(ctx, 'Views')
    await createQueue(ctx, game.id)
    const people = await players(ctx, 3)
    const match = await matched(game.id, 'ranked', people.slice(0, 2))
    expect(match).toMatchObject({ kind: 'queue', tournamentId: null, queue: 'ranked', status: 'waiting' })
    expect((await matchOf(ctx, match.id, people[0]!)).id).toBe(match.id)
    const stranger = await ctx.handle(req(`/api/v1/matches/${match.id}`, { headers: bearer(people[2]!) }))
    expect(stranger.status).toBe(404)
    expect(await errorCode(stranger)).toBe('not_found')
    expect((await ready(ctx, match.id, people[2]!)).status).toBe(404)
    expect((await ctx.handle(req('/api/v1/matches/match_nope', { headers: bearer(people[0]!) }))).status).toBe(404)
    expect((await ctx.handle(req('/api/v1/admin/matches/match_nope', { headers: admin }))).status).toBe(404)

    const cup = await startedTournament(ctx, game.id, people.slice(1, 3))
    const final = cup.matches.find((m) => m.status === 'running')!
    const seen = await matchOf(ctx, final.id)
    expect(seen).toMatchObject({ kind: 'tournament', tournamentId: cup.id, gameId: game.id, queue: null, challengeId: null, stake: null, status: 'running' })
    expect(seen.players.map((p) => p.userId).sort()).toEqual([people[1]!.userId, people[2]!.userId].sort())
    // A player of it sees it; one outside it does not.
    expect((await matchOf(ctx, final.id, people[2]!)).kind).toBe('tournament')
    expect((await ctx.handle(req(`/api/v1/matches/${final.id}`, { headers: bearer(people[0]!) }))).status).toBe(404)
    // A tournament's match is not cancelled alone.
    const refused = await cancelMatch(final.id)
    expect(refused.status).toBe(409)
    expect(await errorCode(refused)).toBe('conflict')
    expect((await matchOf(ctx, final.id)).status).toBe('running')
  })

  test('an operator cancels a waiting, a running and a disputed staked match: both stakes back, both told (reason operator); a decided one 409', async () => {
    const { game, gameKey } = await createGame(ctx, 'Cancelled')
    await createQueue(ctx, game.id, { stake: '3', rake: '0.1', matchDeadlineS: 60 })
    const people = await players(ctx, 8)
    await fund(ctx, people, '3')
    const [w1, w2, r1, r2, d1, d2, x1, x2] = people as [Player, Player, Player, Player, Player, Player, Player, Player]

    const waiting = await matched(game.id, 'ranked', [w1, w2])
    expect(waiting.status).toBe('waiting')
    expect(await balanceOf(ctx, w1)).toBe('0')
    expect((await ready(ctx, waiting.id, w1)).status).toBe(200)
    const noReason = await ctx.handle(postJson(`/api/v1/admin/matches/${waiting.id}/cancel`, {}, admin))
    expect(noReason.status).toBe(422)
    const cancelled = await cancelMatch(waiting.id, 'server trouble')
    expect(cancelled.status).toBe(200)
    const after = ((await cancelled.json()) as { match: MatchView }).match
    expect(after.status).toBe('cancelled')
    // The view still says who had confirmed (w1 only), cancelled or not.
    expect(after.players.map((p) => [p.userId, p.ready])).toEqual(waiting.players.map((p) => [p.userId, p.userId === w1.userId]))
    expect(after.readyBy).toBeNull()
    for (const p of [w1, w2]) {
      expect(await balanceOf(ctx, p)).toBe('3')
      expect(((await eventsOf(ctx, p.userId, 'match.cancelled')) as { data: { matchId: string; reason: string } }[]).map((e) => e.data)).toEqual([expect.objectContaining({ matchId: waiting.id, reason: 'operator' })])
    }
    // Cancelled: not again, and its ready check is over.
    expect((await cancelMatch(waiting.id)).status).toBe(409)
    expect(await errorCode(await ready(ctx, waiting.id, w1))).toBe('match_not_waiting')
    // Its ready-check job, due later, finds nothing to do: no second refund.
    ctx.clock.advance(31_000)
    await ctx.runJobs()
    expect(await balanceOf(ctx, w1)).toBe('3')
    await expectLedgerSound(ctx)

    const running = await matched(game.id, 'ranked', [r1, r2])
    for (const p of [r1, r2]) expect((await ready(ctx, running.id, p)).status).toBe(200)
    expect((await matchOf(ctx, running.id)).status).toBe('running')
    expect((await cancelMatch(running.id)).status).toBe(200)
    for (const p of [r1, r2]) {
      expect(await balanceOf(ctx, p)).toBe('3')
      expect(((await eventsOf(ctx, p.userId, 'match.cancelled'))[0] as { data: { reason: string } }).data.reason).toBe('operator')
    }
    // A claim on a cancelled match is refused.
    const session = await openSession(ctx, game.id, gameKey, r1, running.id)
    expect(session.status).toBe(409)
    // Its deadline, passing, settles nothing.
    ctx.clock.advance(61_000)
    await ctx.runJobs()
    expect((await matchOf(ctx, running.id)).status).toBe('cancelled')
    for (const p of [r1, r2]) expect(await balanceOf(ctx, p)).toBe('3')
    await expectLedgerSound(ctx)

    const disputed = await matched(game.id, 'ranked', [x1, x2])
    for (const p of [x1, x2]) expect((await ready(ctx, disputed.id, p)).status).toBe(200)
    const seat = (p: Player) => disputed.players.find((s) => s.userId === p.userId)!.participantId
    expect((await claim(ctx, game.id, gameKey, x1, disputed.id, { outcome: 'WIN', winnerParticipantId: seat(x1) })).decision).toBe('pending')
    expect((await claim(ctx, game.id, gameKey, x2, disputed.id, { outcome: 'WIN', winnerParticipantId: seat(x2) })).decision).toBe('dispute')
    expect((await cancelMatch(disputed.id)).status).toBe(200)
    for (const p of [x1, x2]) expect(await balanceOf(ctx, p)).toBe('3')
    // Nothing left to resolve.
    expect((await ctx.handle(postJson(`/api/v1/admin/matches/${disputed.id}/resolve`, { winnerParticipantId: seat(x1) }, admin))).status).toBe(409)
    expect(await balanceOf(ctx, x1)).toBe('3')
    await expectLedgerSound(ctx)

    const decided = await matched(game.id, 'ranked', [d1, d2])
    for (const p of [d1, d2]) expect((await ready(ctx, decided.id, p)).status).toBe(200)
    await agree(ctx, game.id, gameKey, await matchOf(ctx, decided.id), [d1, d2], d1)
    const late = await cancelMatch(decided.id)
    expect(late.status).toBe(409)
    expect(await errorCode(late)).toBe('conflict')
    // Pot 6, rake 10 %: 5.4 to the winner, the decision stands.
    expect(await balanceOf(ctx, d1)).toBe('5.4')
    expect(await balanceOf(ctx, d2)).toBe('0')
    expect((await matchOf(ctx, decided.id)).status).toBe('decided')
    expect((await cancelMatch('match_nope')).status).toBe(404)
    await expectLedgerSound(ctx)
  })

  test('a queue match in GET /me/matches while waiting and running (kind queue, no tournament), gone once decided; no game session during the ready check', async () => {
    const { game, gameKey } = await createGame(ctx, 'Mine')
    await createQueue(ctx, game.id)
    const people = await players(ctx, 2)
    const [a, b] = people as [Player, Player]
    const myMatches = async (p: Player) => {
      const res = await ctx.handle(req('/api/v1/me/matches', { headers: bearer(p) }))
      expect(res.status).toBe(200)
      return ((await res.json()) as { matches: { matchId: string; kind: string; tournamentId: string | null; gameId: string; status: string; participantId: string; opponent: { userId: string } | null }[] }).matches
    }
    expect(await myMatches(a)).toEqual([])
    const match = await matched(game.id, 'ranked', [a, b])
    const seatA = match.players.find((p) => p.userId === a.userId)!
    expect(await myMatches(a)).toEqual([expect.objectContaining({ matchId: match.id, kind: 'queue', tournamentId: null, gameId: game.id, status: 'waiting', participantId: seatA.participantId, opponent: expect.objectContaining({ userId: b.userId }) })])

    // The ready check is on: no session, for either player.
    for (const p of [a, b]) {
      const refused = await openSession(ctx, game.id, gameKey, p, match.id)
      expect(refused.status).toBe(409)
      expect(await errorCode(refused)).toBe('match_not_running')
    }
    expect((await ready(ctx, match.id, a)).status).toBe(200)
    expect(await errorCode(await openSession(ctx, game.id, gameKey, a, match.id))).toBe('match_not_running')
    expect((await ready(ctx, match.id, b)).status).toBe(200)
    // Confirming again once it runs answers the match as it is.
    expect((await ready(ctx, match.id, a)).status).toBe(200)
    expect((await myMatches(b)).map((m) => [m.matchId, m.kind, m.status])).toEqual([[match.id, 'queue', 'running']])

    await agree(ctx, game.id, gameKey, await matchOf(ctx, match.id), people, b)
    expect(await myMatches(a)).toEqual([])
    expect(await myMatches(b)).toEqual([])
  })
})
