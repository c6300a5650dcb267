// One route's fuzz run (see every-route.test.ts for what it promises): the
// checks every answer must pass, and the run itself, in a fresh world. Shared
// by the test file's thread and its worker (fuzz-worker.ts), which fuzzes
// every other route at the same time.
import fc from 'fast-check'
import { settle } from '../helpers/app'
import { createArenaApp } from '../helpers/arena'
import { CONSOLE_FIELD_HINTS, DEVICE_FIELD_HINTS, FIELD_HINTS, knownGoodRequest, knownRefusedRequest, paramHints, UPGRADE_ROUTES, World, type Built, type Template } from './fuzz-world'
import { consoleRequestFor, deviceRequestFor, isConsoleRoute, isDevicePageRoute, isPageRoute, requestFor, type RouteShape, type Schema } from './hostile-requests'

export function intEnv(name: string): number | undefined {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return undefined
  const n = Number(raw)
  if (!Number.isSafeInteger(n)) throw new Error(`${name} must be an integer, got ${raw}`)
  return n
}

export const RUNS = intEnv('ARENA_FUZZ_RUNS') ?? 1000
export const PATH = process.env.ARENA_FUZZ_PATH || undefined
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
export const CONSOLE_RUNS = intEnv('ARENA_FUZZ_CONSOLE_RUNS') ?? Math.ceil(RUNS / 4)

/** Requests a route gets. */
function runsOf(route: RouteShape): number {
  // The device page's forms are the console's kind (its sign-in an argon2id verify each).
  return isPageRoute(route) ? CONSOLE_RUNS : RUNS
}
/** Generous: the CI form takes a second or two per route. */
export const ROUTE_TIMEOUT_MS = 60_000 + RUNS * 50

// The routes of a fully configured app (operator routes and the console included), as its router lists them.
export async function listRoutes(): Promise<RouteShape[]> {
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

export interface Tally {
  route: string
  runs: number
  ms: number
  statuses: Map<number, number>
  renewals: number
  /** The slowest request, to tell where a route's time goes. */
  slowest: { ms: number; what: string }
}

export function fmt(t: Tally): string {
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
  if ((res.headers.get('content-type') ?? '').includes('application/json')) body = parseOnce(text)
  return body
}

/** The last JSON answer parsed, and its text. */
let lastParsed: { text: string; body: unknown } = { text: '', body: undefined }

/**
 * JSON.parse, except that an answer the same as the last one (character for
 * character) is not parsed again: GET /openapi/json answers the same document
 * (over 1 MB) to every request that gets through, and parsing it a thousand
 * times was seconds of the run. The text is still read and compared whole, so
 * a document that changes is parsed (and must parse) again. The body is only
 * read afterwards (World.observe), never changed.
 */
function parseOnce(text: string): unknown {
  if (text.length > 4096 && text === lastParsed.text) return lastParsed.body
  const body: unknown = JSON.parse(text)
  if (text.length > 4096) lastParsed = { text, body }
  return body
}

/** Sends one request; a long poll is cut short after a moment, as a client that goes away would. */
export async function send(world: World, built: Built): Promise<{ status: number; body: unknown; location: string | null }> {
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

export function params(seed: number, route?: RouteShape): fc.Parameters<unknown> {
  return { numRuns: route !== undefined ? runsOf(route) : RUNS, seed, ...(PATH !== undefined ? { path: PATH } : {}) }
}

/**
 * What one route's run found; its test judges it. A run fails early (no
 * generated requests) when the known requests do not come out as they must.
 */
export type RouteOutcome = { tally: Tally } & (
  | { known: Record<string, number | string>; accepted: boolean; refused: boolean; errorLines: string[]; problems: string[] }
  | { error: unknown }
)

/**
 * One route's whole run in a fresh world of its own: the known requests, the
 * generated ones, then the world's invariants. Never rejects: a failure is
 * the outcome, rethrown by the route's own test.
 */
export async function fuzzRoute(template: Template, route: RouteShape, seed: number): Promise<RouteOutcome> {
  const name = `${route.method} ${route.path}`
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
    if (!accepted || !refused) return { tally, known, accepted, refused, errorLines: [], problems: [] }
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
      params(seed, route),
    )
    await settle()
    return { tally, known, accepted, refused, errorLines: world.newErrorLines(), problems: await world.invariants() }
  } catch (error) {
    return { tally, error }
  } finally {
    tally.ms = performance.now() - started
    tally.renewals = world.renewals + world.consoleRenewals
    await world.close()
  }
}
