// The lookup behind every authenticated request (AuthStore.sessionWithUser):
// every column of the session's user comes back as written, whatever its
// characters, with nulls as nulls, on both engines.
import { afterAll, expect, test } from 'bun:test'
import { createArenaApp } from '../helpers/arena'

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
