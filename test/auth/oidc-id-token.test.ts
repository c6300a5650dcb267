// POST /api/v1/user/login/oidc/{provider} (contract §13): a native app's ID
// token, checked against a real OpenID provider on loopback (its discovery
// document and key set). Tokens are signed with the keys the provider was
// configured with, so the test can sign the wrong ones too.
import { afterAll, beforeEach, describe, expect, test } from 'bun:test'
import { generateKeyPair, SignJWT } from 'jose'
import { createTestApp, postJson } from '../helpers/app'
import { bearer, registerUser } from '../helpers/auth'
import { newDeviceSecret } from '../../src/modules/auth/identities'
import { startOidcProvider } from '../helpers/oidc-provider'

const fx = await startOidcProvider({ redirectUris: ['http://localhost/api/v1/auth/oidc/test/callback'] })
// A second provider that is down from the start (arena never reached it), and a third that accepts requests and never answers.
const gone = await startOidcProvider({ redirectUris: ['http://localhost/api/v1/auth/oidc/gone/callback'] })
gone.setDown(true)
const stuck = await startOidcProvider({ redirectUris: ['http://localhost/api/v1/auth/oidc/stuck/callback'] })
stuck.setHanging(true)
const ctx = await createTestApp({
  env: {
    ARENA_OIDC_PROVIDERS: JSON.stringify([
      { name: 'test', issuer: fx.issuer, clientId: fx.clientId, clientSecret: fx.clientSecret, nativeClientIds: ['com.example.game'] },
      { name: 'gone', issuer: gone.issuer, clientId: gone.clientId },
      { name: 'stuck', issuer: stuck.issuer, clientId: stuck.clientId },
    ]),
  },
})
afterAll(async () => {
  await ctx.close()
  await fx.close()
  await gone.close()
  stuck.setHanging(false)
  await stuck.close()
})
// The provider signs by the real clock; arena's follows it from here.
beforeEach(() => ctx.clock.set(new Date()))

let counter = 0
const subject = (label: string) => `${label}-${++counter}-${Math.floor(Math.random() * 1e9)}`
const now = () => Math.floor(ctx.clock.now().getTime() / 1000)

function signIn(idToken: string, extra: Record<string, unknown> = {}, provider = 'test') {
  return ctx.handle(postJson(`/api/v1/user/login/oidc/${provider}`, { idToken, ...extra }))
}

async function refused(res: Response): Promise<void> {
  expect(res.status).toBe(401)
  const body = (await res.json()) as { error: { code: string; message: string } }
  expect(body.error.code).toBe('invalid_credentials')
  // The same words whatever was wrong, and as for a good token whose identity has no account: nothing that helps a forger.
  expect(body.error.message).toBe('Unknown identity, or the credential is not valid')
}

describe('ID-token sign-in', () => {
  test('create makes an account once; the same identity signs in again without create; an unknown one without create is 401', async () => {
    const sub = subject('alice')
    const first = await signIn(await fx.mint(sub), { create: true })
    expect(first.status).toBe(200)
    const created = (await first.json()) as { created: boolean; user: { id: string; email: string | null; username: string; identities: string[] }; accessToken: string; tokenType: string }
    expect(created.created).toBe(true)
    expect(created.tokenType).toBe('Bearer')
    // The provider's address is never the account's email: an account without a password identity has none.
    expect(created.user.email).toBeNull()
    expect(created.user.username).toMatch(/^player_[0-9a-z]{8}$/)
    expect(created.user.identities).toEqual([`oidc:test`])

    const again = await signIn(await fx.mint(sub), { create: true })
    expect(again.status).toBe(200)
    expect(await again.json()).toMatchObject({ created: false, user: { id: created.user.id } })
    const plain = await signIn(await fx.mint(sub))
    expect(await plain.json()).toMatchObject({ created: false, user: { id: created.user.id } })

    await refused(await signIn(await fx.mint(subject('stranger'))))
  })

  test('a token signed by a key that is not the provider\'s (same kid) is 401', async () => {
    const { privateKey } = await generateKeyPair('RS256')
    const forged = await new SignJWT({ email_verified: true })
      .setProtectedHeader({ alg: 'RS256', kid: fx.key.kid })
      .setIssuer(fx.issuer)
      .setAudience(fx.clientId)
      .setSubject(subject('forged'))
      .setIssuedAt(now())
      .setExpirationTime(now() + 600)
      .sign(privateKey)
    await refused(await signIn(forged, { create: true }))
    // A real token with its signature swapped for another's.
    const real = (await fx.mint(subject('real'))).split('.')
    const other = (await fx.mint(subject('other'))).split('.')
    await refused(await signIn(`${real[0]}.${real[1]}.${other[2]}`, { create: true }))
  })

  test('unsigned (alg none) and HMAC tokens are 401, whatever their claims', async () => {
    const claims = { iss: fx.issuer, aud: fx.clientId, sub: subject('none'), iat: now(), exp: now() + 600 }
    const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
    await refused(await signIn(`${b64({ alg: 'none', kid: fx.key.kid })}.${b64(claims)}.`, { create: true }))
    // HS256 keyed with the provider's public key as the secret (the classic confusion).
    const { kty, n, e } = fx.key.privateJwk
    const hmac = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid: fx.key.kid }).sign(new TextEncoder().encode(JSON.stringify({ kty, n, e })))
    await refused(await signIn(hmac, { create: true }))
  })

  test('expired, issued in the future, for another audience, from another issuer: 401', async () => {
    await refused(await signIn(await fx.mint(subject('expired'), { iat: now() - 3600, exp: now() - 120 }), { create: true }))
    await refused(await signIn(await fx.mint(subject('future'), { iat: now() + 600, exp: now() + 1200 }), { create: true }))
    await refused(await signIn(await fx.mint(subject('aud'), { aud: 'another-client' }), { create: true }))
    await refused(await signIn(await fx.mint(subject('iss'), { iss: 'http://127.0.0.1:1/other' }), { create: true }))
    // Several audiences: only with azp naming this client.
    await refused(await signIn(await fx.mint(subject('multi'), { aud: [fx.clientId, 'another-client'] }), { create: true }))
    await refused(await signIn(await fx.mint(subject('azp'), { aud: [fx.clientId, 'another-client'], azp: 'another-client' }), { create: true }))
    // One audience, ours, issued to another client of the studio's (Google's Android client asking for the server's client id): accepted.
    expect((await signIn(await fx.mint(subject('android'), { azp: 'android-client' }), { create: true })).status).toBe(200)
    const withAzp = await signIn(await fx.mint(subject('azp-ok'), { aud: [fx.clientId, 'another-client'], azp: fx.clientId }), { create: true })
    expect(withAzp.status).toBe(200)
    // A native app's own client id, configured beside the web flow's (Apple's bundle ID beside its Services ID).
    expect((await signIn(await fx.mint(subject('ios'), { aud: 'com.example.game' }), { create: true })).status).toBe(200)
    // Within the skew a provider's clock may be a little ahead.
    const ahead = await signIn(await fx.mint(subject('skew'), { iat: now() + 30 }), { create: true })
    expect(ahead.status).toBe(200)
  })

  test('the nonce, when the app gives one, must be the token\'s', async () => {
    const sub = subject('nonce')
    await refused(await signIn(await fx.mint(sub, { nonce: 'n-1' }), { nonce: 'n-2', create: true }))
    await refused(await signIn(await fx.mint(sub), { nonce: 'n-1', create: true }))
    const right = await signIn(await fx.mint(sub, { nonce: 'n-1' }), { nonce: 'n-1', create: true })
    expect(right.status).toBe(200)
  })

  test('a verified address of an existing account does not sign in or link: 409 account_exists, no account made', async () => {
    const owner = await registerUser(ctx)
    const res = await signIn(await fx.mint(subject('taker'), { email: owner.email, email_verified: true }), { create: true })
    expect(res.status).toBe(409)
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('account_exists')
  })

  test('an unknown provider is 404; a malformed body 422', async () => {
    const res = await signIn(await fx.mint(subject('x')), {}, 'nobody')
    expect(res.status).toBe(404)
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('not_found')
    const bad = await ctx.handle(postJson('/api/v1/user/login/oidc/test', { idToken: '' }))
    expect(bad.status).toBe(422)
  })

  test('a provider that does not answer is 503 with Retry-After, not 500 or 401', async () => {
    const res = await signIn(await gone.mint(subject('down')), { create: true }, 'gone')
    expect(res.status).toBe(503)
    expect(res.headers.get('retry-after')).toBe('30')
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('service_unavailable')
  })

  test('a provider that accepts the request and never answers is 503 after the 5 s timeout', async () => {
    const began = performance.now()
    const res = await signIn(await stuck.mint(subject('stuck')), { create: true }, 'stuck')
    expect(res.status).toBe(503)
    expect(performance.now() - began).toBeLessThan(15_000)
  }, 20_000)
})

describe('with the identities of an account', () => {
  test('two first sign-ins with one new identity at once make one account', async () => {
    const sub = subject('twice')
    const [a, b] = await Promise.all([signIn(await fx.mint(sub), { create: true }), signIn(await fx.mint(sub), { create: true })])
    expect([a.status, b.status]).toEqual([200, 200])
    const [first, second] = (await Promise.all([a.json(), b.json()])) as { created: boolean; user: { id: string } }[]
    expect(first!.user.id).toBe(second!.user.id)
    expect([first!.created, second!.created].sort()).toEqual([false, true])
  })

  test('a guest links its provider identity with an ID token and then signs in with it; the identity cannot go to a second account', async () => {
    const guest = await ctx.handle(postJson('/api/v1/user/login/device', { deviceSecret: newDeviceSecret(), create: true }))
    const { accessToken, user } = (await guest.json()) as { accessToken: string; user: { id: string } }
    const sub = subject('linked')
    const link = await ctx.handle(postJson('/api/v1/me/identities/oidc:test', { idToken: await fx.mint(sub) }, bearer(accessToken)))
    expect(link.status).toBe(200)
    expect(((await link.json()) as { identities: { provider: string; subject?: string }[] }).identities).toContainEqual(expect.objectContaining({ provider: 'oidc:test', subject: sub }))
    const back = await signIn(await fx.mint(sub))
    expect(await back.json()).toMatchObject({ created: false, user: { id: user.id, identities: ['device', 'oidc:test'] } })

    // A forged token links nothing (the same checks as the sign-in), and another account cannot take the identity.
    const other = (await (await ctx.handle(postJson('/api/v1/user/login/device', { deviceSecret: newDeviceSecret(), create: true }))).json()) as { accessToken: string }
    const forged = (await fx.mint(subject('forged-link'))).slice(0, -4) + 'AAAA'
    expect((await ctx.handle(postJson('/api/v1/me/identities/oidc:test', { idToken: forged }, bearer(other.accessToken)))).status).toBe(401)
    const taken = await ctx.handle(postJson('/api/v1/me/identities/oidc:test', { idToken: await fx.mint(sub) }, bearer(other.accessToken)))
    expect(taken.status).toBe(409)
    expect(((await taken.json()) as { error: { code: string } }).error.code).toBe('identity_in_use')
    expect((await ctx.handle(postJson('/api/v1/me/identities/oidc:nobody', { idToken: await fx.mint(sub) }, bearer(other.accessToken)))).status).toBe(404)
  })
})

describe('the provider\'s keys', () => {
  // The invariant: arena asks the provider for its key set at most once a
  // minute (by its clock), however many tokens with unknown kids arrive; a
  // key the provider rotated in is accepted once that minute has passed.
  test('a rotated key is fetched when a token names it; two unknown kids within a minute fetch once', async () => {
    const jwks = () => fx.hits.get('/jwks') ?? 0
    const sub = subject('rotation')
    expect((await signIn(await fx.mint(sub), { create: true })).status).toBe(200)
    const afterFirst = jwks()
    expect(afterFirst).toBeGreaterThanOrEqual(1)
    // Known kid: no request.
    expect((await signIn(await fx.mint(sub))).status).toBe(200)
    expect(jwks()).toBe(afterFirst)

    // The provider rotates; a minute later a token with the new kid fetches the set once and passes.
    const second = await fx.rotateKeys()
    ctx.clock.advance(61_000)
    expect((await signIn(await fx.mint(sub, { iat: now() }, { key: second })))).toHaveProperty('status', 200)
    expect(jwks()).toBe(afterFirst + 1)

    // It rotates again at once: within the minute, neither its new kid nor a made-up one fetches anything.
    const third = await fx.rotateKeys()
    ctx.clock.advance(1_000)
    await refused(await signIn(await fx.mint(sub, { iat: now() }, { key: third })))
    const { privateKey } = await generateKeyPair('RS256')
    const madeUp = await new SignJWT({}).setProtectedHeader({ alg: 'RS256', kid: 'made-up' }).setIssuer(fx.issuer).setAudience(fx.clientId).setSubject(sub).setIssuedAt(now()).setExpirationTime(now() + 600).sign(privateKey)
    await refused(await signIn(madeUp))
    expect(jwks()).toBe(afterFirst + 1)

    // Once the floor has passed, the third key is fetched and accepted.
    ctx.clock.advance(60_000)
    expect((await signIn(await fx.mint(sub, { iat: now() }, { key: third }))).status).toBe(200)
    expect(jwks()).toBe(afterFirst + 2)
  })

  test('past its 6 hours the discovery document is asked for again, when the keys are', async () => {
    const sub = subject('stale')
    expect((await signIn(await fx.mint(sub, { iat: now(), exp: now() + 600 }), { create: true })).status).toBe(200)
    const discovery = () => fx.hits.get('/.well-known/openid-configuration') ?? 0
    const jwks = () => fx.hits.get('/jwks') ?? 0
    const before = { discovery: discovery(), jwks: jwks() }
    ctx.clock.advance(7 * 3_600_000)
    // Cached keys need no document.
    expect((await signIn(await fx.mint(sub, { iat: now(), exp: now() + 600 }))).status).toBe(200)
    expect([discovery(), jwks()]).toEqual([before.discovery, before.jwks])
    const rotated = await fx.rotateKeys()
    expect((await signIn(await fx.mint(sub, { iat: now(), exp: now() + 600 }, { key: rotated }))).status).toBe(200)
    expect([discovery(), jwks()]).toEqual([before.discovery + 1, before.jwks + 1])
  })
})
