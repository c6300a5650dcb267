// The OpenID Connect web flow (contract §13): GET /auth/oidc/{provider}/start
// → the provider's real authorization endpoint (a real oidc-provider on
// loopback, its login and consent forms driven over HTTP with cookies) → GET
// /auth/oidc/{provider}/callback → the game's redirect with #code=… → POST
// /user/login/exchange, once, within 60 s.
import { afterAll, beforeEach, describe, expect, test } from 'bun:test'
import { createTestApp, postJson, req } from '../helpers/app'
import { startOidcProvider } from '../helpers/oidc-provider'
import { housekeeping } from '../../src/modules/events/housekeeping'
import { sha256Hex } from '../../src/shared/crypto'

const CALLBACK = 'http://localhost/api/v1/auth/oidc/test/callback'
const fx = await startOidcProvider({ redirectUris: [CALLBACK] })
const gone = await startOidcProvider({ redirectUris: ['http://localhost/api/v1/auth/oidc/gone/callback'] })
gone.setDown(true)
const ctx = await createTestApp({
  env: {
    ARENA_OIDC_PROVIDERS: JSON.stringify([
      { name: 'test', issuer: fx.issuer, clientId: fx.clientId, clientSecret: fx.clientSecret },
      { name: 'gone', issuer: gone.issuer, clientId: gone.clientId },
    ]),
    ARENA_OIDC_REDIRECTS: 'https://game.example/,mygame://signin',
  },
})
afterAll(async () => {
  await ctx.close()
  await fx.close()
  await gone.close()
})
beforeEach(() => ctx.clock.set(new Date()))
const { oidcLoginFlows, loginExchangeCodes } = ctx.peek.tables

let counter = 0
const account = (label: string) => `${label}-${++counter}-${Math.floor(Math.random() * 1e9)}`

async function start(query: Record<string, string>, provider = 'test'): Promise<Response> {
  return ctx.handle(req(`/api/v1/auth/oidc/${provider}/start?${new URLSearchParams(query)}`))
}

/** Start → the provider (signed in as `who`, consent given) → the callback: arena's answer to the callback. */
async function signInThroughProvider(who: string, query: Record<string, string> = { redirect: 'https://game.example/back', create: '1' }): Promise<{ callback: URL; answer: Response }> {
  const started = await start(query)
  expect(started.status).toBe(302)
  const callback = await fx.authorize(started.headers.get('location')!, who)
  expect(callback.href.startsWith(`${CALLBACK}?`)).toBe(true)
  return { callback, answer: await ctx.handle(new Request(callback.href)) }
}

function fragment(location: string): URLSearchParams {
  return new URLSearchParams(location.slice(location.indexOf('#') + 1))
}

function exchange(code: string) {
  return ctx.handle(postJson('/api/v1/user/login/exchange', { code }))
}

async function codeOf(res: Response): Promise<string> {
  expect(res.status).toBe(302)
  const location = res.headers.get('location')!
  expect(location.startsWith('https://game.example/back#code=')).toBe(true)
  return fragment(location).get('code')!
}

describe('the web flow', () => {
  test('start redirects to the provider with PKCE S256, state, nonce and the callback; only the state\'s hash is stored', async () => {
    const res = await start({ redirect: 'https://game.example/back?level=3', create: '1' })
    expect(res.status).toBe(302)
    expect(res.headers.get('cache-control')).toBe('no-store')
    const to = new URL(res.headers.get('location')!)
    expect(`${to.origin}${to.pathname}`).toBe(`${fx.issuer}/auth`)
    const q = to.searchParams
    expect(Object.fromEntries(q)).toMatchObject({ client_id: fx.clientId, redirect_uri: CALLBACK, response_type: 'code', scope: 'openid email profile', code_challenge_method: 'S256' })
    expect(q.get('state')).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(q.get('nonce')).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(q.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const rows = await ctx.peek.db.select().from(oidcLoginFlows)
    const row = rows.find((r) => r.stateHash === sha256Hex(q.get('state')!))
    expect(row).toMatchObject({ provider: 'test', redirect: 'https://game.example/back?level=3', create: true, purpose: 'login' })
    expect(row!.expiresAt.getTime() - row!.createdAt.getTime()).toBe(600_000)
    // Neither the state, nor the nonce, is kept anywhere in the table.
    expect(JSON.stringify(rows)).not.toContain(q.get('state'))
    expect(JSON.stringify(rows)).not.toContain(q.get('nonce'))
  })

  test('end to end through the provider\'s authorization endpoint: the code in the fragment works once', async () => {
    const who = account('carol')
    const { answer } = await signInThroughProvider(who)
    expect(answer.headers.get('referrer-policy')).toBe('no-referrer')
    const code = await codeOf(answer)
    // Only its hash is stored; the flow is gone.
    expect((await ctx.peek.db.select().from(loginExchangeCodes)).map((r) => r.codeHash)).toContain(sha256Hex(code))
    const first = await exchange(code)
    expect(first.status).toBe(200)
    const tokens = (await first.json()) as { created: boolean; accessToken: string; user: { id: string; identities: string[] } }
    expect(tokens.created).toBe(true)
    expect(tokens.user.identities).toEqual(['oidc:test'])
    const again = await exchange(code)
    expect(again.status).toBe(401)
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe('invalid_credentials')
    // No secret of the flow reaches the log: not the one-time code, nor the provider's code or the state of the callback's URL.
    expect(ctx.logText()).not.toContain(code)

    // The same player again (a new flow): the same account, not created.
    const second = await exchange(await codeOf((await signInThroughProvider(who)).answer))
    expect(await second.json()).toMatchObject({ created: false, user: { id: tokens.user.id } })
  })

  test('two exchanges of one code at once: exactly one gets tokens; two callbacks of one state: exactly one redirect', async () => {
    const code = await codeOf((await signInThroughProvider(account('race'))).answer)
    const statuses = (await Promise.all([exchange(code), exchange(code), exchange(code)])).map((r) => r.status).sort()
    expect(statuses).toEqual([200, 401, 401])

    const started = await start({ redirect: 'https://game.example/back', create: '1' })
    const callback = await fx.authorize(started.headers.get('location')!, account('race-state'))
    const answers = (await Promise.all([0, 1, 2].map(() => ctx.handle(new Request(callback.href))))).map((r) => r.status).sort()
    expect(answers).toEqual([302, 400, 400])
  })

  test('a code is good for 60 seconds', async () => {
    const code = await codeOf((await signInThroughProvider(account('slow'))).answer)
    ctx.clock.advance(61_000)
    expect((await exchange(code)).status).toBe(401)
    expect((await exchange('not-a-code')).status).toBe(401)
  })

  test('a state works once: the callback sent again is 400, with no redirect', async () => {
    const { callback, answer } = await signInThroughProvider(account('replay'))
    expect(answer.status).toBe(302)
    expect(ctx.logText()).not.toContain(callback.searchParams.get('state')!)
    expect(ctx.logText()).not.toContain(callback.searchParams.get('code')!)
    const replay = await ctx.handle(new Request(callback.href))
    expect(replay.status).toBe(400)
    expect(replay.headers.get('location')).toBeNull()
    expect(((await replay.json()) as { error: { code: string } }).error.code).toBe('bad_request')
    // A made-up state, and none at all, the same.
    expect((await ctx.handle(req('/api/v1/auth/oidc/test/callback?code=x&state=made-up'))).status).toBe(400)
    expect((await ctx.handle(req('/api/v1/auth/oidc/test/callback?code=x'))).status).toBe(400)
  })

  test('a flow expires after 10 minutes', async () => {
    const started = await start({ redirect: 'https://game.example/back', create: '1' })
    const callback = await fx.authorize(started.headers.get('location')!, account('late'))
    ctx.clock.advance(601_000)
    expect((await ctx.handle(new Request(callback.href))).status).toBe(400)
  })

  test('the player cancels at the provider: back to the redirect with #error=access_denied', async () => {
    const started = await start({ redirect: 'https://game.example/back', create: '1' })
    const callback = await fx.authorizeAndCancel(started.headers.get('location')!)
    expect(callback.searchParams.get('error')).toBe('access_denied')
    const answer = await ctx.handle(new Request(callback.href))
    expect(answer.status).toBe(302)
    expect(answer.headers.get('location')).toBe('https://game.example/back#error=access_denied')
  })

  test('without create, a player the server does not know comes back with #error=invalid_credentials', async () => {
    const { answer } = await signInThroughProvider(account('unknown'), { redirect: 'mygame://signin/done' })
    expect(answer.status).toBe(302)
    expect(answer.headers.get('location')).toBe('mygame://signin/done#error=invalid_credentials')
  })

  test('a redirect that is not allowed is 422 and stores nothing; an unknown provider 404; a provider that is down 503', async () => {
    const before = (await ctx.peek.db.select().from(oidcLoginFlows)).length
    for (const redirect of ['https://evil.example/', 'https://game.example.evil.net/', 'https://game.example/back#x', 'javascript:alert(1)']) {
      const res = await start({ redirect, create: '1' })
      expect({ redirect, status: res.status, location: res.headers.get('location') }).toEqual({ redirect, status: 422, location: null })
      const body = (await res.json()) as { error: { code: string; details: { path: string }[] } }
      expect(body.error.code).toBe('validation_failed')
      expect(body.error.details[0]!.path).toBe('query/redirect')
    }
    expect((await start({ create: '1' })).status).toBe(422)
    expect((await ctx.peek.db.select().from(oidcLoginFlows)).length).toBe(before)
    expect((await start({ redirect: 'https://game.example/' }, 'nobody')).status).toBe(404)
    const down = await start({ redirect: 'https://game.example/' }, 'gone')
    expect(down.status).toBe(503)
    expect(down.headers.get('retry-after')).toBe('30')
  })

  test('past its 6 hours the discovery document is asked for again; while the provider does not answer, the old one serves', async () => {
    const discovery = () => fx.hits.get('/.well-known/openid-configuration') ?? 0
    expect((await start({ redirect: 'https://game.example/' })).status).toBe(302)
    const before = discovery()
    ctx.clock.advance(5 * 3_600_000)
    expect((await start({ redirect: 'https://game.example/' })).status).toBe(302)
    expect(discovery()).toBe(before)
    ctx.clock.advance(2 * 3_600_000)
    expect((await start({ redirect: 'https://game.example/' })).status).toBe(302)
    expect(discovery()).toBe(before + 1)
    ctx.clock.advance(7 * 3_600_000)
    fx.setDown(true)
    try {
      const res = await start({ redirect: 'https://game.example/' })
      expect(res.status).toBe(302)
      expect(res.headers.get('location')!.startsWith(`${fx.issuer}/auth?`)).toBe(true)
    } finally {
      fx.setDown(false)
    }
  })

  test('the device page\'s flow comes back with the code in the query, redeemed once by the page', async () => {
    const location = await ctx.services.oidc.startFlow('test', { purpose: 'device', redirect: '/device?step=signin', create: true, origin: 'http://localhost' })
    const callback = await fx.authorize(location, account('couch'))
    const answer = await ctx.handle(new Request(callback.href))
    expect(answer.status).toBe(302)
    const back = new URL(answer.headers.get('location')!, 'http://localhost')
    expect(back.pathname).toBe('/device')
    expect(back.searchParams.get('step')).toBe('signin')
    const code = back.searchParams.get('signin')!
    const { userId, created } = await ctx.services.oidc.redeemExchange(code)
    expect(userId).toMatch(/^usr_/)
    expect(created).toBe(true)
    await expect(ctx.services.oidc.redeemExchange(code)).rejects.toMatchObject({ code: 'invalid_credentials' })
  })
})

describe('housekeeping', () => {
  // The invariant: every flow and every exchange code has an end, even when nobody comes back for it.
  test('deletes flows past their 10 minutes and codes past their 60 s, and nothing younger', async () => {
    // What earlier tests left, gone first.
    ctx.clock.advance(2 * 86_400_000)
    await housekeeping(ctx.storage, ctx.clock, 30)
    ctx.clock.set(new Date())
    const code = await codeOf((await signInThroughProvider(account('tidy'))).answer)
    await start({ redirect: 'https://game.example/back' })
    ctx.clock.advance(30_000)
    expect(await housekeeping(ctx.storage, ctx.clock, 30)).toMatchObject({ oidcFlows: 0, exchangeCodes: 0 })
    ctx.clock.advance(31_000)
    expect(await housekeeping(ctx.storage, ctx.clock, 30)).toMatchObject({ oidcFlows: 0, exchangeCodes: 1 })
    expect((await exchange(code)).status).toBe(401)
    ctx.clock.advance(540_000)
    expect(await housekeeping(ctx.storage, ctx.clock, 30)).toMatchObject({ oidcFlows: 1, exchangeCodes: 0 })
    expect(await ctx.peek.db.select().from(oidcLoginFlows)).toEqual([])
    expect(await ctx.peek.db.select().from(loginExchangeCodes)).toEqual([])
  })
})
