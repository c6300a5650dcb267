// Every studio-facing fact of the webhook catalogue (contract §18) is queued
// by the change it reports, in that change's unit of work: one delivery per
// fact and subscribed endpoint, with the documented data, none when nobody
// subscribes, none for a change that rolled back, only the types an endpoint
// chose, nothing for a disabled endpoint. Each test subscribes a fresh
// endpoint to every type and reads exactly what its change queued there, so
// a fact queued twice, or one the change should not cause, fails it. Through
// HTTP where the change is a call; delivery itself is the loop's (other files).
import { afterAll, describe, expect, test } from 'bun:test'
import { count } from 'drizzle-orm'
import { WEBHOOK_TYPES, type WebhookType } from '../../src/modules/webhooks/catalogue'
import { publishWebhook } from '../../src/modules/webhooks/publish'
import { newId } from '../../src/shared/ids'
import { AwayCustody, banUser } from '../helpers/accounts'
import { postJson, type TestApp } from '../helpers/app'
import { admin, claim, createArenaApp, createGame, players, playOut, startedTournament, tournament, type TournamentView } from '../helpers/arena'
import { PASSWORD, registerUser } from '../helpers/auth'
import { registerServer, setResults, signedResult } from '../helpers/game-servers'
import { rakedGame, stakedWin } from '../helpers/integrity'
import { fund } from '../helpers/matchmaking'
import { funded, mint, PIN, someAddress, verify, withdrawalLeaves } from '../helpers/purchases'
import { ratingEvents } from '../helpers/ratings'

const custody = new AwayCustody()
// Withdrawals above 100 await an operator; a pair's second staked win in a day raises pair_limit (and holds it).
const ctx = await createArenaApp({ ARENA_WITHDRAWAL_APPROVAL_ABOVE: '100', ARENA_INTEGRITY_PAIR_LIMIT: '1' }, { custody })
afterAll(() => ctx.close())

/** A queued fact: its type and data (the body's own checks are factsOf's). */
type Fact = { type: string; data: unknown }

/** A new endpoint (stored as the admin API stores one) subscribed to `types`; its id. */
async function subscribe(types: readonly WebhookType[] = WEBHOOK_TYPES, enabled = true): Promise<string> {
  const id = newId('webhook')
  const now = ctx.clock.now()
  await ctx.storage.write((tx) =>
    tx.webhooks.insert(
      { id, url: 'https://hooks.example.com/arena', description: null, enabled, disabledReason: enabled ? null : 'operator', secretSealed: 'sealed', previousSecretSealed: null, previousExpiresAt: null, createdAt: now, updatedAt: now },
      types,
    ),
  )
  return id
}

/** What was queued for the endpoint, oldest first: each body checked against its row, then its type and data. */
async function factsOf(webhookId: string): Promise<Fact[]> {
  const rows = (await ctx.storage.read.webhooks.deliveriesOf(webhookId, null, 1000)).reverse()
  return rows.map((row) => {
    const body = JSON.parse(row.body) as { type: WebhookType; timestamp: string; data: unknown }
    expect(Object.keys(body)).toEqual(['type', 'timestamp', 'data'])
    expect(body.type).toBe(row.type as WebhookType)
    expect(body.timestamp).toBe(row.createdAt.toISOString())
    expect(row.status).toBe('pending')
    return { type: body.type, data: body.data }
  })
}

async function allDeliveries(): Promise<number> {
  const [row] = await ctx.peek.db.select({ n: count() }).from(ctx.peek.tables.webhookDeliveries)
  return Number(row!.n)
}

const seatsOf = (t: TournamentView, ...participantIds: string[]) => participantIds.map((id) => ({ participantId: id, userId: t.participants.find((p) => p.id === id)!.userId }))

describe('webhook facts', () => {
  // First in the file: no endpoint exists yet.
  test('nobody subscribes: the changes queue nothing', async () => {
    const [a, b] = await players(ctx, 2)
    expect((await banUser(ctx, a!.userId, { reason: 'spam' })).status).toBe(200)
    const { game } = await createGame(ctx, 'Unwatched')
    const t = await startedTournament(ctx, game.id, [a!, b!])
    const match = t.matches[0]!
    expect((await ctx.handle(postJson(`/api/v1/admin/matches/${match.id}/resolve`, { winnerParticipantId: match.slot1ParticipantId }, admin))).status).toBe(200)
    await ctx.runJobs()
    expect((await tournament(ctx, t.id)).status).toBe('completed')
    expect(await allDeliveries()).toBe(0)
  })

  test('user.created, once per account, by every way an account is created', async () => {
    const hook = await subscribe()
    const registered = await registerUser(ctx)
    const guest = await ctx.handle(postJson('/api/v1/user/login/device', { deviceSecret: 'a-device-secret-of-enough-entropy-0001', create: true }))
    expect(guest.status).toBe(200)
    const guestId = ((await guest.json()) as { user: { id: string; username: string } }).user
    // Signing in again with the same identity creates nothing.
    expect((await ctx.handle(postJson('/api/v1/user/login/device', { deviceSecret: 'a-device-secret-of-enough-entropy-0001' }))).status).toBe(200)
    // OpenID Connect and Steam prove the identity in their own modules, then create the account here (their routes call this).
    const place = { create: true, address: '203.0.113.7' }
    const oidc = await ctx.services.identities.resolve({ provider: 'oidc:google', subject: 'google-subject-1', email: 'o@example.com', emailVerified: false }, place)
    const steam = await ctx.services.identities.resolve({ provider: 'steam', subject: '76561198000000001' }, place)
    expect(await ctx.services.identities.resolve({ provider: 'steam', subject: '76561198000000001' }, place)).toEqual({ userId: steam.userId, created: false })
    const username = async (userId: string) => (await ctx.storage.read.auth.userById(userId))!.username
    expect(await factsOf(hook)).toEqual([
      { type: 'user.created', data: { userId: registered.id, username: registered.username, provider: 'password' } },
      { type: 'user.created', data: { userId: guestId.id, username: guestId.username, provider: 'device' } },
      { type: 'user.created', data: { userId: oidc.userId, username: await username(oidc.userId), provider: 'oidc:google' } },
      { type: 'user.created', data: { userId: steam.userId, username: await username(steam.userId), provider: 'steam' } },
    ])
  })

  test('a registration refused (username taken) queues nothing; a change that throws after publishing queues nothing', async () => {
    const taken = await registerUser(ctx)
    const hook = await subscribe()
    const again = await ctx.handle(postJson('/api/v1/user/register', { username: taken.username, email: `other-${taken.id}@example.com`, password: PASSWORD, country: 'FR', accept_terms: true }))
    expect(again.status).toBe(409)
    const failure = new Error('rolled back after publishing')
    let queued = 0
    const written = ctx.storage.write(async (tx) => {
      queued = await publishWebhook(tx, { type: 'user.banned', data: { userId: taken.id, reason: 'r', until: null } }, ctx.clock.now())
      throw failure
    })
    await expect(written).rejects.toBe(failure)
    // Queued inside the unit of work (this endpoint and the earlier tests'), gone with it.
    expect(queued).toBeGreaterThan(0)
    expect(await factsOf(hook)).toEqual([])
  })

  test('the subscriptions are read once per unit of work: a change after an endpoint is created, disabled or deleted in that unit of work sees it', async () => {
    const [p] = await players(ctx, 1)
    const fact = { type: 'user.banned' as const, data: { userId: p!.userId, reason: 'r', until: null } }
    const now = ctx.clock.now()
    const before = await subscribe(['user.banned'])
    const made = newId('webhook')
    const queued = await ctx.storage.write(async (tx) => {
      const counts = [await publishWebhook(tx, fact, now)]
      await tx.webhooks.insert(
        { id: made, url: 'https://hooks.example.com/new', description: null, enabled: true, disabledReason: null, secretSealed: 'sealed', previousSecretSealed: null, previousExpiresAt: null, createdAt: now, updatedAt: now },
        ['user.banned'],
      )
      counts.push(await publishWebhook(tx, fact, now))
      await tx.webhooks.update(before, { enabled: false, disabledReason: 'operator', updatedAt: now })
      counts.push(await publishWebhook(tx, fact, now))
      await tx.webhooks.delete(made)
      counts.push(await publishWebhook(tx, fact, now))
      return counts
    })
    // Each count includes the earlier tests' endpoints subscribed to every type: compare with the first.
    expect(queued.map((n) => n - queued[0]!)).toEqual([0, 1, 0, -1])
    expect((await factsOf(before)).length).toBe(2)
    // The next unit of work reads again: the endpoint the last one disabled gets nothing.
    await ctx.storage.write((tx) => publishWebhook(tx, fact, now))
    expect((await factsOf(before)).length).toBe(2)
    await ctx.storage.write((tx) => tx.webhooks.update(before, { enabled: true, disabledReason: null, updatedAt: now }))
  })

  test('user.banned; an endpoint subscribed to one type gets only that one; a disabled endpoint gets nothing', async () => {
    const [p] = await players(ctx, 1)
    const every = await subscribe()
    const bansOnly = await subscribe(['user.banned'])
    const createdOnly = await subscribe(['user.created'])
    const disabled = await subscribe(WEBHOOK_TYPES, false)
    const until = new Date(ctx.clock.now().getTime() + 86_400_000).toISOString()
    expect((await banUser(ctx, p!.userId, { reason: 'cheating', until })).status).toBe(200)
    const [other] = await players(ctx, 1)
    const banned = { type: 'user.banned', data: { userId: p!.userId, reason: 'cheating', until } }
    expect(await factsOf(bansOnly)).toEqual([banned])
    expect((await factsOf(createdOnly)).map((f) => f.type)).toEqual(['user.created'])
    expect(await factsOf(every)).toEqual([banned, { type: 'user.created', data: { userId: other!.userId, username: other!.username, provider: 'password' } }])
    expect(await factsOf(disabled)).toEqual([])
  })

  test('a tournament: match.decided for a bye and for agreed claims, rating.updated per player, tournament.completed once; a refused claim queues nothing', async () => {
    const { game, gameKey } = await createGame(ctx, 'Three')
    const people = await players(ctx, 3)
    const hook = await subscribe()
    const t = await startedTournament(ctx, game.id, people)
    const bye = t.matches.find((m) => m.status === 'decided')!
    const semi = t.matches.find((m) => m.status === 'running')!
    const byeFact = { type: 'match.decided', data: { matchId: bye.id, gameId: game.id, tournamentId: t.id, outcome: 'WIN', winnerParticipantId: bye.winnerParticipantId, winnerUserId: seatsOf(t, bye.winnerParticipantId!)[0]!.userId, players: seatsOf(t, bye.winnerParticipantId!), reason: 'bye' } }
    expect(await factsOf(hook)).toEqual([byeFact])

    const [one, two] = [semi.slot1ParticipantId!, semi.slot2ParticipantId!]
    const semiDecided = await playOut(ctx, game.id, gameKey, t, people, semi, one)
    expect(semiDecided.decision).toBe('game_advance')
    // The loser claims again: refused (the match is decided), nothing more queued.
    const loser = people.find((p) => p.userId === seatsOf(t, two)[0]!.userId)!
    const open = await ctx.handle(postJson(`/api/v1/game-sdk/${game.id}/sessions`, { matchId: semi.id }, { authorization: `Bearer ${loser.tokens.accessToken}`, 'x-game-key': gameKey }))
    expect(open.status).toBe(409)
    const semiFacts = [
      { type: 'match.decided', data: { matchId: semi.id, gameId: game.id, tournamentId: t.id, outcome: 'WIN', winnerParticipantId: one, winnerUserId: seatsOf(t, one)[0]!.userId, players: seatsOf(t, one, two), reason: 'claims_agree' } },
      ...(await ratingFacts(semi.id, seatsOf(t, one, two))),
    ]
    expect(await factsOf(hook)).toEqual([byeFact, ...semiFacts])

    const final = (await tournament(ctx, t.id)).matches.find((m) => m.status === 'running')!
    await playOut(ctx, game.id, gameKey, t, people, final, final.slot2ParticipantId!)
    expect(await ctx.runJobs()).toBeGreaterThan(0)
    // The job found nothing left to do the second time: still one tournament.completed.
    await ctx.runJobs()
    const winner = final.slot2ParticipantId!
    expect(await factsOf(hook)).toEqual([
      byeFact,
      ...semiFacts,
      { type: 'match.decided', data: { matchId: final.id, gameId: game.id, tournamentId: t.id, outcome: 'WIN', winnerParticipantId: winner, winnerUserId: seatsOf(t, winner)[0]!.userId, players: seatsOf(t, final.slot1ParticipantId!, winner), reason: 'claims_agree' } },
      ...(await ratingFacts(final.id, seatsOf(t, final.slot1ParticipantId!, winner))),
      { type: 'tournament.completed', data: { tournamentId: t.id, gameId: game.id, winnerParticipantId: winner, winnerUserId: seatsOf(t, winner)[0]!.userId } },
    ])
  })

  test('match.disputed once, an operator resolve decides it, a correction publishes ratings only; a server result decides', async () => {
    const { game, gameKey } = await createGame(ctx, 'Duel')
    const people = await players(ctx, 2)
    const hook = await subscribe()
    const t = await startedTournament(ctx, game.id, people)
    const match = t.matches[0]!
    const [one, two] = [match.slot1ParticipantId!, match.slot2ParticipantId!]
    const seat = (pid: string) => people.find((p) => p.userId === seatsOf(t, pid)[0]!.userId)!
    expect((await claim(ctx, game.id, gameKey, seat(one), match.id, { outcome: 'WIN', winnerParticipantId: one })).decision).toBe('pending')
    expect((await claim(ctx, game.id, gameKey, seat(two), match.id, { outcome: 'WIN', winnerParticipantId: two })).decision).toBe('dispute')
    const disputed = { type: 'match.disputed', data: { matchId: match.id, gameId: game.id, tournamentId: t.id, reason: 'claims_conflict' } }
    expect(await factsOf(hook)).toEqual([disputed])

    expect((await ctx.handle(postJson(`/api/v1/admin/matches/${match.id}/resolve`, { winnerParticipantId: two }, admin))).status).toBe(200)
    const resolved = [
      { type: 'match.decided', data: { matchId: match.id, gameId: game.id, tournamentId: t.id, outcome: 'WIN', winnerParticipantId: two, winnerUserId: seatsOf(t, two)[0]!.userId, players: seatsOf(t, one, two), reason: 'operator_resolved' } },
      ...(await ratingFacts(match.id, seatsOf(t, one, two))),
    ]
    expect(await factsOf(hook)).toEqual([disputed, ...resolved])

    // A correction changes the result but decides no match: only the ratings it moved again.
    expect((await ctx.handle(postJson(`/api/v1/admin/matches/${match.id}/correct`, { winnerParticipantId: one, reason: 'replay reviewed' }, admin))).status).toBe(200)
    expect((await factsOf(hook)).slice(4)).toEqual(await ratingFacts(match.id, seatsOf(t, one, two), 'correction'))

    // A game whose dedicated server reports results: its signed result decides the match.
    const served = await createGame(ctx, 'Served')
    await setResults(ctx, served.game.id, 'server')
    const signer = await registerServer(ctx, served.game.id)
    const duel = await startedTournament(ctx, served.game.id, people, { options: { rated: false } })
    const m = duel.matches[0]!
    const report = await ctx.handle(await signedResult(served.game.id, signer, { matchId: m.id, outcome: 'WIN', winnerParticipantId: m.slot1ParticipantId }, ctx.clock.now()))
    expect(report.status).toBe(200)
    expect((await factsOf(hook)).slice(6)).toEqual([
      { type: 'match.decided', data: { matchId: m.id, gameId: served.game.id, tournamentId: duel.id, outcome: 'WIN', winnerParticipantId: m.slot1ParticipantId, winnerUserId: seatsOf(duel, m.slot1ParticipantId!)[0]!.userId, players: seatsOf(duel, m.slot1ParticipantId!, m.slot2ParticipantId!), reason: 'server_result' } },
    ])
  })

  test('the deadline: a no-show decides, no claim disputes; a disqualification decides the disputed match by walkover', async () => {
    const { game, gameKey } = await createGame(ctx, 'Deadlines')
    const people = await players(ctx, 4)
    // The earlier tests' jobs (their tournaments' finalization) run first: only this test's deadlines run below.
    await ctx.runJobs()
    const hook = await subscribe()
    const t = await startedTournament(ctx, game.id, people, { options: { matchDeadlineS: 60, rated: false } })
    const [shown, empty] = t.matches.filter((m) => m.status === 'running')
    const claimant = shown!.slot1ParticipantId!
    const player = (pid: string) => people.find((p) => p.userId === seatsOf(t, pid)[0]!.userId)!
    expect((await claim(ctx, game.id, gameKey, player(claimant), shown!.id, { outcome: 'WIN', winnerParticipantId: claimant })).decision).toBe('pending')
    ctx.clock.advance(61_000)
    expect(await ctx.runJobs()).toBe(2)
    const out = empty!.slot2ParticipantId!
    expect((await ctx.handle(postJson(`/api/v1/admin/tournaments/${t.id}/participants/${out}/disqualify`, { reason: 'left the event' }, admin))).status).toBe(200)
    const walkover = empty!.slot1ParticipantId!
    const facts = await factsOf(hook)
    // The two deadlines' jobs ran in either order.
    expect([...facts.slice(0, 2)].sort((a, b) => a.type.localeCompare(b.type))).toEqual([
      { type: 'match.decided', data: { matchId: shown!.id, gameId: game.id, tournamentId: t.id, outcome: 'WIN', winnerParticipantId: claimant, winnerUserId: seatsOf(t, claimant)[0]!.userId, players: seatsOf(t, claimant, shown!.slot2ParticipantId!), reason: 'no_show' } },
      { type: 'match.disputed', data: { matchId: empty!.id, gameId: game.id, tournamentId: t.id, reason: 'deadline_passed' } },
    ])
    expect(facts.slice(2)).toEqual([
      { type: 'match.decided', data: { matchId: empty!.id, gameId: game.id, tournamentId: t.id, outcome: 'WIN', winnerParticipantId: walkover, winnerUserId: seatsOf(t, walkover)[0]!.userId, players: seatsOf(t, walkover, out), reason: 'disqualified' } },
    ])
  })

  test('payout.held for a flagged staked win, beside its match.decided', async () => {
    const { game, gameKey } = await rakedGame(ctx, 'Staked')
    const [a, b] = await players(ctx, 2)
    await fund(ctx, [a!, b!], '100')
    const hook = await subscribe()
    const first = await stakedWin(ctx, game, gameKey, a!, b!, '5')
    const second = await stakedWin(ctx, game, gameKey, a!, b!, '5')
    const facts = await factsOf(hook)
    expect(facts.map((f) => f.type)).toEqual(['match.decided', 'match.decided', 'payout.held'])
    expect(facts[0]!.data).toMatchObject({ matchId: first, gameId: game.id, tournamentId: null, winnerUserId: a!.userId, reason: 'claims_agree' })
    const hold = (await ctx.storage.read.payouts.holdsPage('held', null, 100)).find((h) => h.matchId === second)
    expect(facts[2]).toEqual({ type: 'payout.held', data: { holdId: hold!.id, userId: a!.userId, kind: 'stake', amount: '9', asset: 'USDC', matchId: second, tournamentId: null, signals: ['pair_limit'] } })
  })

  test('withdrawals: requested (with what it became), signed, failed, rejected', async () => {
    const p = await funded(ctx, '500')
    const hook = await subscribe()
    const withdraw = async (amount: string) => {
      const destinationAddress = someAddress()
      const res = await verify(ctx, p, await mint(ctx, p), { pin: PIN, amount, destinationAddress, idempotencyKey: crypto.randomUUID() })
      expect(res.status).toBe(200)
      return { ...((await res.json()) as { withdrawal: { id: string; signature?: string } }).withdrawal, destinationAddress }
    }
    const base = (id: string, amount: string) => ({ withdrawalId: id, userId: p.userId, amount, asset: 'USDC' })
    const signed = await withdraw('10')
    expect(signed.signature).toBeString()
    custody.refusing = true
    const failed = await withdraw('20')
    custody.refusing = false
    expect((await withdrawalLeaves(ctx, failed.id, 'pending_signature')).status).toBe('failed')
    const big = await withdraw('150')
    expect((await ctx.handle(postJson(`/api/v1/admin/withdrawals/${big.id}/reject`, { reason: 'not this one' }, admin))).status).toBe(200)
    expect(await factsOf(hook)).toEqual([
      { type: 'withdrawal.requested', data: { ...base(signed.id, '10'), destinationAddress: signed.destinationAddress, status: 'pending_signature' } },
      { type: 'withdrawal.signed', data: { ...base(signed.id, '10'), destinationAddress: signed.destinationAddress, signature: signed.signature! } },
      { type: 'withdrawal.requested', data: { ...base(failed.id, '20'), destinationAddress: failed.destinationAddress, status: 'pending_signature' } },
      { type: 'withdrawal.failed', data: { ...base(failed.id, '20'), reason: 'provider refused: destination blocked' } },
      { type: 'withdrawal.requested', data: { ...base(big.id, '150'), destinationAddress: big.destinationAddress, status: 'awaiting_approval' } },
      { type: 'withdrawal.rejected', data: { ...base(big.id, '150'), reason: 'not this one' } },
    ])
  })
})

/** The rating.updated facts of a decision, in seat order: what each player's own `rating.updated` event for the match says, with whose it is. */
async function ratingFacts(matchId: string, seats: { userId: string }[], reason: 'match' | 'correction' = 'match'): Promise<Fact[]> {
  const out: Fact[] = []
  for (const { userId } of seats) {
    const told = (await ratingEvents(ctx, userId)).filter((e) => e.matchId === matchId && e.reason === reason)
    expect(told).toHaveLength(1)
    const { gameId, seasonId, change, rating } = told[0]!
    out.push({ type: 'rating.updated', data: { userId, gameId, seasonId, matchId, reason, change, rating: rating.rating, deviation: rating.deviation, display: rating.display, provisional: rating.provisional } })
  }
  return out
}
