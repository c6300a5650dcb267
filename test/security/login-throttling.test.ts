// Invariant: password guessing is throttled per account (5 attempts in 15
// minutes, by username and email together) and per client address (20
// failures), with 429 and Retry-After, in the database so a restart does not
// reset it, counted before the password is checked so parallel guesses
// cannot slip through, and never permanently.
import { afterAll, describe, expect, test } from 'bun:test'
import { createTestApp, onEngine, postJson, tempDir, type TestApp } from '../helpers/app'
import { PASSWORD, registerUser } from '../helpers/auth'

const env = { ARENA_TRUST_PROXY: 'true' }
const apps: TestApp[] = []
afterAll(() => apps.forEach((a) => a.close()))

/** `realHashCost`: argon2id at its real cost (hashGate given), for the races that span the hash, whose time is their window. */
async function app(dataDir?: string, realHashCost = false) {
  const created = await createTestApp({ env, ...(dataDir ? { dataDir } : {}), ...(realHashCost ? { hashGate: {} } : {}) })
  apps.push(created)
  return created
}

function attempt(ctx: TestApp, identifier: string, password: string, address: string) {
  return ctx.handle(postJson('/api/v1/user/login', { identifier, password }, { 'x-forwarded-for': address }))
}

describe('per identifier', () => {
  test('the 6th attempt after 5 failures is 429 with Retry-After, even with the right password; it ends after 15 minutes', async () => {
    const ctx = await app()
    const user = await registerUser(ctx)
    for (let i = 0; i < 5; i++) {
      // Different addresses: only the identifier counter can be what blocks.
      expect((await attempt(ctx, user.username, 'wrong', `203.0.113.${i}`)).status).toBe(401)
    }
    const blocked = await attempt(ctx, user.username, PASSWORD, '203.0.113.99')
    expect(blocked.status).toBe(429)
    expect(((await blocked.json()) as { error: { code: string } }).error.code).toBe('rate_limited')
    expect(Number(blocked.headers.get('retry-after'))).toBe(900)

    // The identifier is matched case-insensitively.
    expect((await attempt(ctx, user.username.toUpperCase(), PASSWORD, '203.0.113.98')).status).toBe(429)

    ctx.clock.advance(10 * 60_000)
    const later = await attempt(ctx, user.username, PASSWORD, '203.0.113.97')
    expect(later.status).toBe(429)
    expect(Number(later.headers.get('retry-after'))).toBe(300)

    ctx.clock.advance(5 * 60_000)
    expect((await attempt(ctx, user.username, PASSWORD, '203.0.113.96')).status).toBe(200)
  })

  test('failures spread over more than the window do not block; a success resets the count', async () => {
    const ctx = await app()
    const user = await registerUser(ctx)
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 4; i++) expect((await attempt(ctx, user.username, 'wrong', `192.0.2.${round * 10 + i}`)).status).toBe(401)
      expect((await attempt(ctx, user.username, PASSWORD, `192.0.2.${round * 10 + 9}`)).status).toBe(200)
    }
    for (let i = 0; i < 4; i++) expect((await attempt(ctx, user.username, 'wrong', `192.0.2.${100 + i}`)).status).toBe(401)
    ctx.clock.advance(16 * 60_000)
    for (let i = 0; i < 4; i++) expect((await attempt(ctx, user.username, 'wrong', `192.0.2.${110 + i}`)).status).toBe(401)
    expect((await attempt(ctx, user.username, PASSWORD, '192.0.2.200')).status).toBe(200)
  })

  test('a block survives a restart on the same data dir', async () => {
    const dataDir = tempDir()
    const first = await app(dataDir)
    const user = await registerUser(first)
    for (let i = 0; i < 5; i++) await attempt(first, user.username, 'wrong', `198.18.0.${i}`)
    first.close()
    const second = await app(dataDir)
    second.clock.set(first.clock.now())
    const res = await attempt(second, user.username, PASSWORD, '198.18.0.50')
    expect(res.status).toBe(429)
    expect(res.headers.get('retry-after')).toBeTruthy()
  })
})

describe('races and bypasses', () => {
  test('parallel guesses: at most 5 are evaluated, the rest are 429, and the block holds', async () => {
    const ctx = await app(undefined, true)
    const user = await registerUser(ctx)
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => attempt(ctx, user.username, `wrong-${i}`, `100.64.0.${i}`)),
    )
    const statuses = results.map((r) => r.status)
    expect(statuses.filter((s) => s === 401).length).toBe(5)
    expect(statuses.filter((s) => s === 429).length).toBe(7)
    expect((await attempt(ctx, user.username, PASSWORD, '100.64.1.1')).status).toBe(429)
  })

  test('username and email of one account share one counter', async () => {
    const ctx = await app()
    const user = await registerUser(ctx)
    for (let i = 0; i < 3; i++) expect((await attempt(ctx, user.username, 'wrong', `100.65.0.${i}`)).status).toBe(401)
    for (let i = 0; i < 2; i++) expect((await attempt(ctx, user.email.toUpperCase(), 'wrong', `100.65.1.${i}`)).status).toBe(401)
    expect((await attempt(ctx, user.username, PASSWORD, '100.65.2.1')).status).toBe(429)
    expect((await attempt(ctx, user.email, PASSWORD, '100.65.2.2')).status).toBe(429)
  })

  test('failures during a block neither count nor shorten it', async () => {
    const ctx = await app()
    const user = await registerUser(ctx)
    for (let i = 0; i < 5; i++) await attempt(ctx, user.username, 'wrong', `100.66.0.${i}`)
    ctx.clock.advance(5 * 60_000)
    for (let i = 0; i < 10; i++) expect((await attempt(ctx, user.username, 'wrong', `100.66.1.${i}`)).status).toBe(429)
    const res = await attempt(ctx, user.username, PASSWORD, '100.66.2.1')
    expect(res.status).toBe(429)
    expect(Number(res.headers.get('retry-after'))).toBe(600)
    ctx.clock.advance(10 * 60_000)
    expect((await attempt(ctx, user.username, PASSWORD, '100.66.2.2')).status).toBe(200)
  })

  test('behind a proxy the address is the right-most X-Forwarded-For entry, not one the client wrote', async () => {
    const ctx = await app()
    for (let i = 0; i < 20; i++) {
      expect((await attempt(ctx, `spray_${i}`, 'guess', `10.9.${i}.1, 198.51.100.77`)).status).toBe(401)
    }
    const victim = await registerUser(ctx)
    expect((await attempt(ctx, victim.username, PASSWORD, '10.200.0.1, 198.51.100.77')).status).toBe(429)
  })
})

describe('per client address', () => {
  test('20 failures from one address block it for every identifier; other addresses are unaffected', async () => {
    const ctx = await app()
    const victim = await registerUser(ctx)
    for (let i = 0; i < 20; i++) {
      expect((await attempt(ctx, `sprayed_${i}`, 'guess', '198.51.100.7')).status).toBe(401)
    }
    const res = await attempt(ctx, victim.username, PASSWORD, '198.51.100.7')
    expect(res.status).toBe(429)
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0)
    expect((await attempt(ctx, victim.username, PASSWORD, '198.51.100.8')).status).toBe(200)
  })
})

describe('a failing disk', () => {
  test('a right password whose session cannot be stored (503) leaves no attempt counted: six such 503s, then 200', async () => {
    const ctx = await app()
    const user = await registerUser(ctx)
    // The disk refuses the session's COMMIT (as SQLITE_FULL or PostgreSQL's
    // disk_full would): any unit of work that inserted an auth session for
    // the user fails, and rolls back. Counted through the unit of work's own
    // stores, which see its uncommitted rows on either engine.
    const diskFullCode = onEngine('sqlite') ? 'SQLITE_FULL' : '53100'
    const { storage } = ctx.services
    const original = storage.write.bind(storage)
    let diskFull = true
    let refusedCommits = 0
    storage.write = ((work: Parameters<typeof original>[0]) =>
      original(async (tx) => {
        const before = (await tx.auth.liveSessions(user.id, ctx.clock.now())).length
        const result = await work(tx)
        const after = (await tx.auth.liveSessions(user.id, ctx.clock.now())).length
        if (diskFull && after > before) {
          refusedCommits++
          throw Object.assign(new Error('database or disk is full'), { code: diskFullCode })
        }
        return result
      })) as typeof storage.write
    try {
      for (let i = 0; i < 6; i++) {
        const res = await attempt(ctx, user.username, PASSWORD, `203.0.113.${i}`)
        expect(res.status).toBe(503)
        expect(res.headers.get('retry-after')).toBe('1')
      }
      expect(refusedCommits).toBe(6)
    } finally {
      diskFull = false
      storage.write = original
    }
    expect((await attempt(ctx, user.username, PASSWORD, '203.0.113.50')).status).toBe(200)
  })
})
