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
// authentication into validation and the services. A route's requests go one
// at a time: a 503 from the argon2 gate would be our own overload, and every
// 5xx fails. Two routes run at once, one on this thread and one on a worker
// thread (fuzz-worker.ts, see WORKERS), each in its own world.
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
import { Worker } from 'node:worker_threads'
import fc from 'fast-check'
import { settle, TEST_ENGINE } from '../helpers/app'
import { startPostgres } from '../helpers/postgres'
import { chooseSeed } from '../helpers/seed'
import { buildTemplate, World, type Template } from './fuzz-world'
import { CONSOLE_RUNS, fmt, fuzzRoute, intEnv, listRoutes, params, PATH, ROUTE_TIMEOUT_MS, RUNS, send, type RouteOutcome, type Tally } from './fuzz-run'
import type { WorkerData, WorkerError } from './fuzz-worker'
import { headerValue, pathJunk } from './hostile-requests'

const SEED = chooseSeed('ARENA_FUZZ_SEED', 'fuzz')

/**
 * Worker threads that fuzz routes beside this one (ARENA_FUZZ_WORKERS
 * overrides; 0 runs every route here): one on SQLite, two on PostgreSQL.
 * Routes take turns: route i runs on thread i mod (WORKERS + 1), and when a
 * route's test starts the next WORKERS routes start on the other threads, so
 * the 2-core CI machine uses both cores (on PostgreSQL a run waits for the
 * server about a quarter of its time, which a third thread fills). Each run is in a
 * world of its own (its copy of the template's data dir and database, its
 * own app, log, clock, argon2id gate, rate limiters and Steam stub), so
 * nothing one run does reaches another and every check holds per route as
 * before: its requests go one at a time, the error lines are its app's, the
 * invariants its world's, the known requests are sent to a fresh world. Only
 * Object.prototype is shared, within a thread, and checked after every route.
 * A replay (ARENA_FUZZ_PATH) runs every route on this thread. Under -t
 * (which a test file cannot see: bun keeps it out of process.argv) the routes
 * after a selected one start too, on the workers, and their outcomes are
 * dropped; ARENA_FUZZ_WORKERS=0 spares that.
 */
const WORKERS = PATH !== undefined ? 0 : (intEnv('ARENA_FUZZ_WORKERS') ?? (TEST_ENGINE === 'postgres' ? 2 : 1))

const routes = await listRoutes()
const tallies: Tally[] = []

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

/** A worker thread fuzzing the routes handed to it (fuzz-worker.ts), one at a time. */
class FuzzWorker {
  private readonly worker: Worker
  private readonly waiting = new Map<string, (outcome: RouteOutcome) => void>()
  private failed: string | null = null
  readonly ready: Promise<void>

  constructor(data: WorkerData) {
    this.worker = new Worker(new URL('./fuzz-worker.ts', import.meta.url), { workerData: data })
    this.ready = new Promise((resolve, reject) => {
      this.worker.on('message', (message: { ready?: true; route?: string; outcome?: RouteOutcome }) => {
        if (message.ready) return resolve()
        const outcome = message.outcome!
        if ('error' in outcome) {
          // Its text as the worker sent it, thrown by the route's test as any failure of a run here is.
          const sent = outcome.error as WorkerError
          outcome.error = new Error(`${sent.message}\n(on fuzz worker thread ${data.index}; its stack: ${sent.stack ?? 'none'})`)
        }
        this.waiting.get(message.route!)?.(outcome)
        this.waiting.delete(message.route!)
      })
      // A worker that dies fails the routes it held, and every route handed to it later.
      const fail = (why: string) => {
        this.failed = why
        reject(new Error(why))
        for (const [route, settle] of this.waiting) settle({ tally: emptyTally(route), error: new Error(why) })
        this.waiting.clear()
      }
      this.worker.on('error', (error: Error) => fail(`fuzz worker failed: ${error.stack ?? String(error)}`))
      this.worker.on('exit', (code) => fail(`fuzz worker exited (${code})`))
    })
  }

  run(route: string): Promise<RouteOutcome> {
    if (this.failed !== null) return Promise.resolve({ tally: emptyTally(route), error: new Error(this.failed) })
    return new Promise((resolve) => {
      this.waiting.set(route, resolve)
      this.worker.postMessage({ route })
    })
  }

  async stop(): Promise<void> {
    this.failed = 'fuzz worker stopped'
    this.worker.removeAllListeners('exit')
    await this.worker.terminate()
  }
}

const emptyTally = (route: string): Tally => ({ route, runs: 0, ms: 0, statuses: new Map(), renewals: 0, slowest: { ms: 0, what: '' } })

describe('fuzz: every route', () => {
  let template: Template
  const workers: FuzzWorker[] = []
  /** Runs begun, by route index: a test takes its route's, begun by the test before it or now. */
  const begun = new Map<number, Promise<RouteOutcome>>()
  /** Route i runs on thread i mod (WORKERS + 1): 0 is this one, k the k-th worker. */
  const runOf = (i: number): Promise<RouteOutcome> => {
    let run = begun.get(i)
    if (run === undefined) {
      const route = routes[i]!
      const name = `${route.method} ${route.path}`
      const thread = i % (workers.length + 1)
      run = (thread === 0 ? fuzzRoute(template, route, SEED) : workers[thread - 1]!.run(name)).catch((error: unknown) => ({ tally: emptyTally(name), error }))
      begun.set(i, run)
    }
    return run
  }
  beforeAll(async () => {
    template = await buildTemplate()
    const postgresSocketDir = TEST_ENGINE === 'postgres' && WORKERS > 0 ? (await startPostgres()).socketDir : undefined
    for (let k = 1; k <= WORKERS; k++) {
      workers.push(new FuzzWorker({ index: k, template: { dir: template.dir, databaseEnv: template.databaseEnv, values: template.values }, seed: SEED, ...(postgresSocketDir !== undefined ? { postgresSocketDir } : {}) }))
    }
    await Promise.all(workers.map((w) => w.ready))
  }, 60_000)
  afterAll(async () => {
    // A run begun for a test that then did not run (a failure with --bail) still closes its world first.
    await Promise.all(begun.values())
    await Promise.all(workers.map((w) => w.stop()))
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

  for (const [i, route] of routes.entries()) {
    const name = `${route.method} ${route.path}`
    test(
      name,
      async () => {
        const run = runOf(i)
        // The next routes start now on the other threads.
        for (let j = i + 1; j <= i + workers.length && j < routes.length; j++) runOf(j)
        const outcome = await run
        begun.delete(i)
        tallies.push(outcome.tally)
        if ('error' in outcome) throw outcome.error
        const { known, accepted, refused, errorLines, problems } = outcome
        expect({ route: name, accepted, refused, statuses: known }).toEqual({
          route: name,
          accepted: true,
          refused: true,
          statuses: known,
        })
        expect(errorLines).toEqual([])
        expect(problems).toEqual([])
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
          params(SEED),
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
