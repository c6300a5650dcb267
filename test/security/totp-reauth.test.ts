// Invariant: an operator's second factor changes only with the operator's
// own proof, never with a session alone. Setting up TOTP needs the password
// (and the new secret's code to confirm it); removing it needs the password
// and a current, unused code. A stolen console cookie (or API bearer), with
// its CSRF token, can do neither: it cannot add an authenticator the owner
// does not hold (locking the owner out) nor strip the owner's. Wrong
// passwords and codes are throttled with sign-in's limit on a counter of the
// operator's own (a session is a known place), and each also counts as a
// failure of the name, so this is no faster way to guess them; strangers
// failing on the name elsewhere do not block the owner's changes. The admin
// tool for another operator's lost authenticator stays, but refuses the
// caller's own.
import { afterAll, describe, expect, test } from 'bun:test'
import { totpCode } from '../../src/modules/operators/totp'
import { postJson, req } from '../helpers/app'
import { createArenaApp } from '../helpers/arena'
import { bearer, OPERATOR_PASSWORD, signedInOperator } from '../helpers/operators'

const ctx = await createArenaApp()
afterAll(() => ctx.close())

type Session = Awaited<ReturnType<typeof consoleOf>>

/** A console session of a new operator: what a thief holding its cookie (and reading its CSRF token off any page) has. */
async function consoleOf(role: 'viewer' | 'admin' = 'viewer') {
  const op = await signedInOperator(ctx, role, 'console')
  return { id: op.operator.id, name: op.operator.name, cookie: `arena_console=${op.token}`, csrf: ctx.services.operatorSessions.csrfFor(op.token) }
}

const form = (s: Session, path: string, fields: Record<string, string>) =>
  ctx.handle(req(path, { method: 'POST', headers: { cookie: s.cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ _csrf: s.csrf, ...fields }).toString() }))
const row = async (id: string) => (await ctx.storage.read.operators.operatorById(id))!
const audited = async (action: string, target: string) => (await ctx.storage.read.audit.auditAfter(0, 10_000)).filter((r) => r.action === action && r.target === target).length
const errorOf = (res: Response) => new URL(res.headers.get('location') ?? '/', 'http://localhost').searchParams.get('error')
const wrongCodeOf = (code: string) => (code === '000000' ? '111111' : '000000')

/** Begins and confirms through the console; answers the secret. Confirmed with the previous step's code, so the current one is unused. */
async function enrol(s: Session): Promise<string> {
  const page = await form(s, '/console/account/totp', { password: OPERATOR_PASSWORD })
  expect(page.status).toBe(200)
  const secret = /<code>([A-Z2-7]{16,})<\/code>/.exec(await page.text())?.[1]
  expect(secret).toBeDefined()
  const confirmed = await form(s, '/console/account/totp/confirm', { code: totpCode(secret!, new Date(ctx.clock.now().getTime() - 30_000)) })
  expect(confirmed.status).toBe(303)
  expect(errorOf(confirmed)).toBeNull()
  expect((await row(s.id)).totpEnabledAt).not.toBeNull()
  return secret!
}

describe('setting up an authenticator', () => {
  test('a stolen cookie without the password sets nothing up: no password 422, a wrong one refused; nothing pending, nothing audited', async () => {
    const s = await consoleOf()
    const none = await ctx.handle(req('/console/account/totp', { method: 'POST', headers: { cookie: s.cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ _csrf: s.csrf }).toString() }))
    expect(none.status).toBe(422)
    const wrong = await form(s, '/console/account/totp', { password: 'a guessed password' })
    expect(wrong.status).toBe(303)
    expect(errorOf(wrong)).toBe('Password is incorrect')
    expect((await row(s.id)).totpSecretSealed).toBeNull()
    // No secret pending: a code has nothing to confirm.
    const confirm = await form(s, '/console/account/totp/confirm', { code: '123456' })
    expect(errorOf(confirm)).toContain('No TOTP enrolment is pending')
    expect(await audited('operator.totp.enable', s.id)).toBe(0)
  })

  test('with the password and then the new secret\'s code it is set up, and sign-in asks for a code', async () => {
    const s = await consoleOf()
    await enrol(s)
    expect(await audited('operator.totp.enable', s.id)).toBe(1)
    const signIn = await ctx.handle(postJson('/api/v1/admin/sessions', { name: s.name, password: OPERATOR_PASSWORD }))
    expect(((await signIn.json()) as { error: { code: string } }).error.code).toBe('totp_required')
  })

  test('wrong passwords are throttled like sign-in: the sixth try is blocked even with the right password; each counted on the name too, so sign-in from a new place is blocked', async () => {
    const s = await consoleOf()
    for (let i = 0; i < 5; i++) expect(errorOf(await form(s, '/console/account/totp', { password: `guess ${i}` }))).toBe('Password is incorrect')
    const blocked = await form(s, '/console/account/totp', { password: OPERATOR_PASSWORD })
    expect(blocked.status).toBe(303)
    expect(errorOf(blocked)).toContain('Too many')
    expect((await row(s.id)).totpSecretSealed).toBeNull()
    const signIn = await ctx.handle(postJson('/api/v1/admin/sessions', { name: s.name, password: OPERATOR_PASSWORD }, { 'x-forwarded-for': '203.0.113.9' }))
    expect(signIn.status).toBe(429)
    ctx.clock.advance(15 * 60_000)
    expect(errorOf(await form(s, '/console/account/totp', { password: OPERATOR_PASSWORD }))).toBeNull()
  })

  test('strangers failing on the name from elsewhere do not block the owner\'s own set-up', async () => {
    const s = await consoleOf()
    for (let i = 0; i < 6; i++) await ctx.handle(postJson('/api/v1/admin/sessions', { name: s.name, password: `stranger ${i}` }))
    expect((await ctx.handle(postJson('/api/v1/admin/sessions', { name: s.name, password: OPERATOR_PASSWORD }))).status).toBe(429)
    const page = await form(s, '/console/account/totp', { password: OPERATOR_PASSWORD })
    expect(page.status).toBe(200)
    expect((await row(s.id)).totpSecretSealed).not.toBeNull()
    ctx.clock.advance(15 * 60_000)
  })

  test('wrong confirmation codes count too: guessing the code of a pending secret is throttled like sign-in', async () => {
    const s = await consoleOf()
    const page = await form(s, '/console/account/totp', { password: OPERATOR_PASSWORD })
    const secret = /<code>([A-Z2-7]{16,})<\/code>/.exec(await page.text())![1]!
    const right = totpCode(secret, ctx.clock.now())
    for (let i = 0; i < 5; i++) expect(errorOf(await form(s, '/console/account/totp/confirm', { code: wrongCodeOf(right) }))).toContain('Not the current code')
    const blocked = await form(s, '/console/account/totp/confirm', { code: right })
    expect(errorOf(blocked)).toContain('Too many')
    expect((await row(s.id)).totpEnabledAt).toBeNull()
    ctx.clock.advance(15 * 60_000)
  })
})

describe('turning the authenticator off', () => {
  test('a stolen cookie without the password and a current code removes nothing', async () => {
    const s = await consoleOf()
    const secret = await enrol(s)
    const code = totpCode(secret, ctx.clock.now())
    const none = await ctx.handle(req('/console/account/totp/disable', { method: 'POST', headers: { cookie: s.cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ _csrf: s.csrf }).toString() }))
    expect(none.status).toBe(422)
    expect(errorOf(await form(s, '/console/account/totp/disable', { password: 'a guessed password', code }))).toBe('Password is incorrect')
    expect(errorOf(await form(s, '/console/account/totp/disable', { password: OPERATOR_PASSWORD }))).toContain('Not the current code')
    expect(errorOf(await form(s, '/console/account/totp/disable', { password: OPERATOR_PASSWORD, code: wrongCodeOf(code) }))).toContain('Not the current code')
    // The step the confirmation used is spent: its code does not count again.
    const spent = totpCode(secret, new Date(ctx.clock.now().getTime() - 30_000))
    if (spent !== code) expect(errorOf(await form(s, '/console/account/totp/disable', { password: OPERATOR_PASSWORD, code: spent }))).toContain('already used')
    expect((await row(s.id)).totpEnabledAt).not.toBeNull()
    expect(await audited('operator.totp.disable', s.id)).toBe(0)
    ctx.clock.advance(15 * 60_000)
  })

  test('with the password and a current code it is removed, audited once; sign-in asks for the password only', async () => {
    const s = await consoleOf()
    const secret = await enrol(s)
    const done = await form(s, '/console/account/totp/disable', { password: OPERATOR_PASSWORD, code: totpCode(secret, ctx.clock.now()) })
    expect(done.status).toBe(303)
    expect(errorOf(done)).toBeNull()
    expect((await row(s.id)).totpSecretSealed).toBeNull()
    expect(await audited('operator.totp.disable', s.id)).toBe(1)
    expect((await ctx.handle(postJson('/api/v1/admin/sessions', { name: s.name, password: OPERATOR_PASSWORD }))).status).toBe(201)
  })

  test('wrong codes with the right password count against the throttle: the right code is then blocked too', async () => {
    const s = await consoleOf()
    const secret = await enrol(s)
    const code = totpCode(secret, ctx.clock.now())
    for (let i = 0; i < 5; i++) expect(errorOf(await form(s, '/console/account/totp/disable', { password: OPERATOR_PASSWORD, code: wrongCodeOf(code) }))).toContain('Not the current code')
    expect(errorOf(await form(s, '/console/account/totp/disable', { password: OPERATOR_PASSWORD, code }))).toContain('Too many')
    expect((await row(s.id)).totpEnabledAt).not.toBeNull()
    ctx.clock.advance(15 * 60_000)
  })

  test('an admin\'s own TOTP does not come off through the admin tools (API route, operators page); another admin\'s lost authenticator still does', async () => {
    const s = await consoleOf('admin')
    await enrol(s)
    const ownApi = await signedInOperator(ctx, 'admin')
    // An admin API session of an admin with TOTP: the same refusal for its own id.
    const { secret: apiSecret } = await ctx.services.operatorTotp.beginTotp(ownApi.operator.id, OPERATOR_PASSWORD)
    await ctx.services.operatorTotp.confirmTotp(ownApi.operator.id, totpCode(apiSecret, ctx.clock.now()), ctx.services.audit.actor({ id: ownApi.operator.id, name: ownApi.operator.name, role: 'admin' }, 'api'))
    const refused = await ctx.handle(postJson(`/api/v1/admin/operators/${ownApi.operator.id}/totp/disable`, {}, bearer(ownApi.token)))
    expect(refused.status).toBe(403)
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('forbidden')
    expect((await row(ownApi.operator.id)).totpEnabledAt).not.toBeNull()

    const page = await form(s, `/console/operators/${s.id}/disable-totp`, {})
    expect(errorOf(page)).toContain('your account page')
    expect((await row(s.id)).totpEnabledAt).not.toBeNull()
    expect(await (await ctx.handle(req('/console/operators', { headers: { cookie: s.cookie } }))).text()).not.toContain(`Turn off the authenticator of ${s.name}`)

    // Another admin, for an operator who lost the authenticator: allowed, audited.
    const rescued = await ctx.handle(postJson(`/api/v1/admin/operators/${s.id}/totp/disable`, {}, bearer(ownApi.token)))
    expect(rescued.status).toBe(200)
    expect((await row(s.id)).totpEnabledAt).toBeNull()
    expect(await audited('operator.totp.disable', s.id)).toBe(1)
  })
})
