// Invariant: login does not tell an attacker which accounts exist. An unknown
// identifier and a wrong password give the same 401 body, after the same
// password-hash work.
import { afterAll, expect, test } from 'bun:test'
import { createTestApp, postJson } from '../helpers/app'
import { registerUser } from '../helpers/auth'

// Throttling would turn later attempts into 429s; give every attempt its own address.
// The real argon2id cost (hashGate given): the timing below is measured against it.
const ctx = await createTestApp({ env: { ARENA_TRUST_PROXY: 'true' }, hashGate: {} })
afterAll(() => ctx.close())

let address = 0
async function attempt(identifier: string, password: string) {
  address++
  const started = performance.now()
  const res = await ctx.handle(
    postJson('/api/v1/user/login', { identifier, password }, { 'x-forwarded-for': `10.0.0.1, 198.51.100.${address % 250}` }),
  )
  const ms = performance.now() - started
  return { status: res.status, body: await res.text(), ms }
}

function median(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

test('unknown identifier and wrong password: identical 401 bodies', async () => {
  const user = await registerUser(ctx)
  const wrongPassword = await attempt(user.username, 'not the password')
  const unknownUser = await attempt('nobody_by_this_name', 'not the password')
  const unknownEmail = await attempt('nobody@example.com', 'not the password')
  expect(wrongPassword.status).toBe(401)
  expect(unknownUser.status).toBe(401)
  expect(unknownEmail.status).toBe(401)
  expect(unknownUser.body).toBe(wrongPassword.body)
  expect(unknownEmail.body).toBe(wrongPassword.body)
  expect(JSON.parse(wrongPassword.body)).toEqual({
    error: { code: 'invalid_credentials', message: 'Invalid identifier or password', status: 401 },
  })
})

test('unknown identifier and wrong password cost similar time (argon2 runs either way)', async () => {
  const user = await registerUser(ctx)
  await attempt('warm_up_unknown', 'x') // the dummy hash is computed once, lazily
  const known: number[] = []
  const unknown: number[] = []
  for (let i = 0; i < 6; i++) {
    known.push((await attempt(user.username, `wrong-${i}`)).ms)
    unknown.push((await attempt(`ghost_${i}`, `wrong-${i}`)).ms)
  }
  const ratio = median(unknown) / median(known)
  // Without the dummy verification an unknown user answers in well under a
  // millisecond against tens of milliseconds for argon2id.
  expect(median(unknown)).toBeGreaterThan(5)
  expect(ratio).toBeGreaterThan(0.5)
  expect(ratio).toBeLessThan(2)
})
