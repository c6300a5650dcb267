// The generic rate limiter (contract §20), in front of every route: the
// route's group (src/shared/rate-limit.ts) names its limits per client
// address, per account and per game; the store counts them (in process on
// SQLite, in the database on PostgreSQL). Every answer of a limited route,
// success or error, carries RateLimit-Policy and RateLimit as
// draft-ietf-httpapi-ratelimit-headers (-09 and later) writes them; over a
// limit the answer is 429 rate_limited with Retry-After.
//
// A group limited per account is counted once the credential is checked:
// the auth macro (src/plugins/auth.ts) and the operator guard call
// settleRateLimit with the account, or with null when the credential fails,
// and then only the address counts. Everything else counts in this plugin's
// transform, which runs before any route's own.
import { Elysia } from 'elysia'
import { AppError, describeError } from '../shared/errors'
import type { Logger } from '../shared/logger'
import { decide, type Dimension, type Limit, type RateLimits, type RateLimitHit, type RateLimitStore, ROUTE_GROUPS } from '../shared/rate-limit'
import { requestState } from './request-context'

interface Policy {
  dimension: Dimension
  /** The policy's name in the headers and the store: `group.dimension`. */
  name: string
  limit: Limit
  windowMs: number
  /** Its RateLimit-Policy item, written once. */
  item: string
}

interface CompiledGroup {
  name: string
  policies: Policy[]
  /** The RateLimit-Policy field value, written once. */
  policyHeader: string
  /** Counted once the account is known (settleRateLimit). */
  deferred: boolean
}

interface Pending {
  group: CompiledGroup
  address: string
  game: string | undefined
  headers: Record<string, unknown>
  /** Counts this request, with the account when there is one. */
  count(account: string | null): void | Promise<void>
}

const pending = new WeakMap<Request, Pending>()
// Addresses and game ids are the client's text: bounded before they key a counter.
const MAX_KEY_LENGTH = 128

export interface RateLimitOptions {
  limits: RateLimits
  store: RateLimitStore
  addressOf(request: Request, server: { requestIP(request: Request): { address: string } | null } | null): string
  logger: Logger
}

// A failing counter store (PostgreSQL unreachable) lets requests through
// unlimited rather than fail them: /healthz must answer while the database
// is away, and every other route meets the outage itself and answers 503.
// Logged at most once a minute.
const STORE_ERROR_LOG_MS = 60_000

function compile(limits: RateLimits): CompiledGroup[] {
  return ROUTE_GROUPS.map((group) => {
    const policies: Policy[] = []
    const given = limits.get(group.name) ?? {}
    for (const dimension of ['address', 'account', 'game'] as const) {
      const limit = given[dimension]
      if (limit === undefined) continue
      const name = `${group.name}.${dimension}`
      policies.push({ dimension, name, limit, windowMs: limit.windowS * 1000, item: `"${name}";q=${limit.limit};w=${limit.windowS}` })
    }
    return {
      name: group.name,
      policies,
      policyHeader: policies.map((policy) => policy.item).join(', '),
      deferred: policies.some((policy) => policy.dimension === 'account'),
    }
  })
}

export function rateLimit(options: RateLimitOptions) {
  const groups = compile(options.limits)
  const byName = new Map(groups.map((group) => [group.name, group]))
  // method → route pattern → its group, decided once per route (no string built per request).
  const routeGroups = new Map<string, Map<string, CompiledGroup | null>>()
  const groupOf = (method: string, route: string): CompiledGroup | null => {
    let byRoute = routeGroups.get(method)
    if (byRoute === undefined) routeGroups.set(method, (byRoute = new Map()))
    let group = byRoute.get(route)
    if (group === undefined) {
      const found = ROUTE_GROUPS.find((candidate) => candidate.takes(method, route))!
      const compiled = byName.get(found.name)!
      group = compiled.policies.length === 0 ? null : compiled
      byRoute.set(route, group)
    }
    return group
  }

  const count = (request: Request, job: Pending, account: string | null): void | Promise<void> => {
    const hits: RateLimitHit[] = []
    const applied: Policy[] = []
    for (const policy of job.group.policies) {
      // The game counts only with an accepted credential: a stranger's requests cannot spend a game's quota.
      const key = policy.dimension === 'address' ? job.address : account === null ? null : policy.dimension === 'account' ? account : job.game
      // No account (credential refused) or no game: that dimension is not counted.
      if (key === null || key === undefined) continue
      hits.push({ policy: policy.name, key, windowMs: policy.windowMs })
      applied.push(policy)
    }
    if (hits.length === 0) return
    const counted = options.store.hit(hits)
    if (counted instanceof Promise) return counted.then((counts) => conclude(request, job, applied, counts), storeFailed)
    conclude(request, job, applied, counted)
  }

  let lastStoreError = -Infinity
  const storeFailed = (error: unknown) => {
    const now = performance.now()
    if (now - lastStoreError < STORE_ERROR_LOG_MS) return
    lastStoreError = now
    options.logger.warn('rate limits not counted: the counter store failed', { error: describeError(error) })
  }

  const conclude = (request: Request, job: Pending, applied: Policy[], counts: { count: number; windowStart: number; nowMs: number }[]) => {
    let remaining = ''
    let retryAfter = 0
    for (let i = 0; i < applied.length; i++) {
      const policy = applied[i]!
      const { count, windowStart, nowMs } = counts[i]!
      const verdict = decide(count, policy.limit.limit, windowStart, policy.windowMs, nowMs)
      remaining += `${i === 0 ? '' : ', '}"${policy.name}";r=${verdict.remaining};t=${verdict.resetS}`
      if (!verdict.allowed && verdict.resetS > retryAfter) retryAfter = verdict.resetS
    }
    const headers = { 'ratelimit-policy': job.group.policyHeader, ratelimit: remaining }
    Object.assign(job.headers, headers)
    // The error handler clears what the route set and adds these back.
    const state = requestState(request)
    if (state) state.headers = headers
    if (retryAfter > 0) {
      throw new AppError('rate_limited', `Too many requests; retry in ${retryAfter} s`, { headers: { 'retry-after': String(retryAfter) } })
    }
  }

  return new Elysia({ name: 'arena/rate-limit' })
    .onTransform({ as: 'global' }, ({ request, route, server, params, set }) => {
      const group = groupOf(request.method, route)
      if (group === null) return
      const gameId = (params as Record<string, string | undefined> | undefined)?.gameId
      const job: Pending = {
        group,
        address: options.addressOf(request, server).slice(0, MAX_KEY_LENGTH),
        game: gameId?.slice(0, MAX_KEY_LENGTH),
        headers: set.headers,
        count: (account) => count(request, job, account),
      }
      if (group.deferred) {
        pending.set(request, job)
        return
      }
      return job.count(null)
    })
    .onBeforeHandle({ as: 'global' }, ({ request }) => {
      // A route of an account-limited group that checks no credential (a
      // wiring mistake the tests look for) is still counted per address.
      if (pending.has(request)) return settleRateLimit(request, null)
    })
}

/**
 * Counts a request of an account-limited group once its credential was
 * checked: `account` the user's or operator's id, null when the credential
 * was refused (then only the address counts). Throws the 429. Once per
 * request; a request of no such group is left alone.
 */
export function settleRateLimit(request: Request, account: string | null): void | Promise<void> {
  const job = pending.get(request)
  if (job === undefined) return
  pending.delete(request)
  return job.count(account)
}
