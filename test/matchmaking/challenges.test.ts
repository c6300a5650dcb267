// Challenges (contract §16) through HTTP, on both engines: declined, expired
// (read as expired, then marked by the sweep), accepted with a stake and the
// game's challenge rake (the match runs at once, the winner paid the pot less
// the rake; a draw replayed), funds refused on either side, withdrawn; who
// may do what; the request's bounds; the caller's list.
import { afterAll, describe, expect, test } from 'bun:test'
import { postJson, req } from '../helpers/app'
import { admin, createArenaApp, createGame, players, type Player } from '../helpers/arena'
import { eventsOf } from '../helpers/account'
import { adminPatch, agree, answerChallenge, balanceOf, challenge, errorCode as codeOf, expectLedgerSound, fund, matchOf, seatOf, type Challenge } from '../helpers/matchmaking'

const ctx = await createArenaApp()
afterAll(() => ctx.close())

const bearer = (p: Player) => ({ authorization: `Bearer ${p.tokens.accessToken}` })

async function made(gameId: string, from: Player, body: Record<string, unknown>): Promise<Challenge> {
  const res = await challenge(ctx, gameId, from, body)
  expect(res.status).toBe(201)
  return ((await res.json()) as { challenge: Challenge }).challenge
}

async function answered(res: Response, status = 200): Promise<Challenge> {
  expect(res.status).toBe(status)
  return ((await res.json()) as { challenge: Challenge }).challenge
}

async function challengeOf(id: string, player: Player): Promise<Response> {
  return ctx.handle(req(`/api/v1/challenges/${id}`, { headers: bearer(player) }))
}

async function mine(player: Player, status?: 'open' | 'all'): Promise<Challenge[]> {
  const res = await ctx.handle(req(`/api/v1/me/challenges${status ? `?status=${status}` : ''}`, { headers: bearer(player) }))
  expect(res.status).toBe(200)
  return ((await res.json()) as { challenges: Challenge[] }).challenges
}

async function pair(): Promise<[Player, Player]> {
  const people = await players(ctx, 2)
  return [people[0]!, people[1]!]
}

describe('challenges', () => {
  test('declined: the challenger told, no match, no money moved', async () => {
    const { game } = await createGame(ctx, 'Declined')
    const [a, b] = await pair()
    await fund(ctx, [a, b], '5')
    const c = await made(game.id, a, { opponent: b.username, stake: '5' })
    expect(c).toMatchObject({ status: 'open', stake: '5', matchId: null, closedAt: null, challenger: { userId: a.userId, username: a.username }, opponent: { userId: b.userId, username: b.username } })
    expect(((await eventsOf(ctx, b.userId, 'challenge.received'))[0] as { data: { challengeId: string } }).data.challengeId).toBe(c.id)
    const declined = await answered(await answerChallenge(ctx, c.id, 'decline', b))
    expect(declined).toMatchObject({ status: 'declined', matchId: null })
    expect(declined.closedAt).not.toBeNull()
    expect(((await eventsOf(ctx, a.userId, 'challenge.declined'))[0] as { data: { challengeId: string } }).data.challengeId).toBe(c.id)
    expect(await eventsOf(ctx, b.userId, 'challenge.declined')).toHaveLength(0)
    expect(await eventsOf(ctx, a.userId, 'match.ready')).toHaveLength(0)
    expect(await balanceOf(ctx, a)).toBe('5')
    expect(await balanceOf(ctx, b)).toBe('5')
    // Closed: neither accepted nor declined again.
    expect(await codeOf(await answerChallenge(ctx, c.id, 'accept', b))).toBe('challenge_closed')
    expect((await answerChallenge(ctx, c.id, 'decline', b)).status).toBe(409)
    await expectLedgerSound(ctx)
  })

  test('expired: read as expired at once, refused with challenge_closed; the sweep marks it and tells both', async () => {
    const { game } = await createGame(ctx, 'Expired')
    const [a, b] = await pair()
    const c = await made(game.id, a, { opponent: b.userId, expiresInS: 60 })
    expect(Date.parse(c.expiresAt) - Date.parse(c.createdAt)).toBe(60_000)
    ctx.clock.advance(60_000)
    const refused = await answerChallenge(ctx, c.id, 'accept', b)
    expect(refused.status).toBe(409)
    expect(await codeOf(refused)).toBe('challenge_closed')
    expect((await answered(await challengeOf(c.id, a))).status).toBe('expired')
    expect(await eventsOf(ctx, a.userId, 'challenge.expired')).toHaveLength(0)
    expect(await ctx.services.challenges.expireDue()).toBeGreaterThanOrEqual(1)
    expect(await ctx.services.challenges.expireDue()).toBe(0)
    const shown = await answered(await challengeOf(c.id, b))
    expect(shown).toMatchObject({ status: 'expired', matchId: null })
    for (const p of [a, b]) expect(((await eventsOf(ctx, p.userId, 'challenge.expired')) as { data: { challengeId: string } }[]).map((e) => e.data.challengeId)).toEqual([c.id])
    expect((await mine(a, 'open')).map((x) => x.id)).not.toContain(c.id)
    expect(await codeOf(await answerChallenge(ctx, c.id, 'cancel', a))).toBe('challenge_closed')
  })

  test('accepted with a stake and a 10 % challenge rake: runs at once, both escrowed, a draw replayed, the winner paid the pot less the rake', async () => {
    const { game, gameKey } = await createGame(ctx, 'Staked challenge')
    for (const challengeRake of ['0.6', 'abc', '-0.1']) expect((await adminPatch(ctx, `/api/v1/admin/games/${game.id}`, { challengeRake })).status).toBe(422)
    const patched = await adminPatch(ctx, `/api/v1/admin/games/${game.id}`, { challengeRake: '0.10' })
    expect(patched.status).toBe(200)
    expect(((await patched.json()) as { game: { challengeRake: string } }).game.challengeRake).toBe('0.1')
    const [a, b] = await pair()
    await fund(ctx, [a, b], '8')
    const c = await made(game.id, a, { opponent: b.username, stake: '5' })
    // The stake stays in the wallet until acceptance.
    expect(await balanceOf(ctx, a)).toBe('8')
    const accepted = await answered(await answerChallenge(ctx, c.id, 'accept', b))
    expect(accepted.status).toBe('accepted')
    expect(accepted.matchId).not.toBeNull()
    const matchId = accepted.matchId!
    expect(((await eventsOf(ctx, a.userId, 'challenge.accepted'))[0] as { data: { matchId: string } }).data.matchId).toBe(matchId)
    for (const p of [a, b]) expect(await eventsOf(ctx, p.userId, 'match.ready')).toHaveLength(1)
    expect(await balanceOf(ctx, a)).toBe('3')
    expect(await balanceOf(ctx, b)).toBe('3')
    await expectLedgerSound(ctx)

    const match = await matchOf(ctx, matchId, b)
    expect(match).toMatchObject({ kind: 'challenge', tournamentId: null, queue: null, challengeId: c.id, status: 'running', rated: false, stake: '5', rake: '0.1', readyBy: null, decision: null })
    expect(match.players.map((p) => p.ready)).toEqual([true, true])
    expect(match.players.map((p) => p.userId).sort()).toEqual([a.userId, b.userId].sort())
    const listed = await ctx.handle(req('/api/v1/me/matches', { headers: bearer(a) }))
    expect(((await listed.json()) as { matches: unknown[] }).matches).toEqual([expect.objectContaining({ matchId, kind: 'challenge', tournamentId: null, gameId: game.id, status: 'running' })])

    // Challenges are not drawsAreResults: an agreed draw is played again.
    const draw = await agree(ctx, game.id, gameKey, match, [a, b], null)
    expect(draw.decision).toBe('replay')
    expect((await matchOf(ctx, matchId)).status).toBe('running')
    expect(await balanceOf(ctx, a)).toBe('3')

    const won = await agree(ctx, game.id, gameKey, match, [a, b], b)
    expect(won).toMatchObject({ decision: 'game_advance', outcome: 'WIN', winnerParticipantId: seatOf(match, b), tournamentId: null })
    // Pot 10, rake 10 % = 1 to the house, 9 to the winner.
    expect(await balanceOf(ctx, b)).toBe('12')
    expect(await balanceOf(ctx, a)).toBe('3')
    expect((await matchOf(ctx, matchId, a)).decision).toMatchObject({ outcome: 'WIN', winnerParticipantId: seatOf(match, b), decidedBy: 'played' })
    // Accepted once: a second accept is refused and moves nothing.
    expect(await codeOf(await answerChallenge(ctx, c.id, 'accept', b))).toBe('challenge_closed')
    expect(await balanceOf(ctx, b)).toBe('12')
    await expectLedgerSound(ctx)
  })

  test('the acceptor without the stake: 422 insufficient_funds, nothing changes, the challenge stays open', async () => {
    const { game } = await createGame(ctx, 'Acceptor broke')
    const [a, b] = await pair()
    await fund(ctx, [a], '5')
    await fund(ctx, [b], '4.99')
    const c = await made(game.id, a, { opponent: b.username, stake: '5' })
    const refused = await answerChallenge(ctx, c.id, 'accept', b)
    expect(refused.status).toBe(422)
    expect(await codeOf(refused)).toBe('insufficient_funds')
    expect(await balanceOf(ctx, a)).toBe('5')
    expect(await balanceOf(ctx, b)).toBe('4.99')
    expect((await answered(await challengeOf(c.id, a))).status).toBe('open')
    expect(await eventsOf(ctx, a.userId, 'challenge.cancelled')).toHaveLength(0)
    expect(await eventsOf(ctx, a.userId, 'match.ready')).toHaveLength(0)
    // Funded, the same challenge is accepted.
    await fund(ctx, [b], '0.01')
    expect((await answered(await answerChallenge(ctx, c.id, 'accept', b))).status).toBe('accepted')
    expect(await balanceOf(ctx, b)).toBe('0')
    await expectLedgerSound(ctx)
  })

  test('the challenger without the stake at acceptance: 409 challenge_unfunded, the challenge cancelled, both told', async () => {
    const { game } = await createGame(ctx, 'Challenger broke')
    const [a, b] = await pair()
    await fund(ctx, [a, b], '5')
    // An unfunded challenger cannot even make the challenge.
    const poor = (await players(ctx, 1))[0]!
    const refused = await challenge(ctx, game.id, poor, { opponent: b.username, stake: '5' })
    expect(refused.status).toBe(422)
    expect(await codeOf(refused)).toBe('insufficient_funds')

    const c = await made(game.id, a, { opponent: b.username, stake: '5' })
    const adjusted = await ctx.handle(postJson(`/api/v1/admin/wallets/${a.userId}/adjust`, { amount: '-1', reason: 'chargeback', reference: `adj-${a.userId}` }, admin))
    expect(adjusted.status).toBe(200)
    const unfunded = await answerChallenge(ctx, c.id, 'accept', b)
    expect(unfunded.status).toBe(409)
    expect(await codeOf(unfunded)).toBe('challenge_unfunded')
    expect((await answered(await challengeOf(c.id, b))).status).toBe('cancelled')
    for (const p of [a, b]) expect(((await eventsOf(ctx, p.userId, 'challenge.cancelled')) as { data: { challengeId: string; reason: string } }[]).map((e) => e.data)).toEqual([expect.objectContaining({ challengeId: c.id, reason: 'challenger_unfunded' })])
    expect(await balanceOf(ctx, a)).toBe('4')
    expect(await balanceOf(ctx, b)).toBe('5')
    expect(await eventsOf(ctx, b.userId, 'match.ready')).toHaveLength(0)
    await expectLedgerSound(ctx)
  })

  test('withdrawn by the challenger: the opponent told; only the opponent accepts or declines, only the challenger withdraws, a stranger sees nothing', async () => {
    const { game } = await createGame(ctx, 'Withdrawn')
    const [a, b] = await pair()
    const stranger = (await players(ctx, 1))[0]!
    const c = await made(game.id, a, { opponent: b.userId })
    for (const how of ['accept', 'decline'] as const) {
      const res = await answerChallenge(ctx, c.id, how, a)
      expect(res.status).toBe(403)
      expect(await codeOf(res)).toBe('forbidden')
    }
    const notYours = await answerChallenge(ctx, c.id, 'cancel', b)
    expect(notYours.status).toBe(403)
    for (const how of ['accept', 'decline', 'cancel'] as const) {
      const res = await answerChallenge(ctx, c.id, how, stranger)
      expect(res.status).toBe(404)
      expect(await codeOf(res)).toBe('not_found')
    }
    expect((await challengeOf(c.id, stranger)).status).toBe(404)
    expect((await challengeOf('chl_nope', a)).status).toBe(404)
    expect((await answered(await challengeOf(c.id, b))).status).toBe('open')

    const withdrawn = await answered(await answerChallenge(ctx, c.id, 'cancel', a))
    expect(withdrawn.status).toBe('cancelled')
    const told = (await eventsOf(ctx, b.userId, 'challenge.cancelled')) as { data: { challengeId: string; reason: string } }[]
    expect(told.map((e) => e.data)).toEqual([expect.objectContaining({ challengeId: c.id, reason: 'withdrawn' })])
    expect(await eventsOf(ctx, a.userId, 'challenge.cancelled')).toHaveLength(0)
    expect(await codeOf(await answerChallenge(ctx, c.id, 'accept', b))).toBe('challenge_closed')
  })

  test('the request: yourself 422, an unknown opponent or game 404, expiresInS within 30 s – a day, a bad stake 422', async () => {
    const { game } = await createGame(ctx, 'Bounds')
    const [a, b] = await pair()
    const self = await challenge(ctx, game.id, a, { opponent: a.username })
    expect(self.status).toBe(422)
    expect(await codeOf(self)).toBe('validation_failed')
    expect((await challenge(ctx, game.id, a, { opponent: a.userId })).status).toBe(422)
    const unknown = await challenge(ctx, game.id, a, { opponent: 'nobody-by-this-name' })
    expect(unknown.status).toBe(404)
    expect(await codeOf(unknown)).toBe('not_found')
    expect((await challenge(ctx, 'game_nope', a, { opponent: b.username })).status).toBe(404)
    for (const expiresInS of [29, 86_401]) {
      const res = await challenge(ctx, game.id, a, { opponent: b.username, expiresInS })
      expect(res.status).toBe(422)
      expect(await codeOf(res)).toBe('validation_failed')
    }
    for (const stake of ['abc', '-1', '0']) {
      const res = await challenge(ctx, game.id, a, { opponent: b.username, stake })
      expect(res.status).toBe(422)
    }
    expect((await challenge(ctx, game.id, a, {})).status).toBe(422)
    const longest = await made(game.id, a, { opponent: b.username, expiresInS: 86_400 })
    expect(Date.parse(longest.expiresAt) - Date.parse(longest.createdAt)).toBe(86_400_000)
    const shortest = await made(game.id, a, { opponent: b.userId, expiresInS: 30 })
    expect(shortest.expiresAt).not.toBe(longest.expiresAt)
    // Unstaked by default, expiring in 300 s.
    const plain = await made(game.id, a, { opponent: b.username })
    expect(plain.stake).toBeNull()
    expect(Date.parse(plain.expiresAt) - Date.parse(plain.createdAt)).toBe(300_000)
  })

  test('at most 20 open challenges per challenger (the 21st 409 conflict); GET /me/challenges lists made and received, open or all', async () => {
    const { game } = await createGame(ctx, 'Bound')
    const people = await players(ctx, 3)
    const [a, b, c] = people as [Player, Player, Player]
    const made20: Challenge[] = []
    for (let i = 0; i < 20; i++) made20.push(await made(game.id, a, { opponent: i % 2 === 0 ? b.username : c.userId }))
    const over = await challenge(ctx, game.id, a, { opponent: b.username })
    expect(over.status).toBe(409)
    expect(await codeOf(over)).toBe('conflict')
    // Another challenger is not bound by a's count.
    const received = await made(game.id, b, { opponent: a.username })
    // Closing one frees a place.
    await answered(await answerChallenge(ctx, made20[0]!.id, 'decline', b))
    const twentieth = await made(game.id, a, { opponent: b.username })

    const openOfA = await mine(a, 'open')
    expect(openOfA).toHaveLength(21)
    expect(openOfA.every((x) => x.status === 'open')).toBe(true)
    expect(openOfA.map((x) => x.id)).toContain(received.id)
    expect(openOfA.map((x) => x.id)).not.toContain(made20[0]!.id)
    // Newest first.
    expect(openOfA[0]!.id).toBe(twentieth.id)
    const all = await mine(a, 'all')
    expect(all).toHaveLength(22)
    expect(all.find((x) => x.id === made20[0]!.id)!.status).toBe('declined')
    expect(await mine(a)).toEqual(all)
    // The opponent sees what they received; an expired challenge leaves the open list at once.
    expect((await mine(c, 'open')).map((x) => x.id).sort()).toEqual(made20.filter((_, i) => i % 2 === 1).map((x) => x.id).sort())
    ctx.clock.advance(300_000)
    expect(await mine(c, 'open')).toEqual([])
    expect((await mine(c, 'all')).every((x) => x.status === 'expired')).toBe(true)
    // Expired challenges are not open ones: a's bound is free again before any sweep marks them.
    expect(await mine(a, 'open')).toEqual([])
    await made(game.id, a, { opponent: b.username })
    const bad = await ctx.handle(req('/api/v1/me/challenges?status=closed', { headers: bearer(a) }))
    expect(bad.status).toBe(422)
  })
})

describe('challenges at once', () => {
  test('an accept, a second accept, a decline and a withdrawal at the same time: exactly one wins, the stakes escrowed once', async () => {
    const { game } = await createGame(ctx, 'Race')
    const [a, b] = await pair()
    await fund(ctx, [a, b], '5')
    const c = await made(game.id, a, { opponent: b.username, stake: '5' })
    const answers = await Promise.all([answerChallenge(ctx, c.id, 'accept', b), answerChallenge(ctx, c.id, 'accept', b), answerChallenge(ctx, c.id, 'decline', b), answerChallenge(ctx, c.id, 'cancel', a)])
    const won = answers.filter((r) => r.status === 200)
    expect(won).toHaveLength(1)
    for (const r of answers.filter((r) => r.status !== 200)) {
      expect(r.status).toBe(409)
      expect(await codeOf(r)).toBe('challenge_closed')
    }
    const final = (await answered(won[0]!)).status
    const shown = await answered(await challengeOf(c.id, a))
    expect(shown.status).toBe(final)
    const escrowed = final === 'accepted'
    expect(await balanceOf(ctx, a)).toBe(escrowed ? '0' : '5')
    expect(await balanceOf(ctx, b)).toBe(escrowed ? '0' : '5')
    expect(await eventsOf(ctx, a.userId, 'match.ready')).toHaveLength(escrowed ? 1 : 0)
    await expectLedgerSound(ctx)
  })
})
