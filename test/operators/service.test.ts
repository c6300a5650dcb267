// The operator service (contract §11) on the test engine: one-time passwords,
// sign-in throttling, TOTP (enrol, confirm, wrong and replayed codes),
// disabling, password resets, sessions, and the audit record of each action.
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { createTestApp, type TestApp } from '../helpers/app'
import { cliActor, OPERATOR_PASSWORD, signedInOperator } from '../helpers/operators'
import { AppError } from '../../src/shared/errors'
import { totpCode } from '../../src/modules/operators/totp'

let ctx: TestApp
beforeEach(async () => {
  ctx = await createTestApp()
})
afterEach(async () => {
  await ctx.close()
})

async function failure(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise
  } catch (error) {
    if (error instanceof AppError) return error
    throw error
  }
  throw new Error('expected a failure')
}

function signIn(name: string, password: string, extra: { newPassword?: string; totp?: string; ip?: string } = {}) {
  return ctx.services.operatorSessions.signIn({ name, password, newPassword: extra.newPassword, totp: extra.totp, kind: 'api', userAgent: 'test', ip: extra.ip ?? '10.0.0.1' })
}

async function audit() {
  return await ctx.storage.read.audit.auditAfter(0, 1000)
}

describe('accounts', () => {
  test('a one-time password signs in once, and only while replacing itself', async () => {
    const { password } = await ctx.services.operators.create({ name: 'Alice', role: 'moderator' }, cliActor(ctx))
    expect((await failure(signIn('alice', password))).code).toBe('password_change_required')
    const signedIn = await signIn('ALICE', password, { newPassword: OPERATOR_PASSWORD })
    expect(signedIn.operator).toMatchObject({ name: 'Alice', role: 'moderator' })
    expect((await failure(signIn('alice', password, { newPassword: 'another one 12345' }))).code).toBe('invalid_credentials')
    expect((await signIn('alice', OPERATOR_PASSWORD)).operator.name).toBe('Alice')
  })

  test('names are unique whatever their case (409)', async () => {
    await ctx.services.operators.create({ name: 'Bob', role: 'viewer' }, cliActor(ctx))
    expect((await failure(ctx.services.operators.create({ name: 'bOB', role: 'admin' }, cliActor(ctx)))).status).toBe(409)
  })

  test('"token", the admin token\'s name in the audit log, is no operator\'s (422, whatever its case)', async () => {
    for (const name of ['token', 'Token', ' TOKEN ']) expect((await failure(ctx.services.operators.create({ name, role: 'admin' }, cliActor(ctx)))).status).toBe(422)
    expect(await ctx.services.operators.list()).toEqual([])
  })

  test('disable ends every session at once and refuses the last enabled admin', async () => {
    const admin = await signedInOperator(ctx, 'admin')
    const viewer = await signedInOperator(ctx, 'viewer')
    expect(await ctx.services.operatorSessions.session(viewer.token, 'api')).not.toBeNull()
    const by = ctx.services.audit.actor({ id: admin.operator.id, name: admin.operator.name, role: 'admin' }, 'api')
    expect((await ctx.services.operators.disable(viewer.operator.id, by)).disabled).toBe(true)
    expect(await ctx.services.operatorSessions.session(viewer.token, 'api')).toBeNull()
    expect((await ctx.services.operatorSessions.sessions(viewer.operator.id)).every((s) => s.revokedAt !== null)).toBe(true)
    expect((await failure(signIn(viewer.operator.name, OPERATOR_PASSWORD))).code).toBe('invalid_credentials')
    expect((await failure(ctx.services.operators.disable(viewer.operator.id, by))).status).toBe(409)
    expect((await failure(ctx.services.operators.disable(admin.operator.id, by))).code).toBe('last_admin')
    const record = (await audit()).find((r) => r.action === 'operator.disable')!
    expect(record).toMatchObject({ operatorId: admin.operator.id, operatorName: admin.operator.name, role: 'admin', via: 'api', target: viewer.operator.id })
  })

  test('two admins disabling each other at once: one of them stays enabled', async () => {
    const one = await signedInOperator(ctx, 'admin')
    const two = await signedInOperator(ctx, 'admin')
    const actorOf = (o: typeof one) => ctx.services.audit.actor({ id: o.operator.id, name: o.operator.name, role: 'admin' }, 'api')
    const results = await Promise.allSettled([ctx.services.operators.disable(two.operator.id, actorOf(one)), ctx.services.operators.disable(one.operator.id, actorOf(two))])
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected'])
    expect(((results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason as AppError).code).toBe('last_admin')
    expect((await ctx.services.operators.list()).filter((o) => !o.disabled)).toHaveLength(1)
  })

  test('reset-password: a new one-time password, the old one and every session gone', async () => {
    const op = await signedInOperator(ctx, 'finance')
    const { password } = await ctx.services.operators.resetPassword(op.operator.id, cliActor(ctx, 'cli:root'))
    expect(await ctx.services.operatorSessions.session(op.token, 'api')).toBeNull()
    expect((await failure(signIn(op.operator.name, OPERATOR_PASSWORD))).code).toBe('invalid_credentials')
    expect((await failure(signIn(op.operator.name, password))).code).toBe('password_change_required')
    await signIn(op.operator.name, password, { newPassword: 'brand new password 1' })
    const record = (await audit()).find((r) => r.action === 'operator.reset_password')!
    expect(record).toMatchObject({ operatorId: null, operatorName: 'cli:root', role: 'admin', via: 'cli', target: op.operator.id })
  })

  test('sessions are listed with the current one marked, and one can be revoked', async () => {
    const op = await signedInOperator(ctx, 'viewer')
    const second = await signIn(op.operator.name, OPERATOR_PASSWORD)
    const listed = await ctx.services.operatorSessions.sessions(op.operator.id, second.session.id)
    expect(listed.map((s) => s.current)).toEqual([true, false])
    // Used two minutes later: its lastSeenAt moves (at most once a minute), the other's does not.
    ctx.clock.advance(120_000)
    expect(await ctx.services.operatorSessions.session(second.token, 'api')).not.toBeNull()
    const seen = await ctx.services.operatorSessions.sessions(op.operator.id)
    expect(seen.map((s) => s.lastSeenAt)).toEqual([ctx.clock.now().toISOString(), listed[1]!.lastSeenAt])
    const by = ctx.services.audit.actor({ id: op.operator.id, name: op.operator.name, role: 'viewer' }, 'console')
    await ctx.services.operatorSessions.revokeSession(op.operator.id, op.sessionId, by)
    expect(await ctx.services.operatorSessions.session(op.token, 'api')).toBeNull()
    expect(await ctx.services.operatorSessions.session(second.token, 'api')).not.toBeNull()
    const other = await signedInOperator(ctx, 'viewer')
    expect((await failure(ctx.services.operatorSessions.revokeSession(op.operator.id, other.sessionId, by))).status).toBe(404)
    expect((await audit()).filter((r) => r.action === 'operator.session.revoke')).toHaveLength(1)
  })
})

describe('throttle', () => {
  test('five wrong passwords block the name: 429 with Retry-After, even with the right password', async () => {
    const op = await signedInOperator(ctx, 'viewer')
    for (let i = 0; i < 5; i++) expect((await failure(signIn(op.operator.name, 'wrong password 000', { ip: `10.0.1.${i}` }))).code).toBe('invalid_credentials')
    const blocked = await failure(signIn(op.operator.name, OPERATOR_PASSWORD, { ip: '10.0.2.1' }))
    expect(blocked.code).toBe('rate_limited')
    expect(Number(blocked.headers?.['retry-after'])).toBeGreaterThan(0)
    ctx.clock.advance(15 * 60_000 + 1000)
    expect((await signIn(op.operator.name, OPERATOR_PASSWORD, { ip: '10.0.2.1' })).operator.name).toBe(op.operator.name)
  })

  test('one address spraying names is blocked; unknown names count alike', async () => {
    for (let i = 0; i < 20; i++) await failure(signIn(`nobody-${i}`, 'wrong password 000', { ip: '10.9.9.9' }))
    const op = await signedInOperator(ctx, 'viewer')
    expect((await failure(signIn(op.operator.name, OPERATOR_PASSWORD, { ip: '10.9.9.9' }))).code).toBe('rate_limited')
    expect((await signIn(op.operator.name, OPERATOR_PASSWORD, { ip: '10.9.9.8' })).operator.name).toBe(op.operator.name)
  })
})

describe('TOTP', () => {
  test('enrol, confirm, then sign-in asks for a code, refuses a wrong or replayed one', async () => {
    const op = await signedInOperator(ctx, 'admin')
    const by = ctx.services.audit.actor({ id: op.operator.id, name: op.operator.name, role: 'admin' }, 'console')
    const { secret, uri } = await ctx.services.operatorTotp.beginTotp(op.operator.id, OPERATOR_PASSWORD)
    expect(uri).toStartWith('otpauth://totp/')
    expect(uri).toContain(`secret=${secret}`)
    // Sealed: the secret is nowhere in the row.
    const [row] = await ctx.peek.db.select().from(ctx.peek.tables.operators)
    expect(row!.totpSecretSealed).not.toContain(secret)
    // Pending: sign-in does not ask yet.
    await signIn(op.operator.name, OPERATOR_PASSWORD)
    expect((await failure(ctx.services.operatorTotp.confirmTotp(op.operator.id, '000000', by))).status).toBe(422)
    const now = ctx.clock.now()
    expect((await ctx.services.operatorTotp.confirmTotp(op.operator.id, totpCode(secret, now), by)).totpEnabled).toBe(true)

    expect((await failure(signIn(op.operator.name, OPERATOR_PASSWORD))).code).toBe('totp_required')
    // The step confirmTotp used is spent.
    expect((await failure(signIn(op.operator.name, OPERATOR_PASSWORD, { totp: totpCode(secret, now) }))).code).toBe('invalid_totp')
    ctx.clock.advance(30_000)
    const code = totpCode(secret, ctx.clock.now())
    expect((await failure(signIn(op.operator.name, 'wrong password 000', { totp: code }))).code).toBe('invalid_credentials')
    expect((await signIn(op.operator.name, OPERATOR_PASSWORD, { totp: code })).operator.name).toBe(op.operator.name)
    // Replayed within its window: refused.
    expect((await failure(signIn(op.operator.name, OPERATOR_PASSWORD, { totp: code }))).code).toBe('invalid_totp')

    // Its own TOTP comes off with its password and a code of a step not used yet (test/security/totp-reauth.test.ts).
    ctx.clock.advance(30_000)
    await ctx.services.operatorTotp.removeOwnTotp(op.operator.id, { password: OPERATOR_PASSWORD, code: totpCode(secret, ctx.clock.now()) }, by)
    await signIn(op.operator.name, OPERATOR_PASSWORD)
    const actions = (await audit()).map((r) => r.action)
    expect(actions).toContain('operator.totp.enable')
    expect(actions).toContain('operator.totp.disable')
    expect(await ctx.services.audit.verify(ctx.storage.read.audit)).toMatchObject({ ok: true })
  })

  test('two sign-ins racing with one code: one session at most', async () => {
    const op = await signedInOperator(ctx, 'viewer')
    const by = cliActor(ctx)
    const { secret } = await ctx.services.operatorTotp.beginTotp(op.operator.id, OPERATOR_PASSWORD)
    await ctx.services.operatorTotp.confirmTotp(op.operator.id, totpCode(secret, ctx.clock.now()), by)
    ctx.clock.advance(30_000)
    const code = totpCode(secret, ctx.clock.now())
    const results = await Promise.allSettled([0, 1, 2].map(() => signIn(op.operator.name, OPERATOR_PASSWORD, { totp: code })))
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
  })
})
