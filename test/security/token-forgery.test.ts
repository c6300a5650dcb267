// Invariant: only an access token this server signed, with HS256, for this
// issuer and audience, of type at+jwt, unexpired, of a live session, opens
// an authenticated route. Everything else is the same 401.
import { afterAll, describe, expect, test } from 'bun:test'
import { SignJWT } from 'jose'
import { createTestApp, req } from '../helpers/app'
import { login, me, registerUser } from '../helpers/auth'

const ctx = await createTestApp()
afterAll(() => ctx.close())

const user = await registerUser(ctx)
const tokens = await login(ctx, user.username)
const [headerPart, payloadPart, signaturePart] = tokens.accessToken.split('.') as [string, string, string]
const claims = JSON.parse(Buffer.from(payloadPart, 'base64url').toString()) as Record<string, unknown>
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
const secret = new TextEncoder().encode(ctx.secrets.signingKeys.at(-1)!.secret)
const kid = (JSON.parse(Buffer.from(headerPart, 'base64url').toString()) as { kid: string }).kid

async function signed(overrides: Record<string, unknown>, header: Record<string, unknown> = {}, key = secret) {
  return new SignJWT({ ...claims, ...overrides }).setProtectedHeader({ alg: 'HS256', kid, typ: 'at+jwt', ...header }).sign(key)
}

async function expect401(token: string) {
  const res = await me(ctx, token)
  expect(res.status).toBe(401)
  expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unauthorized')
}

describe('forged access tokens', () => {
  test('the genuine token works (control)', async () => {
    expect((await me(ctx, tokens.accessToken)).status).toBe(200)
    expect((await me(ctx, await signed({}))).status).toBe(200)
  })

  test('alg: none is refused', async () => {
    await expect401(`${b64({ alg: 'none', typ: 'at+jwt' })}.${payloadPart}.`)
    await expect401(`${b64({ alg: 'none', typ: 'at+jwt' })}.${payloadPart}.${signaturePart}`)
  })

  test('a tampered payload is refused', async () => {
    await expect401(`${headerPart}.${b64({ ...claims, sub: 'usr_00000000000000000000000000000000' })}.${signaturePart}`)
    await expect401(`${headerPart}.${b64({ ...claims, exp: Number(claims.exp) + 86_400 })}.${signaturePart}`)
  })

  test('a token signed with another key is refused', async () => {
    await expect401(await signed({}, {}, new TextEncoder().encode('x'.repeat(48))))
  })

  test('another HMAC algorithm with the right key is refused', async () => {
    await expect401(await signed({}, { alg: 'HS512' }))
  })

  test('wrong audience, wrong issuer, wrong type are refused', async () => {
    await expect401(await signed({ aud: 'some-other-api' }))
    await expect401(await signed({ iss: 'someone-else' }))
    await expect401(await signed({}, { typ: 'JWT' }))
  })

  test('missing sub or sid, or a sid of no session, is refused', async () => {
    await expect401(await signed({ sid: undefined }))
    await expect401(await signed({ sub: undefined }))
    await expect401(await signed({ sid: 'ses_00000000000000000000000000000000' }))
  })

  test('a sub that does not own the session is refused', async () => {
    const other = await registerUser(ctx)
    await expect401(await signed({ sub: other.id }))
  })

  test('the header must be exactly the one the server emits: an extra header field or a re-encoded header is refused even with the right key', async () => {
    await expect401(await signed({}, { cty: 'x' }))
    // A kid no key of the keyring has, even with the right key.
    await expect401(await signed({}, { kid: 'k1' }))
    const respaced = Buffer.from(JSON.stringify({ typ: 'at+jwt', kid, alg: 'HS256' })).toString('base64url')
    const body = `${respaced}.${payloadPart}`
    const mac = new Bun.CryptoHasher('sha256', secret).update(body).digest('base64url')
    await expect401(`${body}.${mac}`)
  })

  test('a signature that decodes to the right bytes but is not in canonical base64url is refused', async () => {
    const variants = [`${signaturePart}=`, signaturePart.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')), `${signaturePart}.`]
    for (const signature of variants) await expect401(`${headerPart}.${payloadPart}.${signature}`)
  })

  test('expiry: valid up to the second before exp, refused at exp', async () => {
    const nowS = Math.floor(ctx.clock.now().getTime() / 1000)
    expect((await me(ctx, await signed({ exp: nowS + 1 }))).status).toBe(200)
    await expect401(await signed({ exp: nowS }))
    await expect401(await signed({ exp: String(nowS + 100) }))
  })

  test('an expired token is refused', async () => {
    await expect401(await signed({ exp: Math.floor(ctx.clock.now().getTime() / 1000) - 1 }))
  })

  test('malformed Authorization headers are refused', async () => {
    for (const authorization of ['Bearer', 'Bearer ', `Basic ${tokens.accessToken}`, tokens.accessToken, 'Bearer a.b', 'Bearer ...']) {
      const res = await ctx.handle(req('/api/v1/me', { headers: { authorization } }))
      expect(res.status).toBe(401)
    }
  })
})
