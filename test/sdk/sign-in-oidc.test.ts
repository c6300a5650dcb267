// The SDK's sign-ins with providers (contract §13) against the real server
// and a real OpenID provider on loopback (oidc-provider, its discovery, keys,
// login and consent forms). The journey the issue asks for: a player starts
// as a guest, links an OpenID identity, signs out, signs in with that
// identity and is the same account. Then the web flow as a browser game runs
// it through the SDK: beginWebLogin's URL, the provider, the callback's
// fragment handed to completeWebLogin.
import { afterAll, beforeEach, describe, expect, test } from 'bun:test'
import { ApiError } from '@arena/sdk'
import { createArenaApp } from '../helpers/arena'
import { startOidcProvider } from '../helpers/oidc-provider'
import { apiError, BASE_URL, sdkClient } from '../helpers/sdk'

const CALLBACK = `${BASE_URL}/api/v1/auth/oidc/test/callback`
const REDIRECT = 'https://game.example/back'
const fx = await startOidcProvider({ redirectUris: [CALLBACK] })
const ctx = await createArenaApp({
  ARENA_GUEST_CREATE_PER_HOUR: '1000',
  ARENA_OIDC_PROVIDERS: JSON.stringify([{ name: 'test', issuer: fx.issuer, clientId: fx.clientId, clientSecret: fx.clientSecret }]),
  ARENA_OIDC_REDIRECTS: REDIRECT,
})
afterAll(async () => {
  await ctx.close()
  await fx.close()
})
// The provider signs by the real clock; arena's follows it from here.
beforeEach(() => ctx.clock.set(new Date()))

let counter = 0
const subject = (label: string) => `${label}-${++counter}-${Math.floor(Math.random() * 1e9)}`


/** What a browser does with beginWebLogin's URL: arena's start, the provider (as `who`), arena's callback; the URL it lands on. */
async function browse(startUrl: string, who: string | null): Promise<string> {
  const started = await ctx.handle(new Request(startUrl))
  expect(started.status).toBe(302)
  const authorization = started.headers.get('location')!
  const callback = who === null ? await fx.authorizeAndCancel(authorization) : await fx.authorize(authorization, who)
  expect(callback.href.startsWith(`${CALLBACK}?`)).toBe(true)
  const landed = await ctx.handle(new Request(callback.href))
  expect(landed.status).toBe(302)
  return landed.headers.get('location')!
}

describe('the SDK journey: guest, link an OpenID identity, sign out, sign in with it', () => {
  test('the same account all along', async () => {
    const { client } = sdkClient(ctx)
    const guest = await client.auth.loginAsGuest()
    expect(guest.created).toBe(true)

    const sub = subject('journey')
    const linked = await client.identities.link('oidc:test', { idToken: await fx.mint(sub) })
    expect(linked.map((i) => ({ provider: i.provider, subject: i.subject }))).toEqual([
      { provider: 'device', subject: undefined },
      { provider: 'oidc:test', subject: sub },
    ])
    expect((await client.me()).identities).toEqual(['device', 'oidc:test'])

    await client.auth.logout()
    expect(client.auth.signedIn).toBe(false)

    // Another token for the same player, as the provider's SDK would give the app next time.
    const back = await client.auth.loginWithIdToken('test', await fx.mint(sub))
    expect(back).toEqual({ user: { ...guest.user, identities: ['device', 'oidc:test'] }, created: false })
    expect((await client.me()).id).toBe(guest.user.id)
    // The identity's own name works as the provider too.
    expect((await sdkClient(ctx).client.auth.loginWithIdToken('oidc:test', await fx.mint(sub))).user.id).toBe(guest.user.id)
  })
})

describe('auth.loginWithIdToken', () => {
  test('create makes the account once; without it an unknown identity is ApiError 401 invalid_credentials', async () => {
    const sub = subject('native')
    const { client } = sdkClient(ctx)
    const unknown = await apiError(client.auth.loginWithIdToken('test', await fx.mint(sub)))
    expect({ status: unknown.status, code: unknown.code }).toEqual({ status: 401, code: 'invalid_credentials' })
    expect(client.auth.signedIn).toBe(false)

    const first = await client.auth.loginWithIdToken('test', await fx.mint(sub, { nonce: 'n-1' }), { nonce: 'n-1', create: true })
    expect(first.created).toBe(true)
    expect(first.user.identities).toEqual(['oidc:test'])
    const again = await sdkClient(ctx).client.auth.loginWithIdToken('test', await fx.mint(sub), { create: true })
    expect(again).toEqual({ user: first.user, created: false })
  })

  test('a nonce that is not the token’s is ApiError 401; an identity linked elsewhere is 409 identity_in_use when linked', async () => {
    const sub = subject('nonce')
    const { client } = sdkClient(ctx)
    const wrong = await apiError(client.auth.loginWithIdToken('test', await fx.mint(sub, { nonce: 'right' }), { nonce: 'wrong', create: true }))
    expect(wrong.code).toBe('invalid_credentials')

    await client.auth.loginWithIdToken('test', await fx.mint(sub), { create: true })
    const other = sdkClient(ctx).client
    await other.auth.loginAsGuest()
    const inUse = await apiError(other.identities.link('oidc:test', { idToken: await fx.mint(sub) }))
    expect({ status: inUse.status, code: inUse.code }).toEqual({ status: 409, code: 'identity_in_use' })
  })
})

describe('the web flow through the SDK', () => {
  test('beginWebLogin → the provider → completeWebLogin(fragment): signed in, created; the code works once', async () => {
    const { client } = sdkClient(ctx)
    const who = subject('web')
    const landed = await browse(client.auth.beginWebLogin('test', { redirect: REDIRECT, create: true }), who)
    expect(landed.startsWith(`${REDIRECT}#code=`)).toBe(true)
    const fragment = landed.slice(landed.indexOf('#'))

    const result = await client.auth.completeWebLogin(fragment)
    expect(result.created).toBe(true)
    expect(result.user.identities).toEqual(['oidc:test'])
    expect((await client.me()).id).toBe(result.user.id)
    const spent = await apiError(sdkClient(ctx).client.auth.completeWebLogin(fragment))
    expect({ status: spent.status, code: spent.code }).toEqual({ status: 401, code: 'invalid_credentials' })

    // The same player again, from the whole URL: the same account, not created.
    const second = sdkClient(ctx).client
    const again = await second.auth.completeWebLogin(await browse(second.auth.beginWebLogin('oidc:test', { redirect: REDIRECT }), who))
    expect(again).toEqual({ user: result.user, created: false })
  })

  test('a player who cancels at the provider: completeWebLogin rejects with ApiError 400 access_denied', async () => {
    const { client, sent } = sdkClient(ctx)
    const landed = await browse(client.auth.beginWebLogin('test', { redirect: REDIRECT, create: true }), null)
    expect(landed).toBe(`${REDIRECT}#error=access_denied`)
    const error = await apiError(client.auth.completeWebLogin(landed))
    expect({ status: error.status, code: error.code }).toEqual({ status: 400, code: 'access_denied' })
    expect(sent).toHaveLength(0)
    expect(client.auth.signedIn).toBe(false)
  })

  test('an unknown identity without create: #error=invalid_credentials, the ApiError 401 of it', async () => {
    const { client } = sdkClient(ctx)
    const landed = await browse(client.auth.beginWebLogin('test', { redirect: REDIRECT }), subject('stranger'))
    const error = await apiError(client.auth.completeWebLogin(landed))
    expect({ status: error.status, code: error.code }).toEqual({ status: 401, code: 'invalid_credentials' })
  })
})
