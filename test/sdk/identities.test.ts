// The SDK's sign-in beyond passwords (contract §13) against the real server:
// a guest signs in with a secret the SDK made (and again with it), links a
// password, lists and unlinks identities (never the last one), changes its
// profile and deletes itself without a password; a web sign-in's #error=
// becomes the ApiError of its code.
import { afterAll, describe, expect, test } from 'bun:test'
import { ApiError, type Tokens } from '@arena/sdk'
import { WEB_SIGN_IN_ERROR_STATUS } from '../../packages/sdk/src/auth'
import { ERROR_CODES } from '../../src/shared/errors'
import { createArenaApp } from '../helpers/arena'
import { PASSWORD, registerUser } from '../helpers/auth'
import { apiError, BASE_URL, sdkClient } from '../helpers/sdk'

const ctx = await createArenaApp({ ARENA_GUEST_CREATE_PER_HOUR: '1000' })
afterAll(() => ctx.close())

let counter = 0


async function guest() {
  const sdk = sdkClient(ctx)
  const result = await sdk.client.auth.loginAsGuest()
  return { ...sdk, ...result }
}

describe('auth.loginAsGuest', () => {
  test('without a secret: the SDK makes one (32 random bytes, base64url), creates the account and keeps its tokens; the secret signs in to it again', async () => {
    const tokens: (Tokens | null)[] = []
    const first = sdkClient(ctx, { onTokens: (t) => tokens.push(t) })
    const created = await first.client.auth.loginAsGuest()
    expect(created.deviceSecret).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(created.created).toBe(true)
    expect(created.user).toMatchObject({ email: null, identities: ['device'] })
    expect(first.client.auth.signedIn).toBe(true)
    expect(tokens).toHaveLength(1)
    expect(JSON.parse(first.sent[0]!.body!)).toEqual({ deviceSecret: created.deviceSecret, create: true })
    expect(first.sent[0]!.headers.get('authorization')).toBeNull()
    expect((await first.client.me()).id).toBe(created.user.id)

    // Another run of the game, with the secret it kept: the same account, not created again, and no create asked.
    const again = sdkClient(ctx)
    const signedIn = await again.client.auth.loginAsGuest({ deviceSecret: created.deviceSecret })
    expect(signedIn).toEqual({ user: created.user, created: false, deviceSecret: created.deviceSecret })
    expect(JSON.parse(again.sent[0]!.body!)).toEqual({ deviceSecret: created.deviceSecret })
    expect((await again.client.me()).id).toBe(created.user.id)
    // Its tokens rotate like a password login's.
    await again.client.auth.refresh()
    expect((await again.client.me()).id).toBe(created.user.id)
  })

  test('two secrets the SDK makes are never the same', async () => {
    const [a, b] = await Promise.all([guest(), guest()])
    expect(a.deviceSecret).not.toBe(b.deviceSecret)
    expect(a.user.id).not.toBe(b.user.id)
  })

  test('a secret no account has, without create: ApiError 401 invalid_credentials, and the client is not signed in', async () => {
    const { client } = sdkClient(ctx)
    const error = await apiError(client.auth.loginAsGuest({ deviceSecret: 'A'.repeat(22) + `${++counter}`.padStart(8, '0') }))
    expect({ status: error.status, code: error.code }).toEqual({ status: 401, code: 'invalid_credentials' })
    expect(client.auth.signedIn).toBe(false)
  })

  test('with a secret of its own and create: the account is made with that secret', async () => {
    const deviceSecret = `own_secret_${++counter}`.padEnd(30, 'x')
    const { client } = sdkClient(ctx)
    expect((await client.auth.loginAsGuest({ deviceSecret, create: true })).created).toBe(true)
    expect((await sdkClient(ctx).client.auth.loginAsGuest({ deviceSecret })).created).toBe(false)
  })

  test('a malformed secret is ApiError 422 validation_failed', async () => {
    const error = await apiError(sdkClient(ctx).client.auth.loginAsGuest({ deviceSecret: 'short', create: true }))
    expect({ status: error.status, code: error.code }).toEqual({ status: 422, code: 'validation_failed' })
  })
})

describe('identities: list, link, unlink', () => {
  test('a guest links a password: the list has both, in order; the password signs in to the same account', async () => {
    const { client, user } = await guest()
    const email = `sdk.upgrade.${++counter}@example.com`
    const username = `sdk_upgraded_${counter}`
    const linked = await client.identities.link('password', { email, password: PASSWORD, username })
    expect(linked.map((i) => i.provider)).toEqual(['device', 'password'])
    expect(linked[1]).toMatchObject({ provider: 'password', email })
    expect(await client.identities.list()).toEqual(linked)
    expect((await client.me()).identities).toEqual(['device', 'password'])

    const other = sdkClient(ctx).client
    expect((await other.auth.login(email, PASSWORD)).id).toBe(user.id)
  })

  test('unlink: the identities left; the last one is ApiError 409 last_identity and stays', async () => {
    const { client, deviceSecret } = await guest()
    await client.identities.link('password', { email: `sdk.unlink.${++counter}@example.com`, password: PASSWORD })
    expect((await client.identities.unlink('device')).map((i) => i.provider)).toEqual(['password'])
    // The device secret no longer signs in.
    const gone = await apiError(sdkClient(ctx).client.auth.loginAsGuest({ deviceSecret }))
    expect(gone.code).toBe('invalid_credentials')

    const last = await apiError(client.identities.unlink('password'))
    expect({ status: last.status, code: last.code }).toEqual({ status: 409, code: 'last_identity' })
    expect(last).toBeInstanceOf(ApiError)
    expect((await client.identities.list()).map((i) => i.provider)).toEqual(['password'])
  })

  test('a device identity links with its secret; one linked to another account is ApiError 409 identity_in_use', async () => {
    const player = await registerUser(ctx)
    const { client } = sdkClient(ctx)
    await client.auth.login(player.username, PASSWORD)
    const other = await guest()
    const inUse = await apiError(client.identities.link('device', { deviceSecret: other.deviceSecret }))
    expect({ status: inUse.status, code: inUse.code }).toEqual({ status: 409, code: 'identity_in_use' })

    const deviceSecret = `linked_device_${++counter}`.padEnd(32, 'z')
    expect((await client.identities.link('device', { deviceSecret })).map((i) => i.provider)).toEqual(['password', 'device'])
    expect((await sdkClient(ctx).client.auth.loginAsGuest({ deviceSecret })).user.id).toBe(player.id)
  })

  test('an OpenID Connect provider name goes into the path as is, and one the server does not have is ApiError 404', async () => {
    const { client, sent } = await guest()
    const error = await apiError(client.identities.link('oidc:nowhere', { idToken: 'x.y.z' }))
    expect({ status: error.status, code: error.code }).toEqual({ status: 404, code: 'not_found' })
    expect(sent.at(-1)!.path).toBe('/api/v1/me/identities/oidc%3Anowhere')
  })

  test('without a sign-in the identities calls send nothing', async () => {
    const { client, sent } = sdkClient(ctx)
    await expect(client.identities.list()).rejects.toThrow('Not signed in')
    expect(sent).toHaveLength(0)
  })
})

describe('updateProfile', () => {
  test('changes the username and the country (any case); a taken username is ApiError 409 username_taken', async () => {
    const { client, user } = await guest()
    const username = `sdk_renamed_${++counter}`
    const updated = await client.updateProfile({ username, country: 'fr' })
    expect(updated).toMatchObject({ id: user.id, username, country: 'FR' })
    expect(await client.me()).toEqual(updated)
    expect(await client.updateProfile({ country: 'DE' })).toMatchObject({ username, country: 'DE' })

    const taken = await registerUser(ctx)
    const error = await apiError(client.updateProfile({ username: taken.username }))
    expect({ status: error.status, code: error.code }).toEqual({ status: 409, code: 'username_taken' })
    const bad = await apiError(client.updateProfile({ country: 'QQ' }))
    expect({ status: bad.status, code: bad.code }).toEqual({ status: 422, code: 'validation_failed' })
    expect(await client.me()).toMatchObject({ username, country: 'DE' })
  })
})

describe('auth.deleteAccount', () => {
  test('a guest deletes its account without a password: the tokens are forgotten and the secret signs in no more', async () => {
    const { client, deviceSecret, sent } = await guest()
    const result = await client.auth.deleteAccount()
    expect(result.deleted).toBe(true)
    expect(JSON.parse(sent.at(-1)!.body!)).toEqual({})
    expect(client.auth.signedIn).toBe(false)
    const error = await apiError(sdkClient(ctx).client.auth.loginAsGuest({ deviceSecret }))
    expect(error.code).toBe('invalid_credentials')
  })

  test('an account with a password still needs it: none is ApiError 422 validation_failed, and nothing is deleted', async () => {
    const player = await registerUser(ctx)
    const { client } = sdkClient(ctx)
    await client.auth.login(player.username, PASSWORD)
    const error = await apiError(client.auth.deleteAccount())
    expect({ status: error.status, code: error.code }).toEqual({ status: 422, code: 'validation_failed' })
    expect((await client.me()).id).toBe(player.id)
    expect((await client.auth.deleteAccount(PASSWORD)).deleted).toBe(true)
  })
})

describe('web sign-in: beginWebLogin and the #error= of completeWebLogin', () => {
  test('beginWebLogin: the start URL on the client’s server, with the redirect and create', () => {
    const { client } = sdkClient(ctx)
    const url = new URL(client.auth.beginWebLogin('google', { redirect: 'https://game.example/back?x=1', create: true }))
    expect(url.origin + url.pathname).toBe(`${BASE_URL}/api/v1/auth/oidc/google/start`)
    expect(Object.fromEntries(url.searchParams)).toEqual({ redirect: 'https://game.example/back?x=1', create: '1' })
    // The identity's name works too; without create, none is asked.
    const plain = new URL(client.auth.beginWebLogin('oidc:google', { redirect: 'https://game.example/' }))
    expect(plain.pathname).toBe('/api/v1/auth/oidc/google/start')
    expect(plain.searchParams.has('create')).toBe(false)
  })

  test('an #error=<code> is the ApiError of that code, with its status, and nothing is sent', async () => {
    const { client, sent } = sdkClient(ctx)
    for (const [input, status, code] of [
      ['#error=account_exists', 409, 'account_exists'],
      ['https://game.example/back#error=access_denied', 400, 'access_denied'],
      ['error=invalid_credentials', 401, 'invalid_credentials'],
      ['#error=rate_limited', 429, 'rate_limited'],
      ['#error=something_new', 400, 'something_new'],
    ] as const) {
      const error = await apiError(client.auth.completeWebLogin(input))
      expect({ input, status: error.status, code: error.code }).toEqual({ input, status, code })
    }
    await expect(client.auth.completeWebLogin('')).rejects.toThrow(TypeError)
    await expect(client.auth.completeWebLogin('#state=abc')).rejects.toThrow(TypeError)
    expect(sent).toHaveLength(0)
    expect(client.auth.signedIn).toBe(false)
  })

  test('the statuses the SDK gives a web sign-in error code are the server’s', () => {
    for (const [code, status] of Object.entries(WEB_SIGN_IN_ERROR_STATUS)) expect({ code, status }).toEqual({ code, status: ERROR_CODES[code as keyof typeof ERROR_CODES] })
  })
})
