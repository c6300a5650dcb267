// The account export (contract §8): GET /me/export through HTTP, one JSON
// document of the user's profile, sessions, matches, ledger, withdrawals, the
// security events they reported and their ratings with their history, with no
// hash, token or key in it.
import { afterAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { postJson, req } from '../helpers/app'
import { admin, claim, createArenaApp, createGame, players, playerOf, startedTournament } from '../helpers/arena'
import { bearer, login, registerUser } from '../helpers/auth'
import { funded, mint, PIN, someAddress, verify } from '../helpers/purchases'
import { securityEventsOf } from '../helpers/accounts'
import { INITIAL, rateMatch } from '../../src/modules/ratings/glicko2'
import { viewOf } from '../../src/modules/ratings/view'

const ctx = await createArenaApp()
afterAll(() => ctx.close())
const { users, userPins, refreshTokens, wallets, authSessions } = ctx.peek.tables

const exportOf = (accessToken: string) => ctx.handle(req('/api/v1/me/export', { headers: bearer(accessToken) }))

describe('GET /me/export', () => {
  test('one document with every part, as a download; nothing secret in it', async () => {
    const buyer = await funded(ctx, '50')
    const [rival] = await players(ctx, 1)
    const other = await login(ctx, buyer.username, undefined, { 'user-agent': 'export-test-device' })
    await ctx.handle(postJson('/api/v1/user/s/logout', {}, bearer(other.accessToken)))

    // A match played and won, one waiting for the next round.
    const { game, gameKey } = await createGame(ctx, 'Export Duel')
    const cup = await startedTournament(ctx, game.id, [buyer, rival!])
    const final = cup.matches.find((m) => m.status === 'running')!
    const mySeat = cup.participants.find((p) => p.userId === buyer.userId)!.id
    await claim(ctx, game.id, gameKey, buyer, final.id, { outcome: 'WIN', winnerParticipantId: mySeat })
    await claim(ctx, game.id, gameKey, playerOf(cup, [buyer, rival!], final.slot1ParticipantId === mySeat ? final.slot2ParticipantId! : final.slot1ParticipantId!), final.id, {
      outcome: 'WIN',
      winnerParticipantId: mySeat,
    })

    // A withdrawal, and a security report.
    const w = await verify(ctx, buyer, await mint(ctx, buyer), { pin: PIN, amount: '12.5', destinationAddress: someAddress(), idempotencyKey: 'export-1' })
    expect(w.status).toBe(200)
    const report = await ctx.handle(postJson('/api/v1/security/events', { kind: 'DEBUGGER_ATTACHED', level: 'WARN', details: { tool: 'frida' } }, bearer(buyer.tokens.accessToken)))
    expect(report.status).toBe(202)
    await ctx.services.securityLog.flush()

    const res = await exportOf(buyer.tokens.accessToken)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('application/json')
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="arena-export-${buyer.userId}.json"`)
    const text = await res.text()
    const doc = JSON.parse(text)

    expect(Object.keys(doc).sort()).toEqual(['exportedAt', 'identities', 'ledger', 'matches', 'ratings', 'securityEvents', 'sessions', 'user', 'withdrawals'])
    expect(doc.identities).toEqual([{ provider: 'password', email: doc.user.email, linkedAt: doc.user.createdAt }])
    expect(doc.exportedAt).toBe(ctx.clock.now().toISOString())
    expect(doc.user).toMatchObject({ id: buyer.userId, username: buyer.username, country: 'DE', emailVerified: false, emailVerifiedAt: null })

    expect(doc.sessions.length).toBe(2)
    expect(doc.sessions[0]).toMatchObject({ userAgent: 'export-test-device', revokedReason: 'logout' })
    expect(doc.sessions[1]).toMatchObject({ revokedAt: null, revokedReason: null })
    expect(Object.keys(doc.sessions[1]).sort()).toEqual(['createdAt', 'expiresAt', 'id', 'lastUsedAt', 'revokedAt', 'revokedReason', 'userAgent'])

    expect(doc.matches).toEqual([
      {
        matchId: final.id,
        kind: 'tournament',
        tournamentId: cup.id,
        tournamentName: 'Cup',
        gameId: game.id,
        bracket: 'winners',
        round: final.round,
        position: final.position,
        status: 'decided',
        participantId: mySeat,
        opponentParticipantId: cup.participants.find((p) => p.userId === rival!.userId)!.id,
        winnerParticipantId: mySeat,
        result: 'won',
        decidedAt: ctx.clock.now().toISOString(),
      },
    ])

    expect(doc.ledger.map((e: { kind: string; amount: string; reference: string | null; asset: string }) => [e.kind, e.amount, e.reference, e.asset])).toEqual([
      ['credit', '50', `credit:fund-${buyer.userId}`, 'USDC'],
      ['withdrawal', '-12.5', null, 'USDC'],
    ])
    expect(doc.withdrawals).toEqual([
      expect.objectContaining({ status: 'signed', amount: '12.5', asset: 'USDC', idempotencyKey: 'export-1', signature: expect.any(String) }),
    ])
    expect(doc.securityEvents).toEqual([
      { id: expect.any(String), kind: 'DEBUGGER_ATTACHED', level: 'WARN', details: { tool: 'frida' }, occurredAt: expect.any(String), receivedAt: expect.any(String) },
    ])

    // The won final was rated (a tournament is rated unless its options say otherwise): the rating and its one change.
    const [after] = rateMatch(INITIAL, INITIAL, 1, 0.5)
    const { seasonId } = await ctx.services.ratings.mine(game.id, buyer.userId)
    expect(doc.ratings).toEqual([
      {
        gameId: game.id,
        seasonId,
        rating: viewOf(after, 1),
        history: [
          {
            seq: 1,
            kind: 'match',
            seasonId,
            matchId: final.id,
            opponentUserId: rival!.userId,
            outcome: 'win',
            before: { ...INITIAL },
            after: { ...after },
            createdAt: ctx.clock.now().toISOString(),
          },
        ],
      },
    ])

    // No secret the server holds for this user appears anywhere in the document.
    const [userRow] = await ctx.peek.db.select().from(users).where(eq(users.id, buyer.userId))
    const [pinRow] = await ctx.peek.db.select().from(userPins).where(eq(userPins.userId, buyer.userId))
    const [walletRow] = await ctx.peek.db.select().from(wallets).where(eq(wallets.userId, buyer.userId))
    const sessionIds = (await ctx.peek.db.select().from(authSessions).where(eq(authSessions.userId, buyer.userId))).map((s) => s.id)
    const refresh = (await ctx.peek.db.select().from(refreshTokens)).filter((r) => sessionIds.includes(r.sessionId))
    const secrets = [userRow!.passwordHash, pinRow!.pinHash, walletRow!.keyRef, buyer.tokens.accessToken, buyer.tokens.refreshToken, ...refresh.map((r) => r.tokenHash), gameKey]
    for (const secret of secrets) expect(text).not.toContain(secret)
    expect(text).not.toContain('argon2')
  })

  test('a new user: empty parts, and only their own data (another user\'s reports are not theirs)', async () => {
    const user = await registerUser(ctx)
    const tokens = await login(ctx, user.username)
    const stranger = await registerUser(ctx)
    const theirs = await login(ctx, stranger.username)
    await ctx.handle(postJson('/api/v1/security/events', { kind: 'ROOTED' }, bearer(theirs.accessToken)))
    await ctx.services.securityLog.flush()
    const doc = (await (await exportOf(tokens.accessToken)).json()) as Record<string, any>
    expect(doc).toMatchObject({ matches: [], ledger: [], withdrawals: [], securityEvents: [], ratings: [] })
    expect(doc.user.email).toBe(user.email)
    expect(doc.sessions.length).toBe(1)
  })

  test('server-recorded events about the user are not in it: only what they reported', async () => {
    const user = await registerUser(ctx)
    await login(ctx, user.username, undefined, { 'user-agent': 'one' })
    const second = await login(ctx, user.username, undefined, { 'user-agent': 'two' }) // a new device: NEW_DEVICE_LOGIN (server)
    expect((await securityEventsOf(ctx, user.id, 'NEW_DEVICE_LOGIN')).length).toBe(1)
    const doc = (await (await exportOf(second.accessToken)).json()) as Record<string, any>
    expect(doc.securityEvents).toEqual([])
  })

  test('needs a bearer: 401 without one', async () => {
    expect((await ctx.handle(req('/api/v1/me/export'))).status).toBe(401)
    expect((await ctx.handle(req('/api/v1/me/export', { headers: admin }))).status).toBe(401)
  })
})
