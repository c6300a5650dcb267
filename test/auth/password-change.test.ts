// POST /user/password/change (contract §8): the current password is asked
// again and throttled like a login; the new one replaces it; every OTHER
// session ends at once; the change is an outbox event and a security event.
import { afterAll, describe, expect, test } from 'bun:test'
import { createTestApp, postJson } from '../helpers/app'
import { bearer, login, me, PASSWORD, registerUser, rotate } from '../helpers/auth'
import { changePassword, errorCode, eventsOf, forgotPassword, resetPassword, securityEventsOf } from '../helpers/account'
import { latestCode } from '../helpers/mail'

// Throttling tests give each request its own client address.
// The real argon2id cost (hashGate given): the races here span the hash, whose time is their window.
const ctx = await createTestApp({ env: { ARENA_TRUST_PROXY: 'true' }, hashGate: {} })
afterAll(() => ctx.close())

const NEW_PASSWORD = 'a whole new passphrase'

describe('POST /user/password/change', () => {
  test('200 { revoked }: the new password works, the old does not; every other session ends at once, the caller’s stays', async () => {
    const user = await registerUser(ctx)
    const caller = await login(ctx, user.username)
    const phone = await login(ctx, user.username)
    const tablet = await login(ctx, user.username)
    const other = await registerUser(ctx)
    const stranger = await login(ctx, other.username)

    const res = await changePassword(ctx, caller.accessToken, PASSWORD, NEW_PASSWORD)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ revoked: 2 })

    // The others' access tokens are refused on the next request, and cannot be refreshed.
    for (const ended of [phone, tablet]) {
      expect((await me(ctx, ended.accessToken)).status).toBe(401)
      expect((await rotate(ctx, ended)).status).toBe(401)
    }
    expect((await me(ctx, caller.accessToken)).status).toBe(200)
    expect((await rotate(ctx, caller)).status).toBe(200)
    expect((await me(ctx, stranger.accessToken)).status).toBe(200)

    expect((await ctx.handle(postJson('/api/v1/user/login', { identifier: user.username, password: PASSWORD }, { 'x-forwarded-for': '198.51.100.1' }))).status).toBe(401)
    await login(ctx, user.username, NEW_PASSWORD)
  })

  test('one session.logout (password_changed) per session ended, account.password_changed, and a PASSWORD_CHANGED security event', async () => {
    const user = await registerUser(ctx)
    const caller = await login(ctx, user.username)
    const phone = await login(ctx, user.username)
    expect((await changePassword(ctx, caller.accessToken, PASSWORD, NEW_PASSWORD)).status).toBe(200)
    const phoneSession = JSON.parse(Buffer.from(phone.accessToken.split('.')[1]!, 'base64url').toString()).sid as string
    const callerSession = JSON.parse(Buffer.from(caller.accessToken.split('.')[1]!, 'base64url').toString()).sid as string
    expect(await eventsOf(ctx, user.id, 'session.logout')).toEqual([{ data: { sessionId: phoneSession, reason: 'password_changed' } }])
    expect(await eventsOf(ctx, user.id, 'account.password_changed')).toEqual([{ data: { revoked: 1 } }])
    const security = (await securityEventsOf(ctx, user.id)).filter((e) => e.kind === 'PASSWORD_CHANGED')
    expect(security).toEqual([{ kind: 'PASSWORD_CHANGED', level: 'WARN', source: 'server', details: { sessionId: callerSession, revoked: 1 } }])
    // No secret in the log or the events.
    expect(ctx.logText()).not.toContain(NEW_PASSWORD)
    expect(JSON.stringify(await eventsOf(ctx, user.id, 'account.password_changed'))).not.toContain(NEW_PASSWORD)
  })

  test('a reset code asked for before the change no longer works after it', async () => {
    const user = await registerUser(ctx)
    const caller = await login(ctx, user.username)
    expect((await forgotPassword(ctx, user.email, '198.51.100.7')).status).toBe(202)
    const code = await latestCode(ctx, user.email, 'reset_password')
    expect((await changePassword(ctx, caller.accessToken, PASSWORD, NEW_PASSWORD)).status).toBe(200)
    const reset = await resetPassword(ctx, { email: user.email, code, newPassword: 'the intruder’s passphrase' }, '198.51.100.7')
    expect(reset.status).toBe(400)
    expect(await errorCode(reset)).toBe('invalid_reset_code')
    await login(ctx, user.username, NEW_PASSWORD)
  })

  test('with no other session: 200 { revoked: 0 }', async () => {
    const user = await registerUser(ctx)
    const { accessToken } = await login(ctx, user.username)
    const res = await changePassword(ctx, accessToken, PASSWORD, NEW_PASSWORD)
    expect(await res.json()).toEqual({ revoked: 0 })
  })

  test('a wrong current password is 403 invalid_credentials, changes nothing and ends no session', async () => {
    const user = await registerUser(ctx)
    const caller = await login(ctx, user.username)
    const phone = await login(ctx, user.username)
    const res = await changePassword(ctx, caller.accessToken, 'not the password', NEW_PASSWORD)
    expect(res.status).toBe(403)
    expect(await res.json()).toEqual({ error: { code: 'invalid_credentials', message: 'The current password is wrong', status: 403 } })
    expect((await me(ctx, phone.accessToken)).status).toBe(200)
    await login(ctx, user.username, PASSWORD)
    expect(await eventsOf(ctx, user.id, 'account.password_changed')).toEqual([])
    expect((await securityEventsOf(ctx, user.id)).filter((e) => e.kind === 'PASSWORD_CHANGED')).toEqual([])
  })

  test('wrong current passwords count on the login throttle: after five, 429 with Retry-After, even with the right one, and logins too', async () => {
    const user = await registerUser(ctx)
    const { accessToken } = await login(ctx, user.username)
    for (let i = 0; i < 5; i++) expect((await changePassword(ctx, accessToken, `wrong-${i}`, NEW_PASSWORD)).status).toBe(403)
    const blocked = await changePassword(ctx, accessToken, PASSWORD, NEW_PASSWORD)
    expect(blocked.status).toBe(429)
    expect(await errorCode(blocked)).toBe('rate_limited')
    expect(blocked.headers.get('retry-after')).toBe('900')
    const loginBlocked = await ctx.handle(postJson('/api/v1/user/login', { identifier: user.username, password: PASSWORD }, { 'x-forwarded-for': '198.51.100.2' }))
    expect(loginBlocked.status).toBe(429)
    // The password did not change.
    ctx.clock.advance(15 * 60_000)
    await login(ctx, user.username, PASSWORD)
  })

  test('and failed logins count against a change the same way', async () => {
    const user = await registerUser(ctx)
    const { accessToken } = await login(ctx, user.username)
    for (let i = 0; i < 5; i++) {
      await ctx.handle(postJson('/api/v1/user/login', { identifier: user.username, password: 'wrong' }, { 'x-forwarded-for': `198.51.100.${10 + i}` }))
    }
    expect((await changePassword(ctx, accessToken, PASSWORD, NEW_PASSWORD)).status).toBe(429)
    ctx.clock.advance(15 * 60_000)
  })

  test('the new password follows register’s rule (8 to 128 code points); fields are required; a bearer is required', async () => {
    const user = await registerUser(ctx)
    const { accessToken } = await login(ctx, user.username)
    for (const body of [
      { currentPassword: PASSWORD, newPassword: 'short' },
      // Eight UTF-16 units but four characters: the schema alone would take it.
      { currentPassword: PASSWORD, newPassword: '🔑🔑🔑🔑' },
      { currentPassword: PASSWORD, newPassword: 'x'.repeat(129) },
      { currentPassword: PASSWORD },
      { newPassword: NEW_PASSWORD },
      { currentPassword: '', newPassword: NEW_PASSWORD },
      { currentPassword: 1, newPassword: NEW_PASSWORD },
    ]) {
      const res = await ctx.handle(postJson('/api/v1/user/password/change', body, bearer(accessToken)))
      expect({ body, status: res.status }).toEqual({ body, status: 422 })
      expect(await errorCode(res)).toBe('validation_failed')
    }
    const unauthenticated = await ctx.handle(postJson('/api/v1/user/password/change', { currentPassword: PASSWORD, newPassword: NEW_PASSWORD }))
    expect(unauthenticated.status).toBe(401)
    // Nothing above counted as a wrong password, and the password is unchanged.
    expect((await changePassword(ctx, accessToken, PASSWORD, '🔑🔑🔑🔑🔑🔑🔑🔑')).status).toBe(200)
    await login(ctx, user.username, '🔑🔑🔑🔑🔑🔑🔑🔑')
  })

  test('two changes at once from one session: exactly one wins, and its password is the one that works', async () => {
    const user = await registerUser(ctx)
    const { accessToken } = await login(ctx, user.username)
    const [a, b] = await Promise.all([changePassword(ctx, accessToken, PASSWORD, 'first new password'), changePassword(ctx, accessToken, PASSWORD, 'second new password')])
    const statuses = [a.status, b.status]
    expect(statuses.filter((s) => s === 200)).toHaveLength(1)
    // The loser either saw the change before its check (403) or after it (409): never a second 200.
    const loser = statuses.find((s) => s !== 200)!
    expect([403, 409]).toContain(loser)
    const winner = a.status === 200 ? 'first new password' : 'second new password'
    const other = a.status === 200 ? 'second new password' : 'first new password'
    await login(ctx, user.username, winner)
    expect((await ctx.handle(postJson('/api/v1/user/login', { identifier: user.username, password: other }, { 'x-forwarded-for': '198.51.100.40' }))).status).toBe(401)
    expect(await eventsOf(ctx, user.id, 'account.password_changed')).toHaveLength(1)
  })
})
