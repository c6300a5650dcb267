// SDK tokens: rotation through /auth/validate, exactly once however many
// requests find the token stale together, against the real server.
import { afterEach, describe, expect, test } from 'bun:test'
import { ApiError, NetworkError, NotSignedIn, type Tokens } from '@arena/sdk'
import { createTestApp, type TestApp } from '../helpers/app'
import { PASSWORD, registerUser, spentEarlier } from '../helpers/auth'
import { sdkClient } from '../helpers/sdk'

let ctx: TestApp
afterEach(() => ctx?.close())

const VALIDATE = /^\/api\/v1\/auth\/validate$/

async function signedIn(options: Parameters<typeof sdkClient>[1] = {}) {
  const user = await registerUser(ctx)
  const sdk = sdkClient(ctx, options)
  await sdk.client.auth.login(user.username, PASSWORD)
  return { user, ...sdk }
}

describe('SDK token rotation', () => {
  test('login holds the tokens; authenticated calls carry the bearer', async () => {
    ctx = await createTestApp()
    const seen: (Tokens | null)[] = []
    const { client, user, sent } = await signedIn({ onTokens: (t) => seen.push(t) })
    expect((await client.me()).username).toBe(user.username)
    expect(sent.at(-1)!.headers.get('authorization')).toMatch(/^Bearer /)
    expect(seen).toHaveLength(1)
    expect(seen[0]!.refreshToken).toBeString()
  })

  test('ten concurrent requests with an expired access token cause exactly one rotation, and all succeed', async () => {
    ctx = await createTestApp()
    const seen: (Tokens | null)[] = []
    const { client, count } = await signedIn({ onTokens: (t) => seen.push(t) })
    const before = client.auth.current()!
    ctx.clock.advance((ctx.config.accessTtlS + 1) * 1000)

    const results = await Promise.all(Array.from({ length: 10 }, () => client.wallet()))
    expect(results.every((w) => w.asset === 'USDC')).toBe(true)
    expect(count('POST', VALIDATE)).toBe(1)
    // One rotation: a second one with the spent refresh token would have revoked the session.
    const after = client.auth.current()!
    expect(after.refreshToken).not.toBe(before.refreshToken)
    expect(seen).toHaveLength(2)
    expect((await client.me()).id).toBeString()
    expect(count('POST', VALIDATE)).toBe(1)
  })

  test('the client rotates before sending when it knows the token is about to expire; concurrent calls share it', async () => {
    ctx = await createTestApp()
    let now = Date.now()
    const { client, count, sent } = await signedIn({ now: () => now })
    now += ctx.config.accessTtlS * 1000 // past the rotation margin, by the client's clock only
    await Promise.all([client.me(), client.wallet(), client.myMatches()])
    expect(count('POST', VALIDATE)).toBe(1)
    // Proactive: no request went out with the old token and came back 401.
    const validateAt = sent.findIndex((r) => VALIDATE.test(r.path))
    expect(sent.slice(validateAt + 1).length).toBe(3)
  })

  test('calls made while a rotation is in flight wait for it instead of starting another', async () => {
    ctx = await createTestApp()
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const { client, count } = await signedIn({
      intercept: async (request, forward) => {
        if (VALIDATE.test(request.path)) await gate
        return forward()
      },
    })
    ctx.clock.advance((ctx.config.accessTtlS + 1) * 1000)
    const first = client.me()
    await Bun.sleep(20)
    const later = [client.wallet(), client.me(), client.auth.refresh()]
    await Bun.sleep(20)
    release()
    await Promise.all([first, ...later])
    expect(count('POST', VALIDATE)).toBe(1)
  })

  test('a spent refresh token ends the session: tokens forgotten, onTokens(null), NotSignedIn afterwards', async () => {
    ctx = await createTestApp()
    const seen: (Tokens | null)[] = []
    const { client } = await signedIn({ onTokens: (t) => seen.push(t) })
    // Another device holding the same tokens rotates first.
    const other = sdkClient(ctx).client
    const held = client.auth.current()!
    other.auth.useToken(held.accessToken, held.refreshToken)
    await other.auth.refresh()

    ctx.clock.advance((ctx.config.accessTtlS + 1) * 1000)
    // The retry grace is measured on the database's clock, which the test clock does not move on PostgreSQL.
    await spentEarlier(ctx, held.accessToken, (ctx.config.accessTtlS + 1) * 1000)
    const error = await client.me().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ApiError)
    expect((error as ApiError).status).toBe(401)
    expect((error as ApiError).code).toBe('refresh_token_reused')
    expect(client.auth.signedIn).toBe(false)
    expect(seen.at(-1)).toBeNull()
    expect(await client.wallet().catch((e: unknown) => e)).toBeInstanceOf(NotSignedIn)
  })

  test('useToken without a refresh token: an expired access token is a 401, with no rotation attempted', async () => {
    ctx = await createTestApp()
    const { client: source } = await signedIn()
    const { client, count } = sdkClient(ctx)
    client.auth.useToken(source.auth.current()!.accessToken)
    expect((await client.me()).id).toBeString()
    ctx.clock.advance((ctx.config.accessTtlS + 1) * 1000)
    const error = (await client.me().catch((e: unknown) => e)) as ApiError
    expect(error).toBeInstanceOf(ApiError)
    expect(error.status).toBe(401)
    expect(count('POST', VALIDATE)).toBe(0)
  })

  test('useToken with a refresh token rotates like a login would', async () => {
    ctx = await createTestApp()
    const { client: source } = await signedIn()
    const held = source.auth.current()!
    const { client, count } = sdkClient(ctx)
    client.auth.useToken(held.accessToken, held.refreshToken)
    ctx.clock.advance((ctx.config.accessTtlS + 1) * 1000)
    expect((await client.me()).id).toBeString()
    expect(count('POST', VALIDATE)).toBe(1)
  })

  test('logout revokes on the server and forgets the tokens; logout({ all }) ends every session', async () => {
    ctx = await createTestApp()
    const { client, user } = await signedIn()
    const second = sdkClient(ctx).client
    await second.auth.login(user.username, PASSWORD)
    const stolen = client.auth.current()!

    expect(await client.auth.logout()).toEqual({ revoked: 1 })
    expect(client.auth.signedIn).toBe(false)
    const replay = sdkClient(ctx).client
    replay.auth.useToken(stolen.accessToken)
    expect(((await replay.me().catch((e: unknown) => e)) as ApiError).status).toBe(401)
    expect((await second.me()).id).toBe(user.id)

    await client.auth.login(user.username, PASSWORD)
    expect((await client.auth.logout({ all: true })).revoked).toBe(2)
    expect(((await second.me().catch((e: unknown) => e)) as ApiError).status).toBe(401)
  })

  test('a wrong password is an ApiError with the envelope code; the client stays signed out', async () => {
    ctx = await createTestApp()
    const user = await registerUser(ctx)
    const { client } = sdkClient(ctx)
    const error = (await client.auth.login(user.username, 'not the password').catch((e: unknown) => e)) as ApiError
    expect(error).toBeInstanceOf(ApiError)
    expect(error.code).toBe('invalid_credentials')
    expect(error.status).toBe(401)
    expect(error.requestId).toBeString()
    expect(client.auth.signedIn).toBe(false)
  })

  test('the SDK has no registration', async () => {
    ctx = await createTestApp()
    const { client } = sdkClient(ctx)
    expect(Object.keys(client.auth)).not.toContain('register')
    expect('register' in client.auth).toBe(false)
    expect('register' in client).toBe(false)
  })

  test('useToken during a rotation: the new tokens stay, the rotation\'s result is dropped', async () => {
    ctx = await createTestApp()
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const seen: (Tokens | null)[] = []
    const { client } = await signedIn({
      onTokens: (t) => seen.push(t),
      intercept: async (request, forward) => {
        if (VALIDATE.test(request.path)) await gate
        return forward()
      },
    })
    const bob = await registerUser(ctx)
    const bobClient = sdkClient(ctx).client
    await bobClient.auth.login(bob.username, PASSWORD)
    const bobTokens = bobClient.auth.current()!

    const rotating = client.auth.refresh()
    await Bun.sleep(10)
    client.auth.useToken(bobTokens.accessToken, bobTokens.refreshToken)
    release()
    await rotating
    expect(client.auth.current()!.accessToken).toBe(bobTokens.accessToken)
    expect(seen.at(-1)!.accessToken).toBe(bobTokens.accessToken)
    expect((await client.me()).username).toBe(bob.username)
  })

  test('a call sent as one player that meets a 401 is never replayed as another player', async () => {
    ctx = await createTestApp()
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    let holdWallet = true
    const { client, sent } = await signedIn({
      intercept: async (request, forward) => {
        if (request.path === '/api/v1/wallet' && holdWallet) {
          holdWallet = false
          await gate
        }
        return forward()
      },
    })
    ctx.clock.advance((ctx.config.accessTtlS + 1) * 1000)
    const wallet = client.wallet().catch((e: unknown) => e)
    await Bun.sleep(10)
    const bob = await registerUser(ctx)
    await client.auth.login(bob.username, PASSWORD)
    release()
    const answer = (await wallet) as ApiError
    expect(answer).toBeInstanceOf(ApiError)
    expect(answer.status).toBe(401)
    expect(sent.filter((r) => r.path === '/api/v1/wallet')).toHaveLength(1)
    expect(sent.some((r) => VALIDATE.test(r.path))).toBe(false)
  })

  test('a logout that gets no answer keeps the tokens (it can be retried); clear() forgets them locally', async () => {
    ctx = await createTestApp()
    let offline = true
    const { client } = await signedIn({
      intercept: async (request, forward) => {
        if (offline && request.path === '/api/v1/user/s/logout') throw new TypeError('offline')
        return forward()
      },
    })
    expect(await client.auth.logout().catch((e: unknown) => e)).toBeInstanceOf(NetworkError)
    expect(client.auth.signedIn).toBe(true)
    offline = false
    expect(await client.auth.logout()).toEqual({ revoked: 1 })
    expect(client.auth.signedIn).toBe(false)
    await client.auth.login((await registerUser(ctx)).username, PASSWORD)
    client.auth.clear()
    expect(client.auth.signedIn).toBe(false)
  })

  test('a proactive rotation that gets no answer falls back to the still-valid token', async () => {
    ctx = await createTestApp()
    let now = Date.now()
    const { client, count } = await signedIn({
      now: () => now,
      intercept: async (request, forward) => {
        if (VALIDATE.test(request.path)) throw new TypeError('offline')
        return forward()
      },
    })
    now += (ctx.config.accessTtlS - 10) * 1000 // inside the margin, not yet expired
    expect((await client.me()).id).toBeString()
    expect(count('POST', VALIDATE)).toBe(1)
    now += 20_000 // expired by the client's clock: no fallback
    expect(await client.me().catch((e: unknown) => e)).toBeInstanceOf(NetworkError)
  })
})
