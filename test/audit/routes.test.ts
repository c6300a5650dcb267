// The audit log over the admin API (contract §11): every admin route that
// acts appends exactly one record naming who (the admin token: `token`,
// admin; a named operator's session: its id, name and role), via `api`, the
// action, its target and reason, the request id the response carried, and
// the time; a refused action and an idempotent replay that changes nothing
// append none; GET /api/v1/admin/audit pages the log.
import { afterAll, describe, expect, test } from 'bun:test'
import { postJson, req } from '../helpers/app'
import { admin, createArenaApp, createGame, players, type TournamentView } from '../helpers/arena'
import { registerUser } from '../helpers/auth'
import { funded, mint, PIN, someAddress, verify } from '../helpers/purchases'
import { bearer, signedInOperator } from '../helpers/operators'
import type { StoredAuditRecord } from '../../src/modules/audit/store'
import { acting, recordsAfter } from './support'

const ctx = await createArenaApp({ ARENA_WITHDRAWAL_APPROVAL_ABOVE: '100' })
afterAll(() => ctx.close())

const TOKEN = { operatorId: null, operatorName: 'token', role: 'admin', via: 'api' }

/** Exactly one record, by the admin token unless told, for this request, now. */
function one(result: Awaited<ReturnType<typeof acting>>, expected: { action: string; target: string; reason?: string; details?: Record<string, unknown> }, who: Record<string, unknown> = TOKEN): StoredAuditRecord {
  expect(result.records).toHaveLength(1)
  const record = result.records[0]!
  expect(result.requestId).toBeTruthy()
  expect(record).toMatchObject({ ...who, action: expected.action, target: expected.target, reason: expected.reason ?? null, requestId: result.requestId })
  expect(record.at.getTime()).toBe(ctx.clock.now().getTime())
  if (expected.details) expect(record.details).toEqual(expected.details)
  return record
}

const post = (path: string, body: unknown = {}, headers: Record<string, string> = admin) => postJson(`/api/v1/admin${path}`, body, headers)
const inDays = (days: number) => new Date(ctx.clock.now().getTime() + days * 86_400_000).toISOString()

describe('every admin route that acts records one entry', () => {
  test('games: create and rotate-key, never the key itself', async () => {
    const created = await acting(ctx, post('/games', { name: 'Audit Duel' }), 201)
    const gameId = created.body.game.id as string
    const record = one(created, { action: 'game.create', target: gameId, details: { name: 'Audit Duel', rating: { tau: 0.5, inactivityPeriodS: 604800 }, challengeRake: '0', results: 'claims' } })
    expect(JSON.stringify(record)).not.toContain(created.body.gameKey)

    const rotated = await acting(ctx, post(`/games/${gameId}/rotate-key`), 200)
    expect(JSON.stringify(one(rotated, { action: 'game.rotate_key', target: gameId }))).not.toContain(rotated.body.gameKey)
    // An unknown game: 404, nothing recorded.
    expect((await acting(ctx, post('/games/gam_00000000000000000000000000000000/rotate-key'), 404)).records).toEqual([])
  })

  test('tournaments: create, fund (a replay records nothing), start, resolve, correct, disqualify, cancel', async () => {
    const { game } = await createGame(ctx, 'Audit Cup Game')
    const people = await players(ctx, 4)
    const created = await acting(ctx, post('/tournaments', { gameId: game.id, name: 'Audit Cup', format: 'single_elimination', participants: people.map((p) => p.userId), prizes: ['5'] }), 201)
    const t = created.body.tournament as TournamentView
    one(created, { action: 'tournament.create', target: t.id, details: { gameId: game.id, name: 'Audit Cup', format: 'single_elimination', participants: 4, prizes: ['5'] } })

    const funding = { amount: '5', reference: 'audit-pool' }
    one(await acting(ctx, post(`/tournaments/${t.id}/fund`, funding), 200), {
      action: 'tournament.fund',
      target: t.id,
      details: { amount: '5', asset: 'USDC', reference: 'audit-pool', escrow: '5' },
    })
    expect((await acting(ctx, post(`/tournaments/${t.id}/fund`, funding), 200)).records).toEqual([])
    expect((await acting(ctx, post(`/tournaments/${t.id}/fund`, { amount: '6', reference: 'audit-pool' }), 409)).records).toEqual([])

    const started = await acting(ctx, post(`/tournaments/${t.id}/start`), 200)
    one(started, { action: 'tournament.start', target: t.id, details: { from: 'draft' } })
    expect((await acting(ctx, post(`/tournaments/${t.id}/start`), 409)).records).toEqual([])
    const [semi1, semi2] = (started.body.tournament as TournamentView).matches.filter((m) => m.round === 1)

    one(await acting(ctx, post(`/matches/${semi1!.id}/resolve`, { winnerParticipantId: semi1!.slot1ParticipantId }), 200), {
      action: 'match.resolve',
      target: semi1!.id,
      details: { tournamentId: t.id, winnerParticipantId: semi1!.slot1ParticipantId, previousStatus: 'running' },
    })
    // Resolving a decided match: 409, nothing recorded.
    expect((await acting(ctx, post(`/matches/${semi1!.id}/resolve`, { winnerParticipantId: semi1!.slot1ParticipantId }), 409)).records).toEqual([])

    one(await acting(ctx, post(`/matches/${semi1!.id}/correct`, { winnerParticipantId: semi1!.slot2ParticipantId, reason: 'wrong button' }), 200), {
      action: 'match.correct',
      target: semi1!.id,
      reason: 'wrong button',
      details: { tournamentId: t.id, winnerParticipantId: semi1!.slot2ParticipantId, previousWinnerParticipantId: semi1!.slot1ParticipantId },
    })

    const out = semi2!.slot1ParticipantId!
    const disqualified = await acting(ctx, post(`/tournaments/${t.id}/participants/${out}/disqualify`, { reason: 'smurf account' }), 200)
    one(disqualified, {
      action: 'participant.disqualify',
      target: out,
      reason: 'smurf account',
      details: { tournamentId: t.id, userId: t.participants.find((p) => p.id === out)!.userId, matchId: semi2!.id },
    })
    expect((await acting(ctx, post(`/tournaments/${t.id}/participants/${out}/disqualify`, { reason: 'again' }), 409)).records).toEqual([])

    const registration = await acting(
      ctx,
      post('/tournaments', { gameId: game.id, name: 'Open Cup', format: 'round_robin', registration: { closesAt: inDays(1), maxPlayers: 8 }, startsAt: inDays(2), entryFee: '1' }),
      201,
    )
    const open = registration.body.tournament as TournamentView
    one(registration, {
      action: 'tournament.create',
      target: open.id,
      details: { gameId: game.id, name: 'Open Cup', format: 'round_robin', maxPlayers: 8, closesAt: inDays(1), startsAt: inDays(2), entryFee: '1' },
    })
    one(await acting(ctx, post(`/tournaments/${open.id}/cancel`, { reason: 'no venue' }), 200), {
      action: 'tournament.cancel',
      target: open.id,
      reason: 'no venue',
      details: { previousStatus: 'registration', cancelledMatches: 0 },
    })
    expect((await acting(ctx, post(`/tournaments/${open.id}/cancel`, { reason: 'twice' }), 409)).records).toEqual([])
  })

  test('wallets: credit and adjust (a replayed reference records nothing); withdrawals: approve and reject (again: nothing)', async () => {
    const [p] = await players(ctx, 1)
    const credited = await acting(ctx, post(`/wallets/${p!.userId}/credit`, { amount: '500', reference: 'audit-credit' }), 200)
    one(credited, { action: 'wallet.credit', target: p!.userId, details: { asset: 'USDC', amount: '500', reference: 'audit-credit', balance: '500' } })
    expect((await acting(ctx, post(`/wallets/${p!.userId}/credit`, { amount: '500', reference: 'audit-credit' }), 200)).records).toEqual([])
    expect((await acting(ctx, post(`/wallets/${p!.userId}/credit`, { amount: 'ten', reference: 'audit-bad' }), 422)).records).toEqual([])

    const adjusted = await acting(ctx, post(`/wallets/${p!.userId}/adjust`, { amount: '-20', reason: 'chargeback', reference: 'audit-adjust' }), 200)
    const record = one(adjusted, { action: 'wallet.adjust', target: p!.userId, reason: 'chargeback' })
    expect(record.details).toMatchObject({ asset: 'USDC', amount: '-20', reference: 'audit-adjust', balance: '480' })
    expect(record.details.transactionId).toBeString()
    expect((await acting(ctx, post(`/wallets/${p!.userId}/adjust`, { amount: '-20', reason: 'chargeback', reference: 'audit-adjust' }), 200)).records).toEqual([])
    expect((await acting(ctx, post(`/wallets/${p!.userId}/adjust`, { amount: '-9999', reason: 'too much', reference: 'audit-adjust-2' }), 422)).records).toEqual([])

    const payer = await funded(ctx, '1000')
    const withdraw = async (amount: string, key: string) => {
      const destinationAddress = someAddress()
      const res = await verify(ctx, payer, await mint(ctx, payer), { pin: PIN, amount, destinationAddress, idempotencyKey: key })
      const { withdrawal } = (await res.json()) as { withdrawal: { id: string; status: string } }
      expect(withdrawal.status).toBe('awaiting_approval')
      return { id: withdrawal.id, destinationAddress }
    }
    const first = await withdraw('200', 'audit-w1')
    one(await acting(ctx, post(`/withdrawals/${first.id}/approve`), 200), {
      action: 'withdrawal.approve',
      target: first.id,
      details: { userId: payer.userId, amount: '200', asset: 'USDC', destinationAddress: first.destinationAddress, status: 'pending_signature' },
    })
    expect((await acting(ctx, post(`/withdrawals/${first.id}/approve`), 200)).records).toEqual([])
    expect((await acting(ctx, post(`/withdrawals/${first.id}/reject`, { reason: 'late' }), 409)).records).toEqual([])

    const second = await withdraw('300', 'audit-w2')
    one(await acting(ctx, post(`/withdrawals/${second.id}/reject`, { reason: 'looks like fraud' }), 200), {
      action: 'withdrawal.reject',
      target: second.id,
      reason: 'looks like fraud',
      details: { userId: payer.userId, amount: '300', asset: 'USDC', destinationAddress: second.destinationAddress, was: 'awaiting_approval' },
    })
    expect((await acting(ctx, post(`/withdrawals/${second.id}/reject`, { reason: 'looks like fraud' }), 200)).records).toEqual([])
  })

  test('users: ban, unban (again: nothing), delete (naming the account by id only); an unknown user records nothing', async () => {
    const user = await registerUser(ctx)
    const until = inDays(3)
    one(await acting(ctx, post(`/users/${user.id}/ban`, { reason: 'cheating', until }), 200), {
      action: 'user.ban',
      target: user.id,
      reason: 'cheating',
      details: { until, revokedSessions: 0, replaced: false },
    })
    one(await acting(ctx, post(`/users/${user.id}/ban`, { reason: 'cheating, for good' }), 200), {
      action: 'user.ban',
      target: user.id,
      reason: 'cheating, for good',
      details: { until: null, revokedSessions: 0, replaced: true },
    })
    expect((await acting(ctx, post('/users/usr_00000000000000000000000000000000/ban', { reason: 'nobody' }), 404)).records).toEqual([])

    one(await acting(ctx, post(`/users/${user.id}/unban`), 200), {
      action: 'user.unban',
      target: user.id,
      details: { bannedAt: ctx.clock.now().toISOString(), until: null, banReason: 'cheating, for good', inForce: true },
    })
    expect((await acting(ctx, post(`/users/${user.id}/unban`), 200)).records).toEqual([])

    const deleted = await acting(ctx, post(`/users/${user.id}/delete`, { reason: 'asked by mail' }), 200)
    const record = one(deleted, { action: 'user.delete', target: user.id, reason: 'asked by mail', details: {} })
    expect(JSON.stringify(record)).not.toContain(user.email)
    expect(JSON.stringify(record)).not.toContain(user.username)
    expect((await acting(ctx, post(`/users/${user.id}/delete`, { reason: 'again' }), 409)).records).toEqual([])
  })

  test('a reason with a lone surrogate (JSON allows one) is recorded as the database stores it, U+FFFD, and the chain still verifies', async () => {
    const user = await registerUser(ctx)
    // Sent as raw JSON text: the escape reaches the server as a lone surrogate.
    const body = '{"reason":"spam \\ud800 here"}'
    const request = req(`/api/v1/admin/users/${user.id}/ban`, { method: 'POST', headers: { ...admin, 'content-type': 'application/json' }, body })
    const banned = await acting(ctx, request, 200)
    one(banned, { action: 'user.ban', target: user.id, reason: 'spam \ufffd here' })
    expect(await ctx.services.audit.verify(ctx.storage.read.audit)).toEqual({ ok: true, rows: expect.any(Number) })
  })

  test("a named operator's API session: its id, name and role", async () => {
    const moderator = await signedInOperator(ctx, 'moderator')
    const user = await registerUser(ctx)
    const banned = await acting(ctx, post(`/users/${user.id}/ban`, { reason: 'spam' }, bearer(moderator.token)), 200)
    one(banned, { action: 'user.ban', target: user.id, reason: 'spam' }, { operatorId: moderator.operator.id, operatorName: moderator.operator.name, role: 'moderator', via: 'api' })
    // A role too low acts on nothing and records nothing.
    const viewer = await signedInOperator(ctx, 'viewer')
    expect((await acting(ctx, post(`/users/${user.id}/unban`, {}, bearer(viewer.token)), 403)).records).toEqual([])
  })
})

describe('GET /api/v1/admin/audit', () => {
  test('any role reads it, oldest first after the cursor, as the store holds it', async () => {
    const viewer = await signedInOperator(ctx, 'viewer')
    const all = await recordsAfter(ctx, 0)
    expect(all.length).toBeGreaterThan(10)
    const read = async (query: string) => {
      const res = await ctx.handle(req(`/api/v1/admin/audit${query}`, { headers: bearer(viewer.token) }))
      expect(res.status).toBe(200)
      return (await res.json()) as { records: Record<string, any>[]; cursor: string }
    }
    const first = await read('?limit=3')
    expect(first.records.map((r) => r.seq)).toEqual(all.slice(0, 3).map((r) => String(r.seq)))
    expect(first.cursor).toBe(String(all[2]!.seq))
    const next = await read(`?after=${first.cursor}&limit=500`)
    expect(next.records.map((r) => r.id)).toEqual(all.slice(3).map((r) => r.id))
    const last = all.at(-1)!
    expect(next.records.at(-1)).toEqual({
      seq: String(last.seq),
      id: last.id,
      at: last.at.toISOString(),
      operator: { id: last.operatorId, name: last.operatorName, role: last.role },
      via: last.via,
      action: last.action,
      target: last.target,
      reason: last.reason,
      requestId: last.requestId,
      details: last.details,
    })
    // Nothing newer: no records, the cursor sent back.
    expect(await read(`?after=${next.cursor}`)).toEqual({ records: [], cursor: next.cursor })
    expect((await read('')).records).toHaveLength(Math.min(100, all.length))
  })

  test('a cursor or limit it never issued: 422; no credential: 401', async () => {
    for (const query of ['?after=abc', '?after=-1', '?after=01', '?limit=0', '?limit=501', '?limit=1.5', '?after=12345678901234567890']) {
      const res = await ctx.handle(req(`/api/v1/admin/audit${query}`, { headers: admin }))
      expect({ query, status: res.status }).toEqual({ query, status: 422 })
    }
    expect((await ctx.handle(req('/api/v1/admin/audit'))).status).toBe(401)
  })
})
