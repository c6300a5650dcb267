// Invariant: whatever a client or a browser sends to the OpenID Connect
// routes (junk tokens, JWT-shaped junk with any header and claims, huge or
// odd strings, junk states, codes and provider errors in the callback, junk
// redirects), the answer is a 4xx envelope or the route's redirect, never a
// 5xx, and nothing is logged at level error. (These routes are served only
// with a provider configured, which the every-route fuzz's world has not: this
// file is their fuzz.) Randomized: the seed is printed (ARENA_OIDC_FUZZ_SEED replays it).
import { afterAll, beforeEach, describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { createTestApp, postJson, req } from '../helpers/app'
import { chooseSeed } from '../helpers/seed'
import { startOidcProvider } from '../helpers/oidc-provider'

const SEED = chooseSeed('ARENA_OIDC_FUZZ_SEED', 'oidc fuzz')
const RUNS = 300
const fx = await startOidcProvider({ redirectUris: ['http://localhost/api/v1/auth/oidc/test/callback'] })
const ctx = await createTestApp({
  env: {
    ARENA_OIDC_PROVIDERS: JSON.stringify([{ name: 'test', issuer: fx.issuer, clientId: fx.clientId, clientSecret: fx.clientSecret }]),
    ARENA_OIDC_REDIRECTS: 'https://game.example/',
  },
})
afterAll(async () => {
  await ctx.close()
  await fx.close()
})
beforeEach(() => ctx.clock.set(new Date()))

const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url')
const odd = fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.string({ maxLength: 20_000 }), fc.constantFrom('', ' ', '..', 'a.b.c', '%00', '\u0000', 'null', '{}', '[]'))
const json = fc.oneof(fc.jsonValue(), fc.record({ alg: fc.constantFrom('RS256', 'none', 'HS256', 'ES256', 'EdDSA', 'XX'), kid: fc.oneof(odd, fc.constant(fx.key.kid)) }, { requiredKeys: [] }))
const claims = fc.record(
  { iss: fc.oneof(odd, fc.constant(fx.issuer)), aud: fc.oneof(odd, fc.constant(fx.clientId), fc.array(odd)), sub: fc.oneof(odd, fc.integer()), iat: fc.oneof(fc.integer(), fc.double(), odd), exp: fc.oneof(fc.integer(), odd), nonce: fc.oneof(odd, fc.integer()), azp: odd, email_verified: fc.jsonValue() },
  { requiredKeys: [] },
)
/** A JWT-shaped string: header and claims of any shape, a junk signature; or plain junk. */
const token = fc.oneof(fc.tuple(json, claims, odd).map(([h, c, s]) => `${b64(h)}.${b64(c)}.${b64(s)}`), odd)

async function holds(res: Response, what: string): Promise<void> {
  const status = res.status
  expect({ what, status: status >= 500 ? status : 'not 5xx' }).toEqual({ what, status: 'not 5xx' })
  if (status >= 400) {
    const body = (await res.json()) as { error: { code: string; status: number } }
    expect(body.error.status).toBe(status)
  } else if (status === 302) {
    expect(res.headers.get('location')).not.toBeNull()
  }
}

describe('the OpenID Connect routes under hostile input', () => {
  test('POST /user/login/oidc/{provider}: junk tokens, nonces and bodies', async () => {
    await fc.assert(
      fc.asyncProperty(token, fc.option(odd, { nil: undefined }), fc.option(fc.jsonValue(), { nil: undefined }), fc.constantFrom('test', 'nobody', 'TEST', '%2e%2e'), async (idToken, nonce, create, provider) => {
        const res = await ctx.handle(postJson(`/api/v1/user/login/oidc/${provider}`, { idToken, ...(nonce === undefined ? {} : { nonce }), ...(create === undefined ? {} : { create }) }))
        await holds(res, `login ${provider}`)
        expect(res.status).not.toBe(200)
      }),
      { seed: SEED, numRuns: RUNS },
    )
    expect(ctx.logs.filter((line) => line.level === 'error')).toEqual([])
  }, 120_000)

  test('GET start and callback, POST exchange: junk queries, states, codes and redirects', async () => {
    const query = fc.dictionary(fc.constantFrom('redirect', 'create', 'state', 'code', 'error', 'iss', 'error_description', 'x'), odd, { maxKeys: 5 })
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('start', 'callback'), query, odd, async (route, q, code) => {
        await holds(await ctx.handle(req(`/api/v1/auth/oidc/test/${route}?${new URLSearchParams(q)}`)), `${route} ${JSON.stringify(q).slice(0, 200)}`)
        await holds(await ctx.handle(postJson('/api/v1/user/login/exchange', { code })), 'exchange')
      }),
      { seed: SEED, numRuns: RUNS },
    )
    expect(ctx.logs.filter((line) => line.level === 'error')).toEqual([])
  }, 120_000)
})
