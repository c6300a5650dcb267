// Invariant: a PIN lock is lifted only by someone who proved a right to lift
// it: the owner with the account password (a PIN change, which also forgets
// the failure count and the doubling), or a finance operator (or admin)
// acting by name with a reason, recorded in the audit log in the same step
// and told to the user. A wrong password lifts nothing, and a role below
// finance is refused with 403 and changes nothing. Through the admin API, the
// console's user page and `arena user pin-unlock`, on both engines.
import { afterAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { postJson, req, tempDir } from '../helpers/app'
import { admin, createArenaApp, players, type Player } from '../helpers/arena'
import { login, PASSWORD } from '../helpers/auth'
import { deleteUser, eventsOf, securityEventsOf } from '../helpers/accounts'
import { bearer, signedInOperator } from '../helpers/operators'
import { CLI_OPERATOR, run, SOURCE_COMMAND } from '../helpers/process'
import { funded, mint, mintRaw, PIN, someAddress, verify } from '../helpers/purchases'

const dataDir = tempDir('arena-pin-unlock-')
const ctx = await createArenaApp({}, { dataDir })
afterAll(async () => {
  await ctx.close()
  rmSync(dataDir, { recursive: true, force: true })
})

let key = 0
const nextKey = () => `unlock-${++key}`
const WRONG = '999000'
const NEW_PIN = '640271'

const putPin = (p: Player, body: unknown) =>
  ctx.handle(new Request('http://localhost/api/v1/security/pin', { method: 'PUT', headers: { authorization: `Bearer ${p.tokens.accessToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }))
const unlock = (userId: string, body: unknown, headers: Record<string, string>) => ctx.handle(postJson(`/api/v1/admin/users/${userId}/pin/unlock`, body, headers))
const pinState = async (userId: string) => ((await (await ctx.handle(req(`/api/v1/admin/users/${userId}/pin`, { headers: admin }))).json()) as { pin: Record<string, unknown> }).pin

/** Five wrong PINs: the PIN locks; answers the lock's Retry-After in seconds. */
async function lockPin(p: Player): Promise<number> {
  let last: unknown
  for (let i = 0; i < 5; i++) {
    const s = await mint(ctx, p)
    last = await (await verify(ctx, p, s, { pin: WRONG, amount: '1', destinationAddress: someAddress(), idempotencyKey: nextKey() })).json()
  }
  expect(last).toEqual({ valid: false, locked: true, attempt: 5 })
  const refused = await mintRaw(ctx, p)
  expect(refused.status).toBe(429)
  return Number(refused.headers.get('retry-after'))
}

async function verifyWith(p: Player, pin: string) {
  const s = await mint(ctx, p)
  return (await verify(ctx, p, s, { pin, amount: '1', destinationAddress: someAddress(), idempotencyKey: nextKey() })).json()
}

const auditOf = async (action: string, target: string) => (await ctx.storage.read.audit.auditAfter(0, 10_000)).filter((r) => r.action === action && r.target === target)
const auditHead = async () => (await ctx.storage.read.audit.auditHead()).seq

describe('the owner, with the password', () => {
  test('a password-confirmed PIN change lifts the lock and forgets the failure count and the doubling', async () => {
    const p = await funded(ctx, '10')
    expect(await lockPin(p)).toBe(900)
    ctx.clock.advance(900_000)
    p.tokens = await login(ctx, p.username)
    expect(await lockPin(p)).toBe(1800)
    expect(await pinState(p.userId)).toMatchObject({ set: true, locked: true, locks: 2 })

    expect((await putPin(p, { pin: NEW_PIN, password: PASSWORD })).status).toBe(200)
    expect(await pinState(p.userId)).toEqual({ set: true, locked: false, lockedUntil: null, failures: 0, locks: 0 })
    // The count starts again at 1, and the next lock is the first one's 15 minutes again.
    expect(await verifyWith(p, WRONG)).toEqual({ valid: false, locked: false, attempt: 1 })
    expect(await verifyWith(p, NEW_PIN)).toMatchObject({ valid: true })
    expect(await lockPin(p)).toBe(900)
  })

  test('a PIN change with a wrong password is 403 and lifts nothing; the old PIN stays', async () => {
    const p = await funded(ctx, '10')
    await lockPin(p)
    const before = await pinState(p.userId)
    const refused = await putPin(p, { pin: NEW_PIN, password: 'not the password' })
    expect(refused.status).toBe(403)
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('forbidden')
    expect(await pinState(p.userId)).toEqual(before)
    expect((await mintRaw(ctx, p)).status).toBe(429)
    // Once the lock ends, the old PIN is still the PIN.
    ctx.clock.advance(900_000)
    p.tokens = await login(ctx, p.username)
    expect(await verifyWith(p, NEW_PIN)).toMatchObject({ valid: false, attempt: 1 })
    expect(await verifyWith(p, PIN)).toMatchObject({ valid: true })
  })
})

describe('a finance operator, through the admin API', () => {
  test('lifts the lock: audited with the reason, the user told (account.pin_unlocked), PIN_UNLOCKED logged; the doubling is forgotten', async () => {
    const p = await funded(ctx, '10')
    await lockPin(p)
    ctx.clock.advance(900_000)
    p.tokens = await login(ctx, p.username)
    await lockPin(p)
    const lockedUntil = (await pinState(p.userId)).lockedUntil
    const finance = await signedInOperator(ctx, 'finance')
    const res = await unlock(p.userId, { reason: 'called support, identity checked' }, bearer(finance.token))
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ pin: { set: true, locked: false, lockedUntil: null, failures: 0, locks: 0 }, lifted: true })
    expect((await mintRaw(ctx, p)).status).toBe(201)

    const [record, ...more] = await auditOf('user.pin_unlock', p.userId)
    expect(more).toEqual([])
    expect(record).toMatchObject({ operatorId: finance.operator.id, operatorName: finance.operator.name, role: 'finance', via: 'api', reason: 'called support, identity checked' })
    expect(record!.details).toEqual({ wasLocked: true, lockedUntil, failures: 0, locks: 2 })
    expect(await eventsOf(ctx, p.userId, 'account.pin_unlocked')).toEqual([{ unlockedAt: ctx.clock.now().toISOString() }])
    const [logged] = await securityEventsOf(ctx, p.userId, 'PIN_UNLOCKED')
    expect(logged!.level).toBe('SAFE')
    expect(logged!.details).toMatchObject({ wasLocked: true, locks: 2, by: finance.operator.name })
    expect(await lockPin(p)).toBe(900)
  })

  test('a moderator and a viewer get 403 forbidden and lift nothing; an admin may', async () => {
    const p = await funded(ctx, '10')
    await lockPin(p)
    const lower = [await signedInOperator(ctx, 'viewer'), await signedInOperator(ctx, 'moderator')]
    const before = { pin: await pinState(p.userId), audit: await auditHead() }
    for (const op of lower) {
      const res = await unlock(p.userId, { reason: 'let me' }, bearer(op.token))
      expect(res.status).toBe(403)
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('forbidden')
    }
    expect({ pin: await pinState(p.userId), audit: await auditHead() }).toEqual(before)
    expect((await mintRaw(ctx, p)).status).toBe(429)
    const chief = await signedInOperator(ctx, 'admin')
    expect((await unlock(p.userId, { reason: 'admin includes finance' }, bearer(chief.token))).status).toBe(200)
    expect((await mintRaw(ctx, p)).status).toBe(201)
  })

  test('refusals are clear and write nothing: no reason 422, no such user 404, a deleted account 409; nothing to lift is 200 lifted: false, unwritten', async () => {
    const finance = bearer((await signedInOperator(ctx, 'finance')).token)
    const p = await funded(ctx, '10')
    await lockPin(p)
    const before = await auditHead()
    const code = async (res: Response) => [res.status, ((await res.json()) as { error: { code: string } }).error.code]
    expect(await code(await unlock(p.userId, {}, finance))).toEqual([422, 'validation_failed'])
    expect(await code(await unlock(p.userId, { reason: '' }, finance))).toEqual([422, 'validation_failed'])
    expect(await code(await unlock(p.userId, { reason: 'x'.repeat(501) }, finance))).toEqual([422, 'validation_failed'])
    expect(await code(await unlock('usr_00000000000000000000000000000000', { reason: 'who' }, finance))).toEqual([404, 'not_found'])
    const [clean] = await players(ctx, 1)
    const nothing = await unlock(clean!.userId, { reason: 'nothing locked' }, finance)
    expect(nothing.status).toBe(200)
    expect(await nothing.json()).toEqual({ pin: { set: false, locked: false, lockedUntil: null, failures: 0, locks: 0 }, lifted: false })
    expect(await eventsOf(ctx, clean!.userId, 'account.pin_unlocked')).toEqual([])
    expect(await auditHead()).toBe(before)
    expect((await mintRaw(ctx, p)).status).toBe(429)
    const [gone] = await players(ctx, 1)
    expect((await deleteUser(ctx, gone!.userId)).status).toBe(200)
    const afterDelete = await auditHead()
    expect(await code(await unlock(gone!.userId, { reason: 'too late' }, finance))).toEqual([409, 'conflict'])
    expect(await auditHead()).toBe(afterDelete)
  })
})

describe('the console\'s user page', () => {
  async function consoleOf(role: 'finance' | 'moderator') {
    const op = await signedInOperator(ctx, role, 'console')
    return { op, cookie: `arena_console=${op.token}`, csrf: ctx.services.operatorSessions.csrfFor(op.token) }
  }
  const page = async (cookie: string, userId: string) => (await ctx.handle(req(`/console/users/${userId}`, { headers: { cookie } }))).text()
  const form = (cookie: string, path: string, fields: Record<string, string>) =>
    ctx.handle(req(path, { method: 'POST', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() }))

  test('a finance operator sees the lock and lifts it with a reason, audited via the console; a moderator has no button and its forged form is 403', async () => {
    const p = await funded(ctx, '10')
    await lockPin(p)
    const moderator = await consoleOf('moderator')
    const shown = await page(moderator.cookie, p.userId)
    expect(shown).toContain('locked')
    expect(shown).not.toContain('Lift the PIN lock')
    const forged = await form(moderator.cookie, `/console/users/${p.userId}/pin/unlock`, { _csrf: moderator.csrf, reason: 'forged' })
    expect(forged.status).toBe(403)
    expect((await mintRaw(ctx, p)).status).toBe(429)

    const finance = await consoleOf('finance')
    expect(await page(finance.cookie, p.userId)).toContain('Lift the PIN lock')
    const done = await form(finance.cookie, `/console/users/${p.userId}/pin/unlock`, { _csrf: finance.csrf, reason: 'verified by video call' })
    expect(done.status).toBe(303)
    expect(done.headers.get('location')).toStartWith(`/console/users/${p.userId}?notice=`)
    expect((await mintRaw(ctx, p)).status).toBe(201)
    const [record] = await auditOf('user.pin_unlock', p.userId)
    expect(record).toMatchObject({ operatorName: finance.op.operator.name, role: 'finance', via: 'console', reason: 'verified by video call' })
    expect(await page(finance.cookie, p.userId)).not.toContain('Lift the PIN lock')

    // A second try (a form sent twice) has nothing to lift: back to the page, nothing recorded.
    const again = await form(finance.cookie, `/console/users/${p.userId}/pin/unlock`, { _csrf: finance.csrf, reason: 'twice' })
    expect(again.status).toBe(303)
    expect(again.headers.get('location')).not.toContain('error=')
    expect(await auditOf('user.pin_unlock', p.userId)).toHaveLength(1)
  })
})

test('arena user pin-unlock <username> --reason lifts the lock, audited as cli:<OS user>; no reason exits 2, an unknown user 1', async () => {
  const p = await funded(ctx, '10')
  await lockPin(p)
  const env = { ARENA_DATA_DIR: dataDir, ...ctx.databaseEnv }
  const missing = await run([...SOURCE_COMMAND, 'user', 'pin-unlock', p.username], env)
  expect(missing.code).toBe(2)
  const unknown = await run([...SOURCE_COMMAND, 'user', 'pin-unlock', 'nobody_at_all', '--reason', 'x'], env)
  expect(unknown.code).toBe(1)
  expect((await mintRaw(ctx, p)).status).toBe(429)

  const done = await run([...SOURCE_COMMAND, 'user', 'pin-unlock', p.username, '--reason', 'ticket 4711', '--json'], env)
  expect({ code: done.code, stderr: done.stderr }).toEqual({ code: 0, stderr: '' })
  expect(JSON.parse(done.stdout)).toEqual({ pin: { set: true, locked: false, lockedUntil: null, failures: 0, locks: 0 }, lifted: true })
  expect((await mintRaw(ctx, p)).status).toBe(201)
  const [record] = await auditOf('user.pin_unlock', p.userId)
  expect(record).toMatchObject({ operatorName: CLI_OPERATOR, role: 'admin', via: 'cli', reason: 'ticket 4711' })
}, 60_000)
