// POST /api/v1/user/register: contract §1 rules, field by field.
import { afterAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { createTestApp, postJson } from '../helpers/app'

// The real argon2id cost (hashGate given): the stored parameters are what this file checks.
const ctx = await createTestApp({ hashGate: {} })
afterAll(() => ctx.close())
const { users } = ctx.peek.tables

let n = 0
function valid(overrides: Record<string, unknown> = {}) {
  n++
  return { email: `reg${n}@example.com`, username: `reg_user_${n}`, password: 'long enough pw', country: 'FR', accept_terms: true, ...overrides }
}

const register = (body: unknown, headers: Record<string, string> = {}) => ctx.handle(postJson('/api/v1/user/register', body, headers))

async function expectValidationError(body: unknown, path: string) {
  const res = await register(body)
  expect(res.status).toBe(422)
  const json = (await res.json()) as { error: { code: string; details: { path: string }[] } }
  expect(json.error.code).toBe('validation_failed')
  expect(json.error.details.map((d) => d.path)).toContain(path)
}

describe('register', () => {
  test('201 with the user object, never a hash; an Authorization header is ignored', async () => {
    const body = valid({ email: 'Ada.Lovelace@Example.com', username: 'Ada_1815' })
    const res = await register(body, { authorization: 'Bearer not-a-real-token' })
    expect(res.status).toBe(201)
    const { user } = (await res.json()) as { user: Record<string, unknown> }
    expect(Object.keys(user).sort()).toEqual(['country', 'createdAt', 'email', 'emailVerified', 'id', 'identities', 'username'])
    expect(user).toMatchObject({ email: 'Ada.Lovelace@Example.com', username: 'Ada_1815', country: 'FR', identities: ['password'] })
    expect(user.id).toMatch(/^usr_[0-9a-f]{32}$/)
    expect(user.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  })

  test('the password is stored only as an argon2id hash at the OWASP minimum or above', async () => {
    const body = valid()
    await register(body)
    const row = (await ctx.peek.db.select().from(users).where(eq(users.usernameKey, body.username.toLowerCase())))[0]!
    expect(row.passwordHash).not.toContain(body.password)
    const params = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=\d+\$/.exec(row.passwordHash!)
    expect(params).not.toBeNull()
    expect(Number(params![1])).toBeGreaterThanOrEqual(19_456)
    expect(Number(params![2])).toBeGreaterThanOrEqual(2)
  })

  test('a lower-case country code is accepted and stored upper-case', async () => {
    const res = await register(valid({ country: 'jp' }))
    expect(res.status).toBe(201)
    expect(((await res.json()) as { user: { country: string } }).user.country).toBe('JP')
  })

  test('a username taken in any case is 409 username_taken', async () => {
    const first = valid({ username: 'CaseTwin' })
    expect((await register(first)).status).toBe(201)
    for (const username of ['CaseTwin', 'casetwin', 'CASETWIN']) {
      const res = await register(valid({ username }))
      expect(res.status).toBe(409)
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('username_taken')
    }
  })

  test('an email taken in any case is 409 email_taken', async () => {
    expect((await register(valid({ email: 'twin@example.com' }))).status).toBe(201)
    for (const email of ['twin@example.com', 'TWIN@example.com', 'Twin@Example.COM']) {
      const res = await register(valid({ email }))
      expect(res.status).toBe(409)
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('email_taken')
    }
  })

  test('racing registrations of one username: exactly one wins', async () => {
    const results = await Promise.all(Array.from({ length: 6 }, () => register(valid({ username: 'racer_name' }))))
    const statuses = results.map((r) => r.status).sort()
    expect(statuses).toEqual([201, 409, 409, 409, 409, 409])
  })

  test.each([
    ['email', 'not-an-email'],
    ['email', ''],
    ['email', 42],
    ['username', 'ab'],
    ['username', 'x'.repeat(33)],
    ['username', 'has space'],
    ['username', 'dash-ed'],
    ['password', 'short7!'],
    ['password', 'p'.repeat(129)],
    ['country', 'XX'],
    ['country', 'USA'],
    ['country', '12'],
    ['accept_terms', false],
    ['accept_terms', 'true'],
  ])('invalid %s (%p) is 422 naming the field', async (field, value) => {
    await expectValidationError(valid({ [field]: value }), `body/${field}`)
  })

  test.each(['email', 'username', 'password', 'country', 'accept_terms'])('missing %s is 422 naming the field', async (field) => {
    const body: Record<string, unknown> = valid()
    delete body[field]
    await expectValidationError(body, `body/${field}`)
  })

  test('password length counts characters, not UTF-16 units', async () => {
    await expectValidationError(valid({ password: '😀😀😀😀' }), 'body/password')
    expect((await register(valid({ password: '😀😀😀😀😀😀😀😀' }))).status).toBe(201)
  })

  test('boundary lengths are accepted', async () => {
    expect((await register(valid({ username: 'abc', password: '12345678' }))).status).toBe(201)
    expect((await register(valid({ username: 'y'.repeat(32), password: 'p'.repeat(128) }))).status).toBe(201)
  })

  test('a failed registration leaves no row behind', async () => {
    const before = (await ctx.peek.db.select().from(users)).length
    await register(valid({ country: 'XX' }))
    await register(valid({ accept_terms: false }))
    expect((await ctx.peek.db.select().from(users)).length).toBe(before)
  })
})
