// The operator API's accounts (contract §11) over HTTP: sign-in for an API
// session (one-time password, TOTP, throttle), bearer sessions (unknown,
// expired, revoked, disabled: 401), sign-out, and the admin's operator
// management, each recorded in the audit log with who did it.
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { postJson, req, type TestApp } from '../helpers/app'
import { admin, createArenaApp } from '../helpers/arena'
import { bearer, OPERATOR_PASSWORD, signedInOperator } from '../helpers/operators'
import { totpCode } from '../../src/modules/operators/totp'

let ctx: TestApp
beforeEach(async () => {
  ctx = await createArenaApp()
})
afterEach(async () => {
  await ctx.close()
})

const SIGN_IN = '/api/v1/admin/sessions'

async function call(request: Request) {
  const res = await ctx.handle(request)
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, any> }
}

async function auditActions() {
  return (await ctx.storage.read.audit.auditAfter(0, 1000)).map((r) => ({ action: r.action, operatorName: r.operatorName, role: r.role, via: r.via, target: r.target }))
}

describe('signing in', () => {
  test('a created operator signs in with its one-time password replaced, then with the new one', async () => {
    const created = await call(postJson('/api/v1/admin/operators', { name: 'Carol', role: 'finance' }, admin))
    expect(created.status).toBe(201)
    expect(created.body.operator).toMatchObject({ name: 'Carol', role: 'finance', disabled: false, totpEnabled: false })
    const password = created.body.password as string
    expect((await call(postJson(SIGN_IN, { name: 'carol', password }))).body.error.code).toBe('password_change_required')
    const first = await call(postJson(SIGN_IN, { name: 'carol', password, newPassword: OPERATOR_PASSWORD }))
    expect(first.status).toBe(201)
    expect(first.body.operator).toMatchObject({ name: 'Carol', role: 'finance' })
    expect(Date.parse(first.body.expiresAt) - ctx.clock.now().getTime()).toBe(ctx.config.operatorSessionTtlS * 1000)
    // The session works as a bearer: finance may list security events (viewer), not operators (admin).
    expect((await ctx.handle(req('/api/v1/admin/security-events', { headers: bearer(first.body.token) }))).status).toBe(200)
    const refused = await call(req('/api/v1/admin/operators', { headers: bearer(first.body.token) }))
    expect(refused.status).toBe(403)
    expect(refused.body.error.code).toBe('forbidden')
    expect((await call(postJson(SIGN_IN, { name: 'Carol', password: OPERATOR_PASSWORD }))).status).toBe(201)
    expect(await auditActions()).toEqual([{ action: 'operator.create', operatorName: 'token', role: 'admin', via: 'api', target: created.body.operator.id }])
  })

  test('wrong passwords: 401, then 429 with Retry-After', async () => {
    const op = await signedInOperator(ctx, 'viewer')
    for (let i = 0; i < 5; i++) expect((await call(postJson(SIGN_IN, { name: op.operator.name, password: 'not the password' }))).body.error.code).toBe('invalid_credentials')
    const blocked = await call(postJson(SIGN_IN, { name: op.operator.name, password: OPERATOR_PASSWORD }))
    expect(blocked.status).toBe(429)
    expect(blocked.body.error.code).toBe('rate_limited')
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0)
  })

  test('TOTP: required once enrolled, a wrong code and a replayed one refused', async () => {
    const op = await signedInOperator(ctx, 'moderator')
    const by = ctx.services.audit.actor({ id: op.operator.id, name: op.operator.name, role: 'moderator' }, 'console')
    const { secret } = await ctx.services.operatorTotp.beginTotp(op.operator.id, OPERATOR_PASSWORD)
    await ctx.services.operatorTotp.confirmTotp(op.operator.id, totpCode(secret, ctx.clock.now()), by)
    ctx.clock.advance(30_000)
    const body = { name: op.operator.name, password: OPERATOR_PASSWORD }
    expect((await call(postJson(SIGN_IN, body))).body.error).toMatchObject({ status: 401, code: 'totp_required' })
    const code = totpCode(secret, ctx.clock.now())
    const wrong = code === '000000' ? '111111' : '000000'
    expect((await call(postJson(SIGN_IN, { ...body, totp: wrong }))).body.error).toMatchObject({ status: 401, code: 'invalid_totp' })
    const signedIn = await call(postJson(SIGN_IN, { ...body, totp: code }))
    expect(signedIn.status).toBe(201)
    expect(signedIn.body.operator.totpEnabled).toBe(true)
    expect((await call(postJson(SIGN_IN, { ...body, totp: code }))).body.error.code).toBe('invalid_totp')
  })

  test('bad input is a 422, never a 500', async () => {
    expect((await call(postJson(SIGN_IN, { name: 'x' }))).status).toBe(422)
    expect((await call(postJson(SIGN_IN, { name: 'x', password: 'y', newPassword: 'short' }))).status).toBe(422)
  })
})

describe('bearer sessions', () => {
  test('unknown, expired, revoked (signed out) and disabled: 401', async () => {
    const unknown = await call(req('/api/v1/admin/security-events', { headers: bearer('no-such-token') }))
    expect(unknown.status).toBe(401)
    expect(unknown.body.error.code).toBe('unauthorized')

    const expiring = await signedInOperator(ctx, 'viewer')
    ctx.clock.advance(ctx.config.operatorSessionTtlS * 1000)
    expect((await ctx.handle(req('/api/v1/admin/security-events', { headers: bearer(expiring.token) }))).status).toBe(401)

    const leaving = await signedInOperator(ctx, 'viewer')
    const out = await call(req('/api/v1/admin/sessions/current/revoke', { method: 'POST', headers: bearer(leaving.token) }))
    expect(out).toMatchObject({ status: 200, body: { revoked: true } })
    expect((await ctx.handle(req('/api/v1/admin/security-events', { headers: bearer(leaving.token) }))).status).toBe(401)
    // The admin token is no session to end.
    expect((await call(req('/api/v1/admin/sessions/current/revoke', { method: 'POST', headers: admin }))).status).toBe(409)

    const chief = await signedInOperator(ctx, 'admin')
    const disabled = await signedInOperator(ctx, 'moderator')
    const res = await call(req(`/api/v1/admin/operators/${disabled.operator.id}/disable`, { method: 'POST', headers: bearer(chief.token) }))
    expect(res.status).toBe(200)
    expect(res.body.operator.disabled).toBe(true)
    // At once: the very next request with its session is refused.
    expect((await ctx.handle(req('/api/v1/admin/security-events', { headers: bearer(disabled.token) }))).status).toBe(401)
  })
})

describe('managing operators (admin)', () => {
  test('list, create (409 on a name in another case), disable, reset-password; audited with the name and role of who did it', async () => {
    const chief = await signedInOperator(ctx, 'admin', 'api', 'Chief')
    const as = bearer(chief.token)
    const created = await call(postJson('/api/v1/admin/operators', { name: 'Dave', role: 'viewer' }, as))
    expect(created.status).toBe(201)
    const conflict = await call(postJson('/api/v1/admin/operators', { name: 'DAVE', role: 'admin' }, as))
    expect(conflict.status).toBe(409)
    expect((await call(postJson('/api/v1/admin/operators', { name: 'E', role: 'viewer' }, as))).status).toBe(422)
    expect((await call(postJson('/api/v1/admin/operators', { name: 'eve', role: 'root' }, as))).status).toBe(422)
    const listed = await call(req('/api/v1/admin/operators', { headers: as }))
    expect(listed.body.operators.map((o: { name: string }) => o.name)).toEqual(['Chief', 'Dave'])
    const id = created.body.operator.id as string
    const reset = await call(req(`/api/v1/admin/operators/${id}/reset-password`, { method: 'POST', headers: as }))
    expect(reset.status).toBe(200)
    expect(reset.body.password).not.toBe(created.body.password)
    expect((await call(postJson(SIGN_IN, { name: 'dave', password: created.body.password, newPassword: OPERATOR_PASSWORD }))).status).toBe(401)
    expect((await call(postJson(SIGN_IN, { name: 'dave', password: reset.body.password, newPassword: OPERATOR_PASSWORD }))).status).toBe(201)
    expect((await call(req(`/api/v1/admin/operators/${id}/disable`, { method: 'POST', headers: as }))).status).toBe(200)
    expect((await call(req(`/api/v1/admin/operators/${id}/disable`, { method: 'POST', headers: as }))).status).toBe(409)
    expect((await call(req('/api/v1/admin/operators/operator_nope/disable', { method: 'POST', headers: as }))).status).toBe(404)
    expect((await call(req(`/api/v1/admin/operators/${chief.operator.id}/disable`, { method: 'POST', headers: as }))).body.error.code).toBe('last_admin')
    const mine = (await auditActions()).filter((r) => r.operatorName === 'Chief')
    expect(mine).toEqual([
      { action: 'operator.create', operatorName: 'Chief', role: 'admin', via: 'api', target: id },
      { action: 'operator.reset_password', operatorName: 'Chief', role: 'admin', via: 'api', target: id },
      { action: 'operator.disable', operatorName: 'Chief', role: 'admin', via: 'api', target: id },
    ])
    expect(await ctx.services.audit.verify(ctx.storage.read.audit)).toMatchObject({ ok: true })
  })
})

describe('enable, role, TOTP off (admin)', () => {
  test('a role change is in force at the next request; the last admin keeps its role; enable undoes disable; an admin turns TOTP off', async () => {
    const chief = await signedInOperator(ctx, 'admin', 'api', 'Boss')
    const as = bearer(chief.token)
    const mod = await signedInOperator(ctx, 'moderator')
    expect((await ctx.handle(req('/api/v1/admin/operators', { headers: bearer(mod.token) }))).status).toBe(403)
    const promoted = await call(postJson(`/api/v1/admin/operators/${mod.operator.id}/role`, { role: 'admin' }, as))
    expect(promoted).toMatchObject({ status: 200, body: { operator: { role: 'admin' } } })
    expect((await ctx.handle(req('/api/v1/admin/operators', { headers: bearer(mod.token) }))).status).toBe(200)
    expect((await call(postJson(`/api/v1/admin/operators/${mod.operator.id}/role`, { role: 'admin' }, as))).status).toBe(409)
    expect((await call(postJson(`/api/v1/admin/operators/${mod.operator.id}/role`, { role: 'boss' }, as))).status).toBe(422)
    expect((await call(postJson(`/api/v1/admin/operators/${chief.operator.id}/role`, { role: 'viewer' }, as))).status).toBe(200)
    // Boss is a viewer now: refused at once.
    expect((await ctx.handle(req('/api/v1/admin/operators', { headers: as }))).status).toBe(403)
    const admin2 = bearer(mod.token)
    expect((await call(postJson(`/api/v1/admin/operators/${mod.operator.id}/role`, { role: 'finance' }, admin2))).body.error.code).toBe('last_admin')

    expect((await call(req(`/api/v1/admin/operators/${chief.operator.id}/disable`, { method: 'POST', headers: admin2 }))).status).toBe(200)
    expect((await call(postJson(SIGN_IN, { name: 'Boss', password: OPERATOR_PASSWORD }))).status).toBe(401)
    expect((await call(req(`/api/v1/admin/operators/${chief.operator.id}/enable`, { method: 'POST', headers: admin2 }))).body.operator.disabled).toBe(false)
    expect((await call(req(`/api/v1/admin/operators/${chief.operator.id}/enable`, { method: 'POST', headers: admin2 }))).status).toBe(409)
    expect((await call(postJson(SIGN_IN, { name: 'Boss', password: OPERATOR_PASSWORD }))).status).toBe(201)

    const by = ctx.services.audit.actor({ id: chief.operator.id, name: 'Boss', role: 'viewer' }, 'console')
    const { secret } = await ctx.services.operatorTotp.beginTotp(chief.operator.id, OPERATOR_PASSWORD)
    await ctx.services.operatorTotp.confirmTotp(chief.operator.id, totpCode(secret, ctx.clock.now()), by)
    expect((await call(postJson(SIGN_IN, { name: 'Boss', password: OPERATOR_PASSWORD }))).body.error.code).toBe('totp_required')
    expect((await call(req(`/api/v1/admin/operators/${chief.operator.id}/totp/disable`, { method: 'POST', headers: admin2 }))).body.operator.totpEnabled).toBe(false)
    expect((await call(req(`/api/v1/admin/operators/${chief.operator.id}/totp/disable`, { method: 'POST', headers: admin2 }))).status).toBe(409)
    expect((await call(postJson(SIGN_IN, { name: 'Boss', password: OPERATOR_PASSWORD }))).status).toBe(201)

    const actions = (await auditActions()).filter((r) => r.target === chief.operator.id || r.target === mod.operator.id).map((r) => `${r.operatorName}:${r.action}`)
    expect(actions).toEqual([
      'cli:test:operator.create',
      'cli:test:operator.create',
      'Boss:operator.role',
      'Boss:operator.role',
      `${mod.operator.name}:operator.disable`,
      `${mod.operator.name}:operator.enable`,
      'Boss:operator.totp.enable',
      `${mod.operator.name}:operator.totp.disable`,
    ])
  })
})
