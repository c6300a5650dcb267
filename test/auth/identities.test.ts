// Identities (contract §13) through HTTP: a guest signs in with a secret its
// device keeps (created only with `create`, throttled per address, stored
// only as a hash), lists and links identities, never merges accounts
// (identity_in_use), never loses its last way in (last_identity), changes
// its profile, and every rule of accounts holds for it: bans, deletion
// (identities erased), export (identities listed), events and security
// events. The races: two first sign-ins with one new identity make one
// account; two links of one identity to two accounts link it once.
import { afterAll, describe, expect, test } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import { createTestApp, postJson, req, type TestApp } from '../helpers/app'
import { admin, ADMIN_TOKEN, createArenaApp } from '../helpers/arena'
import { bearer, login, me, PASSWORD, registerUser } from '../helpers/auth'
import { banUser, eventsOf, securityEventsOf } from '../helpers/accounts'
import { latestCode } from '../helpers/mail'
import { sha256Hex } from '../../src/shared/crypto'

const ctx = await createArenaApp()
const apps: TestApp[] = [ctx]
afterAll(async () => {
  for (const app of apps) await app.close()
})

let counter = 0
/** A fresh device secret: 32 random bytes, base64url, as the SDK makes them. */
const secret = () => Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')
const guest = (app: TestApp, deviceSecret: string, create?: boolean, headers: Record<string, string> = {}) =>
  app.handle(postJson('/api/v1/user/login/device', { deviceSecret, ...(create === undefined ? {} : { create }) }, headers))

async function json<T = Record<string, any>>(res: Response): Promise<T> {
  return (await res.json()) as T
}

async function newGuest(app: TestApp = ctx) {
  const deviceSecret = secret()
  const res = await guest(app, deviceSecret, true, { 'x-forwarded-for': `192.0.2.${++counter % 250}` })
  expect(res.status).toBe(200)
  return { ...(await json(res)), deviceSecret } as { deviceSecret: string; accessToken: string; refreshToken: string; created: boolean; user: Record<string, any> }
}

const identities = async (app: TestApp, token: string) => {
  const res = await app.handle(req('/api/v1/me/identities', { headers: bearer(token) }))
  expect(res.status).toBe(200)
  return (await json<{ identities: Record<string, unknown>[] }>(res)).identities
}
const link = (app: TestApp, token: string, provider: string, body: Record<string, unknown>) => app.handle(postJson(`/api/v1/me/identities/${provider}`, body, bearer(token)))
const unlink = (app: TestApp, token: string, provider: string) => app.handle(req(`/api/v1/me/identities/${provider}`, { method: 'DELETE', headers: bearer(token) }))
const errorCode = async (res: Response) => (await json<{ error: { code: string } }>(res)).error.code

describe('POST /user/login/device', () => {
  test('create: a guest account without email, a generated username, `device` its identity; the same secret signs in to it again', async () => {
    const deviceSecret = secret()
    const first = await guest(ctx, deviceSecret, true)
    expect(first.status).toBe(200)
    const body = await json(first)
    expect(body.created).toBe(true)
    expect(body.tokenType).toBe('Bearer')
    expect(body.user).toMatchObject({ email: null, country: 'ZZ', emailVerified: false, identities: ['device'] })
    expect(body.user.username).toMatch(/^player_[0-9a-hjkmnp-tv-z]{8}$/)
    // The session is a real one: /me answers, the refresh token rotates.
    expect((await me(ctx, body.accessToken)).status).toBe(200)
    expect((await ctx.handle(postJson('/api/v1/auth/validate', { refreshToken: body.refreshToken }, bearer(body.accessToken)))).status).toBe(200)

    const again = await json(await guest(ctx, deviceSecret))
    expect(again.created).toBe(false)
    expect(again.user.id).toBe(body.user.id)
    // With create again: still the same account.
    expect((await json(await guest(ctx, deviceSecret, true))).user.id).toBe(body.user.id)
  })

  test('the secret is stored only as its SHA-256', async () => {
    const { deviceSecret, user } = await newGuest()
    const { identities: table } = ctx.peek.tables
    const rows = await ctx.peek.db.select().from(table).where(eq(table.userId, user.id))
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({ provider: 'device', subject: sha256Hex(deviceSecret), email: null })
    expect(JSON.stringify(rows)).not.toContain(deviceSecret)
  })

  test('an unknown secret without create is 401 invalid_credentials and creates nothing', async () => {
    const { users } = ctx.peek.tables
    const before = (await ctx.peek.db.select({ id: users.id }).from(users)).length
    for (const create of [undefined, false]) {
      const res = await guest(ctx, secret(), create)
      expect(res.status).toBe(401)
      expect(await errorCode(res)).toBe('invalid_credentials')
    }
    expect((await ctx.peek.db.select({ id: users.id }).from(users)).length).toBe(before)
  })

  test.each([
    ['too short', 'a'.repeat(21)],
    ['too long', 'a'.repeat(129)],
    ['outside the alphabet', 'a'.repeat(30) + '+/'],
  ])('a secret %s is 422 naming the field', async (_why, deviceSecret) => {
    const res = await guest(ctx, deviceSecret, true)
    expect(res.status).toBe(422)
    expect(JSON.stringify(await res.json())).toContain('deviceSecret')
  })

  test('account creation is throttled per client address (ARENA_GUEST_CREATE_PER_HOUR); sign-ins of existing guests and other addresses are not', async () => {
    const app = await createTestApp({ env: { ARENA_GUEST_CREATE_PER_HOUR: '3', ARENA_TRUST_PROXY: 'true' } })
    apps.push(app)
    const from = { 'x-forwarded-for': '198.51.100.7' }
    const made: string[] = []
    for (let i = 0; i < 3; i++) {
      const deviceSecret = secret()
      expect((await guest(app, deviceSecret, true, from)).status).toBe(200)
      made.push(deviceSecret)
    }
    const refused = await guest(app, secret(), true, from)
    expect(refused.status).toBe(429)
    expect(await errorCode(refused)).toBe('rate_limited')
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(3000)
    expect((await guest(app, made[0]!, true, from)).status).toBe(200)
    expect((await guest(app, secret(), true, { 'x-forwarded-for': '198.51.100.8' })).status).toBe(200)
    // The hour ends: the address creates again.
    app.clock.advance(3_600_001)
    expect((await guest(app, secret(), true, from)).status).toBe(200)
  })

  test("an operator's ban refuses the guest: 403 account_banned", async () => {
    const { deviceSecret, user } = await newGuest()
    expect((await banUser(ctx, user.id, { reason: 'cheating' })).status).toBe(200)
    const res = await guest(ctx, deviceSecret)
    expect(res.status).toBe(403)
    expect(await errorCode(res)).toBe('account_banned')
  })
})

describe('identities of an account', () => {
  test('GET /me/identities lists them in link order; the password one shows its email, a device none of its secret', async () => {
    const player = await registerUser(ctx)
    const tokens = await login(ctx, player.username)
    const listed = await identities(ctx, tokens.accessToken)
    expect(listed).toEqual([{ provider: 'password', email: player.email, linkedAt: tokens.user.createdAt }])
    const deviceSecret = secret()
    ctx.clock.advance(1000)
    const linked = await link(ctx, tokens.accessToken, 'device', { deviceSecret })
    expect(linked.status).toBe(200)
    const after = (await json(linked)).identities
    expect(after).toEqual([listed[0], { provider: 'device', linkedAt: ctx.clock.now().toISOString() }])
    expect(JSON.stringify(after)).not.toContain(sha256Hex(deviceSecret))
    expect((await json(await me(ctx, tokens.accessToken))).user.identities).toEqual(['password', 'device'])
    // The device now signs in to the same account.
    expect((await json(await guest(ctx, deviceSecret))).user.id).toBe(player.id)
    // Linking it again is a retry: 200, nothing changes.
    expect((await json(await link(ctx, tokens.accessToken, 'device', { deviceSecret }))).identities).toEqual(after)
  })

  test('an identity linked to another account is 409 identity_in_use: accounts are never merged', async () => {
    const { deviceSecret } = await newGuest()
    const other = await registerUser(ctx)
    const tokens = await login(ctx, other.username)
    const res = await link(ctx, tokens.accessToken, 'device', { deviceSecret })
    expect(res.status).toBe(409)
    expect(await errorCode(res)).toBe('identity_in_use')
    expect(await identities(ctx, tokens.accessToken)).toHaveLength(1)
  })

  test('a second identity of a provider the account has is 409 identity_in_use (unlink the first)', async () => {
    const { accessToken } = await newGuest()
    const res = await link(ctx, accessToken, 'device', { deviceSecret: secret() })
    expect(res.status).toBe(409)
    expect(await errorCode(res)).toBe('identity_in_use')
  })

  test('the last identity cannot be unlinked: 409 last_identity; one of two can, and signs in no more', async () => {
    const { accessToken, deviceSecret, user } = await newGuest()
    const last = await unlink(ctx, accessToken, 'device')
    expect(last.status).toBe(409)
    expect(await errorCode(last)).toBe('last_identity')

    const player = await registerUser(ctx)
    const tokens = await login(ctx, player.username)
    const other = secret()
    expect((await link(ctx, tokens.accessToken, 'device', { deviceSecret: other })).status).toBe(200)
    const res = await unlink(ctx, tokens.accessToken, 'device')
    expect(res.status).toBe(200)
    expect((await json(res)).identities.map((i: { provider: string }) => i.provider)).toEqual(['password'])
    expect((await guest(ctx, other)).status).toBe(401)
    // The unlinked secret may sign in anew: a new account.
    expect((await json(await guest(ctx, other, true))).created).toBe(true)
    // And what the account does not have is 404.
    const missing = await unlink(ctx, tokens.accessToken, 'steam')
    expect(missing.status).toBe(404)
    expect(await errorCode(missing)).toBe('not_found')
    expect(user.identities).toEqual(['device'])
    expect((await guest(ctx, deviceSecret)).status).toBe(200)
  })

  test('unlinking the password takes the email with it: the password signs in no more', async () => {
    const player = await registerUser(ctx)
    const tokens = await login(ctx, player.username)
    expect((await link(ctx, tokens.accessToken, 'device', { deviceSecret: secret() })).status).toBe(200)
    const res = await unlink(ctx, tokens.accessToken, 'password')
    expect(res.status).toBe(200)
    const user = (await json(await me(ctx, tokens.accessToken))).user
    expect(user).toMatchObject({ email: null, emailVerified: false, identities: ['device'] })
    const refused = await ctx.handle(postJson('/api/v1/user/login', { identifier: player.username, password: PASSWORD }))
    expect(refused.status).toBe(401)
    // The address is free: it registers again.
    expect((await registerUser(ctx, { email: player.email })).email).toBe(player.email)
  })

  test('a guest adds a password identity: its email is mailed a code to verify, and the password signs in', async () => {
    const { accessToken, user } = await newGuest()
    const email = `upgraded.${Date.now()}.${++counter}@example.com`
    const res = await link(ctx, accessToken, 'password', { email, password: 'a new password 1', username: `upgraded_${counter}` })
    expect(res.status).toBe(200)
    expect((await json(res)).identities.map((i: { provider: string }) => i.provider)).toEqual(['device', 'password'])
    const signedIn = await login(ctx, email, 'a new password 1')
    expect(signedIn.user).toMatchObject({ id: user.id, email, username: `upgraded_${counter}`, emailVerified: false, identities: ['device', 'password'] })
    // Verified as a registration is (contract §8).
    const code = await latestCode(ctx, email, 'verify_email')
    const verified = await ctx.handle(postJson('/api/v1/user/email/verify', { code }, bearer(accessToken)))
    expect(verified.status).toBe(200)
    expect((await json(verified)).user.emailVerified).toBe(true)
    // A second password identity: 409.
    const again = await link(ctx, accessToken, 'password', { email: `x${email}`, password: 'another password' })
    expect(again.status).toBe(409)
    expect(await errorCode(again)).toBe('identity_in_use')
  })

  test('a password identity with a taken email or username is 409 and changes nothing; missing fields 422', async () => {
    const taken = await registerUser(ctx)
    const { accessToken } = await newGuest()
    const byEmail = await link(ctx, accessToken, 'password', { email: taken.email.toUpperCase(), password: 'long enough 1' })
    expect(byEmail.status).toBe(409)
    expect(await errorCode(byEmail)).toBe('email_taken')
    const byName = await link(ctx, accessToken, 'password', { email: `free.${++counter}@example.com`, password: 'long enough 1', username: taken.username })
    expect(byName.status).toBe(409)
    expect(await errorCode(byName)).toBe('username_taken')
    expect((await json(await me(ctx, accessToken))).user).toMatchObject({ email: null, identities: ['device'] })
    for (const body of [{ password: 'long enough 1' }, { email: 'a@example.com' }]) {
      const res = await link(ctx, accessToken, 'password', body)
      expect(res.status).toBe(422)
    }
    expect((await link(ctx, accessToken, 'device', {})).status).toBe(422)
  })

  test('unknown or unconfigured providers are 404', async () => {
    const { accessToken } = await newGuest()
    for (const provider of ['myspace', 'oidc:nowhere', 'oidc:UPPER']) {
      const res = await link(ctx, accessToken, provider, { idToken: 'x' })
      expect(res.status).toBe(404)
    }
  })

  test('link and unlink are account events and security events', async () => {
    const player = await registerUser(ctx)
    const tokens = await login(ctx, player.username)
    expect((await link(ctx, tokens.accessToken, 'device', { deviceSecret: secret() })).status).toBe(200)
    expect((await unlink(ctx, tokens.accessToken, 'device')).status).toBe(200)
    expect(await eventsOf(ctx, player.id, 'account.identity_linked')).toEqual([{ provider: 'device' }])
    expect(await eventsOf(ctx, player.id, 'account.identity_unlinked')).toEqual([{ provider: 'device', byOperator: false }])
    expect(await securityEventsOf(ctx, player.id, 'IDENTITY_LINKED')).toHaveLength(1)
    expect(await securityEventsOf(ctx, player.id, 'IDENTITY_UNLINKED')).toHaveLength(1)
  })
})

describe('PATCH /me', () => {
  test('changes the username and the country; a taken username is 409 username_taken, a made-up country 422', async () => {
    const { accessToken } = await newGuest()
    const name = `chosen_${Date.now() % 1e6}_${++counter}`
    const res = await ctx.handle(new Request('http://localhost/api/v1/me', { method: 'PATCH', headers: { 'content-type': 'application/json', ...bearer(accessToken) }, body: JSON.stringify({ username: name, country: 'se' }) }))
    expect(res.status).toBe(200)
    expect((await json(res)).user).toMatchObject({ username: name, country: 'SE' })
    expect((await json(await me(ctx, accessToken))).user).toMatchObject({ username: name, country: 'SE' })
    const other = await newGuest()
    const patch = (body: unknown) => ctx.handle(new Request('http://localhost/api/v1/me', { method: 'PATCH', headers: { 'content-type': 'application/json', ...bearer(other.accessToken) }, body: JSON.stringify(body) }))
    const taken = await patch({ username: name.toUpperCase() })
    expect(taken.status).toBe(409)
    expect(await errorCode(taken)).toBe('username_taken')
    expect((await patch({ country: 'XQ' })).status).toBe(422)
    expect((await patch({ username: 'no spaces allowed' })).status).toBe(422)
    expect((await patch({})).status).toBe(200)
  })
})

describe('the account rules hold for a guest', () => {
  test('deletion needs no password it never had; its identities are erased, the secret signs in no more', async () => {
    const { accessToken, deviceSecret, user } = await newGuest()
    const res = await ctx.handle(postJson('/api/v1/me/delete', {}, bearer(accessToken)))
    expect(res.status).toBe(200)
    const { identities: table } = ctx.peek.tables
    expect(await ctx.peek.db.select().from(table).where(eq(table.userId, user.id))).toEqual([])
    expect((await guest(ctx, deviceSecret)).status).toBe(401)
    // With create, the same device starts over: a new account.
    const fresh = await json(await guest(ctx, deviceSecret, true))
    expect(fresh.created).toBe(true)
    expect(fresh.user.id).not.toBe(user.id)
  })

  test('an account with a password still gives it to delete: 422 without it', async () => {
    const player = await registerUser(ctx)
    const tokens = await login(ctx, player.username)
    expect((await ctx.handle(postJson('/api/v1/me/delete', {}, bearer(tokens.accessToken)))).status).toBe(422)
  })

  test('the export lists the identities', async () => {
    const { accessToken } = await newGuest()
    const res = await ctx.handle(req('/api/v1/me/export', { headers: bearer(accessToken) }))
    expect(res.status).toBe(200)
    const doc = await json(res)
    expect(doc.identities).toEqual([{ provider: 'device', linkedAt: doc.user.createdAt }])
    expect(doc.user.identities).toEqual(['device'])
  })

  test('a guest cannot set a PIN (it asks for a password the account does not have)', async () => {
    const { accessToken } = await newGuest()
    const res = await ctx.handle(new Request('http://localhost/api/v1/security/pin', { method: 'PUT', headers: { 'content-type': 'application/json', ...bearer(accessToken) }, body: JSON.stringify({ pin: '482915', password: 'anything at all' }) }))
    expect(res.status).toBe(403)
  })

  test('the password login of an account without a password is 401, as for a wrong one', async () => {
    const { user } = await newGuest()
    const res = await ctx.handle(postJson('/api/v1/user/login', { identifier: user.username, password: 'whatever it is' }))
    expect(res.status).toBe(401)
    expect(await errorCode(res)).toBe('invalid_credentials')
  })
})

describe('races', () => {
  test('ten first sign-ins with one new secret at once create one account; every one signs in to it', async () => {
    const deviceSecret = secret()
    const answers = await Promise.all(Array.from({ length: 10 }, () => guest(ctx, deviceSecret, true)))
    expect(answers.map((res) => res.status)).toEqual(Array(10).fill(200))
    const bodies = await Promise.all(answers.map((res) => json(res)))
    expect(new Set(bodies.map((body) => body.user.id)).size).toBe(1)
    expect(bodies.filter((body) => body.created)).toHaveLength(1)
    const { identities: table } = ctx.peek.tables
    expect(await ctx.peek.db.select().from(table).where(and(eq(table.provider, 'device'), eq(table.subject, sha256Hex(deviceSecret))))).toHaveLength(1)
  })

  test('one identity linked to two accounts at once: linked once, the other 409 identity_in_use', async () => {
    const a = await newGuest()
    const b = await newGuest()
    // Each guest already has a device identity: race a password-less provider through two registered accounts instead.
    const one = await login(ctx, (await registerUser(ctx)).username)
    const two = await login(ctx, (await registerUser(ctx)).username)
    const deviceSecret = secret()
    const statuses = (await Promise.all([link(ctx, one.accessToken, 'device', { deviceSecret }), link(ctx, two.accessToken, 'device', { deviceSecret })])).map((res) => res.status).sort()
    expect(statuses).toEqual([200, 409])
    expect(a.user.id).not.toBe(b.user.id)
  })
})

describe('across two instances', () => {
  test('first sign-ins with one new secret on both instances create one account; links of one identity from both link it once', async () => {
    const { tempDir } = await import('../helpers/app')
    const dataDir = tempDir()
    const one = await createTestApp({ dataDir, env: { ARENA_ADMIN_TOKEN: ADMIN_TOKEN } })
    const two = await createTestApp({ dataDir, env: { ARENA_ADMIN_TOKEN: ADMIN_TOKEN } })
    apps.push(one, two)
    for (let round = 0; round < 5; round++) {
      const deviceSecret = secret()
      const bodies = await Promise.all([0, 1, 2, 3].map((i) => guest(i % 2 === 0 ? one : two, deviceSecret, true).then((res) => json(res))))
      expect(new Set(bodies.map((body) => body.user.id)).size).toBe(1)
      expect(bodies.filter((body) => body.created)).toHaveLength(1)
    }
    // One identity linked to two accounts, one link on each instance: linked once.
    for (let round = 0; round < 5; round++) {
      const a = await login(one, (await registerUser(one)).username)
      const b = await login(two, (await registerUser(two)).username)
      const deviceSecret = secret()
      const statuses = (await Promise.all([link(one, a.accessToken, 'device', { deviceSecret }), link(two, b.accessToken, 'device', { deviceSecret })])).map((res) => res.status).sort()
      expect(statuses).toEqual([200, 409])
    }
    void admin
  })
})
