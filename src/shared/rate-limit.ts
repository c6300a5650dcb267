// Rate limits (contract §20): which limits apply to which route, the pure
// fixed-window decider, the store seam that counts, and the ARENA_RATE_LIMITS
// override. No I/O here: the plugin (src/plugins/rate-limit.ts) counts through
// a RateLimitStore, in process on SQLite (one server per data dir) and in the
// database on PostgreSQL (src/db/postgres/rate-limits.ts), so a limit holds
// across instances.

/** Whose requests a limit counts: the client's address, the signed-in account (player or operator), the game of a game-sdk route. */
export type Dimension = 'address' | 'account' | 'game'
export const DIMENSIONS: readonly Dimension[] = ['address', 'account', 'game']

export interface Limit {
  /** Requests allowed per window. */
  limit: number
  windowS: number
}

export type GroupLimits = Partial<Record<Dimension, Limit>>

export interface RouteGroup {
  name: string
  /** For the docs and error messages. */
  describe: string
  /** Whether a route (method, Elysia's route pattern) belongs here; the first group that takes it wins. */
  takes(method: string, route: string): boolean
  defaults: GroupLimits
}

const perMinute = (limit: number): Limit => ({ limit, windowS: 60 })
const API = '/api/v1'
const SIGN_IN = new Set([
  `${API}/user/register`,
  `${API}/user/login`,
  `${API}/user/login/device`,
  `${API}/user/login/steam`,
  `${API}/user/password/forgot`,
  `${API}/user/password/reset`,
  `${API}/user/email/verify`,
  `${API}/user/email/resend`,
  `${API}/admin/sessions`,
  '/console/login',
  '/console/login/password',
  // The device-code page (contract §13): its password sign-in, and typing a code (RFC 8628 asks that guessing user codes be limited).
  '/device/login',
  '/device/approve',
])
/** Sign-in routes a browser reaches by GET: the OpenID Connect web flow's start (a stored flow per call) and callback. */
const SIGN_IN_PAGES = new Set([`${API}/auth/oidc/:provider/start`, `${API}/auth/oidc/:provider/callback`])
/** The OpenID Connect sign-ins (contract §13): the ID-token login and the web flow's code exchange. */
const OIDC_SIGN_IN = new Set([`${API}/user/login/oidc/:provider`, `${API}/user/login/exchange`])
const isWrite = (method: string) => method !== 'GET' && method !== 'HEAD'

/**
 * Every route falls in one group (the last, `general`, takes what no other
 * does). A group with an `account` limit must hold only routes that need a
 * bearer (player) or an operator credential: the account is known only once
 * the credential is checked (test/security/rate-limits.test.ts holds them to
 * it). The defaults are per minute, sized for a game client: a player's
 * screens poll and refresh a few times a second at most; writes that store a
 * row per call (PIN sessions, game sessions, security reports) are tighter.
 */
export const ROUTE_GROUPS: readonly RouteGroup[] = [
  {
    name: 'sign-in',
    describe: 'register, login (password, guest, Steam, OpenID Connect), password and email codes, operator and console sign-in, the device page\'s sign-in and code entry',
    takes: (method, route) => (method === 'POST' && (SIGN_IN.has(route) || OIDC_SIGN_IN.has(route))) || (method === 'GET' && SIGN_IN_PAGES.has(route)),
    defaults: { address: perMinute(60) },
  },
  {
    // Each call stores a device code that lives ARENA_DEVICE_CODE_TTL_S (10 minutes by default): at
    // most 100 live codes per address. A device asks for one per sign-in.
    name: 'device-code',
    describe: 'POST /auth/device-code (a stored device code per call)',
    takes: (method, route) => method === 'POST' && route === `${API}/auth/device-code`,
    defaults: { address: perMinute(10) },
  },
  {
    // A device polls every 5 s (more slowly after a slow_down): 12 a minute, so 120 lets ten
    // devices behind one address sign in at once. The device code itself is a 256-bit secret.
    name: 'device-poll',
    describe: 'POST /auth/device-code/token (a device polling for its tokens)',
    takes: (method, route) => method === 'POST' && route === `${API}/auth/device-code/token`,
    defaults: { address: perMinute(120) },
  },
  {
    // Each rotation stores a refresh token and a session.refreshed event (kept for the
    // event retention): counted per account too, so one account's rotations bound what
    // it adds to the outbox. A client rotates once per access token (15 minutes by
    // default); 3 a minute leaves room for several devices and retries.
    name: 'refresh',
    describe: 'POST /auth/validate (a refresh token and an event per call)',
    takes: (method, route) => method === 'POST' && route === `${API}/auth/validate`,
    defaults: { address: perMinute(60), account: perMinute(3) },
  },
  {
    name: 'pin-session',
    describe: 'POST /security/pin-session (a PIN session row per call)',
    takes: (method, route) => method === 'POST' && route === `${API}/security/pin-session`,
    defaults: { address: perMinute(120), account: perMinute(10) },
  },
  {
    name: 'security-report',
    describe: 'POST /security/events (a stored client report per call)',
    takes: (method, route) => method === 'POST' && route === `${API}/security/events`,
    defaults: { address: perMinute(60), account: perMinute(10) },
  },
  {
    name: 'game-session',
    describe: 'POST /game-sdk/{gameId}/sessions (a game session row per call)',
    takes: (method, route) => method === 'POST' && route === `${API}/game-sdk/:gameId/sessions`,
    defaults: { address: perMinute(300), account: perMinute(30), game: perMinute(6000) },
  },
  {
    name: 'game-result',
    describe: 'POST /game-sdk/{gameId}/results',
    takes: (method, route) => method === 'POST' && route === `${API}/game-sdk/:gameId/results`,
    defaults: { address: perMinute(300), account: perMinute(60), game: perMinute(6000) },
  },
  {
    // A game server reports for many matches from one address: no account, and the game counts
    // only behind an accepted credential, so per address alone. Each accepted call stores its
    // signature for its 60 s window; a refused one stores nothing.
    name: 'server-result',
    describe: 'POST /game-servers/{gameId}/results (a game server\'s signed result)',
    takes: (method, route) => method === 'POST' && route === `${API}/game-servers/:gameId/results`,
    defaults: { address: perMinute(1200) },
  },
  {
    name: 'operator',
    describe: 'the operator API, /admin/… (account: the operator)',
    takes: (_method, route) => route.startsWith(`${API}/admin/`),
    defaults: { address: perMinute(600), account: perMinute(600) },
  },
  {
    // Each call stores a ticket that lives 30 s (contract §14): at most 10 live per account.
    // A client mints one per connection, reconnects included.
    name: 'socket-ticket',
    describe: 'POST /events/socket-ticket (a stored ticket per call)',
    takes: (method, route) => method === 'POST' && route === `${API}/events/socket-ticket`,
    defaults: { address: perMinute(120), account: perMinute(20) },
  },
  {
    // The upgrade carries a ticket, not a bearer: counted per address only.
    name: 'socket',
    describe: 'GET /events/socket (opening a WebSocket with a ticket)',
    takes: (method, route) => method === 'GET' && route === `${API}/events/socket`,
    defaults: { address: perMinute(120) },
  },
  {
    name: 'events',
    describe: 'GET /events (the long poll)',
    takes: (method, route) => method === 'GET' && route === `${API}/events`,
    defaults: { address: perMinute(600), account: perMinute(240) },
  },
  {
    name: 'player-write',
    describe: 'every other signed-in write (logout, PIN, registrations, deletion, …)',
    takes: (method, route) => isWrite(method) && route.startsWith(`${API}/`),
    defaults: { address: perMinute(300), account: perMinute(120) },
  },
  {
    name: 'player-read',
    describe: 'every other signed-in read (/me, wallet, tournaments, matches, export)',
    takes: (method, route) => !isWrite(method) && route.startsWith(`${API}/`),
    defaults: { address: perMinute(900), account: perMinute(600) },
  },
  {
    name: 'general',
    describe: 'everything else: health, metrics, the API docs, the console',
    takes: () => true,
    defaults: { address: perMinute(600) },
  },
]

export const ROUTE_GROUP_NAMES: readonly string[] = ROUTE_GROUPS.map((group) => group.name)

/** The limits in force, by group: the defaults with ARENA_RATE_LIMITS applied. A dimension absent is not limited. */
export type RateLimits = ReadonlyMap<string, GroupLimits>

export function defaultRateLimits(): RateLimits {
  return new Map(ROUTE_GROUPS.map((group) => [group.name, { ...group.defaults }]))
}

export const RATE_LIMIT_BOUNDS = { limit: { min: 1, max: 10_000_000 }, windowS: { min: 1, max: 86_400 } } as const

/**
 * ARENA_RATE_LIMITS: a JSON object from group name (or "*", every group) to
 * `false` (no limit) or an object from dimension to `{ limit, windowS }` or
 * `false`. "*" is applied first, to the dimensions each group has; a named
 * group then overrides it. Problems are collected, not thrown: config.ts
 * reports them with the other settings'.
 */
export function parseRateLimits(text: string | undefined, problems: string[]): RateLimits {
  const limits = new Map<string, GroupLimits>()
  for (const [name, groupLimits] of defaultRateLimits()) limits.set(name, groupLimits)
  if (text === undefined) return limits
  const name = 'ARENA_RATE_LIMITS'
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    problems.push(`${name} must be JSON, such as {"player-read":{"account":{"limit":600,"windowS":60}}} (see docs/api.md, "Rate limits")`)
    return limits
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    problems.push(`${name} must be a JSON object from route group to limits, such as {"player-read":{"account":{"limit":600,"windowS":60}}}`)
    return limits
  }
  const entries = Object.entries(parsed as Record<string, unknown>)
  // "*" first, whatever its place in the text: a named group always wins.
  entries.sort(([a], [b]) => (a === '*' ? -1 : b === '*' ? 1 : 0))
  for (const [groupName, value] of entries) {
    const targets = groupName === '*' ? ROUTE_GROUPS : ROUTE_GROUPS.filter((group) => group.name === groupName)
    if (targets.length === 0) {
      problems.push(`${name}: "${groupName}" is not a route group (known: *, ${ROUTE_GROUP_NAMES.join(', ')})`)
      continue
    }
    if (value === false) {
      for (const group of targets) limits.set(group.name, {})
      continue
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      problems.push(`${name}: "${groupName}" must be false (no limit) or an object of address, account, game limits`)
      continue
    }
    for (const [dimension, given] of Object.entries(value as Record<string, unknown>)) {
      if (!(DIMENSIONS as readonly string[]).includes(dimension)) {
        problems.push(`${name}: "${groupName}" has no "${dimension}" (known: ${DIMENSIONS.join(', ')})`)
        continue
      }
      const limit = given === false ? null : parseLimit(given, `${name}: "${groupName}".${dimension}`, problems)
      if (limit === undefined) continue
      for (const group of targets) {
        if (group.defaults[dimension as Dimension] === undefined) {
          // "*" sets what each group has; a group named alone must have it.
          if (groupName !== '*') problems.push(`${name}: "${groupName}" is not limited per ${dimension} (it has: ${Object.keys(group.defaults).join(', ')})`)
          continue
        }
        const next = { ...limits.get(group.name) }
        if (limit === null) delete next[dimension as Dimension]
        else next[dimension as Dimension] = limit
        limits.set(group.name, next)
      }
    }
  }
  return limits
}

function parseLimit(value: unknown, where: string, problems: string[]): Limit | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    problems.push(`${where} must be false (no limit) or { "limit": n, "windowS": s }`)
    return undefined
  }
  const fields = value as Record<string, unknown>
  let ok = true
  for (const key of Object.keys(fields)) {
    if (key !== 'limit' && key !== 'windowS') {
      problems.push(`${where} has an unknown field "${key}" (known: limit, windowS)`)
      ok = false
    }
  }
  for (const key of ['limit', 'windowS'] as const) {
    const { min, max } = RATE_LIMIT_BOUNDS[key]
    const n = fields[key]
    if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max) {
      problems.push(`${where}.${key} must be a whole number between ${min} and ${max}, got ${JSON.stringify(n) ?? 'nothing'}`)
      ok = false
    }
  }
  return ok ? { limit: fields.limit as number, windowS: fields.windowS as number } : undefined
}

// ---- The decider ------------------------------------------------------------

/**
 * Fixed windows: a counter per (policy, key, window), the window aligned to
 * the epoch so every instance computes the same one. Cheap to count (one
 * upsert, no per-request timestamps) at the price of a burst of up to twice
 * the limit across a window's edge (docs/decisions.md).
 */
export function windowStartMs(nowMs: number, windowMs: number): number {
  return nowMs - (nowMs % windowMs)
}

export interface Verdict {
  allowed: boolean
  /** Requests left in this window (draft-ietf-httpapi-ratelimit-headers `r`). */
  remaining: number
  /** Whole seconds until the window ends (`t`, and Retry-After when refused): at least 1. */
  resetS: number
}

/** `count` already includes this request. */
export function decide(count: number, limit: number, windowStart: number, windowMs: number, nowMs: number): Verdict {
  const left = windowStart + windowMs - nowMs
  return {
    allowed: count <= limit,
    remaining: count >= limit ? 0 : limit - count,
    resetS: left <= 1000 ? 1 : Math.ceil(left / 1000),
  }
}

// ---- The store seam ---------------------------------------------------------

/** One counter to increment: the policy (`group.dimension`), whose requests, and its window. */
export interface RateLimitHit {
  policy: string
  key: string
  windowMs: number
}

export interface RateLimitCount {
  count: number
  windowStart: number
  /** The time the count was taken at (the database's, on PostgreSQL). */
  nowMs: number
}

/**
 * Counts requests. `hit` increments every counter of one request at once and
 * returns their new values in the same order: synchronously in process, a
 * promise when a database counts. Never part of a request's unit of work.
 */
export interface RateLimitStore {
  hit(hits: readonly RateLimitHit[]): RateLimitCount[] | Promise<RateLimitCount[]>
  /** Deletes counters whose window has ended; returns how many (housekeeping). */
  prune(nowMs: number): Promise<number>
}

/**
 * SQLite's store: counters in this process's memory, which is exact while one
 * server serves a data dir (the data-dir lock's rule). Expired windows are
 * swept at most every SWEEP_MS, on a hit, so the map holds at most the
 * counters of the windows still running.
 */
export function inProcessRateLimitStore(clock: { now(): Date }): RateLimitStore & { size(): number } {
  const SWEEP_MS = 10_000
  // policy → key → counter: no key string built per request.
  const counters = new Map<string, Map<string, { windowStart: number; windowEnd: number; count: number }>>()
  let nextSweep = 0
  const sweep = (nowMs: number) => {
    let removed = 0
    for (const byKey of counters.values()) {
      for (const [key, counter] of byKey) {
        if (counter.windowEnd <= nowMs) {
          byKey.delete(key)
          removed++
        }
      }
    }
    return removed
  }
  return {
    hit(hits) {
      const nowMs = clock.now().getTime()
      if (nowMs >= nextSweep) {
        sweep(nowMs)
        nextSweep = nowMs + SWEEP_MS
      }
      const counts: RateLimitCount[] = []
      for (const { policy, key, windowMs } of hits) {
        let byKey = counters.get(policy)
        if (byKey === undefined) counters.set(policy, (byKey = new Map()))
        const start = windowStartMs(nowMs, windowMs)
        let counter = byKey.get(key)
        if (counter === undefined || counter.windowStart !== start) {
          counter = { windowStart: start, windowEnd: start + windowMs, count: 0 }
          byKey.set(key, counter)
        }
        counter.count++
        counts.push({ count: counter.count, windowStart: start, nowMs })
      }
      return counts
    },
    async prune(nowMs) {
      return sweep(nowMs)
    },
    size: () => {
      let size = 0
      for (const byKey of counters.values()) size += byKey.size
      return size
    },
  }
}
