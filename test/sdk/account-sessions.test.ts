// The SDK's account surface (contract §8) against the real server: the
// sessions list, ending one session, logging out everywhere else, the export,
// deleting the account, and a ban's `until` on the ApiError.
import { afterAll, describe, expect, test } from 'bun:test'
import { ApiError, NotSignedIn, type Tokens } from '@arena/sdk'
import { createArenaApp } from '../helpers/arena'
import { PASSWORD, registerUser } from '../helpers/auth'
import { banUser } from '../helpers/accounts'
import { sdkClient } from '../helpers/sdk'

const ctx = await createArenaApp()
afterAll(() => ctx.close())

async function signedIn(username: string, options: Parameters<typeof sdkClient>[1] = {}) {
  const sdk = sdkClient(ctx, options)
  await sdk.client.auth.login(username, PASSWORD)
  return sdk
}

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => null,
    (error: unknown) => error,
  )

describe('SDK account', () => {
  test('sessions() lists the live sessions, marking this client\'s; revokeSession ends another one', async () => {
    const user = await registerUser(ctx)
    const phone = await signedIn(user.username)
    const laptop = await signedIn(user.username)
    const listed = await laptop.client.auth.sessions()
    expect(listed.length).toBe(2)
    expect(listed.filter((s) => s.current).length).toBe(1)
    const phoneId = (await phone.client.auth.sessions()).find((s) => s.current)!.id
    expect(await laptop.client.auth.revokeSession(phoneId)).toEqual({ revoked: 1 })
    expect(phone.sent.at(-1)!.method).toBe('GET')
    expect(laptop.sent.at(-1)).toMatchObject({ method: 'DELETE', path: `/api/v1/me/sessions/${phoneId}` })
    // The phone's tokens are dead: its next call fails, rotation too, and it forgets them.
    const error = await failure(phone.client.me())
    expect(error).toBeInstanceOf(ApiError)
    expect(phone.client.auth.signedIn).toBe(false)
    expect((await laptop.client.me()).id).toBe(user.id)

    const unknown = await failure(laptop.client.auth.revokeSession(phoneId))
    expect(unknown).toBeInstanceOf(ApiError)
    expect((unknown as ApiError).code).toBe('not_found')
  })

  test('logout({ others: true }) ends the other sessions and keeps this one signed in', async () => {
    const user = await registerUser(ctx)
    const other = await signedIn(user.username)
    const seen: (Tokens | null)[] = []
    const self = await signedIn(user.username, { onTokens: (t) => seen.push(t) })
    expect(await self.client.auth.logout({ others: true })).toEqual({ revoked: 1 })
    expect(JSON.parse(self.sent.at(-1)!.body!)).toEqual({ others: true })
    expect(self.client.auth.signedIn).toBe(true)
    expect(seen.at(-1)).not.toBeNull()
    expect((await self.client.me()).id).toBe(user.id)
    expect(await failure(other.client.me())).toBeInstanceOf(ApiError)
    // A plain logout still signs this client out.
    expect(await self.client.auth.logout()).toEqual({ revoked: 1 })
    expect(self.client.auth.signedIn).toBe(false)
  })

  test('exportAccount() is the document of GET /me/export', async () => {
    const user = await registerUser(ctx)
    const { client } = await signedIn(user.username)
    const doc = await client.exportAccount()
    expect(doc.user.id).toBe(user.id)
    expect(doc.user.emailVerifiedAt).toBeNull()
    expect(doc.sessions.length).toBe(1)
    expect(doc).toMatchObject({ matches: [], ledger: [], withdrawals: [], securityEvents: [] })
  })

  test('deleteAccount(): a wrong password keeps the tokens (403); the right one deletes and forgets them', async () => {
    const user = await registerUser(ctx)
    const seen: (Tokens | null)[] = []
    const { client, count } = await signedIn(user.username, { onTokens: (t) => seen.push(t) })
    const wrong = await failure(client.auth.deleteAccount('not the password'))
    expect(wrong).toBeInstanceOf(ApiError)
    expect({ status: (wrong as ApiError).status, code: (wrong as ApiError).code }).toEqual({ status: 403, code: 'invalid_credentials' })
    // A 403 is not a stale bearer: no rotation was attempted.
    expect(count('POST', /\/auth\/validate$/)).toBe(0)
    expect(client.auth.signedIn).toBe(true)

    const deleted = await client.auth.deleteAccount(PASSWORD)
    expect(deleted).toEqual({ deleted: true, deletedAt: ctx.clock.now().toISOString() })
    expect(client.auth.signedIn).toBe(false)
    expect(seen.at(-1)).toBeNull()
    expect(await failure(client.me())).toBeInstanceOf(NotSignedIn)
    expect(await failure(client.auth.login(user.username, PASSWORD))).toBeInstanceOf(ApiError)
  })

  test('a banned login is an ApiError 403 account_banned carrying until', async () => {
    const user = await registerUser(ctx)
    const until = new Date(ctx.clock.now().getTime() + 86_400_000).toISOString()
    await banUser(ctx, user.id, { reason: 'cheating', until })
    const { client } = sdkClient(ctx)
    const error = (await failure(client.auth.login(user.username, PASSWORD))) as ApiError
    expect(error).toBeInstanceOf(ApiError)
    expect({ status: error.status, code: error.code, until: error.until }).toEqual({ status: 403, code: 'account_banned', until })
    const forever = await registerUser(ctx)
    await banUser(ctx, forever.id, { reason: 'fraud' })
    expect(((await failure(client.auth.login(forever.username, PASSWORD))) as ApiError).until).toBeNull()
    // Other errors carry none.
    expect(((await failure(client.auth.login(forever.username, 'wrong'))) as ApiError).until).toBeUndefined()
  })
})
