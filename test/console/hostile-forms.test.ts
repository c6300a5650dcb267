// Invariant: whatever is sent to a console route (any field of its form or
// query with any text, fields missing or extra, junk ids in the path, bodies
// that are not forms, a missing, wrong or foreign CSRF token, Origin or
// cookie), the answer is never a 5xx: an HTML page (an error page with its
// 4xx status) or a 303 to a console path, with an x-request-id, and nothing
// reaches the log at level error. After each route's run both hash chains
// still verify. test/fuzz/every-route.test.ts fuzzes the console's routes
// too, in worlds with sessions of every role and known-good and known-refused
// requests per route; this one is the console's own quick pass (one admin
// session, every route reaching its services), kept beside it for its cases
// of `next` and for running with the console's tests.
//
// The routes come from the app (app.routes), so a page added later is
// covered without a change here; the fields come from each route's schema.
// Requests are signed in as an admin (every role check passes, so they reach
// validation and the services) most of the time. ARENA_FUZZ_RUNS requests a
// route (default 150 here: sign-in and operator creation hash passwords);
// ARENA_FUZZ_SEED replays a run.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import type { TestApp } from '../helpers/app'
import { createArenaApp } from '../helpers/arena'
import { registerUser } from '../helpers/auth'
import { cliActor, OPERATOR_PASSWORD } from '../helpers/operators'
import { chooseSeed } from '../helpers/seed'

const RUNS = Number(process.env.ARENA_FUZZ_RUNS ?? 150)
const SEED = chooseSeed('ARENA_FUZZ_SEED', 'console fuzz')
const BASE = 'http://localhost'

interface Schema {
  properties?: Record<string, unknown>
}

let ctx: TestApp
let cookie: string
let csrf: string
let otherCsrf: string
/** Ids the path parameters may take besides junk: a user, another operator, one of its sessions (never the signed-in admin's own). */
let ids: string[]
let logSeen = 0
const routes = await (async () => {
  const probe = await createArenaApp()
  try {
    return probe.app.routes
      .filter((r) => r.path === '/console' || r.path.startsWith('/console/'))
      .map((r) => ({ method: r.method, path: r.path, body: (r.hooks as { body?: Schema }).body, query: (r.hooks as { query?: Schema }).query }))
  } finally {
    await probe.close()
  }
})()

beforeAll(async () => {
  ctx = await createArenaApp()
  const by = cliActor(ctx)
  const admin = await ctx.services.operators.create({ name: 'fuzz-admin', role: 'admin' }, by)
  const signedIn = await ctx.services.operatorSessions.signIn({ name: 'fuzz-admin', password: admin.password, newPassword: OPERATOR_PASSWORD, kind: 'console', userAgent: null, ip: null })
  cookie = `arena_console=${signedIn.token}`
  csrf = ctx.services.operatorSessions.csrfFor(signedIn.token)
  const other = await ctx.services.operators.create({ name: 'fuzz-other', role: 'viewer' }, by)
  const otherSession = await ctx.services.operatorSessions.signIn({ name: 'fuzz-other', password: other.password, newPassword: OPERATOR_PASSWORD, kind: 'console', userAgent: null, ip: null })
  otherCsrf = ctx.services.operatorSessions.csrfFor(otherSession.token)
  const user = await registerUser(ctx)
  ids = [user.id, other.operator.id, otherSession.session.id]
}, 60_000)
afterAll(() => ctx?.close())

/** Text a form field may carry: ordinary, empty, long, odd Unicode, markup, numbers of every shape. */
const text = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom('', ' ', '0', '-1', '1e3', '2026-12-24T18:00', '2020-01-01T00:00', 'not a date', '<script>alert(1)</script>', '../../etc/passwd', '%00', '\u0000', '١٢٣', 'admin', 'viewer', 'moderator', 'root', '123456'),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({ minLength: 200, maxLength: 2000 }),
)

const pathParam = fc.oneof(fc.constantFrom(...['usr_00000000000000000000000000000000', 'x', '%2F', '..', '%E0%A4%A', 'console.css', 'nope.js', '%3Fnotice%3Dx', '%23top', '%0D%0Aset-cookie%3A%20x', '%2F%2Fevil.example']), fc.string({ minLength: 1, maxLength: 80 }).map(encodeURIComponent))

/** One request to `route`: usually signed in with a valid token, every so often without, or with a wrong one. */
function requestArbitrary(route: (typeof routes)[number]) {
  const optionalText = fc.option(text, { nil: undefined })
  const fields = Object.keys(route.body?.properties ?? {}).filter((f) => f !== '_csrf')
  const queryFields = Object.keys(route.query?.properties ?? {})
  const params = [...route.path.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1]!)
  const values = (names: string[]): fc.Arbitrary<Record<string, string | undefined>> => fc.record(Object.fromEntries(names.map((n) => [n, optionalText])))
  return fc.record({
    params: fc.array(fc.oneof(fc.constantFrom(...ids), pathParam), { minLength: params.length, maxLength: params.length }),
    query: values(queryFields),
    extraQuery: fc.option(fc.tuple(fc.string({ maxLength: 10 }), text), { nil: undefined }),
    body: values(fields),
    extraBody: fc.option(fc.tuple(fc.constantFrom('__proto__', 'constructor', 'x', '_csrf'), text), { nil: undefined }),
    csrf: fc.constantFrom<'valid' | 'missing' | 'other' | 'junk'>('valid', 'valid', 'valid', 'valid', 'missing', 'other', 'junk'),
    session: fc.constantFrom<'valid' | 'missing' | 'junk'>('valid', 'valid', 'valid', 'valid', 'valid', 'missing', 'junk'),
    origin: fc.constantFrom<'none' | 'same' | 'foreign' | 'null'>('none', 'none', 'same', 'foreign', 'null'),
    encoding: fc.constantFrom<'form' | 'json' | 'text' | 'none' | 'garbage'>('form', 'form', 'form', 'form', 'json', 'text', 'none', 'garbage'),
    // Three in four requests are the console's own (session, token, origin and encoding right), so most reach validation and the services.
    authentic: fc.oneof({ weight: 3, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  })
}

type Spec = ReturnType<typeof requestArbitrary> extends fc.Arbitrary<infer T> ? T : never

function build(route: (typeof routes)[number], given: Spec): Request {
  const spec: Spec = given.authentic ? { ...given, session: 'valid', csrf: 'valid', origin: given.origin === 'same' ? 'same' : 'none', encoding: 'form' } : given
  let i = 0
  const path = route.path.replace(/:([A-Za-z]+)/g, () => spec.params[i++]!)
  const query = new URLSearchParams()
  for (const [k, v] of Object.entries(spec.query)) if (v !== undefined) query.set(k, v)
  if (spec.extraQuery) query.set(spec.extraQuery[0], spec.extraQuery[1])
  const headers: Record<string, string> = {}
  if (spec.session === 'valid') headers.cookie = cookie
  if (spec.session === 'junk') headers.cookie = 'arena_console=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'
  if (spec.origin === 'same') headers.origin = BASE
  if (spec.origin === 'foreign') headers.origin = 'https://evil.example'
  if (spec.origin === 'null') headers.origin = 'null'
  const url = `${BASE}${path}${query.size > 0 ? `?${query}` : ''}`
  if (route.method === 'GET') return new Request(url, { headers })
  const form = new URLSearchParams()
  const token = { valid: csrf, missing: undefined, other: otherCsrf, junk: 'f'.repeat(64) }[spec.csrf]
  if (token !== undefined) form.set('_csrf', token)
  for (const [k, v] of Object.entries(spec.body)) if (v !== undefined) form.set(k, v)
  if (spec.extraBody) form.append(spec.extraBody[0], spec.extraBody[1])
  switch (spec.encoding) {
    case 'form':
      return new Request(url, { method: route.method, headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() })
    case 'json':
      return new Request(url, { method: route.method, headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(Object.fromEntries(form)) })
    case 'text':
      return new Request(url, { method: route.method, headers: { ...headers, 'content-type': 'text/plain' }, body: form.toString() })
    case 'none':
      return new Request(url, { method: route.method, headers })
    case 'garbage':
      return new Request(url, { method: route.method, headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, body: `%%%${form.toString()}&&=%ZZ&a=%E0%A4%A` })
  }
}

/** What every console answer must be, whatever was asked. */
async function check(request: Request, res: Response): Promise<void> {
  const where = `${request.method} ${request.url.slice(BASE.length, 200)}`
  const body = await res.text()
  if (res.status >= 500) throw new Error(`${where} answered ${res.status}: ${body.slice(0, 500)}`)
  if (!/^[A-Za-z0-9._:-]{1,128}$/.test(res.headers.get('x-request-id') ?? '')) throw new Error(`${where} answered without an x-request-id`)
  if (res.status === 303) {
    const location = res.headers.get('location') ?? ''
    // A console path, with the query and fragment a redirect adds, in plain URL characters (a path parameter is encoded again).
    if (!/^\/console(\/[A-Za-z0-9._~%!$&'()*+,;=:@-]*)*(\?[^\s#]*)?(#[A-Za-z0-9_-]*)?$/.test(location) || location.includes('//')) throw new Error(`${where} redirected to ${location}`)
  } else {
    const type = res.headers.get('content-type') ?? ''
    const asset = request.url.includes('/console/assets/') && res.status === 200
    if (!asset && !type.startsWith('text/html')) throw new Error(`${where} answered ${res.status} as ${type}: ${body.slice(0, 200)}`)
    if (!asset && !body.startsWith('<!doctype html>')) throw new Error(`${where} answered ${res.status} without a page: ${body.slice(0, 200)}`)
  }
  const fresh = ctx.logLinesFrom(logSeen)
  logSeen += fresh.length
  const errors = fresh.filter((line) => line.includes('"level":"error"'))
  if (errors.length > 0) throw new Error(`error in the log after ${where}:\n${errors.join('\n').slice(0, 2000)}`)
}

describe('fuzz: every console route', () => {
  test('signing in with a `next` that cannot be a Location (CR LF, non-ASCII, another site, out through `..`) goes to the console home', async () => {
    const { password } = await ctx.services.operators.create({ name: 'fuzz-next', role: 'viewer' }, cliActor(ctx))
    let current = password
    for (const next of ['/console/users\r\nset-cookie: x=1', '/console/usérs', '//evil.example/console', 'https://evil.example/console', '/console/../api', '/console/%2E%2e/api?x']) {
      const form = new URLSearchParams({ name: 'fuzz-next', password: current, next, ...(current === password ? { newPassword: OPERATOR_PASSWORD } : {}) })
      current = OPERATOR_PASSWORD
      const res = await ctx.handle(new Request(`${BASE}/console/login`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() }))
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toStartWith('/console?notice=')
    }
  })

  test('the console routes come from the app', () => {
    const listed = routes.map((r) => `${r.method} ${r.path}`)
    for (const known of ['GET /console/login', 'POST /console/login', 'POST /console/logout', 'GET /console/users/:id', 'POST /console/users/:id/ban', 'GET /console/audit', 'POST /console/operators']) expect(listed).toContain(known)
  })

  for (const route of routes) {
    // Signing out ends the session every other request uses: it is sent without one, or with the wrong token, only.
    const signsOut = route.path === '/console/logout'
    test(
      `${route.method} ${route.path}`,
      async () => {
        logSeen += ctx.logLinesFrom(logSeen).length
        if (!signsOut) {
          // The console's own request, fields empty, gets past the session, CSRF and role checks to the route itself
          // (its page, its validation, or its service's refusal), whatever the seed.
          const own = build(route, { params: [...route.path.matchAll(/:[A-Za-z]+/g)].map(() => ids[0]!), query: {}, extraQuery: undefined, body: {}, extraBody: undefined, csrf: 'valid', session: 'valid', origin: 'same', encoding: 'form', authentic: true })
          const res = await ctx.handle(own)
          expect([401, 403]).not.toContain(res.status)
          expect(res.headers.get('location') ?? '').not.toStartWith('/console/login?next=')
          await check(own, res)
        }
        await fc.assert(
          fc.asyncProperty(requestArbitrary(route), async (spec) => {
            const request = build(route, signsOut && (spec.authentic || (spec.session === 'valid' && spec.csrf === 'valid')) ? { ...spec, authentic: false, csrf: 'other' } : spec)
            await check(request, await ctx.handle(request))
          }),
          { numRuns: RUNS, seed: SEED },
        )
        // The admin is still signed in (no request ended its session or disabled it), so the runs kept reaching the services.
        const live = await ctx.services.operatorSessions.session(cookie.slice('arena_console='.length), 'console')
        expect(live?.operator.name).toBe('fuzz-admin')
        await ctx.services.securityLog.flush()
        expect(await ctx.services.audit.verify(ctx.storage.read.audit)).toMatchObject({ ok: true })
        expect(await ctx.services.securityLog.verify()).toMatchObject({ ok: true })
      },
      120_000,
    )
  }
})
