// Invariant: whatever a client sends to any route (wrong types, missing or
// extra fields, strings up to and past the 64 KiB body limit, thousands of
// levels of nesting, prototype-pollution keys, amounts like 1e3, -0, .5, 0x10
// or ١٢٣, non-JSON bodies and content types, malformed JSON, broken escapes
// in the path or query, odd headers, forged or revoked credentials), the
// answer is never a 5xx, every error is the envelope of contract §0 whose
// `status` is the HTTP status, every response carries an x-request-id, and
// nothing reaches the log at level error. After each route's run the world
// still holds: the ledger balances, the security-event and audit chains verify,
// Object.prototype is untouched.
//
// The console's routes (/console, contract §11) answer pages, not the
// envelope, and are held to the console's form of the same invariant: never
// a 5xx, an x-request-id on every answer, a 2xx an HTML page (an asset the
// stylesheet it is), an error an HTML page with the error's status that shows
// no stack trace and no SQL, a redirect a 303 to a console path and never
// elsewhere, nothing logged at level error, and the world's invariants after
// the run. Their requests are HTML forms (urlencoded from the route's schema,
// plus the same form under other content types, broken encodings, huge
// bodies and polluting keys) sent with a session cookie of the operator
// whose role the route needs and that session's CSRF token most of the time,
// and otherwise another role's, an ended, foreign or junk cookie, a missing,
// foreign or junk token, another site's Origin (fuzz-world.ts holds one
// signed-in console session of each role, made anew when a request ends it).
//
// The routes come from the app itself (app.routes), so a route added later is
// fuzzed without a change here; body, query and header fields come from the
// route's own schemas. Each route gets ARENA_FUZZ_RUNS requests (default
// 1000; the long run uses 10000; a console route a quarter of that, see
// CONSOLE_RUNS) against its own copy of a world with real
// credentials, which the generated requests use often enough to get past
// authentication into validation and the services. Requests go one at a
// time: a 503 from the argon2 gate would be our own overload, and every 5xx
// fails.
//
// Before its generated requests, each route gets one request it must accept
// and one it must refuse (knownGoodRequest, knownRefusedRequest), built
// without the generator: that the route can succeed and refuse is shown
// whatever the seed. (The generated requests alone cannot promise it: the
// login throttle turns every login into a 429 once 20 of them have failed.)
//
// The seed is printed at the start (ARENA_FUZZ_SEED replays it; every route
// uses it), and a failure prints fast-check's seed and path; replay one route with
//   ARENA_FUZZ_SEED=<seed> ARENA_FUZZ_PATH=<path> bun test test/fuzz/every-route.test.ts -t '<METHOD> <path>'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { settle } from '../helpers/app'
import { createArenaApp } from '../helpers/arena'
import { chooseSeed } from '../helpers/seed'
import { CONSOLE_FIELD_HINTS, DEVICE_FIELD_HINTS, FIELD_HINTS, knownGoodRequest, knownRefusedRequest, paramHints, UPGRADE_ROUTES, World, buildTemplate, type Built, type Template } from './fuzz-world'
import { consoleRequestFor, deviceRequestFor, headerValue, isConsoleRoute, isDevicePageRoute, isPageRoute, pathJunk, requestFor, type RouteShape, type Schema } from './hostile-requests'

function intEnv(name: string): number | undefined {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return undefined
  const n = Number(raw)
  if (!Number.isSafeInteger(n)) throw new Error(`${name} must be an integer, got ${raw}`)
  return n
}

const RUNS = intEnv('ARENA_FUZZ_RUNS') ?? 1000
const SEED = chooseSeed('ARENA_FUZZ_SEED', 'fuzz')
const PATH = process.env.ARENA_FUZZ_PATH || undefined
/**
 * Requests a console route gets: a quarter of the API's (ARENA_FUZZ_CONSOLE_RUNS
 * overrides). A console form runs the same service method as its admin API
 * route, which is fuzzed at the full count; what the console adds (form
 * parsing, cookie, CSRF, Origin, role, the page) is a thin layer whose
 * answers stop changing within a few hundred requests (the status tallies at
 * 250 and at 1000 runs a route have the same kinds), and the routes that end
 * sessions spend their budget of new sign-ins (argon2id each) within about a
 * hundred. At the full count the console's 39 routes would add about 50 s on
 * SQLite to the default run; at a quarter, about 13 s.
 */
const CONSOLE_RUNS = intEnv('ARENA_FUZZ_CONSOLE_RUNS') ?? Math.ceil(RUNS / 4)

/** Requests a route gets. */
function runsOf(route: RouteShape): number {
  // The device page's forms are the console's kind (its sign-in an argon2id verify each).
  return isPageRoute(route) ? CONSOLE_RUNS : RUNS
}
/** Generous: the CI form takes a second or two per route. */
const ROUTE_TIMEOUT_MS = 60_000 + RUNS * 50

// The routes of a fully configured app (operator routes and the console included), as its router lists them.
async function listRoutes(): Promise<RouteShape[]> {
  const probe = await createArenaApp()
  try {
    return probe.app.routes.map((r) => {
      const hooks = r.hooks as { body?: Schema; query?: Schema; headers?: Schema; detail?: { 'x-arena-role'?: string } }
      const role = hooks.detail?.['x-arena-role']
      return { method: r.method, path: r.path, body: hooks.body, query: hooks.query, headers: hooks.headers, ...(role !== undefined ? { role } : {}) }
    })
  } finally {
    probe.close()
  }
}

const routes = await listRoutes()

/** Routes a careful reader of the contract would expect; the enumeration must find every one. */
const KNOWN_ROUTES = [
  'GET /healthz', 'GET /readyz', 'GET /metrics', 'GET /openapi', 'GET /openapi/json',
  'POST /api/v1/user/register', 'POST /api/v1/user/login', 'POST /api/v1/auth/validate', 'POST /api/v1/user/s/logout',
  'POST /api/v1/user/email/verify', 'POST /api/v1/user/email/resend', 'POST /api/v1/user/password/change', 'POST /api/v1/user/password/forgot', 'POST /api/v1/user/password/reset',
  'GET /api/v1/me', 'GET /api/v1/me/sessions', 'GET /api/v1/me/matches', 'GET /api/v1/tournaments/:id',
  'POST /api/v1/game-sdk/:gameId/sessions', 'POST /api/v1/game-sdk/:gameId/results', 'GET /api/v1/wallet',
  'POST /api/v1/security/events', 'PUT /api/v1/security/pin', 'POST /api/v1/security/pin-session', 'POST /api/v1/security/pin-session/:id/verify',
  'GET /api/v1/events', 'POST /api/v1/admin/games', 'POST /api/v1/admin/games/:id/rotate-key', 'POST /api/v1/admin/tournaments',
  'POST /api/v1/admin/tournaments/:id/start', 'GET /api/v1/admin/tournaments/:id', 'POST /api/v1/admin/wallets/:userId/credit',
  'GET /api/v1/admin/security-events', 'POST /api/v1/admin/matches/:id/resolve',
  'POST /api/v1/admin/tournaments/:id/cancel', 'POST /api/v1/admin/tournaments/:id/participants/:participantId/disqualify', 'POST /api/v1/admin/matches/:id/correct',
  'DELETE /api/v1/me/sessions/:id', 'POST /api/v1/me/delete', 'GET /api/v1/me/export',
  'GET /api/v1/admin/users', 'GET /api/v1/admin/users/:id', 'POST /api/v1/admin/users/:id/ban', 'POST /api/v1/admin/users/:id/unban', 'POST /api/v1/admin/users/:id/delete',
  // The console (contract §11): pages and forms.
  'GET /console', 'GET /console/login', 'POST /console/login', 'POST /console/logout', 'GET /console/assets/:file', 'GET /console/users/:id', 'POST /console/users/:id/ban',
  'POST /console/users/:id/unban', 'POST /console/disputes/:id/resolve', 'POST /console/withdrawals/:id/approve', 'POST /console/withdrawals/:id/reject', 'POST /console/games',
  'POST /console/tournaments', 'POST /console/tournaments/:id/start', 'POST /console/tournaments/:id/cancel', 'GET /console/audit', 'POST /console/operators',
]

interface Tally {
  route: string
  runs: number
  ms: number
  statuses: Map<number, number>
  renewals: number
  /** The slowest request, to tell where a route's time goes. */
  slowest: { ms: number; what: string }
}

const tallies: Tally[] = []

function fmt(t: Tally): string {
  const statuses = [...t.statuses].sort(([a], [b]) => a - b).map(([s, n]) => `${s}:${n}`).join(' ')
  return `${t.route.padEnd(48)} ${String(t.runs).padStart(6)} runs ${String(Math.round(t.ms)).padStart(6)} ms  renewals ${t.renewals}  ${statuses}  slowest ${Math.round(t.slowest.ms)} ms: ${t.slowest.what}`
}

function summarize(request: Request): string {
  const type = request.headers.get('content-type')
  const length = request.headers.get('content-length')
  return `${request.method} ${request.url.slice(16, 96)} (${type ?? 'no type'}, ${length ?? 'no'} bytes)`
}

/** A console path as a redirect may name it: the console's, with the query and fragment a redirect adds, in plain URL characters, never `//` (another host). */
const CONSOLE_LOCATION = /^\/console(\/[A-Za-z0-9._~%!$&'()*+,;=:@-]*)*(\?[^\s#]*)?(#[A-Za-z0-9_-]*)?$/
/** Where the device page redirects: itself, with a code of the page's own making. */
const DEVICE_LOCATION = /^\/device(\?code=[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4})?$/

/** What an error page must never show: a stack trace, or the database's own words (a query, an engine's error). */
const LEAK = /\n\s+at .+:\d+:\d+|\bat [^\s<]+ \((?:\/|file:)[^)]*:\d+:\d+\)|SQLITE_[A-Z]+|SQLSTATE|syntax error at or near|no such (?:table|column)|violates (?:unique|foreign key|check|not-null) constraint|Failed query:|drizzle/i

/**
 * The console's answers (where the error plugin draws pages, a path under
 * /console): a page (an HTML document; the stylesheet for an asset) or a 303
 * to a console path, never the API's envelope; an error page has the error's
 * status and tells nothing of the server's insides.
 */
async function checkConsoleResponse(request: Request, res: Response, where: string, locations = CONSOLE_LOCATION): Promise<{ body: unknown; location: string | null }> {
  const text = await res.text()
  if (res.status >= 500) throw new Error(`${where} answered ${res.status}: ${text.slice(0, 500)}`)
  const id = res.headers.get('x-request-id')
  if (id === null || !/^[A-Za-z0-9._:-]{1,128}$/.test(id)) throw new Error(`${where} answered ${res.status} without a valid x-request-id (${id})`)
  const type = res.headers.get('content-type') ?? ''
  if (res.status === 303) {
    const location = res.headers.get('location') ?? ''
    if (!locations.test(location) || location.includes('//')) throw new Error(`${where} redirected off the console, to ${JSON.stringify(location)}`)
    return { body: undefined, location }
  }
  if (res.status >= 300 && res.status < 400) throw new Error(`${where} answered ${res.status} (a console redirect is a 303)`)
  const asset = res.status === 200 && /^\/console\/assets\//.test(new URL(request.url).pathname)
  if (asset) {
    // An asset is one of the console's own files, served as what it is (a HEAD answer without its body).
    if (!/^text\/css\b/.test(type) || (text.length === 0 && request.method.toUpperCase() !== 'HEAD')) throw new Error(`${where} answered 200 as ${JSON.stringify(type)} with ${text.length} characters`)
    return { body: undefined, location: null }
  }
  const download = res.status === 200 && /^\/console\/evidence\//.test(new URL(request.url).pathname)
  if (download) {
    // An evidence file a player uploaded (contract §17): saved, never rendered as a page of the console.
    const safe = (res.headers.get('content-disposition') ?? '').startsWith('attachment;') && res.headers.get('x-content-type-options') === 'nosniff' && res.headers.get('content-security-policy') === 'sandbox'
    if (!safe) throw new Error(`${where} answered an evidence file as ${JSON.stringify(type)} without attachment, nosniff and sandbox`)
    return { body: undefined, location: null }
  }
  if (!type.startsWith('text/html')) throw new Error(`${where} answered ${res.status} as ${type}: ${text.slice(0, 200)}`)
  if (request.method.toUpperCase() === 'HEAD') return { body: undefined, location: null }
  if (!text.startsWith('<!doctype html>')) throw new Error(`${where} answered ${res.status} without a page: ${text.slice(0, 200)}`)
  if (res.status >= 400) {
    if (LEAK.test(text)) throw new Error(`${where} answered ${res.status} with a page showing the server's insides: ${LEAK.exec(text)?.[0]} in ${text.slice(0, 1000)}`)
    if (res.status === 429 && res.headers.get('retry-after') === null) throw new Error(`${where} answered 429 without Retry-After`)
  }
  return { body: undefined, location: null }
}

/** What every answer must look like, whatever was asked. */
async function checkResponse(request: Request, res: Response): Promise<{ body: unknown; location: string | null }> {
  const pathname = new URL(request.url).pathname
  const where = `${request.method} ${pathname}`
  // The path the error plugin decides by: under /console, errors are pages.
  if (pathname === '/console' || pathname.startsWith('/console/')) return checkConsoleResponse(request, res, where)
  // The device-code page (contract §13) too.
  if (pathname === '/device' || pathname.startsWith('/device/')) return checkConsoleResponse(request, res, where, DEVICE_LOCATION)
  return { body: await checkApiResponse(request, res, where), location: null }
}

async function checkApiResponse(request: Request, res: Response, where: string): Promise<unknown> {
  // A static asset served as asked (the 1.5 MB Swagger UI bundle) is not read:
  // there is nothing in it to judge, and reading it a thousand times costs seconds.
  if (res.status < 300 && !(res.headers.get('content-type') ?? '').includes('json')) {
    await res.body?.cancel()
    return undefined
  }
  const text = await res.text()
  if (res.status >= 500) throw new Error(`${where} answered ${res.status}: ${text.slice(0, 500)}`)
  const id = res.headers.get('x-request-id')
  if (id === null || !/^[A-Za-z0-9._:-]{1,128}$/.test(id)) throw new Error(`${where} answered without a valid x-request-id (${id})`)
  // A HEAD answer has no body to judge.
  if (request.method.toUpperCase() === 'HEAD') return undefined
  let body: unknown
  if (res.status >= 300) {
    if (!(res.headers.get('content-type') ?? '').includes('application/json')) throw new Error(`${where} answered ${res.status} as ${res.headers.get('content-type')}: ${text.slice(0, 200)}`)
    try {
      body = JSON.parse(text)
    } catch {
      throw new Error(`${where} answered ${res.status} with a body that is not JSON: ${text.slice(0, 200)}`)
    }
    const error = (body as { error?: { code?: unknown; message?: unknown; status?: unknown } } | null)?.error
    if (typeof error?.code !== 'string' || error.code === '' || typeof error.message !== 'string' || error.status !== res.status) {
      throw new Error(`${where} answered ${res.status} without the error envelope: ${text.slice(0, 300)}`)
    }
    if (res.status === 429 && res.headers.get('retry-after') === null) throw new Error(`${where} answered 429 without Retry-After`)
    return body
  }
  if ((res.headers.get('content-type') ?? '').includes('application/json')) body = JSON.parse(text)
  return body
}

/** Sends one request; a long poll is cut short after a moment, as a client that goes away would. */
async function send(world: World, built: Built): Promise<{ status: number; body: unknown; location: string | null }> {
  // The client hangs up one timer tick after sending: GET /events?wait=30 then
  // answers at once instead of holding the run for 30 s.
  const timer = built.hangUp ? setTimeout(built.hangUp, 1) : undefined
  let res: Response
  try {
    res = await world.t.handle(built.request)
  } finally {
    clearTimeout(timer)
  }
  const { body, location } = await checkResponse(built.request, res)
  const errors = world.newErrorLines()
  if (errors.length > 0) throw new Error(`error in the log after ${built.request.method} ${built.request.url.slice(0, 200)}:\n${errors.join('\n').slice(0, 2000)}`)
  return { status: res.status, body, location }
}

function params(route?: RouteShape): fc.Parameters<unknown> {
  return { numRuns: route !== undefined ? runsOf(route) : RUNS, seed: SEED, ...(PATH !== undefined ? { path: PATH } : {}) }
}

describe('fuzz: every route', () => {
  let template: Template
  beforeAll(async () => {
    template = await buildTemplate()
  }, 60_000)
  afterAll(() => {
    template?.remove()
    if (tallies.length > 0) console.log(`fuzz (${RUNS} runs a route, ${CONSOLE_RUNS} a console route, seed ${SEED}):\n${tallies.map(fmt).join('\n')}`)
  })

  test('the route list comes from the app and misses no known route', () => {
    const listed = new Set(routes.map((r) => `${r.method} ${r.path}`))
    expect(routes.length).toBeGreaterThanOrEqual(KNOWN_ROUTES.length)
    for (const known of KNOWN_ROUTES) expect(listed).toContain(known)
    // The schemas the generators read are there too.
    const verify = routes.find((r) => r.path === '/api/v1/security/pin-session/:id/verify')!
    expect(Object.keys(verify.body?.properties ?? {})).toEqual(['pin', 'amount', 'destinationAddress', 'idempotencyKey'])
    expect(Object.keys(verify.headers?.properties ?? {})).toContain('x-secure-session')
  })

  for (const route of routes) {
    const name = `${route.method} ${route.path}`
    test(
      name,
      async () => {
        const world = await World.open(template)
        const tally: Tally = { route: name, runs: 0, ms: 0, statuses: new Map(), renewals: 0, slowest: { ms: 0, what: '' } }
        const started = performance.now()
        try {
          // The route accepts a valid request and refuses a broken one, in a fresh world, before any generated request.
          const known: Record<string, number | string> = {}
          let accepted = false
          for (const [what, spec] of [['accepted', knownGoodRequest(route)], ['refused', knownRefusedRequest(route)]] as const) {
            const built = await world.build(route, spec)
            const { status, body, location } = await send(world, built)
            world.observe(built, status, body, location)
            // A console form succeeds with a 303 (post/redirect/get) to a page without an error (a refusal goes back with `error=`, a lost session to the sign-in page with `next=`).
            if (what === 'accepted') {
              accepted = UPGRADE_ROUTES.has(name)
                ? status === 400 && (body as { error?: { code?: string } } | null)?.error?.code === 'bad_request'
                : (status >= 200 && status < 300) || (status === 303 && isPageRoute(route) && !/[?&](error|next)=/.test(location ?? ''))
            }
            known[what] = location === null ? status : `${status} ${location.slice(0, 200)}`
          }
          const refused = typeof known.refused === 'number' && known.refused >= 400 && known.refused < 500
          expect({ route: name, accepted, refused, statuses: known }).toEqual({
            route: name,
            accepted: true,
            refused: true,
            statuses: known,
          })
          await fc.assert(
            fc.asyncProperty(isConsoleRoute(route) ? consoleRequestFor(route, CONSOLE_FIELD_HINTS, paramHints) : isDevicePageRoute(route) ? deviceRequestFor(route, DEVICE_FIELD_HINTS, paramHints) : requestFor(route, FIELD_HINTS, paramHints), async (spec) => {
              const built = await world.build(route, spec)
              const at = performance.now()
              const { status, body, location } = await send(world, built)
              const ms = performance.now() - at
              if (ms > tally.slowest.ms) tally.slowest = { ms, what: `${status} ${summarize(built.request)}` }
              tally.runs++
              tally.statuses.set(status, (tally.statuses.get(status) ?? 0) + 1)
              world.observe(built, status, body, location)
            }),
            params(route),
          )
          await settle()
          expect(world.newErrorLines()).toEqual([])
          expect(await world.invariants()).toEqual([])
        } finally {
          tally.ms = performance.now() - started
          tally.renewals = world.renewals + world.consoleRenewals
          tallies.push(tally)
          await world.close()
        }
      },
      ROUTE_TIMEOUT_MS,
    )
  }

  test(
    'unrouted paths and methods',
    async () => {
      const world = await World.open(template)
      const tally: Tally = { route: 'unrouted paths and methods', runs: 0, ms: 0, statuses: new Map(), renewals: 0, slowest: { ms: 0, what: '' } }
      const started = performance.now()
      const segment = fc.oneof(fc.constantFrom('api', 'v1', 'admin', 'user', 'me', 'game-sdk', 'security', 'events', 'openapi', 'API', 'V1', 'console', 'Console', 'assets', ''), pathJunk)
      const path = fc.oneof(
        fc.array(segment, { minLength: 1, maxLength: 6 }).map((s) => `/${s.join('/')}`),
        fc.tuple(fc.constantFrom(...routes.map((r) => r.path)), fc.constantFrom('/', '//', '/x', '.json', '%2F', '/..', '?', '#x')).map(([p, tail]) => p.replace(/:[A-Za-z]+/g, 'x') + tail),
      )
      const method = fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'TRACE', 'PROPFIND', 'get', 'M-SEARCH')
      try {
        await fc.assert(
          fc.asyncProperty(path, method, fc.option(headerValue, { nil: undefined }), async (p, m, auth) => {
            const headers: Record<string, string> = auth === undefined ? {} : { authorization: auth }
            const request = new Request(`http://localhost${p}`, { method: m, headers, ...(m === 'POST' || m === 'PUT' ? { body: '{"a":1}' } : {}) })
            const { status } = await send(world, { request, resolution: { subject: 0, usedBearer: null, values: new Map() } })
            tally.runs++
            tally.statuses.set(status, (tally.statuses.get(status) ?? 0) + 1)
          }),
          params(),
        )
        await settle()
        expect(world.newErrorLines()).toEqual([])
      } finally {
        tally.ms = performance.now() - started
        tallies.push(tally)
        await world.close()
      }
    },
    ROUTE_TIMEOUT_MS,
  )
})
