// Account deletion (contract §8) through HTTP: POST /me/delete and POST
// /admin/users/{id}/delete. Afterwards the user row holds nothing of the
// person, the username and email are free again, every token is dead, and
// the ledger, still naming the user id, balances. Money is never deleted.
import { afterAll, describe, expect, test } from 'bun:test'
import { eq, inArray } from 'drizzle-orm'
import { checkLedger } from '../../src/modules/wallet/ledger'
import { postJson, req } from '../helpers/app'
import { admin, createArenaApp, createGame, players, startedTournament } from '../helpers/arena'
import { bearer, login, me, PASSWORD, registerUser } from '../helpers/auth'
import { AwayCustody, deleteOwn, deleteUser, eventsOf, securityEventsOf } from '../helpers/accounts'
import { mailTo } from '../helpers/mail'
import { balance, funded, mint, PIN, someAddress, verify } from '../helpers/purchases'
import { verificationMail } from '../../src/modules/mail/templates'

const custody = new AwayCustody()
const ctx = await createArenaApp({}, { custody })
afterAll(() => ctx.close())
const { users, authSessions, refreshTokens, userPins, pinLocks, pinSessions, loginThrottle, ledgerAccounts, ledgerPostings, mailOutbox, participants } = ctx.peek.tables

const loginRaw = (identifier: string, password = PASSWORD) => ctx.handle(postJson('/api/v1/user/login', { identifier, password }))
const userRow = async (id: string) => (await ctx.peek.db.select().from(users).where(eq(users.id, id)))[0]!

/** Withdraws the whole balance through a PIN verify (custody signs unless away). */
async function withdrawAll(p: Awaited<ReturnType<typeof funded>>, amount: string, key: string) {
  const res = await verify(ctx, p, await mint(ctx, p), { pin: PIN, amount, destinationAddress: someAddress(), idempotencyKey: key })
  expect(res.status).toBe(200)
  return ((await res.json()) as { withdrawal: { id: string; status: string } }).withdrawal
}

describe('POST /me/delete', () => {
  test('erases the person: the row, sessions, PIN, mail and throttle counts; the ledger stays under the id and balances', async () => {
    // A throttle count keyed by the email before it named an account, one by the account after.
    const email = `Erase.Me_${Date.now()}@Example.com`
    expect((await loginRaw(email, 'wrong password')).status).toBe(401)
    const user = await registerUser(ctx, { email })
    expect((await loginRaw(user.username, 'wrong password')).status).toBe(401)
    const tokens = [await login(ctx, user.username), await login(ctx, user.email)]
    // A PIN, a failure count, a live PIN session, and a mail to the address.
    const putPin = await ctx.handle(new Request('http://localhost/api/v1/security/pin', { method: 'PUT', headers: { ...bearer(tokens[0]!.accessToken), 'content-type': 'application/json' }, body: JSON.stringify({ pin: PIN, password: PASSWORD }) }))
    expect(putPin.status).toBe(200)
    const pinPlayer = { userId: user.id, username: user.username, tokens: tokens[0]! }
    const pinSession = await mint(ctx, pinPlayer)
    expect(pinSession.sessionId).toStartWith('pns_')
    await ctx.storage.write((tx) => tx.security.savePinLock(user.id, { failures: 2, locks: 1, lockedUntil: null }))
    await ctx.storage.write((tx) => ctx.services.mailer.queue(tx, { address: user.email, userId: user.id }, verificationMail(ctx.config, user.email, 'ABCDE-FGHJK', 24), ctx.clock.now()))
    expect((await mailTo(ctx, user.email)).length).toBe(2) // register's verification mail, and this one
    // The mailed-code counters name the address and the user too.
    expect((await ctx.handle(postJson('/api/v1/user/password/forgot', { email: user.email }))).status).toBe(202)
    expect((await ctx.handle(postJson('/api/v1/user/email/resend', {}, bearer(tokens[0]!.accessToken)))).status).toBe(202)
    const before = await userRow(user.id)
    const sessionIds = (await ctx.peek.db.select().from(authSessions).where(eq(authSessions.userId, user.id))).map((row) => row.id)
    expect(sessionIds.length).toBe(2)

    const res = await deleteOwn(ctx, tokens[1]!.accessToken, PASSWORD)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ deleted: true, deletedAt: ctx.clock.now().toISOString() })

    // The row: nothing of the person in any column.
    const row = await userRow(user.id)
    expect(row).toMatchObject({ email: 'erased', username: 'erased', emailKey: `erased:${user.id}`, usernameKey: `erased:${user.id}`, passwordHash: '', country: 'ZZ', emailVerifiedAt: null })
    expect(row.deletedAt?.getTime()).toBe(ctx.clock.now().getTime())
    expect(row.createdAt.getTime()).toBe(before.createdAt.getTime())
    const text = JSON.stringify(row).toLowerCase()
    for (const personal of [user.email.toLowerCase(), user.username.toLowerCase(), before.passwordHash!.toLowerCase()]) expect(text).not.toContain(personal)

    // Sessions (their refresh tokens with them), the PIN and its lock and sessions, the mail: gone.
    expect(await ctx.peek.db.select().from(authSessions).where(eq(authSessions.userId, user.id))).toEqual([])
    expect(await ctx.peek.db.select().from(refreshTokens).where(inArray(refreshTokens.sessionId, sessionIds))).toEqual([])
    expect(await ctx.peek.db.select().from(userPins).where(eq(userPins.userId, user.id))).toEqual([])
    expect(await ctx.peek.db.select().from(pinLocks).where(eq(pinLocks.userId, user.id))).toEqual([])
    expect(await ctx.peek.db.select().from(pinSessions).where(eq(pinSessions.userId, user.id))).toEqual([])
    expect(await ctx.peek.db.select().from(mailOutbox).where(eq(mailOutbox.userId, user.id))).toEqual([])
    expect(await mailTo(ctx, user.email)).toEqual([])
    const keys = [`account:${user.id}`, `identifier:${user.email.toLowerCase()}`, `identifier:${user.username.toLowerCase()}`]
    expect(await ctx.peek.db.select().from(loginThrottle).where(inArray(loginThrottle.key, keys))).toEqual([])
    const left = (await ctx.peek.db.select().from(loginThrottle)).map((row) => row.key)
    expect(left.filter((key) => key.includes(user.id) || key.includes(user.email.toLowerCase()) || key.includes(user.username.toLowerCase()))).toEqual([])

    // Every token is dead, and what needs one answers 401.
    for (const t of tokens) {
      expect((await me(ctx, t.accessToken)).status).toBe(401)
      expect((await ctx.handle(req('/api/v1/me/export', { headers: bearer(t.accessToken) }))).status).toBe(401)
      expect((await deleteOwn(ctx, t.accessToken, PASSWORD)).status).toBe(401)
    }
    // The old credentials log nobody in; nor does the erased key.
    for (const identifier of [user.username, user.email, `erased:${user.id}`, 'erased']) {
      const refused = await loginRaw(identifier)
      expect({ identifier, status: refused.status }).toEqual({ identifier, status: 401 })
    }
    // Both are free again, in any case.
    const again = await registerUser(ctx, { email: user.email.toUpperCase(), username: user.username })
    expect(again.id).not.toBe(user.id)
    expect((await login(ctx, user.username)).user.id).toBe(again.id)

    expect(await eventsOf(ctx, user.id, 'account.deleted')).toEqual([{ deletedAt: res.body.deletedAt }])
    const [logged] = await securityEventsOf(ctx, user.id, 'ACCOUNT_DELETED')
    expect(logged!.details).toEqual({ by: 'user' })
    expect(JSON.stringify(logged)).not.toContain(user.email)
  })

  test('a wallet emptied by withdrawals can go: ledger rows and withdrawals stay under the user id, and the ledger balances', async () => {
    const p = await funded(ctx, '30')
    const withdrawal = await withdrawAll(p, '30', 'empty-it')
    expect(withdrawal.status).toBe('signed')
    expect(await balance(ctx, p)).toBe('0')
    const res = await deleteOwn(ctx, p.tokens.accessToken, PASSWORD)
    expect(res.status).toBe(200)
    const accounts = await ctx.peek.db.select().from(ledgerAccounts).where(eq(ledgerAccounts.userId, p.userId))
    expect(accounts.map((a) => [a.id, a.balance])).toEqual([[`user:${p.userId}:USDC`, '0']])
    const postings = await ctx.peek.db.select().from(ledgerPostings).where(eq(ledgerPostings.accountId, accounts[0]!.id))
    expect(postings.map((x) => String(x.amount)).sort()).toEqual(['-30000000', '30000000'])
    const report = await checkLedger(ctx.services.storage.read.wallet)
    expect(report.problems).toEqual([])
    expect(report.ok).toBe(true)
    // A credit to the deleted account is refused: there is no one to own it.
    const credit = await ctx.handle(postJson(`/api/v1/admin/wallets/${p.userId}/credit`, { amount: '1', reference: `after-${p.userId}` }, admin))
    expect(credit.status).toBe(404)
  })

  test('409 balance_not_empty while the wallet holds funds, or a withdrawal is pending; nothing changes', async () => {
    const p = await funded(ctx, '10')
    const full = await deleteOwn(ctx, p.tokens.accessToken, PASSWORD)
    expect(full.status).toBe(409)
    expect(full.body.error.code).toBe('balance_not_empty')
    expect((await me(ctx, p.tokens.accessToken)).status).toBe(200)
    expect((await userRow(p.userId)).deletedAt).toBeNull()

    custody.away = true
    try {
      expect((await withdrawAll(p, '10', 'pending-one')).status).toBe('pending_signature')
      expect(await balance(ctx, p)).toBe('0')
      const pending = await deleteOwn(ctx, p.tokens.accessToken, PASSWORD)
      expect(pending.status).toBe(409)
      expect(pending.body.error.code).toBe('balance_not_empty')
    } finally {
      custody.away = false
    }
    expect(await ctx.services.withdrawals.resumePending()).toBeGreaterThanOrEqual(1)
    expect((await deleteOwn(ctx, p.tokens.accessToken, PASSWORD)).status).toBe(200)
  })

  test('a wrong password is 403 invalid_credentials and is throttled like a login (429 + Retry-After); nothing is deleted', async () => {
    const user = await registerUser(ctx)
    const tokens = await login(ctx, user.username)
    for (let i = 0; i < 5; i++) {
      const res = await deleteOwn(ctx, tokens.accessToken, `guess-${i}`)
      expect(res.status).toBe(403)
      expect(res.body.error.code).toBe('invalid_credentials')
    }
    const blocked = await ctx.handle(postJson('/api/v1/me/delete', { password: PASSWORD }, bearer(tokens.accessToken)))
    expect(blocked.status).toBe(429)
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0)
    // The same counter as logins: the account is blocked there too.
    expect((await loginRaw(user.username)).status).toBe(429)
    expect((await me(ctx, tokens.accessToken)).status).toBe(200)
    ctx.clock.advance(15 * 60_000 + 1000)
    const fresh = await login(ctx, user.username)
    expect((await deleteOwn(ctx, fresh.accessToken, PASSWORD)).status).toBe(200)
  })

  test('a body without a password is 422, not a deletion', async () => {
    const user = await registerUser(ctx)
    const tokens = await login(ctx, user.username)
    for (const body of [{}, { password: '' }, { password: 5 }]) expect((await ctx.handle(postJson('/api/v1/me/delete', body, bearer(tokens.accessToken)))).status).toBe(422)
    expect((await me(ctx, tokens.accessToken)).status).toBe(200)
  })

  test("a tournament player's seat and results stay, under the id; opponents see `erased`", async () => {
    const people = await players(ctx, 2)
    const { game } = await createGame(ctx, 'Deletion Duel')
    const cup = await startedTournament(ctx, game.id, people)
    expect((await deleteOwn(ctx, people[0]!.tokens.accessToken, PASSWORD)).status).toBe(200)
    const seats = await ctx.peek.db.select().from(participants).where(eq(participants.tournamentId, cup.id))
    expect(seats.map((s) => s.userId).sort()).toEqual(people.map((p) => p.userId).sort())
    const shown = await ctx.handle(req(`/api/v1/tournaments/${cup.id}`, { headers: bearer(people[1]!.tokens.accessToken) }))
    expect(shown.status).toBe(200)
    const mine = (await (await ctx.handle(req('/api/v1/me/matches', { headers: bearer(people[1]!.tokens.accessToken) }))).json()) as { matches: { opponent: { username: string } | null }[] }
    expect(mine.matches[0]!.opponent?.username).toBe('erased')
    // A deleted account is seated in no new tournament.
    const seatAgain = await ctx.handle(postJson('/api/v1/admin/tournaments', { gameId: game.id, name: 'Later Cup', format: 'single_elimination', participants: people.map((p) => p.userId) }, admin))
    expect(seatAgain.status).toBe(422)
  })
})

describe('POST /admin/users/{id}/delete', () => {
  test('deletes without a password, recording the reason; the same rules otherwise', async () => {
    const user = await registerUser(ctx)
    const tokens = await login(ctx, user.username)
    const res = await deleteUser(ctx, user.id, 'GDPR request #42')
    expect(res.status).toBe(200)
    expect(res.body.deleted).toBe(true)
    expect((await me(ctx, tokens.accessToken)).status).toBe(401)
    expect((await userRow(user.id)).email).toBe('erased')
    const [logged] = await securityEventsOf(ctx, user.id, 'ACCOUNT_DELETED')
    expect(logged!.details).toEqual({ by: 'operator', reason: 'GDPR request #42' })
    const again = await deleteUser(ctx, user.id)
    expect(again.status).toBe(409)
    expect(again.body.error.code).toBe('conflict')
  })

  test('409 balance_not_empty with funds; 404 for an unknown id; 422 without a reason', async () => {
    const p = await funded(ctx, '5')
    const refused = await deleteUser(ctx, p.userId)
    expect(refused.status).toBe(409)
    expect(refused.body.error.code).toBe('balance_not_empty')
    expect((await me(ctx, p.tokens.accessToken)).status).toBe(200)
    expect((await deleteUser(ctx, 'usr_00000000000000000000000000000000')).status).toBe(404)
    expect((await ctx.handle(postJson(`/api/v1/admin/users/${p.userId}/delete`, {}, admin))).status).toBe(422)
  })
})
