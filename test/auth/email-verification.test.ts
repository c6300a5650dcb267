// Verified email (contract §8): register mails a code, POST /user/email/verify
// takes it once, five wrong codes or a day kill it, POST /user/email/resend
// mails a new one in its place (throttled), and without anywhere to send mail
// the account is still created, with no code.
import { afterAll, describe, expect, test } from 'bun:test'
import { createTestApp, postJson, req, type TestApp } from '../helpers/app'
import { bearer, login, me, registerUser } from '../helpers/auth'
import { errorCode, eventsOf, eventTypes, resendVerification, storedCode, verifyEmail } from '../helpers/account'
import { latestCode, mailTo } from '../helpers/mail'
import { hashAccountCode } from '../../src/modules/auth/codes'

const ctx = await createTestApp()
afterAll(() => ctx.close())

const HOUR = 3_600_000

async function signedUp(app: TestApp = ctx) {
  const user = await registerUser(app)
  const tokens = await login(app, user.username)
  return { user, token: tokens.accessToken }
}

async function emailVerified(token: string, app: TestApp = ctx): Promise<boolean> {
  return ((await (await me(app, token)).json()) as { user: { emailVerified: boolean } }).user.emailVerified
}

describe('register', () => {
  test('mails a verification code, stores only its hash, and appends account.code_sent', async () => {
    const res = await ctx.handle(postJson('/api/v1/user/register', { email: 'Grace.Hopper@Example.com', username: 'grace_h', password: 'correct horse battery', country: 'US', accept_terms: true }))
    expect(res.status).toBe(201)
    const { user } = (await res.json()) as { user: { id: string; emailVerified: boolean } }
    expect(user.emailVerified).toBe(false)

    const mails = await mailTo(ctx, 'grace.hopper@example.com')
    expect(mails).toHaveLength(1)
    // Sent to the address as registered; `kept` in the dev mailbox (local, no SMTP).
    expect(mails[0]).toMatchObject({ toAddress: 'Grace.Hopper@Example.com', kind: 'verify_email', userId: user.id, status: 'kept' })
    const code = await latestCode(ctx, 'grace.hopper@example.com', 'verify_email')
    expect(code).toMatch(/^[0-9A-Z]{5}-[0-9A-Z]{5}$/)

    const row = await storedCode(ctx, user.id, 'verify_email')
    expect(row!.codeHash).toBe(hashAccountCode(user.id, 'verify_email', code))
    expect(JSON.stringify(row)).not.toContain(code.replace('-', ''))
    expect(row!.expiresAt.getTime() - row!.createdAt.getTime()).toBe(24 * HOUR)
    expect(await eventsOf(ctx, user.id, 'account.code_sent')).toEqual([{ data: { purpose: 'verify_email' } }])
  })
})

describe('POST /user/email/verify', () => {
  test('the mailed code verifies the email: 200 with the user, emailVerified everywhere after, one event, the code spent', async () => {
    const { user, token } = await signedUp()
    const code = await latestCode(ctx, user.email, 'verify_email')
    const res = await verifyEmail(ctx, token, code)
    expect(res.status).toBe(200)
    const body = (await res.json()) as { user: { id: string; emailVerified: boolean } }
    expect(body.user).toMatchObject({ id: user.id, emailVerified: true })
    expect(await emailVerified(token)).toBe(true)
    // A new login's user says so too.
    expect((await login(ctx, user.username)).user).toMatchObject({ emailVerified: true })
    expect(await storedCode(ctx, user.id, 'verify_email')).toBeUndefined()
    const events = await eventsOf(ctx, user.id, 'account.email_verified')
    expect(events).toEqual([{ data: { verifiedAt: ctx.clock.now().toISOString() } }])
  })

  test('the code is typed back in any case, without the dash, with O for 0 and I or L for 1', async () => {
    const { user, token } = await signedUp()
    const code = await latestCode(ctx, user.email, 'verify_email')
    const typed = ` ${code.toLowerCase().replace('-', '').replace(/0/g, 'o').replace(/1/g, 'l')} `
    expect((await verifyEmail(ctx, token, typed)).status).toBe(200)
  })

  test('already verified: 200 with the user whatever the code, and nothing more happens', async () => {
    const { user, token } = await signedUp()
    expect((await verifyEmail(ctx, token, await latestCode(ctx, user.email, 'verify_email'))).status).toBe(200)
    const again = await verifyEmail(ctx, token, 'AAAAA-AAAAA')
    expect(again.status).toBe(200)
    expect(((await again.json()) as { user: { emailVerified: boolean } }).user.emailVerified).toBe(true)
    expect(await eventsOf(ctx, user.id, 'account.email_verified')).toHaveLength(1)
  })

  test('a wrong code is 400 invalid_verification_code and counted; four wrong tries leave the right code working', async () => {
    const { user, token } = await signedUp()
    for (let i = 0; i < 4; i++) {
      const res = await verifyEmail(ctx, token, `WRONG-CODE${i}`.slice(0, 11))
      expect(res.status).toBe(400)
      expect(await res.json()).toEqual({ error: { code: 'invalid_verification_code', message: 'The verification code is wrong or has expired', status: 400 } })
    }
    expect((await storedCode(ctx, user.id, 'verify_email'))!.failures).toBe(4)
    expect(await emailVerified(token)).toBe(false)
    expect((await verifyEmail(ctx, token, await latestCode(ctx, user.email, 'verify_email'))).status).toBe(200)
  })

  test('five wrong codes kill it: the right code is refused after', async () => {
    const { user, token } = await signedUp()
    const code = await latestCode(ctx, user.email, 'verify_email')
    for (let i = 0; i < 5; i++) expect((await verifyEmail(ctx, token, 'ZZZZZ-ZZZZZ')).status).toBe(400)
    expect(await storedCode(ctx, user.id, 'verify_email')).toBeUndefined()
    const res = await verifyEmail(ctx, token, code)
    expect(res.status).toBe(400)
    expect(await errorCode(res)).toBe('invalid_verification_code')
    expect(await emailVerified(token)).toBe(false)
  })

  test('a code lives 24 hours: valid at the last millisecond, refused after', async () => {
    const app = await createTestApp()
    try {
      const early = await signedUp(app)
      const late = await signedUp(app)
      // Access tokens live 15 minutes: log in again at each moment.
      app.clock.advance(24 * HOUR - 1)
      expect((await verifyEmail(app, (await login(app, early.user.username)).accessToken, await latestCode(app, early.user.email, 'verify_email'))).status).toBe(200)
      app.clock.advance(1)
      const expired = await verifyEmail(app, (await login(app, late.user.username)).accessToken, await latestCode(app, late.user.email, 'verify_email'))
      expect(expired.status).toBe(400)
      expect(await errorCode(expired)).toBe('invalid_verification_code')
    } finally {
      await app.close()
    }
  })

  test("another user's code is worth nothing", async () => {
    const a = await signedUp()
    const b = await signedUp()
    expect((await verifyEmail(ctx, b.token, await latestCode(ctx, a.user.email, 'verify_email'))).status).toBe(400)
    expect(await emailVerified(b.token)).toBe(false)
  })

  test('bad input is a 4xx envelope: no bearer 401, no code or a code too long 422', async () => {
    const { token } = await signedUp()
    expect((await ctx.handle(postJson('/api/v1/user/email/verify', { code: 'AAAAA-AAAAA' }))).status).toBe(401)
    for (const body of [{}, { code: '' }, { code: 'A'.repeat(65) }, { code: 12345 }]) {
      const res = await ctx.handle(postJson('/api/v1/user/email/verify', body, bearer(token)))
      expect(res.status).toBe(422)
      expect(await errorCode(res)).toBe('validation_failed')
    }
    // A code that cannot be one of ours is simply wrong.
    expect((await verifyEmail(ctx, token, '!!!')).status).toBe(400)
  })
})

describe('POST /user/email/resend', () => {
  test('202 { accepted: true }: a new code replaces the old one, mailed, with its event', async () => {
    const { user, token } = await signedUp()
    const first = await latestCode(ctx, user.email, 'verify_email')
    const res = await resendVerification(ctx, token)
    expect(res.status).toBe(202)
    expect(await res.json()).toEqual({ accepted: true })
    const second = await latestCode(ctx, user.email, 'verify_email')
    expect(second).not.toBe(first)
    expect(await mailTo(ctx, user.email)).toHaveLength(2)
    expect(await eventsOf(ctx, user.id, 'account.code_sent')).toHaveLength(2)
    expect((await verifyEmail(ctx, token, first)).status).toBe(400)
    expect((await verifyEmail(ctx, token, second)).status).toBe(200)
  })

  test('works without a body, too', async () => {
    const { token } = await signedUp()
    expect((await ctx.handle(req('/api/v1/user/email/resend', { method: 'POST', headers: bearer(token) }))).status).toBe(202)
  })

  test('a new code starts with no failures and its own 24 hours', async () => {
    const { user, token } = await signedUp()
    for (let i = 0; i < 3; i++) await verifyEmail(ctx, token, 'ZZZZZ-ZZZZZ')
    ctx.clock.advance(HOUR)
    expect((await resendVerification(ctx, (await login(ctx, user.username)).accessToken)).status).toBe(202)
    const row = (await storedCode(ctx, user.id, 'verify_email'))!
    expect(row.failures).toBe(0)
    expect(row.createdAt.getTime()).toBe(ctx.clock.now().getTime())
    expect(row.expiresAt.getTime()).toBe(ctx.clock.now().getTime() + 24 * HOUR)
  })

  test('five an hour per user: the sixth is 429 with Retry-After and mails nothing; an hour later it works again', async () => {
    const app = await createTestApp()
    try {
      const { user, token } = await signedUp(app)
      for (let i = 0; i < 5; i++) expect((await resendVerification(app, token)).status).toBe(202)
      const mails = (await mailTo(app, user.email)).length
      const blocked = await resendVerification(app, token)
      expect(blocked.status).toBe(429)
      expect(blocked.headers.get('retry-after')).toBe('3600')
      expect(await errorCode(blocked)).toBe('rate_limited')
      expect(await mailTo(app, user.email)).toHaveLength(mails)
      // Another user is not affected.
      expect((await resendVerification(app, (await signedUp(app)).token)).status).toBe(202)
      app.clock.advance(30 * 60_000)
      const later = (await login(app, user.username)).accessToken
      expect((await resendVerification(app, later)).headers.get('retry-after')).toBe('1800')
      app.clock.advance(10 * 60_000)
      expect((await resendVerification(app, later)).headers.get('retry-after')).toBe('1200')
      app.clock.advance(20 * 60_000)
      expect((await resendVerification(app, (await login(app, user.username)).accessToken)).status).toBe(202)
    } finally {
      await app.close()
    }
  })

  test('already verified: 409 conflict, nothing mailed', async () => {
    const { user, token } = await signedUp()
    expect((await verifyEmail(ctx, token, await latestCode(ctx, user.email, 'verify_email'))).status).toBe(200)
    const res = await resendVerification(ctx, token)
    expect(res.status).toBe(409)
    expect(await errorCode(res)).toBe('conflict')
    expect(await mailTo(ctx, user.email)).toHaveLength(1)
  })

  test('no bearer: 401', async () => {
    expect((await ctx.handle(postJson('/api/v1/user/email/resend', {}))).status).toBe(401)
  })
})

describe('when mail goes nowhere (no SMTP outside local)', () => {
  test('register still succeeds, with no code and no mail; resend is 503 mail_not_configured; any code is wrong', async () => {
    const app = await createTestApp({ env: { ARENA_ENV: 'staging' } })
    try {
      expect(app.services.mailer.destination).toBe('nowhere')
      const { user, token } = await signedUp(app)
      expect(await storedCode(app, user.id, 'verify_email')).toBeUndefined()
      expect(await mailTo(app, user.email)).toEqual([])
      expect(await eventTypes(app, user.id, 'account')).toEqual([])
      const res = await resendVerification(app, token)
      expect(res.status).toBe(503)
      expect(res.headers.get('retry-after')).toBe('3600')
      expect(await res.json()).toEqual({ error: { code: 'mail_not_configured', message: 'Mail is not configured on this server (ARENA_SMTP_URL)', status: 503 } })
      expect((await verifyEmail(app, token, 'AAAAA-AAAAA')).status).toBe(400)
    } finally {
      await app.close()
    }
  })

  test('with SMTP configured the code is stored and its mail queued for delivery', async () => {
    const app = await createTestApp({ env: { ARENA_ENV: 'staging', ARENA_SMTP_URL: 'smtp://arena:secret@127.0.0.1:2525' } })
    try {
      const { user, token } = await signedUp(app)
      expect((await mailTo(app, user.email))[0]).toMatchObject({ status: 'queued', kind: 'verify_email' })
      expect((await verifyEmail(app, token, await latestCode(app, user.email, 'verify_email'))).status).toBe(200)
    } finally {
      await app.close()
    }
  })
})
