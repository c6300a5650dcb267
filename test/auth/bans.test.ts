// Operator bans (contract §8) through HTTP: every session ends at once, a
// login with the right password is 403 account_banned (saying until when), a
// wrong one stays 401, an expired ban lets the user in again, and nothing a
// banned user still holds (a bearer, a PIN session, a game session) works.
import { afterAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { postJson } from '../helpers/app'
import { admin, createArenaApp, createGame, players, startedTournament, openSession, submit, type Player } from '../helpers/arena'
import { bearer, login, me, PASSWORD, registerUser, rotate } from '../helpers/auth'
import { banUser, deleteUser, eventsOf, securityEventsOf, unbanUser, userDetail } from '../helpers/accounts'
import { funded, mint, PIN, someAddress, verify } from '../helpers/purchases'
import { AppError } from '../../src/shared/errors'

const ctx = await createArenaApp()
afterAll(() => ctx.close())
const { authSessions, pinSessions, pinLocks, gameSessions } = ctx.peek.tables

const loginRaw = (identifier: string, password = PASSWORD) => ctx.handle(postJson('/api/v1/user/login', { identifier, password }))
const inAnHour = () => new Date(ctx.clock.now().getTime() + 3_600_000).toISOString()

async function loggedInTwice() {
  const user = await registerUser(ctx)
  return { user, tokens: [await login(ctx, user.username), await login(ctx, user.email)] }
}

describe('POST /admin/users/{id}/ban', () => {
  test("ends every session of the user at once: their access tokens answer 401 on the next request, refresh tokens too", async () => {
    const { user, tokens } = await loggedInTwice()
    const bystander = await loggedInTwice()
    for (const t of tokens) expect((await me(ctx, t.accessToken)).status).toBe(200)

    const until = inAnHour()
    const res = await banUser(ctx, user.id, { reason: 'cheating in the cup', until })
    expect(res.status).toBe(200)
    expect(res.body.user).toMatchObject({ id: user.id, username: user.username, email: user.email, deletedAt: null })
    expect(res.body.user.ban).toEqual({ reason: 'cheating in the cup', bannedAt: ctx.clock.now().toISOString(), until, inForce: true })

    for (const t of tokens) {
      expect((await me(ctx, t.accessToken)).status).toBe(401)
      expect((await rotate(ctx, t)).status).toBe(401)
    }
    expect((await me(ctx, bystander.tokens[0]!.accessToken)).status).toBe(200)
    const rows = await ctx.peek.db.select().from(authSessions).where(eq(authSessions.userId, user.id))
    expect(rows.map((r) => r.revokedReason)).toEqual(['banned', 'banned'])
  })

  test('writes a session.logout (banned) per session, account.banned, and the ACCOUNT_BANNED security event', async () => {
    const { user } = await loggedInTwice()
    const until = inAnHour()
    await banUser(ctx, user.id, { reason: 'abuse', until })
    const logouts = await eventsOf(ctx, user.id, 'session.logout')
    expect(logouts.length).toBe(2)
    expect(logouts.every((e) => e.reason === 'banned')).toBe(true)
    expect(await eventsOf(ctx, user.id, 'account.banned')).toEqual([{ reason: 'abuse', until }])
    const [logged] = await securityEventsOf(ctx, user.id, 'ACCOUNT_BANNED')
    expect(logged!.level).toBe('WARN')
    expect(logged!.details).toEqual({ reason: 'abuse', until, revokedSessions: 2 })
  })

  test('a login with the right password is 403 account_banned, saying until when; a wrong password stays 401', async () => {
    const { user } = await loggedInTwice()
    const until = inAnHour()
    await banUser(ctx, user.id, { reason: 'abuse', until })
    for (const identifier of [user.username, user.email]) {
      const res = await loginRaw(identifier)
      expect(res.status).toBe(403)
      const { error } = (await res.json()) as { error: { code: string; message: string; status: number; until: string | null } }
      expect(error).toEqual({ code: 'account_banned', message: `This account is banned until ${until}`, status: 403, until })
    }
    const wrong = await loginRaw(user.username, 'not the password')
    expect(wrong.status).toBe(401)
    expect(((await wrong.json()) as { error: Record<string, unknown> }).error).toEqual({ code: 'invalid_credentials', message: 'Invalid identifier or password', status: 401 })
    // No session was opened by the refused logins.
    const live = (await ctx.peek.db.select().from(authSessions).where(eq(authSessions.userId, user.id))).filter((r) => r.revokedAt === null)
    expect(live).toEqual([])
  })

  test('a ban without `until` lasts until lifted: until null, and the message says so', async () => {
    const user = await registerUser(ctx)
    const res = await banUser(ctx, user.id, { reason: 'fraud' })
    expect(res.body.user.ban.until).toBeNull()
    ctx.clock.advance(365 * 86_400_000)
    const refused = await loginRaw(user.username)
    expect(refused.status).toBe(403)
    expect(((await refused.json()) as { error: { until: unknown; message: string } }).error).toMatchObject({ until: null, message: 'This account is banned until an operator lifts the ban' })
  })

  test('an expired ban lets the user in again; the operator still sees it, no longer in force', async () => {
    const user = await registerUser(ctx)
    await banUser(ctx, user.id, { reason: 'cool down', until: inAnHour() })
    expect((await loginRaw(user.username)).status).toBe(403)
    ctx.clock.advance(3_600_000 + 1000)
    const tokens = await login(ctx, user.username)
    expect((await me(ctx, tokens.accessToken)).status).toBe(200)
    const detail = await userDetail(ctx, user.id)
    expect(detail.body.ban).toMatchObject({ reason: 'cool down', inForce: false })
    expect(detail.body.user.ban).toEqual(detail.body.ban)
  })

  test('banning again replaces the ban: the new until counts', async () => {
    const user = await registerUser(ctx)
    await banUser(ctx, user.id, { reason: 'first', until: inAnHour() })
    const second = await banUser(ctx, user.id, { reason: 'second' })
    expect(second.status).toBe(200)
    expect(second.body.user.ban).toMatchObject({ reason: 'second', until: null })
    ctx.clock.advance(2 * 3_600_000)
    expect((await loginRaw(user.username)).status).toBe(403)
    expect((await eventsOf(ctx, user.id, 'account.banned')).map((e) => e.reason)).toEqual(['first', 'second'])
  })

  test('until in the past or now, or not a time, is 422; a missing or empty reason is 422; nothing changes', async () => {
    const { user, tokens } = await loggedInTwice()
    const now = ctx.clock.now().getTime()
    for (const body of [
      { reason: 'x', until: new Date(now - 1000).toISOString() },
      { reason: 'x', until: new Date(now).toISOString() },
      { reason: 'x', until: 'tomorrow' },
      { reason: 'x', until: '2026-02-30T10:00:00Z' },
      { reason: 'x', until: 1e12 },
      { reason: '' },
      { until: inAnHour() },
      { reason: 'x'.repeat(501) },
    ]) {
      const res = await banUser(ctx, user.id, body)
      expect({ body, status: res.status }).toEqual({ body, status: 422 })
    }
    for (const t of tokens) expect((await me(ctx, t.accessToken)).status).toBe(200)
    expect(await eventsOf(ctx, user.id, 'account.banned')).toEqual([])
  })

  test('an unknown user is 404; a deleted one is 409; without the operator token 401', async () => {
    expect((await banUser(ctx, 'usr_00000000000000000000000000000000', { reason: 'x' })).status).toBe(404)
    expect((await unbanUser(ctx, 'usr_00000000000000000000000000000000')).status).toBe(404)
    const user = await registerUser(ctx)
    expect((await deleteUser(ctx, user.id)).status).toBe(200)
    const deleted = await banUser(ctx, user.id, { reason: 'x' })
    expect(deleted.status).toBe(409)
    expect(deleted.body.error.code).toBe('conflict')
    expect((await unbanUser(ctx, user.id)).status).toBe(409)
    const other = await registerUser(ctx)
    const res = await ctx.handle(postJson(`/api/v1/admin/users/${other.id}/ban`, { reason: 'x' }, { 'x-admin-token': 'wrong' }))
    expect(res.status).toBe(401)
    expect((await loginRaw(other.username)).status).toBe(200)
  })
})

describe('POST /admin/users/{id}/unban', () => {
  test('lifts the ban: the user logs in again, the old sessions stay ended; account.unbanned and ACCOUNT_UNBANNED', async () => {
    const { user, tokens } = await loggedInTwice()
    await banUser(ctx, user.id, { reason: 'mistake' })
    const res = await unbanUser(ctx, user.id)
    expect(res.status).toBe(200)
    expect(res.body.user).toMatchObject({ id: user.id, ban: null })
    const fresh = await login(ctx, user.username)
    expect((await me(ctx, fresh.accessToken)).status).toBe(200)
    for (const t of tokens) expect((await me(ctx, t.accessToken)).status).toBe(401)
    expect(await eventsOf(ctx, user.id, 'account.unbanned')).toEqual([{ unbannedAt: ctx.clock.now().toISOString() }])
    const [logged] = await securityEventsOf(ctx, user.id, 'ACCOUNT_UNBANNED')
    expect(logged!.level).toBe('SAFE')
    expect(logged!.details).toMatchObject({ until: null, inForce: true })
  })

  test('a user with no ban is answered as is, and nothing is written', async () => {
    const user = await registerUser(ctx)
    const res = await unbanUser(ctx, user.id)
    expect(res.status).toBe(200)
    expect(res.body.user.ban).toBeNull()
    expect(await eventsOf(ctx, user.id, 'account.unbanned')).toEqual([])
    expect(await securityEventsOf(ctx, user.id, 'ACCOUNT_UNBANNED')).toEqual([])
  })
})

describe('what a banned user still holds', () => {
  async function playerWithPinSessionAndGameSession() {
    const buyer = await funded(ctx, '50')
    const [rival] = await players(ctx, 1)
    const { game, gameKey } = await createGame(ctx, 'Ban Duel')
    const cup = await startedTournament(ctx, game.id, [buyer, rival!])
    const match = cup.matches.find((m) => m.status === 'running')!
    const issued = await openSession(ctx, game.id, gameKey, buyer, match.id)
    expect(issued.status).toBe(201)
    const { token } = (await issued.json()) as { token: string }
    const pinSession = await mint(ctx, buyer)
    return { buyer, rival: rival!, game, gameKey, cup, match, token, pinSession }
  }

  test('a PIN session and a game session minted before the ban are useless after it: their bearer answers 401, nothing is spent', async () => {
    const { buyer, game, gameKey, cup, token, pinSession } = await playerWithPinSessionAndGameSession()
    await banUser(ctx, buyer.userId, { reason: 'abuse' })
    const verified = await verify(ctx, buyer, pinSession, { pin: PIN, amount: '1', destinationAddress: someAddress(), idempotencyKey: 'after-ban' })
    expect(verified.status).toBe(401)
    const claimed = await submit(ctx, game.id, gameKey, buyer, token, { outcome: 'WIN', winnerParticipantId: cup.participants.find((p) => p.userId === buyer.userId)!.id })
    expect(claimed.status).toBe(401)
    const [pinRow] = await ctx.peek.db.select().from(pinSessions).where(eq(pinSessions.id, pinSession.sessionId))
    expect(pinRow!.consumedAt).toBeNull()
    const gameRows = await ctx.peek.db.select().from(gameSessions).where(eq(gameSessions.userId, buyer.userId))
    expect(gameRows.every((r) => r.consumedAt === null)).toBe(true)
  })

  test('defence in depth: a session that outlived the ban (a login racing it) is refused by every check', async () => {
    const { buyer, game, gameKey, cup, token, pinSession } = await playerWithPinSessionAndGameSession()
    // The ban alone, without the write that ends the sessions: what a login
    // committing next to the ban would leave behind.
    await ctx.storage.write((tx) => tx.auth.setBan(buyer.userId, { bannedAt: ctx.clock.now(), until: null, reason: 'race' }))

    // The bearer check refuses it.
    expect((await me(ctx, buyer.tokens.accessToken)).status).toBe(401)

    // And past the bearer check, the unit of work of a PIN verify and of a
    // claim refuse the user themselves (403), spending nothing.
    const refusal = (promise: Promise<unknown>) =>
      promise.then(
        () => 'accepted',
        (error: unknown) => (error instanceof AppError ? `${error.status} ${error.code}` : String(error)),
      )
    const participantId = cup.participants.find((p) => p.userId === buyer.userId)!.id
    expect(
      await refusal(
        ctx.services.withdrawals.verify({ userId: buyer.userId, emailVerified: true, ...pinSession, pin: PIN, amount: '1', destinationAddress: someAddress(), idempotencyKey: 'racing-the-ban' }),
      ),
    ).toBe('403 account_banned')
    expect(await refusal(ctx.services.matches.submitResult({ userId: buyer.userId, gameId: game.id, gameKey, sessionToken: token, claim: { outcome: 'WIN', winnerParticipantId: participantId } }))).toBe(
      '403 account_banned',
    )
    const [pinRow] = await ctx.peek.db.select().from(pinSessions).where(eq(pinSessions.id, pinSession.sessionId))
    expect(pinRow!.consumedAt).toBeNull()
    expect(await ctx.peek.db.select().from(pinLocks).where(eq(pinLocks.userId, buyer.userId))).toEqual([])

    // Lifted: the same bearer, PIN session and game token work, so nothing was spent.
    await unbanUser(ctx, buyer.userId)
    expect((await me(ctx, buyer.tokens.accessToken)).status).toBe(200)
    const claimed = await submit(ctx, game.id, gameKey, buyer, token, { outcome: 'WIN', winnerParticipantId: participantId })
    expect(claimed.status).toBe(200)
    const verified = await verify(ctx, buyer, pinSession, { pin: PIN, amount: '1', destinationAddress: someAddress(), idempotencyKey: 'after-unban' })
    expect(verified.status).toBe(200)
    expect(((await verified.json()) as { valid: boolean }).valid).toBe(true)
  })

  test('a login as the ban commits: the write that opens the session reads the ban', async () => {
    const user = await registerUser(ctx)
    await ctx.storage.write((tx) => tx.auth.setBan(user.id, { bannedAt: ctx.clock.now(), until: null, reason: 'race' }))
    // The login read the user before the ban (a stale row in hand), yet its session write refuses.
    const refused = await ctx.services.signIn.login({ identifier: user.username, password: PASSWORD, address: 'test', userAgent: null }).then(
      () => null,
      (error: unknown) => error as AppError,
    )
    expect(refused?.code).toBe('account_banned')
    expect(await ctx.peek.db.select().from(authSessions).where(eq(authSessions.userId, user.id))).toEqual([])
  })
})

test('the operator routes need the operator token', async () => {
  const { user, tokens } = await loggedInTwice()
  for (const path of [`/api/v1/admin/users/${user.id}/ban`, `/api/v1/admin/users/${user.id}/unban`, `/api/v1/admin/users/${user.id}/delete`]) {
    expect((await ctx.handle(postJson(path, { reason: 'x' }, bearer(tokens[0]!.accessToken)))).status).toBe(401)
    expect((await ctx.handle(postJson(path, '{"', admin))).status).toBe(400)
  }
  for (const t of tokens) expect((await me(ctx, t.accessToken)).status).toBe(200)
})
