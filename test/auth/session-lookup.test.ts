// The lookup behind every authenticated request (AuthStore.sessionWithUser):
// every column of the session's user comes back as written, whatever its
// characters, with nulls as nulls, on both engines.
import { afterAll, expect, test } from 'bun:test'
import { createArenaApp } from '../helpers/arena'
import { testDatabaseEnv } from '../helpers/app'
import { testOnEngine } from '../helpers/engine'
import { openPool } from '../../src/db/postgres/connection'
import * as postgresTables from '../../src/db/postgres/schema'
import { batchedSessionLookup } from '../../src/db/postgres/stores/auth'

const ctx = await createArenaApp()
afterAll(() => ctx.close())

test('a session\'s user comes back exactly: text of any characters, times, nulls and the ban', async () => {
  const createdAt = new Date('2026-01-02T03:04:05.678Z')
  const reason = 'said "gg" \\ then 🎮\nleft; \u0001 and \u2028 too'
  const userId = 'usr_' + 'a1'.repeat(16)
  const plain = 'usr_' + 'b2'.repeat(16)
  await ctx.storage.write(async (tx) => {
    await tx.auth.createUser({ id: userId, email: 'Ünïcode+"q"@example.test', emailKey: 'ünïcode+"q"@example.test', username: 'Name_With_Case', usernameKey: 'name_with_case', country: 'DE', createdAt, emailVerifiedAt: null, passwordHash: 'x', identityProviders: 'password' })
    await tx.auth.createUser({ id: plain, email: 'plain@example.test', emailKey: 'plain@example.test', username: 'plain', usernameKey: 'plain', country: 'FR', createdAt, emailVerifiedAt: new Date(createdAt.getTime() + 1), passwordHash: 'x', identityProviders: 'password' })
    await tx.auth.setBan(userId, { bannedAt: new Date(createdAt.getTime() + 2), until: new Date(createdAt.getTime() + 3), reason })
    for (const [id, user] of [['ses_' + 'c3'.repeat(16), userId], ['ses_' + 'd4'.repeat(16), plain]] as const) {
      await tx.auth.createSession({ id, userId: user, createdAt, lastUsedAt: createdAt, expiresAt: new Date(createdAt.getTime() + 86_400_000), userAgent: null })
    }
  })

  expect(await ctx.storage.read.auth.sessionWithUser('ses_' + 'c3'.repeat(16))).toEqual({
    userId,
    lastUsedAt: createdAt,
    expiresAt: new Date(createdAt.getTime() + 86_400_000),
    revokedAt: null,
    user: {
      id: userId,
      email: 'Ünïcode+"q"@example.test',
      username: 'Name_With_Case',
      country: 'DE',
      createdAt,
      emailVerifiedAt: null,
      identityProviders: 'password',
      ban: { bannedAt: new Date(createdAt.getTime() + 2), until: new Date(createdAt.getTime() + 3), reason },
    },
  })
  const other = await ctx.storage.read.auth.sessionWithUser('ses_' + 'd4'.repeat(16))
  expect(other?.user).toEqual({ id: plain, email: 'plain@example.test', username: 'plain', country: 'FR', createdAt, emailVerifiedAt: new Date(createdAt.getTime() + 1), identityProviders: 'password', ban: null })
  expect(await ctx.storage.read.auth.sessionWithUser('ses_' + 'e5'.repeat(16))).toBeNull()
})

test("the lookup's user is the account's profile and ban, key for key (both read the user's columns by one list)", async () => {
  const createdAt = new Date('2026-02-03T04:05:06.789Z')
  const userId = 'usr_' + 'f6'.repeat(16)
  const sessionId = 'ses_' + 'f7'.repeat(16)
  await ctx.storage.write(async (tx) => {
    await tx.auth.createUser({ id: userId, email: 'keys@example.test', emailKey: 'keys@example.test', username: 'keys', usernameKey: 'keys', country: 'NL', createdAt, emailVerifiedAt: new Date(createdAt.getTime() + 5), passwordHash: 'x', identityProviders: 'password' })
    await tx.auth.setBan(userId, { bannedAt: new Date(createdAt.getTime() + 6), until: null, reason: 'r' })
    await tx.auth.createSession({ id: sessionId, userId, createdAt, lastUsedAt: createdAt, expiresAt: new Date(createdAt.getTime() + 86_400_000), userAgent: null })
  })
  const account = await ctx.storage.read.auth.userById(userId)
  const { passwordHash: _hash, deletedAt: _deleted, passwordLinkedAt: _linked, ...profileAndBan } = account!
  const found = await ctx.storage.read.auth.sessionWithUser(sessionId)
  expect(found?.user).toEqual(profileAndBan)
  expect(Object.keys(found!.user!).sort()).toEqual(Object.keys(profileAndBan).sort())
})

test('lookups made together (on PostgreSQL one statement for the turn) each get their own answer, a fresh object; a revoke is seen by the next lookup', async () => {
  const createdAt = new Date('2026-03-04T05:06:07.890Z')
  const expiresAt = new Date(Date.now() + 86_400_000)
  const [alice, bob] = ['usr_' + '1a'.repeat(16), 'usr_' + '2b'.repeat(16)]
  const [aliceSession, bobSession, revoked] = ['ses_' + '3c'.repeat(16), 'ses_' + '4d'.repeat(16), 'ses_' + '5e'.repeat(16)]
  await ctx.storage.write(async (tx) => {
    for (const [id, name] of [[alice, 'alice_turn'], [bob, 'bob_turn']] as const) {
      await tx.auth.createUser({ id, email: `${name}@example.test`, emailKey: `${name}@example.test`, username: name, usernameKey: name, country: 'DE', createdAt, emailVerifiedAt: null, passwordHash: 'x', identityProviders: 'password' })
    }
    for (const [id, userId] of [[aliceSession, alice], [bobSession, bob], [revoked, alice]] as const) {
      await tx.auth.createSession({ id, userId, createdAt, lastUsedAt: createdAt, expiresAt, userAgent: null })
    }
    await tx.auth.revokeSession(revoked, alice, 'logout', createdAt)
  })
  const { auth } = ctx.storage.read
  const alone = {
    alice: await auth.sessionWithUser(aliceSession),
    bob: await auth.sessionWithUser(bobSession),
    revoked: await auth.sessionWithUser(revoked),
  }
  expect(alone.alice?.user?.username).toBe('alice_turn')
  expect(alone.bob?.user?.username).toBe('bob_turn')
  expect(alone.revoked?.revokedAt).toEqual(createdAt)

  const together = await Promise.all([aliceSession, bobSession, aliceSession, 'ses_' + '6f'.repeat(16), revoked].map((id) => auth.sessionWithUser(id)))
  expect(together).toEqual([alone.alice, alone.bob, alone.alice, null, alone.revoked])
  // The same session asked twice: two answers, neither the other's object.
  expect(together[0]).not.toBe(together[2])
  expect(together[0]!.user).not.toBe(together[2]!.user)
  // In a unit of work, on its own transaction: the same answer.
  expect(await ctx.storage.write((tx) => tx.auth.sessionWithUser(bobSession))).toEqual(alone.bob)

  // Revoked between two turns: the next lookup, alone or with others, reads it revoked.
  await ctx.storage.write((tx) => tx.auth.revokeSession(bobSession, bob, 'logout', createdAt))
  const after = await Promise.all([bobSession, aliceSession].map((id) => auth.sessionWithUser(id)))
  expect(after[0]?.revokedAt).toEqual(createdAt)
  expect(after[1]).toEqual(alone.alice)
})

testOnEngine('postgres', 'the batched lookup runs as a named prepared statement, and unnamed with ARENA_DATABASE_PREPARE=false (a pooler in transaction mode)', async () => {
  const { ARENA_DATABASE_URL: url } = await testDatabaseEnv('postgres')
  for (const prepare of [true, false]) {
    // One connection: the lookup's statement and the count below see the same session's statements.
    const pool = openPool(url!, { max: 1, prepare })
    try {
      expect(await batchedSessionLookup(pool.db, postgresTables)('ses_' + '00'.repeat(16))).toBeNull()
      const [row] = await pool.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement LIKE '%auth_sessions%' AND statement NOT LIKE '%pg_prepared_statements%'`
      expect(row!.n).toBe(prepare ? 1 : 0)
    } finally {
      await pool.sql.end()
    }
  }
})
