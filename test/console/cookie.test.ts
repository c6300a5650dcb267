// The session cookie's attributes by environment: Secure with
// ARENA_ENV=production (the console is served over HTTPS there), not
// elsewhere (http://127.0.0.1 works locally); HttpOnly, SameSite=Strict,
// Path=/console and the session's lifetime always; and signing out clears it.
import { afterEach, expect, test } from 'bun:test'
import { createTestApp, type TestApp } from '../helpers/app'
import { cliActor, OPERATOR_PASSWORD } from '../helpers/operators'

let ctx: TestApp | undefined
afterEach(async () => {
  await ctx?.close()
  ctx = undefined
})

async function signInCookie(app: TestApp): Promise<string> {
  const { password } = await app.services.operators.create({ name: 'cookie-admin', role: 'admin' }, cliActor(app))
  const form = new URLSearchParams({ name: 'cookie-admin', password, newPassword: OPERATOR_PASSWORD })
  const res = await app.handle(new Request('http://localhost/console/login', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() }))
  expect(res.status).toBe(303)
  const [session, device] = res.headers.getSetCookie()
  // The device cookie (docs/decisions.md, "Known sign-in places"): the same attributes, for the sign-in form only, kept 60 days.
  expect(device).toMatch(new RegExp(`^arena_device=[A-Za-z0-9_-]{43}; Path=/console/login; Max-Age=5184000; HttpOnly; SameSite=Strict${app.config.env === 'production' ? '; Secure' : ''}$`))
  return session!
}

test('production: the cookie is Secure, HttpOnly, SameSite=Strict, under /console, for the session lifetime', async () => {
  ctx = await createTestApp({
    env: { ARENA_ENV: 'production', ARENA_JWT_SECRET: 'a-production-signing-secret-of-at-least-32-chars', ARENA_LOG_LEVEL: 'info', ARENA_ACCEPT_SINGLE_VOLUME_CUSTODY: 'true', ARENA_OPERATOR_SESSION_TTL_S: '3600' },
  })
  const cookie = await signInCookie(ctx)
  expect(cookie).toMatch(/^arena_console=[A-Za-z0-9_-]{16,128}; Path=\/console; Max-Age=3600; HttpOnly; SameSite=Strict; Secure$/)
  const token = cookie.split(';')[0]!
  const out = await ctx.handle(
    new Request('http://localhost/console/logout', {
      method: 'POST',
      headers: { cookie: token, 'content-type': 'application/x-www-form-urlencoded' },
      body: `_csrf=${ctx.services.operatorSessions.csrfFor(token.slice('arena_console='.length))}`,
    }),
  )
  expect(out.status).toBe(303)
  expect(out.headers.get('set-cookie')).toBe('arena_console=; Path=/console; Max-Age=0; HttpOnly; SameSite=Strict; Secure')
})

test('elsewhere: the same cookie without Secure', async () => {
  ctx = await createTestApp()
  const cookie = await signInCookie(ctx)
  expect(cookie).toMatch(/^arena_console=[A-Za-z0-9_-]{16,128}; Path=\/console; Max-Age=28800; HttpOnly; SameSite=Strict$/)
})

test('behind a proxy that rewrites Host (ARENA_TRUST_PROXY), the Origin check compares with X-Forwarded-Host; without trust, that header counts for nothing', async () => {
  for (const trust of [true, false]) {
    ctx = await createTestApp({ env: { ARENA_TRUST_PROXY: String(trust) } })
    const { password } = await ctx.services.operators.create({ name: 'proxied', role: 'admin' }, cliActor(ctx))
    const form = new URLSearchParams({ name: 'proxied', password, newPassword: OPERATOR_PASSWORD }).toString()
    const headers = { 'content-type': 'application/x-www-form-urlencoded', host: '10.0.0.5:8080', origin: 'https://console.example.com', 'x-forwarded-host': 'console.example.com' }
    const res = await ctx.handle(new Request('http://10.0.0.5:8080/console/login', { method: 'POST', headers, body: form }))
    expect({ trust, status: res.status }).toEqual({ trust, status: trust ? 303 : 403 })
    await ctx.close()
    ctx = undefined
  }
})

test('/console/assets serves its own files only: constructor or __proto__ is 404, not an empty 200', async () => {
  ctx = await createTestApp()
  for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
    const res = await ctx.handle(new Request(`http://localhost/console/assets/${name}`))
    expect({ name, status: res.status }).toEqual({ name, status: 404 })
  }
  expect((await ctx.handle(new Request('http://localhost/console/assets/console.css'))).status).toBe(200)
})

test('signing in again from the same browser ends the session its cookie held', async () => {
  ctx = await createTestApp()
  const first = (await signInCookie(ctx)).split(';')[0]!
  const again = await ctx.handle(
    new Request('http://localhost/console/login', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: first },
      body: new URLSearchParams({ name: 'cookie-admin', password: OPERATOR_PASSWORD }).toString(),
    }),
  )
  expect(again.status).toBe(303)
  const second = again.headers.get('set-cookie')!.split(';')[0]!
  const page = (cookie: string) => ctx!.handle(new Request('http://localhost/console', { headers: { cookie } }))
  expect((await page(second)).status).toBe(200)
  const old = await page(first)
  expect({ status: old.status, location: old.headers.get('location') }).toEqual({ status: 303, location: '/console/login?next=%2Fconsole' })
})

test('outside production, a console reached over HTTPS still gets a Secure cookie: by its URL, or by X-Forwarded-Proto behind a trusted proxy (and only then)', async () => {
  for (const [trust, url, proto, secure] of [
    [false, 'https://console.example.com', undefined, true],
    [true, 'http://10.0.0.5:8080', 'https', true],
    [false, 'http://10.0.0.5:8080', 'https', false],
  ] as const) {
    ctx = await createTestApp({ env: { ARENA_TRUST_PROXY: String(trust) } })
    const { password } = await ctx.services.operators.create({ name: 'over-tls', role: 'admin' }, cliActor(ctx))
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', ...(proto ? { 'x-forwarded-proto': proto } : {}) }
    const res = await ctx.handle(new Request(`${url}/console/login`, { method: 'POST', headers, body: new URLSearchParams({ name: 'over-tls', password, newPassword: OPERATOR_PASSWORD }).toString() }))
    expect(res.status).toBe(303)
    expect({ trust, url, secure: res.headers.get('set-cookie')!.endsWith('; Secure') }).toEqual({ trust, url, secure })
    await ctx.close()
    ctx = undefined
  }
})
