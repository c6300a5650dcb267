// Forgotten passwords (contract §8): POST /user/password/forgot mails a
// one-time code to a known address and answers an unknown (or deleted) one
// exactly alike; POST /user/password/reset takes the code once, within 15
// minutes, and ends every session; five wrong codes kill it; both are
// throttled per address and per client.
import { afterAll, describe, expect, test } from 'bun:test'
import { inArray } from 'drizzle-orm'
import { createTestApp, postJson, type TestApp } from '../helpers/app'
import { login, me, PASSWORD, registerUser, rotate, type Registered } from '../helpers/auth'
import { errorCode, eventsOf, forgotPassword, resetPassword, securityEventsOf, storedCode, verifyEmail } from '../helpers/account'
import { latestCode, mailTo } from '../helpers/mail'
import { waitFor } from '../helpers/wait'
import { hashAccountCode } from '../../src/modules/auth/codes'

// Every request names its client address (X-Forwarded-For), so the per-client
// throttles bite only where a test means them to.
// The real argon2id cost (hashGate given): the races here span the hash, whose time is their window.
const ctx = await createTestApp({ env: { ARENA_TRUST_PROXY: 'true' }, hashGate: {} })
afterAll(() => ctx.close())

const MINUTE = 60_000
const NEW_PASSWORD = 'a brand new passphrase'
let clients = 0
/** A client address no other request used. */
const fresh = () => `203.0.113.${++clients % 250}, 10.${Math.floor(clients / 250)}.${clients % 250}.7`

/** A registered user with a reset code mailed. */
async function withResetCode(app: TestApp = ctx): Promise<{ user: Registered; code: string }> {
  const user = await registerUser(app)
  expect((await forgotPassword(app, user.email, fresh())).status).toBe(202)
  return { user, code: await latestCode(app, user.email, 'reset_password') }
}

/** Headers that must not tell a known address from an unknown one (all but the request id). */
// RateLimit counts down with the caller's own requests, whatever address they name: it says nothing about the address.
function comparable(res: Response): Record<string, string> {
  return Object.fromEntries([...res.headers].filter(([name]) => name !== 'x-request-id' && name !== 'ratelimit'))
}

describe('POST /user/password/forgot', () => {
  test('a known address: 202 { accepted: true }, a reset code mailed, stored only as a hash, valid 15 minutes, one event', async () => {
    const user = await registerUser(ctx)
    const res = await forgotPassword(ctx, user.email.toUpperCase(), fresh())
    expect(res.status).toBe(202)
    expect(await res.json()).toEqual({ accepted: true })
    const mail = (await mailTo(ctx, user.email)).find((m) => m.kind === 'reset_password')!
    expect(mail).toMatchObject({ toAddress: user.email, userId: user.id, status: 'kept' })
    const code = await latestCode(ctx, user.email, 'reset_password')
    const row = (await storedCode(ctx, user.id, 'reset_password'))!
    expect(row.codeHash).toBe(hashAccountCode(user.id, 'reset_password', code))
    expect(row.expiresAt.getTime() - row.createdAt.getTime()).toBe(15 * MINUTE)
    expect(await eventsOf(ctx, user.id, 'account.code_sent')).toEqual([{ data: { purpose: 'verify_email' } }, { data: { purpose: 'reset_password' } }])
    expect(ctx.logText()).not.toContain(code)
  })

  test('an unknown address: the same status, body and headers; nothing mailed, nothing stored', async () => {
    const user = await registerUser(ctx)
    const known = await forgotPassword(ctx, user.email, fresh())
    const unknown = await forgotPassword(ctx, `nobody.${user.username}@example.com`, fresh())
    expect(unknown.status).toBe(known.status)
    expect(await unknown.text()).toBe(await known.text())
    expect(comparable(unknown)).toEqual(comparable(known))
    expect(await mailTo(ctx, `nobody.${user.username}@example.com`)).toEqual([])
  })

  test('a deleted account is an unknown address', async () => {
    const user = await registerUser(ctx)
    await ctx.storage.write((tx) => tx.auth.eraseUser(user.id, ctx.clock.now()))
    const res = await forgotPassword(ctx, user.email, fresh())
    expect(res.status).toBe(202)
    expect(await res.json()).toEqual({ accepted: true })
    expect((await mailTo(ctx, user.email)).filter((m) => m.kind === 'reset_password')).toEqual([])
    expect(await storedCode(ctx, user.id, 'reset_password')).toBeUndefined()
  })

  test('five an hour per address, known or unknown alike: then 429 with Retry-After, from any client', async () => {
    const user = await registerUser(ctx)
    const ghost = `ghost.${user.username}@example.com`
    const seen: Record<string, unknown[]> = {}
    for (const email of [user.email, ghost]) {
      seen[email] = []
      for (let i = 0; i < 7; i++) {
        const res = await forgotPassword(ctx, email, fresh())
        seen[email]!.push([res.status, res.headers.get('retry-after'), await res.text()])
      }
    }
    const blocked = [429, '3600', JSON.stringify({ error: { code: 'rate_limited', message: 'Too many password reset requests; try again later', status: 429 } })]
    const accepted = [202, null, JSON.stringify({ accepted: true })]
    expect(seen[user.email]).toEqual([accepted, accepted, accepted, accepted, accepted, blocked, blocked])
    expect(seen[ghost]).toEqual(seen[user.email]!)
    // The address is compared in any case.
    expect((await forgotPassword(ctx, user.email.toUpperCase(), fresh())).status).toBe(429)
    expect((await mailTo(ctx, user.email)).filter((m) => m.kind === 'reset_password')).toHaveLength(5)
  })

  test('twenty an hour per client, to any addresses: then 429 with Retry-After', async () => {
    const app = await createTestApp({ env: { ARENA_TRUST_PROXY: 'true' } })
    try {
      const client = '192.0.2.77'
      for (let i = 0; i < 20; i++) expect((await forgotPassword(app, `spray${i}@example.com`, client)).status).toBe(202)
      const blocked = await forgotPassword(app, 'spray-last@example.com', client)
      expect(blocked.status).toBe(429)
      expect(blocked.headers.get('retry-after')).toBe('3600')
      // Another client is not blocked; after the hour this one is not either.
      expect((await forgotPassword(app, 'spray-last@example.com', '192.0.2.78')).status).toBe(202)
      app.clock.advance(60 * MINUTE)
      expect((await forgotPassword(app, 'spray-again@example.com', client)).status).toBe(202)
    } finally {
      await app.close()
    }
  })

  test('a malformed or missing email is 422, before anything is counted', async () => {
    for (const body of [{}, { email: 'not an address' }, { email: `${'a'.repeat(250)}@example.com` }, { email: 7 }]) {
      const res = await ctx.handle(postJson('/api/v1/user/password/forgot', body, { 'x-forwarded-for': fresh() }))
      expect(res.status).toBe(422)
      expect(await errorCode(res)).toBe('validation_failed')
    }
  })

  test('with mail going nowhere (no SMTP outside local): 503 mail_not_configured for known and unknown addresses alike', async () => {
    const app = await createTestApp({ env: { ARENA_ENV: 'staging' } })
    try {
      const user = await registerUser(app)
      const known = await forgotPassword(app, user.email)
      const unknown = await forgotPassword(app, 'nobody@example.com')
      expect(known.status).toBe(503)
      expect(await known.json()).toEqual({ error: { code: 'mail_not_configured', message: 'Mail is not configured on this server (ARENA_SMTP_URL)', status: 503 } })
      expect(unknown.status).toBe(503)
      expect(comparable(unknown)).toEqual(comparable(known))
      expect(await storedCode(app, user.id, 'reset_password')).toBeUndefined()
    } finally {
      await app.close()
    }
  })
})

describe('POST /user/password/reset', () => {
  test('200 { revoked }: the new password works, the old does not, and every session ends at once', async () => {
    const { user, code } = await withResetCode()
    const sessions = [await login(ctx, user.username), await login(ctx, user.username)]
    const res = await resetPassword(ctx, { email: user.email, code, newPassword: NEW_PASSWORD }, fresh())
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ revoked: 2 })
    for (const session of sessions) {
      expect((await me(ctx, session.accessToken)).status).toBe(401)
      expect((await rotate(ctx, session)).status).toBe(401)
    }
    expect((await ctx.handle(postJson('/api/v1/user/login', { identifier: user.username, password: PASSWORD }, { 'x-forwarded-for': fresh() }))).status).toBe(401)
    await login(ctx, user.username, NEW_PASSWORD)
  })

  test('events: a session.logout (password_reset) per session, account.password_reset, account.email_verified; a PASSWORD_RESET security event', async () => {
    const { user, code } = await withResetCode()
    const session = await login(ctx, user.username)
    const sid = JSON.parse(Buffer.from(session.accessToken.split('.')[1]!, 'base64url').toString()).sid as string
    const client = fresh()
    expect((await resetPassword(ctx, { email: user.email, code, newPassword: NEW_PASSWORD }, client)).status).toBe(200)
    expect(await eventsOf(ctx, user.id, 'session.logout')).toEqual([{ data: { sessionId: sid, reason: 'password_reset' } }])
    expect(await eventsOf(ctx, user.id, 'account.password_reset')).toEqual([{ data: { revoked: 1 } }])
    expect(await eventsOf(ctx, user.id, 'account.email_verified')).toEqual([{ data: { verifiedAt: ctx.clock.now().toISOString() } }])
    const security = (await securityEventsOf(ctx, user.id)).filter((e) => e.kind === 'PASSWORD_RESET')
    expect(security).toEqual([{ kind: 'PASSWORD_RESET', level: 'WARN', source: 'server', details: { revoked: 1, address: client.split(',').at(-1)!.trim() } }])
    expect(ctx.logText()).not.toContain(code)
    expect(ctx.logText()).not.toContain(NEW_PASSWORD)
  })

  test('the code came by mail, so a reset marks the email verified', async () => {
    const { user, code } = await withResetCode()
    expect((await resetPassword(ctx, { email: user.email, code, newPassword: NEW_PASSWORD }, fresh())).status).toBe(200)
    expect((await login(ctx, user.username, NEW_PASSWORD)).user).toMatchObject({ emailVerified: true })
  })

  test('a code works once', async () => {
    const { user, code } = await withResetCode()
    expect((await resetPassword(ctx, { email: user.email, code, newPassword: NEW_PASSWORD }, fresh())).status).toBe(200)
    const again = await resetPassword(ctx, { email: user.email, code, newPassword: 'yet another passphrase' }, fresh())
    expect(again.status).toBe(400)
    expect(await again.json()).toEqual({ error: { code: 'invalid_reset_code', message: 'The reset code is wrong, used or expired', status: 400 } })
    await login(ctx, user.username, NEW_PASSWORD)
  })

  test('wrong codes are 400 and counted: four leave the right code working, five kill it', async () => {
    const four = await withResetCode()
    for (let i = 0; i < 4; i++) expect((await resetPassword(ctx, { email: four.user.email, code: 'ZZZZZ-ZZZZZ', newPassword: NEW_PASSWORD }, fresh())).status).toBe(400)
    expect((await storedCode(ctx, four.user.id, 'reset_password'))!.failures).toBe(4)
    expect((await resetPassword(ctx, { email: four.user.email, code: four.code, newPassword: NEW_PASSWORD }, fresh())).status).toBe(200)

    const five = await withResetCode()
    for (let i = 0; i < 5; i++) {
      const res = await resetPassword(ctx, { email: five.user.email, code: 'ZZZZZ-ZZZZZ', newPassword: NEW_PASSWORD }, fresh())
      expect(await errorCode(res)).toBe('invalid_reset_code')
    }
    expect(await storedCode(ctx, five.user.id, 'reset_password')).toBeUndefined()
    const dead = await resetPassword(ctx, { email: five.user.email, code: five.code, newPassword: NEW_PASSWORD }, fresh())
    expect(dead.status).toBe(400)
    expect(await errorCode(dead)).toBe('invalid_reset_code')
    await login(ctx, five.user.username, PASSWORD)
  })

  test('a code lives 15 minutes: valid at the last millisecond, refused after', async () => {
    const app = await createTestApp({ env: { ARENA_TRUST_PROXY: 'true' } })
    try {
      const early = await withResetCode(app)
      const late = await withResetCode(app)
      app.clock.advance(15 * MINUTE - 1)
      expect((await resetPassword(app, { email: early.user.email, code: early.code, newPassword: NEW_PASSWORD }, fresh())).status).toBe(200)
      app.clock.advance(1)
      const expired = await resetPassword(app, { email: late.user.email, code: late.code, newPassword: NEW_PASSWORD }, fresh())
      expect(expired.status).toBe(400)
      expect(await errorCode(expired)).toBe('invalid_reset_code')
      await login(app, late.user.username, PASSWORD)
    } finally {
      await app.close()
    }
  })

  test('a new code replaces the old one', async () => {
    const { user, code: first } = await withResetCode()
    expect((await forgotPassword(ctx, user.email, fresh())).status).toBe(202)
    const second = await latestCode(ctx, user.email, 'reset_password')
    expect(second).not.toBe(first)
    expect((await resetPassword(ctx, { email: user.email, code: first, newPassword: NEW_PASSWORD }, fresh())).status).toBe(400)
    expect((await resetPassword(ctx, { email: user.email, code: second, newPassword: NEW_PASSWORD }, fresh())).status).toBe(200)
  })

  test('the code is bound to its account and its purpose', async () => {
    const a = await withResetCode()
    const b = await withResetCode()
    // A's code with B's address, and B's email-verification code: both wrong.
    expect((await resetPassword(ctx, { email: b.user.email, code: a.code, newPassword: NEW_PASSWORD }, fresh())).status).toBe(400)
    const verifyCode = await latestCode(ctx, b.user.email, 'verify_email')
    expect((await resetPassword(ctx, { email: b.user.email, code: verifyCode, newPassword: NEW_PASSWORD }, fresh())).status).toBe(400)
    // And a reset code verifies no email.
    const { accessToken } = await login(ctx, b.user.username)
    expect((await verifyEmail(ctx, accessToken, b.code)).status).toBe(400)
  })

  test('an unknown or deleted address is the same 400', async () => {
    const { user, code } = await withResetCode()
    const unknown = await resetPassword(ctx, { email: `nobody.${user.username}@example.com`, code, newPassword: NEW_PASSWORD }, fresh())
    expect(unknown.status).toBe(400)
    expect(await errorCode(unknown)).toBe('invalid_reset_code')
    await ctx.storage.write((tx) => tx.auth.eraseUser(user.id, ctx.clock.now()))
    const deleted = await resetPassword(ctx, { email: user.email, code, newPassword: NEW_PASSWORD }, fresh())
    expect(deleted.status).toBe(400)
    expect(await errorCode(deleted)).toBe('invalid_reset_code')
  })

  test('two resets with the right code, both past the code check before either applies: exactly one wins', async () => {
    // One hash slot, held: both resets judge their code (and commit that) and
    // then wait for the slot, so both reach the unit of work that applies a
    // reset with a code that was right when checked.
    const app = await createTestApp({ env: { ARENA_TRUST_PROXY: 'true' }, hashGate: { concurrency: 1 } })
    try {
      const { user, code } = await withResetCode(app)
      let release!: () => void
      const held = app.services.pins.hashGate.run(() => new Promise<void>((resolve) => (release = resolve)))
      const racing = Promise.all([
        resetPassword(app, { email: user.email, code, newPassword: 'first new passphrase' }, '192.0.2.201'),
        resetPassword(app, { email: user.email, code, newPassword: 'second new passphrase' }, '192.0.2.202'),
      ])
      const { loginThrottle } = app.peek.tables
      await waitFor('both resets past the code check', async () => {
        const rows = await app.peek.db.select().from(loginThrottle).where(inArray(loginThrottle.key, ['reset-client:192.0.2.201', 'reset-client:192.0.2.202']))
        return rows.length === 2 ? true : undefined
      })
      expect(app.services.pins.hashGate.stats().waiting).toBe(2)
      release()
      await held
      const [a, b] = await racing
      expect([a.status, b.status].sort()).toEqual([200, 400])
      expect(await errorCode(a.status === 200 ? b : a)).toBe('invalid_reset_code')
      await login(app, user.username, a.status === 200 ? 'first new passphrase' : 'second new passphrase')
      expect(await eventsOf(app, user.id, 'account.password_reset')).toHaveLength(1)
    } finally {
      await app.close()
    }
  })

  test('two resets at once with the right code: exactly one wins', async () => {
    const { user, code } = await withResetCode()
    const [a, b] = await Promise.all([
      resetPassword(ctx, { email: user.email, code, newPassword: 'first new passphrase' }, fresh()),
      resetPassword(ctx, { email: user.email, code, newPassword: 'second new passphrase' }, fresh()),
    ])
    expect([a.status, b.status].sort()).toEqual([200, 400])
    const loser = a.status === 200 ? b : a
    expect(await errorCode(loser)).toBe('invalid_reset_code')
    await login(ctx, user.username, a.status === 200 ? 'first new passphrase' : 'second new passphrase')
    expect(await eventsOf(ctx, user.id, 'account.password_reset')).toHaveLength(1)
  })

  test('a reset lifts the login block the old password had collected', async () => {
    const { user, code } = await withResetCode()
    for (let i = 0; i < 5; i++) await ctx.handle(postJson('/api/v1/user/login', { identifier: user.username, password: 'guess' }, { 'x-forwarded-for': fresh() }))
    expect((await ctx.handle(postJson('/api/v1/user/login', { identifier: user.username, password: PASSWORD }, { 'x-forwarded-for': fresh() }))).status).toBe(429)
    expect((await resetPassword(ctx, { email: user.email, code, newPassword: NEW_PASSWORD }, fresh())).status).toBe(200)
    await login(ctx, user.username, NEW_PASSWORD)
  })

  test('twenty attempts an hour per client, right or wrong: then 429 with Retry-After, before the code is judged', async () => {
    const app = await createTestApp({ env: { ARENA_TRUST_PROXY: 'true' } })
    try {
      const { user, code } = await withResetCode(app)
      const client = '192.0.2.99'
      for (let i = 0; i < 20; i++) {
        expect((await resetPassword(app, { email: `spray${i}@example.com`, code: 'ZZZZZ-ZZZZZ', newPassword: NEW_PASSWORD }, client)).status).toBe(400)
      }
      const blocked = await resetPassword(app, { email: user.email, code, newPassword: NEW_PASSWORD }, client)
      expect(blocked.status).toBe(429)
      expect(blocked.headers.get('retry-after')).toBe('3600')
      // Not judged: the code is still there, unspent, for another client.
      expect((await storedCode(app, user.id, 'reset_password'))!.failures).toBe(0)
      expect((await resetPassword(app, { email: user.email, code, newPassword: NEW_PASSWORD }, '192.0.2.100')).status).toBe(200)
    } finally {
      await app.close()
    }
  })

  test('bad input is 422 and judges no code', async () => {
    const { user, code } = await withResetCode()
    for (const body of [
      { email: user.email, code, newPassword: 'short' },
      { email: user.email, code, newPassword: '🔑🔑🔑🔑' },
      { email: user.email, code, newPassword: 'x'.repeat(129) },
      { email: user.email, code },
      { email: user.email, newPassword: NEW_PASSWORD },
      { code, newPassword: NEW_PASSWORD },
      { email: 'not an address', code, newPassword: NEW_PASSWORD },
      { email: user.email, code: '', newPassword: NEW_PASSWORD },
      { email: user.email, code: 'A'.repeat(65), newPassword: NEW_PASSWORD },
    ]) {
      const res = await ctx.handle(postJson('/api/v1/user/password/reset', body, { 'x-forwarded-for': fresh() }))
      expect({ body, status: res.status }).toEqual({ body, status: 422 })
    }
    expect((await storedCode(ctx, user.id, 'reset_password'))!.failures).toBe(0)
    expect((await resetPassword(ctx, { email: user.email, code, newPassword: NEW_PASSWORD }, fresh())).status).toBe(200)
  })
})
