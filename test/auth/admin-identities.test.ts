// Operators and a player's identities (contract §13, §11): the admin API's
// user detail lists them as the player's GET /me/identities does, and a
// moderator (or admin) unlinks one with a reason. The invariant: an unlink by
// an operator is recorded in the audit log (who, role, via, reason, the
// provider) in the same unit of work as the unlink, so the record exists
// exactly when the identity is gone; a refused unlink (the last way in, no
// such identity or user, a bad body, a role below moderator) changes nothing
// and records nothing. Through the admin API, the console's user page and
// `arena user identities|unlink-identity`, on both engines. Accounts without
// an email (guests) are listed, found and shown without a "null".
import { afterAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { postJson, req, tempDir } from '../helpers/app'
import { admin, createArenaApp } from '../helpers/arena'
import { bearer as userBearer, registerUser } from '../helpers/auth'
import { deleteUser, eventsOf, searchUsers, securityEventsOf, userDetail } from '../helpers/accounts'
import { bearer, signedInOperator } from '../helpers/operators'
import { CLI_OPERATOR, run, SOURCE_COMMAND } from '../helpers/process'
import { NOTICES } from '../../src/console/notices'

const dataDir = tempDir('arena-admin-identities-')
// Many guests from the one test address: creation is throttled per address.
const ctx = await createArenaApp({ ARENA_GUEST_CREATE_PER_HOUR: '1000' }, { dataDir })
afterAll(async () => {
  await ctx.close()
  rmSync(dataDir, { recursive: true, force: true })
})

const stamp = Date.now().toString(36)
let counter = 0
const secret = () => Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')
const json = async (res: Response) => (await res.json()) as Record<string, any>

interface Guest {
  id: string
  username: string
  accessToken: string
  deviceSecret: string
}

async function newGuest(): Promise<Guest> {
  const deviceSecret = secret()
  const res = await ctx.handle(postJson('/api/v1/user/login/device', { deviceSecret, create: true }))
  expect(res.status).toBe(200)
  const body = await json(res)
  return { id: body.user.id, username: body.user.username, accessToken: body.accessToken, deviceSecret }
}

/** A guest who also has a password identity and a Google one: three ways in. */
async function guestWithThree(): Promise<Guest & { email: string; subject: string }> {
  const guest = await newGuest()
  const email = `linked.${stamp}.${++counter}@example.com`
  const linked = await ctx.handle(postJson('/api/v1/me/identities/password', { email, password: 'correct horse battery' }, userBearer(guest.accessToken)))
  expect(linked.status).toBe(200)
  // The OpenID Connect proof is its own module's (and its own tests'): here the player has simply linked a Google identity.
  const subject = `10987654321${++counter}`
  await ctx.services.identities.link(guest.id, { provider: 'oidc:google', subject, email: `g.${stamp}.${counter}@gmail.com`, emailVerified: true })
  return { ...guest, email, subject }
}

const ownIdentities = async (token: string) => (await json(await ctx.handle(req('/api/v1/me/identities', { headers: userBearer(token) })))).identities
const unlink = (user: string, provider: string, body: unknown, headers: Record<string, string>) => ctx.handle(postJson(`/api/v1/admin/users/${user}/identities/${provider}/unlink`, body, headers))
const auditOf = async (target: string) => (await ctx.storage.read.audit.auditAfter(0, 10_000)).filter((r) => r.action === 'user.identity_unlink' && r.target === target)
const auditHead = async () => (await ctx.storage.read.audit.auditHead()).seq
const guestSignIn = (deviceSecret: string) => ctx.handle(postJson('/api/v1/user/login/device', { deviceSecret }))
const code = async (res: Response) => [res.status, (await json(res)).error?.code]

describe('GET /admin/users/{id}: identities', () => {
  test('a registered user: its password identity, with its email', async () => {
    const user = await registerUser(ctx)
    const detail = await userDetail(ctx, user.id)
    expect(detail.status).toBe(200)
    expect(detail.body.identities).toEqual([{ provider: 'password', email: user.email, linkedAt: detail.body.user.createdAt }])
  })

  test('every identity, in link order, exactly as the player sees them at GET /me/identities; by id or username', async () => {
    const guest = await guestWithThree()
    const detail = await userDetail(ctx, guest.id)
    expect(detail.body.identities.map((i: { provider: string }) => i.provider)).toEqual(['device', 'password', 'oidc:google'])
    expect(detail.body.identities).toEqual(await ownIdentities(guest.accessToken))
    expect(detail.body.identities[2]).toEqual({ provider: 'oidc:google', subject: guest.subject, email: expect.stringContaining('@gmail.com'), linkedAt: expect.any(String) })
    // A device's subject is the hash of its secret: never shown.
    expect(detail.body.identities[0]).toEqual({ provider: 'device', linkedAt: expect.any(String) })
    expect(detail.body.user.identities).toEqual(['device', 'password', 'oidc:google'])
    expect((await userDetail(ctx, guest.username.toUpperCase())).body.identities).toEqual(detail.body.identities)
  })

  test('a guest (email null) is listed, found by username part and id, and its detail shows its device', async () => {
    const guest = await newGuest()
    const byName = await searchUsers(ctx, `?query=${encodeURIComponent(guest.username.slice(0, 12).toUpperCase())}`)
    expect(byName.status).toBe(200)
    expect(byName.body.users.map((u: { id: string }) => u.id)).toContain(guest.id)
    const found = byName.body.users.find((u: { id: string }) => u.id === guest.id)
    expect(found).toMatchObject({ email: null, emailVerified: false, identities: ['device'], ban: null, deletedAt: null })
    expect((await searchUsers(ctx, `?query=${guest.id}`)).body.users.map((u: { id: string }) => u.id)).toEqual([guest.id])
    // Every page of the list, guests among the others.
    expect((await searchUsers(ctx, '?limit=100')).status).toBe(200)
    const detail = await userDetail(ctx, guest.id)
    expect(detail.body.user.email).toBeNull()
    expect(detail.body.identities).toEqual([{ provider: 'device', linkedAt: detail.body.user.createdAt }])
  })

  test('a deleted account has none (deletion erased them)', async () => {
    const guest = await guestWithThree()
    expect((await deleteUser(ctx, guest.id)).status).toBe(200)
    expect((await userDetail(ctx, guest.id)).body.identities).toEqual([])
  })
})

describe('POST /admin/users/{id}/identities/{provider}/unlink', () => {
  test('a moderator unlinks one: the player is told, the audit log records who, why and which, the identity no longer signs in and is free to link again', async () => {
    const guest = await guestWithThree()
    const moderator = await signedInOperator(ctx, 'moderator')
    const res = await unlink(guest.id, 'device', { reason: 'device sold, ticket 812' }, bearer(moderator.token))
    expect(res.status).toBe(200)
    const { identities } = await json(res)
    expect(identities.map((i: { provider: string }) => i.provider)).toEqual(['password', 'oidc:google'])
    expect(await ownIdentities(guest.accessToken)).toEqual(identities)
    expect((await userDetail(ctx, guest.id)).body.user.identities).toEqual(['password', 'oidc:google'])

    const [record, ...more] = await auditOf(guest.id)
    expect(more).toEqual([])
    expect(record).toMatchObject({ operatorName: moderator.operator.name, role: 'moderator', via: 'api', reason: 'device sold, ticket 812', details: { provider: 'device' } })
    expect(await eventsOf(ctx, guest.id, 'account.identity_unlinked')).toEqual([{ provider: 'device', byOperator: true }])
    const [security] = await securityEventsOf(ctx, guest.id, 'IDENTITY_UNLINKED')
    expect(security?.details).toMatchObject({ provider: 'device', byOperator: true })

    // The secret signs in to nothing now; with create it makes a new account, not this one.
    expect(await code(await guestSignIn(guest.deviceSecret))).toEqual([401, 'invalid_credentials'])
    const other = await newGuest()
    const relinked = await ctx.handle(postJson('/api/v1/me/identities/device', { deviceSecret: guest.deviceSecret }, userBearer(other.accessToken)))
    expect(relinked.status).toBe(409) // the other guest has a device identity already
    const fresh = await ctx.handle(postJson('/api/v1/user/login/device', { deviceSecret: guest.deviceSecret, create: true }))
    expect((await json(fresh)).user.id).not.toBe(guest.id)
  })

  test('oidc:<name> in the path, as written or percent-encoded; the password identity takes the email with it', async () => {
    const first = await guestWithThree()
    expect((await unlink(first.id, 'oidc:google', { reason: 'as written' }, admin)).status).toBe(200)
    const second = await guestWithThree()
    const encoded = await unlink(second.username, encodeURIComponent('oidc:google'), { reason: 'encoded' }, admin)
    expect(encoded.status).toBe(200)
    expect((await json(encoded)).identities.map((i: { provider: string }) => i.provider)).toEqual(['device', 'password'])
    expect((await auditOf(second.id))[0]).toMatchObject({ operatorName: 'token', role: 'admin', details: { provider: 'oidc:google' } })

    const gone = await unlink(second.id, 'password', { reason: 'address belongs to someone else' }, admin)
    expect(gone.status).toBe(200)
    expect((await json(gone)).identities.map((i: { provider: string }) => i.provider)).toEqual(['device'])
    const detail = await userDetail(ctx, second.id)
    expect(detail.body.user).toMatchObject({ email: null, emailVerified: false, identities: ['device'] })
    // The password no longer signs in.
    expect((await ctx.handle(postJson('/api/v1/user/login', { identifier: second.email, password: 'correct horse battery' }))).status).toBe(401)
  })

  test('the last way in: 409 last_identity, nothing changed, nothing recorded', async () => {
    const guest = await newGuest()
    const user = await registerUser(ctx)
    const before = await auditHead()
    expect(await code(await unlink(guest.id, 'device', { reason: 'x' }, admin))).toEqual([409, 'last_identity'])
    expect(await code(await unlink(user.id, 'password', { reason: 'x' }, admin))).toEqual([409, 'last_identity'])
    expect(await auditHead()).toBe(before)
    expect((await guestSignIn(guest.deviceSecret)).status).toBe(200)
    expect((await userDetail(ctx, user.id)).body.identities).toHaveLength(1)
  })

  test('no such identity, user or provider: 404; a deleted account: 404; a bad body or path: 422 (415 not JSON); nothing recorded', async () => {
    const guest = await guestWithThree()
    const gone = await guestWithThree()
    expect((await deleteUser(ctx, gone.id)).status).toBe(200)
    const before = await auditHead()
    expect(await code(await unlink(guest.id, 'steam', { reason: 'x' }, admin))).toEqual([404, 'not_found'])
    expect(await code(await unlink(guest.id, 'oidc:apple', { reason: 'x' }, admin))).toEqual([404, 'not_found'])
    expect(await code(await unlink(guest.id, 'nonsense', { reason: 'x' }, admin))).toEqual([404, 'not_found'])
    expect(await code(await unlink('nobody_at_all', 'device', { reason: 'x' }, admin))).toEqual([404, 'not_found'])
    expect(await code(await unlink(`usr_${'0'.repeat(32)}`, 'device', { reason: 'x' }, admin))).toEqual([404, 'not_found'])
    expect(await code(await unlink(gone.id, 'device', { reason: 'x' }, admin))).toEqual([404, 'not_found'])
    for (const body of [{}, { reason: '' }, { reason: 'x'.repeat(501) }, { reason: 7 }]) {
      expect(await code(await unlink(guest.id, 'device', body, admin))).toEqual([422, 'validation_failed'])
    }
    expect(await code(await unlink(guest.id, 'x'.repeat(65), { reason: 'x' }, admin))).toEqual([422, 'validation_failed'])
    const text = await ctx.handle(req(`/api/v1/admin/users/${guest.id}/identities/device/unlink`, { method: 'POST', headers: { ...admin, 'content-type': 'text/plain' }, body: 'reason' }))
    expect(text.status).toBe(415)
    expect(await auditHead()).toBe(before)
    expect((await userDetail(ctx, guest.id)).body.identities).toHaveLength(3)
  })

  test('a viewer or finance operator: 403 forbidden, nothing changed; no credential: 401', async () => {
    const guest = await guestWithThree()
    // (Creating the operators is audited itself.)
    const operators = [await signedInOperator(ctx, 'viewer'), await signedInOperator(ctx, 'finance')]
    const before = await auditHead()
    for (const operator of operators) {
      expect(await code(await unlink(guest.id, 'device', { reason: 'x' }, bearer(operator.token)))).toEqual([403, 'forbidden'])
    }
    expect(await code(await unlink(guest.id, 'device', { reason: 'x' }, {}))).toEqual([401, 'unauthorized'])
    expect(await auditHead()).toBe(before)
    expect((await guestSignIn(guest.deviceSecret)).status).toBe(200)
  })
})

describe("the console's user page", () => {
  async function consoleOf(role: 'viewer' | 'moderator') {
    const op = await signedInOperator(ctx, role, 'console')
    const cookie = `arena_console=${op.token}`
    return {
      op,
      csrf: ctx.services.operatorSessions.csrfFor(op.token),
      get: async (path: string) => {
        const res = await ctx.handle(req(path, { headers: { cookie } }))
        return { status: res.status, html: await res.text() }
      },
      post: (path: string, fields: Record<string, string>) =>
        ctx.handle(req(path, { method: 'POST', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() })),
    }
  }
  const unlinkPage = (userId: string, provider: string) => `/console/users/${userId}/identities/${encodeURIComponent(provider)}/unlink`
  /** The page's HTML with the markup taken out: what an operator reads. */
  const textOf = (html: string) => html.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ')

  test('lists provider, subject, email and linked time; a viewer gets no Unlink button, a moderator one per identity', async () => {
    const guest = await guestWithThree()
    const [device, password, google] = (await userDetail(ctx, guest.id)).body.identities
    const viewer = await consoleOf('viewer')
    const page = await viewer.get(`/console/users/${guest.id}`)
    expect(page.status).toBe(200)
    const section = page.html.slice(page.html.indexOf('id="identities"'), page.html.indexOf('id="ban"'))
    const text = textOf(section)
    expect(text).toContain('Guest (a secret kept on the device)')
    expect(text).toContain(`google (OpenID Connect) oidc:google ${guest.subject} ${google.email}`)
    expect(text).toContain(password.email)
    expect(section).toContain(`datetime="${device.linkedAt}"`)
    expect(section).not.toContain('Unlink')

    const moderator = await consoleOf('moderator')
    const asModerator = await moderator.get(`/console/users/${guest.id}`)
    for (const provider of ['device', 'password', 'oidc:google']) expect(asModerator.html).toContain(`action="${unlinkPage(guest.id, provider)}"`)
  })

  test('Unlink… opens a confirmation page that changes nothing; its form, with the CSRF token and a reason, unlinks, audited via the console', async () => {
    const guest = await guestWithThree()
    const moderator = await consoleOf('moderator')
    const before = await auditHead()
    const confirm = await moderator.get(unlinkPage(guest.id, 'oidc:google'))
    expect(confirm.status).toBe(200)
    expect(textOf(confirm.html)).toContain(`Unlink google (OpenID Connect) from ${guest.username}?`)
    expect(textOf(confirm.html)).toContain(guest.subject)
    expect(confirm.html).toContain(`<form method="post" action="${unlinkPage(guest.id, 'oidc:google')}"`)
    expect(confirm.html).toContain('name="_csrf"')
    expect(await auditHead()).toBe(before)
    // The password identity's page says the email goes with it.
    expect(textOf((await moderator.get(unlinkPage(guest.id, 'password'))).html)).toContain(`email address (${guest.email}) and password are removed`)

    // Without the CSRF token: refused, nothing changed.
    const forged = await moderator.post(unlinkPage(guest.id, 'oidc:google'), { reason: 'no token' })
    expect(forged.status).toBe(403)
    expect(await auditHead()).toBe(before)

    const done = await moderator.post(unlinkPage(guest.id, 'oidc:google'), { _csrf: moderator.csrf, reason: 'recovered account, ticket 90' })
    expect(done.status).toBe(303)
    expect(done.headers.get('location')).toBe(`/console/users/${guest.id}?notice=identity_unlinked#identities`)
    const [record] = await auditOf(guest.id)
    expect(record).toMatchObject({ operatorName: moderator.op.operator.name, role: 'moderator', via: 'console', reason: 'recovered account, ticket 90', details: { provider: 'oidc:google' } })
    const after = await moderator.get(`/console/users/${guest.id}?notice=identity_unlinked`)
    expect(after.html).toContain(NOTICES.identity_unlinked)
    expect(after.html).not.toContain(guest.subject)
  })

  test('the last identity: no button, its confirmation page is refused (409), a posted form comes back with the reason and changes nothing', async () => {
    const guest = await newGuest()
    const moderator = await consoleOf('moderator')
    const page = await moderator.get(`/console/users/${guest.id}`)
    expect(page.html).not.toContain(`action="${unlinkPage(guest.id, 'device')}"`)
    expect(textOf(page.html)).toContain('the only way in')
    const before = await auditHead()
    const confirm = await moderator.get(unlinkPage(guest.id, 'device'))
    expect(confirm.status).toBe(409)
    expect(confirm.html).toContain('only way')
    const posted = await moderator.post(unlinkPage(guest.id, 'device'), { _csrf: moderator.csrf, reason: 'try anyway' })
    expect(posted.status).toBe(303)
    expect(posted.headers.get('location')).toContain('error=')
    expect(await auditHead()).toBe(before)
    expect((await guestSignIn(guest.deviceSecret)).status).toBe(200)
    // Nothing of that provider: 404.
    expect((await moderator.get(unlinkPage(guest.id, 'steam'))).status).toBe(404)
  })

  test("a viewer's forged unlink, with its own valid CSRF token, is 403 and changes nothing", async () => {
    const guest = await guestWithThree()
    const viewer = await consoleOf('viewer')
    const before = await auditHead()
    expect((await viewer.post(unlinkPage(guest.id, 'device'), { _csrf: viewer.csrf, reason: 'forged' })).status).toBe(403)
    expect((await viewer.get(unlinkPage(guest.id, 'device'))).status).toBe(403)
    expect(await auditHead()).toBe(before)
    expect((await userDetail(ctx, guest.id)).body.identities).toHaveLength(3)
  })

  test('a guest (email null): listed, found by part of its username, its page shows no "null"', async () => {
    const guest = await newGuest()
    const viewer = await consoleOf('viewer')
    const found = await viewer.get(`/console/users?q=${encodeURIComponent(guest.username.slice(0, 12))}`)
    expect(found.status).toBe(200)
    expect(found.html).toContain(`href="/console/users/${guest.id}"`)
    expect(textOf(found.html)).not.toContain('null')
    expect((await viewer.get(`/console/users?q=${guest.id}`)).html).toContain(`href="/console/users/${guest.id}"`)
    const list = await viewer.get('/console/users')
    expect(list.status).toBe(200)
    expect(textOf(list.html)).not.toMatch(/\bnull\b/)
    const page = await viewer.get(`/console/users/${guest.id}`)
    expect(page.status).toBe(200)
    expect(textOf(page.html)).toContain('none (no password identity)')
    expect(textOf(page.html)).not.toMatch(/\bnull\b/)
  })
})

test('arena user identities | unlink-identity: the same list as the API, an unlink audited as cli:<OS user>; no reason exits 2, an unknown user or the last identity 1', async () => {
  const guest = await guestWithThree()
  const env = { ARENA_DATA_DIR: dataDir, ...ctx.databaseEnv }
  const cli = (...args: string[]) => run([...SOURCE_COMMAND, 'user', ...args], env)

  const listed = await cli('identities', guest.username, '--json')
  expect({ code: listed.code, stderr: listed.stderr }).toEqual({ code: 0, stderr: '' })
  expect(JSON.parse(listed.stdout)).toEqual({ identities: (await userDetail(ctx, guest.id)).body.identities })
  const text = await cli('identities', guest.id)
  expect(text.stdout).toContain(`oidc:google`)
  expect(text.stdout).toContain(guest.subject)

  expect((await cli('unlink-identity', guest.username, 'device')).code).toBe(2)
  expect((await cli('unlink-identity', guest.username, '--reason', 'x')).code).toBe(2)
  const unknown = await cli('unlink-identity', 'nobody_at_all', 'device', '--reason', 'x')
  expect(unknown.code).toBe(1)
  expect(unknown.stderr).toContain('No user')

  const done = await cli('unlink-identity', guest.username, 'oidc:google', '--reason', 'ticket 4711', '--json')
  expect({ code: done.code, stderr: done.stderr }).toEqual({ code: 0, stderr: '' })
  expect(JSON.parse(done.stdout).identities.map((i: { provider: string }) => i.provider)).toEqual(['device', 'password'])
  const [record] = await auditOf(guest.id)
  expect(record).toMatchObject({ operatorName: CLI_OPERATOR, role: 'admin', via: 'cli', reason: 'ticket 4711', details: { provider: 'oidc:google' } })

  expect((await cli('unlink-identity', guest.id, 'password', '--reason', 'x')).code).toBe(0)
  const last = await cli('unlink-identity', guest.id, 'device', '--reason', 'x')
  expect(last.code).toBe(1)
  expect(last.stderr).toContain('only way left')
  expect(await auditOf(guest.id)).toHaveLength(2)
}, 60_000)
