// Invariant: a device code hands out tokens at most once, and only after a
// signed-in player approved it on the /device page (contract §13, RFC 8628).
// Before that the device hears authorization_pending; polling faster than the
// interval is slow_down and grows the interval by 5 s (stored); a denied code
// is access_denied; an expired, unknown or spent one expired_token. The device
// code is stored only as its SHA-256; every code lives
// ARENA_DEVICE_CODE_TTL_S and housekeeping deletes it after. Two polls of one
// approved code at once: exactly one 200.
import { afterAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { housekeeping } from '../../src/modules/events/housekeeping'
import { displayUserCode, normalizeUserCode } from '../../src/modules/auth/device-codes'
import { sha256Hex } from '../../src/shared/crypto'
import { postJson, req } from '../helpers/app'
import { createArenaApp } from '../helpers/arena'
import { me, registerUser } from '../helpers/auth'
import { banUser, securityEventsOf } from '../helpers/accounts'
import { answerOnPage, cookieOf, csrfIn, expectError, form, pageSignIn, pollDevice, startDevice } from '../helpers/device-codes'

const ctx = await createArenaApp()
afterAll(() => ctx.close())
const { deviceCodes } = ctx.peek.tables
const rowOf = async (deviceCode: string) => (await ctx.peek.db.select().from(deviceCodes).where(eq(deviceCodes.deviceCodeHash, sha256Hex(deviceCode))))[0]
const CODE_SHAPE = /^[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}$/

describe('asking for a code', () => {
  test('answers a device code, a user code to show, the page and its link with the code, the lifetime and the interval; only the SHA-256 is stored', async () => {
    const issued = await startDevice(ctx)
    expect(issued.deviceCode.length).toBeGreaterThanOrEqual(43)
    expect(issued.userCode).toMatch(CODE_SHAPE)
    expect(issued).toMatchObject({ verificationUri: 'http://localhost/device', verificationUriComplete: `http://localhost/device?code=${issued.userCode}`, expiresIn: 600, interval: 5 })
    const row = await rowOf(issued.deviceCode)
    expect(row).toMatchObject({ userCode: issued.userCode.replace('-', ''), status: 'pending', userId: null, intervalS: 5, lastPolledAt: null })
    expect(row!.expiresAt.getTime() - row!.createdAt.getTime()).toBe(600_000)
    const everything = JSON.stringify(await ctx.peek.db.select().from(deviceCodes))
    expect(everything).not.toContain(issued.deviceCode)
    // Without a body at all, too; every code is new.
    const bare = await ctx.handle(req('/api/v1/auth/device-code', { method: 'POST' }))
    expect(bare.status).toBe(200)
    const other = (await bare.json()) as typeof issued
    expect(other.deviceCode).not.toBe(issued.deviceCode)
    expect(other.userCode).not.toBe(issued.userCode)
  })

  test('the page is at ARENA_SERVER_URL, else at the origin the device reached (behind a trusted proxy, the one it says)', async () => {
    const proxied = await createArenaApp({ ARENA_TRUST_PROXY: 'true' })
    try {
      const issued = await startDevice(proxied, { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'play.example.com' })
      expect(issued.verificationUri).toBe('https://play.example.com/device')
    } finally {
      await proxied.close()
    }
    // Without trust, those headers are the client's words: ignored.
    expect((await startDevice(ctx, { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.example' })).verificationUri).toBe('http://localhost/device')
    // ARENA_SERVER_URL, when set, is the address players are given, whatever the device reached.
    const named = await createArenaApp({ ARENA_SERVER_URL: 'https://api.example.com/' })
    try {
      const issued = await startDevice(named)
      expect(issued.verificationUri).toBe('https://api.example.com/device')
      expect(issued.verificationUriComplete).toBe(`https://api.example.com/device?code=${issued.userCode}`)
    } finally {
      await named.close()
    }
  })

  test('ARENA_DEVICE_CODE_TTL_S sets the lifetime', async () => {
    const short = await createArenaApp({ ARENA_DEVICE_CODE_TTL_S: '120' })
    try {
      expect((await startDevice(short)).expiresIn).toBe(120)
    } finally {
      await short.close()
    }
  })
})

describe('polling', () => {
  test('authorization_pending until answered; polled sooner than the interval: slow_down, and the interval grows by 5 s each time', async () => {
    const { deviceCode } = await startDevice(ctx)
    await expectError(await pollDevice(ctx, deviceCode), 400, 'authorization_pending')
    await expectError(await pollDevice(ctx, deviceCode), 400, 'slow_down')
    expect((await rowOf(deviceCode))!.intervalS).toBe(10)
    ctx.clock.advance(6_000) // past the first 5 s, not the new 10
    await expectError(await pollDevice(ctx, deviceCode), 400, 'slow_down')
    expect((await rowOf(deviceCode))!.intervalS).toBe(15)
    ctx.clock.advance(15_000)
    await expectError(await pollDevice(ctx, deviceCode), 400, 'authorization_pending')
    expect((await rowOf(deviceCode))!.intervalS).toBe(15)
    ctx.clock.advance(15_000)
    await expectError(await pollDevice(ctx, deviceCode), 400, 'authorization_pending')
  })

  test('past its lifetime, or unknown: expired_token', async () => {
    const { deviceCode } = await startDevice(ctx)
    ctx.clock.advance(600_000)
    await expectError(await pollDevice(ctx, deviceCode), 400, 'expired_token')
    await expectError(await pollDevice(ctx, 'not-a-code-anyone-was-given'), 400, 'expired_token')
  })

  test('denied on the page: access_denied, and it stays so', async () => {
    const player = await registerUser(ctx)
    const { deviceCode, userCode } = await startDevice(ctx)
    const answer = await answerOnPage(ctx, player.username, userCode, 'deny')
    expect(answer.status).toBe(200)
    expect(await answer.text()).toContain('Denied')
    await expectError(await pollDevice(ctx, deviceCode), 400, 'access_denied')
    ctx.clock.advance(5_000)
    await expectError(await pollDevice(ctx, deviceCode), 400, 'access_denied')
    expect(await rowOf(deviceCode)).toMatchObject({ status: 'denied', userId: player.id })
    expect(await securityEventsOf(ctx, player.id, 'DEVICE_APPROVED')).toEqual([])
  })

  test('approved on the page: the next poll gets tokens of the player, once; the poll after that is expired_token', async () => {
    const player = await registerUser(ctx)
    const { deviceCode, userCode } = await startDevice(ctx)
    await expectError(await pollDevice(ctx, deviceCode), 400, 'authorization_pending')
    const answer = await answerOnPage(ctx, player.email, userCode)
    expect(answer.status).toBe(200)
    expect(await answer.text()).toContain('return to your device')
    // The approval is in the security log, with the code and where it was approved from.
    const [approved] = await securityEventsOf(ctx, player.id, 'DEVICE_APPROVED')
    expect(approved).toMatchObject({ level: 'SAFE', details: { userCode } })
    ctx.clock.advance(5_000)
    const granted = await pollDevice(ctx, deviceCode)
    expect(granted.status).toBe(200)
    const tokens = (await granted.json()) as { accessToken: string; refreshToken: string; tokenType: string; user: { id: string } }
    expect(tokens).toMatchObject({ tokenType: 'Bearer', user: { id: player.id } })
    const mine = await me(ctx, tokens.accessToken)
    expect(mine.status).toBe(200)
    expect(((await mine.json()) as { user: { id: string } }).user.id).toBe(player.id)
    ctx.clock.advance(5_000)
    await expectError(await pollDevice(ctx, deviceCode), 400, 'expired_token')
    expect((await rowOf(deviceCode))!.status).toBe('spent')
  })

  test('two polls of one approved code at once: exactly one gets tokens', async () => {
    const player = await registerUser(ctx)
    for (let round = 0; round < 3; round++) {
      const { deviceCode, userCode } = await startDevice(ctx)
      expect((await answerOnPage(ctx, player.username, userCode)).status).toBe(200)
      const answers = await Promise.all(Array.from({ length: 6 }, () => pollDevice(ctx, deviceCode)))
      const statuses = answers.map((res) => res.status)
      expect(statuses.filter((s) => s === 200).length).toBe(1)
      expect(statuses.filter((s) => s !== 200).every((s) => s === 400)).toBe(true)
      ctx.clock.advance(60_000)
    }
  })

  test('a code approved by a player banned before the poll gives no tokens: account_banned, and the code is spent', async () => {
    const player = await registerUser(ctx)
    const { deviceCode, userCode } = await startDevice(ctx)
    expect((await answerOnPage(ctx, player.username, userCode)).status).toBe(200)
    expect((await banUser(ctx, player.id, { reason: 'cheating' })).status).toBe(200)
    const res = await pollDevice(ctx, deviceCode)
    expect(res.status).toBe(403)
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('account_banned')
    ctx.clock.advance(5_000)
    await expectError(await pollDevice(ctx, deviceCode), 400, 'expired_token')
  })

  test('bad bodies are 422 (400 when not JSON), and store nothing', async () => {
    const before = (await ctx.peek.db.select().from(deviceCodes)).length
    for (const body of [{}, { deviceCode: 5 }, { deviceCode: '' }, { deviceCode: 'x'.repeat(257) }, { deviceCode: null }, []]) {
      const res = await ctx.handle(postJson('/api/v1/auth/device-code/token', body))
      await expectError(res, 422, 'validation_failed')
    }
    await expectError(await ctx.handle(postJson('/api/v1/auth/device-code/token', '{"deviceCode":')), 400, 'malformed_json')
    for (const body of ['5', '[]', '"code"']) await expectError(await ctx.handle(postJson('/api/v1/auth/device-code', body)), 422, 'validation_failed')
    expect((await ctx.peek.db.select().from(deviceCodes)).length).toBe(before)
  })
})

describe('the page', () => {
  test('signed out, the page shows the code and a sign-in form; a wrong password is the login\'s 401, on the same form', async () => {
    const { userCode } = await startDevice(ctx)
    const page = await ctx.handle(req(`/device?code=${userCode.toLowerCase()}`))
    expect(page.status).toBe(200)
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'")
    const html = await page.text()
    expect(html).toContain(userCode)
    expect(html).toContain('action="/device/login"')
    const wrong = await ctx.handle(form('/device/login', { identifier: 'nobody-here', password: 'not the password', code: userCode }))
    expect(wrong.status).toBe(401)
    expect(wrong.headers.get('set-cookie')).toBeNull()
    expect(await wrong.text()).toContain('Invalid identifier or password')
  })

  test('the page cookie is HttpOnly, SameSite=Lax, only for /device, short-lived; signing in opens no account session', async () => {
    const player = await registerUser(ctx)
    const res = await ctx.handle(form('/device/login', { identifier: player.username, password: 'correct horse battery' }))
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('/device')
    const set = res.headers.get('set-cookie')!
    expect(set).toContain('HttpOnly')
    expect(set).toContain('SameSite=Lax')
    expect(set).toContain('Path=/device')
    expect(set).toContain('Max-Age=900')
    const { authSessions } = ctx.peek.tables
    expect(await ctx.peek.db.select().from(authSessions).where(eq(authSessions.userId, player.id))).toEqual([])
  })

  test('approving needs the page session (401), its CSRF token (403) and a form from this site (403); an unknown or answered code is a clear 404', async () => {
    const player = await registerUser(ctx)
    const { deviceCode, userCode } = await startDevice(ctx)
    const cookie = await pageSignIn(ctx, player.username)
    const page = await ctx.handle(req(`/device?code=${userCode}`, { headers: { cookie } }))
    const csrf = csrfIn(await page.text())
    const noSession = await ctx.handle(form('/device/approve', { _csrf: csrf, code: userCode, decision: 'approve' }))
    expect(noSession.status).toBe(401)
    expect(noSession.headers.get('content-type')).toContain('text/html')
    expect((await ctx.handle(form('/device/approve', { code: userCode, decision: 'approve' }, { cookie }))).status).toBe(403)
    expect((await ctx.handle(form('/device/approve', { _csrf: 'f'.repeat(64), code: userCode, decision: 'approve' }, { cookie }))).status).toBe(403)
    const other = await registerUser(ctx)
    const otherCsrf = csrfIn(await (await ctx.handle(req('/device', { headers: { cookie: await pageSignIn(ctx, other.username) } }))).text())
    expect((await ctx.handle(form('/device/approve', { _csrf: otherCsrf, code: userCode, decision: 'approve' }, { cookie }))).status).toBe(403)
    expect((await ctx.handle(form('/device/approve', { _csrf: csrf, code: userCode, decision: 'approve' }, { cookie, origin: 'https://evil.example' }))).status).toBe(403)
    expect((await rowOf(deviceCode))!.status).toBe('pending')

    const unknown = await ctx.handle(form('/device/approve', { _csrf: csrf, code: 'ZZZZ-ZZZZ', decision: 'approve' }, { cookie }))
    expect(unknown.status).toBe(404)
    expect(await unknown.text()).toContain('No device is waiting for that code')
    expect((await ctx.handle(form('/device/approve', { _csrf: csrf, code: userCode, decision: 'approve' }, { cookie }))).status).toBe(200)
    const again = await ctx.handle(form('/device/approve', { _csrf: csrf, code: userCode, decision: 'deny' }, { cookie }))
    expect(again.status).toBe(404)
    expect(await rowOf(deviceCode)).toMatchObject({ status: 'approved', userId: player.id })
    // A code past its lifetime cannot be approved either.
    const late = await startDevice(ctx)
    ctx.clock.advance(600_000)
    const lateCookie = await pageSignIn(ctx, player.username)
    const lateCsrf = csrfIn(await (await ctx.handle(req('/device', { headers: { cookie: lateCookie } }))).text())
    expect((await ctx.handle(form('/device/approve', { _csrf: lateCsrf, code: late.userCode, decision: 'approve' }, { cookie: lateCookie }))).status).toBe(404)
  })

  test('the page sign-in ends after 15 minutes, with a password change, and with a ban', async () => {
    const player = await registerUser(ctx)
    const cookie = await pageSignIn(ctx, player.username)
    const signedIn = async (c: string) => (await (await ctx.handle(req('/device', { headers: { cookie: c } }))).text()).includes('Signed in as')
    expect(await signedIn(cookie)).toBe(true)
    ctx.clock.advance(15 * 60_000)
    expect(await signedIn(cookie)).toBe(false)

    const fresh = await pageSignIn(ctx, player.username)
    const tokens = (await (await ctx.handle(postJson('/api/v1/user/login', { identifier: player.username, password: 'correct horse battery' }))).json()) as { accessToken: string }
    const changed = await ctx.handle(postJson('/api/v1/user/password/change', { currentPassword: 'correct horse battery', newPassword: 'another horse battery' }, { authorization: `Bearer ${tokens.accessToken}` }))
    expect(changed.status).toBe(200)
    expect(await signedIn(fresh)).toBe(false)

    const banned = await registerUser(ctx)
    const bannedCookie = await pageSignIn(ctx, banned.username)
    expect((await banUser(ctx, banned.id, { reason: 'cheating' })).status).toBe(200)
    expect(await signedIn(bannedCookie)).toBe(false)
    const refused = await ctx.handle(form('/device/login', { identifier: banned.username, password: 'correct horse battery' }))
    expect(refused.status).toBe(403)
  })

  test('signing out ends the page sign-in', async () => {
    const player = await registerUser(ctx)
    const cookie = await pageSignIn(ctx, player.username)
    const csrf = csrfIn(await (await ctx.handle(req('/device', { headers: { cookie } }))).text())
    const out = await ctx.handle(form('/device/logout', { _csrf: csrf }, { cookie }))
    expect(out.status).toBe(303)
    expect(cookieOf(out)).toBe('arena_device_page=')
  })

  test('bad forms are an HTML 422 page, never a 500', async () => {
    const res = await ctx.handle(form('/device/approve', { decision: 'maybe' }))
    expect(res.status).toBe(422)
    expect(res.headers.get('content-type')).toContain('text/html')
  })
})

describe('the user code', () => {
  test('read the way Crockford base32 reads it: any case, with or without the dash or spaces, I and L as 1, O as 0; anything else is no code', () => {
    const cases: [string, string | null][] = [
      ['ABCD-1234', 'ABCD1234'],
      ['abcd-1234', 'ABCD1234'],
      [' ab cd 12 34 ', 'ABCD1234'],
      ['ABCD1234', 'ABCD1234'],
      ['OIL0-0000', '01100000'],
      ['ABCD-123', null],
      ['ABCD-12345', null],
      ['ABCU-1234', null],
      ['ABC!-1234', null],
      ['', null],
    ]
    for (const [typed, stored] of cases) expect([typed, normalizeUserCode(typed)]).toEqual([typed, stored])
    expect(displayUserCode('ABCD1234')).toBe('ABCD-1234')
  })

  test('the page\'s password sign-in counts on the login\'s throttle: five wrong ones there and the login is blocked too', async () => {
    const player = await registerUser(ctx)
    for (let i = 0; i < 5; i++) expect((await ctx.handle(form('/device/login', { identifier: player.username, password: `wrong password ${i}` }))).status).toBe(401)
    const blocked = await ctx.handle(form('/device/login', { identifier: player.username, password: 'correct horse battery' }))
    expect(blocked.status).toBe(429)
    expect(blocked.headers.get('retry-after')).toBeTruthy()
    await expectError(await ctx.handle(postJson('/api/v1/user/login', { identifier: player.username, password: 'correct horse battery' })), 429, 'rate_limited')
  })
})

describe('bounds', () => {
  test('housekeeping deletes the codes past their lifetime and keeps the live ones', async () => {
    await ctx.peek.db.delete(deviceCodes)
    await startDevice(ctx)
    await startDevice(ctx)
    ctx.clock.advance(300_000)
    const live = await startDevice(ctx)
    ctx.clock.advance(300_001)
    expect((await housekeeping(ctx.services.storage, ctx.clock, 30)).deviceCodes).toBe(2)
    const left = await ctx.peek.db.select().from(deviceCodes)
    expect(left.map((row) => row.deviceCodeHash)).toEqual([sha256Hex(live.deviceCode)])
  })

  test('asking for codes is rate-limited per address (device-code: 10 a minute)', async () => {
    const limited = await createArenaApp({ ARENA_RATE_LIMITS: '{"device-code":{"address":{"limit":3,"windowS":60}}}' })
    try {
      for (let i = 0; i < 3; i++) expect((await limited.handle(postJson('/api/v1/auth/device-code', {}))).status).toBe(200)
      const over = await limited.handle(postJson('/api/v1/auth/device-code', {}))
      await expectError(over, 429, 'rate_limited')
      expect(over.headers.get('ratelimit-policy')).toContain('"device-code.address";q=3')
    } finally {
      await limited.close()
    }
  })
})
