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
// The routes come from the app itself (app.routes), so a route added later is
// fuzzed without a change here; body, query and header fields come from the
// route's own schemas. Each route gets ARENA_FUZZ_RUNS requests (default
// 1000; the long run uses 10000) against its own copy of a world with real
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
import { FIELD_HINTS, knownGoodRequest, knownRefusedRequest, paramHints, World, buildTemplate, type Built, type Template } from './fuzz-world'
import { headerValue, pathJunk, requestFor, type RouteShape, type Schema } from './hostile-requests'

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
/** Generous: the CI form takes a second or two per route. */
const ROUTE_TIMEOUT_MS = 60_000 + RUNS * 50

// The routes of a fully configured app (operator routes included), as its router lists them.
// The console's (/console) answer HTML pages and redirects, not the envelope:
// test/console/hostile-forms.test.ts fuzzes them against their own invariant.
async function listRoutes(): Promise<RouteShape[]> {
  const probe = await createArenaApp()
  try {
    return probe.app.routes.filter((r) => r.path !== '/console' && !r.path.startsWith('/console/')).map((r) => {
      const hooks = r.hooks as { body?: Schema; query?: Schema; headers?: Schema }
      return { method: r.method, path: r.path, body: hooks.body, query: hooks.query, headers: hooks.headers }
    })
  } finally {
    probe.close()
  }
}

const routes = await listRoutes()

/** Routes a careful reader of the contract would expect; the enumeration must find every one. */
const KNOWN_ROUTES = [
  'GET /healthz', 'GET /readyz', 'GET /openapi', 'GET /openapi/json',
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

/** What every answer must look like, whatever was asked. */
async function checkResponse(request: Request, res: Response): Promise<unknown> {
  const where = `${request.method} ${new URL(request.url).pathname}`
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
async function send(world: World, built: Built): Promise<{ status: number; body: unknown }> {
  // The client hangs up one timer tick after sending: GET /events?wait=30 then
  // answers at once instead of holding the run for 30 s.
  const timer = built.hangUp ? setTimeout(built.hangUp, 1) : undefined
  let res: Response
  try {
    res = await world.t.handle(built.request)
  } finally {
    clearTimeout(timer)
  }
  const body = await checkResponse(built.request, res)
  const errors = world.newErrorLines()
  if (errors.length > 0) throw new Error(`error in the log after ${built.request.method} ${built.request.url.slice(0, 200)}:\n${errors.join('\n').slice(0, 2000)}`)
  return { status: res.status, body }
}

function params(): fc.Parameters<unknown> {
  return { numRuns: RUNS, seed: SEED, ...(PATH !== undefined ? { path: PATH } : {}) }
}

describe('fuzz: every route', () => {
  let template: Template
  beforeAll(async () => {
    template = await buildTemplate()
  }, 60_000)
  afterAll(() => {
    template?.remove()
    if (tallies.length > 0) console.log(`fuzz (${RUNS} runs a route, seed ${SEED}):\n${tallies.map(fmt).join('\n')}`)
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
          const known: Record<string, number> = {}
          for (const [what, spec] of [['accepted', knownGoodRequest(route)], ['refused', knownRefusedRequest(route)]] as const) {
            const built = await world.build(route, spec)
            const { status, body } = await send(world, built)
            world.observe(built, status, body)
            known[what] = status
          }
          expect({ route: name, accepted: known.accepted! >= 200 && known.accepted! < 300, refused: known.refused! >= 400 && known.refused! < 500, statuses: known }).toEqual({
            route: name,
            accepted: true,
            refused: true,
            statuses: known,
          })
          await fc.assert(
            fc.asyncProperty(requestFor(route, FIELD_HINTS, paramHints), async (spec) => {
              const built = await world.build(route, spec)
              const at = performance.now()
              const { status, body } = await send(world, built)
              const ms = performance.now() - at
              if (ms > tally.slowest.ms) tally.slowest = { ms, what: `${status} ${summarize(built.request)}` }
              tally.runs++
              tally.statuses.set(status, (tally.statuses.get(status) ?? 0) + 1)
              world.observe(built, status, body)
            }),
            params(),
          )
          await settle()
          expect(world.newErrorLines()).toEqual([])
          expect(await world.invariants()).toEqual([])
        } finally {
          tally.ms = performance.now() - started
          tally.renewals = world.renewals
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
      const segment = fc.oneof(fc.constantFrom('api', 'v1', 'admin', 'user', 'me', 'game-sdk', 'security', 'events', 'openapi', 'API', 'V1', ''), pathJunk)
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
