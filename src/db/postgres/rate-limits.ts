// The rate limiter's counters on PostgreSQL (src/shared/rate-limit.ts): every
// instance counts in the same rows, so a limit holds across them. One
// statement for all the counters of every request of one event-loop turn
// (batchTurn), in autocommit on the pool, never inside a unit of work (a
// request's transaction, let alone a money one, never waits on a counter).
// Windows are aligned to the database's
// clock, not the instance's, so instances with skewed clocks share windows.
import postgres from 'postgres'
import { batchTurn } from '../../shared/batch'
import type { RateLimitCount, RateLimitHit, RateLimitStore } from '../../shared/rate-limit'
import { connectOptions } from './connection'

/**
 * A key as PostgreSQL text holds it, so that the row's key, read back, is the
 * one asked for: U+0000, which a client can put in a key (a game id in a URL,
 * %00), becomes U+FFFD (sent as it is it would fail the statement, and with it
 * the hits of every other request of the batch), and so does a lone surrogate
 * (which the UTF-8 encoder would turn into U+FFFD anyway).
 */
function storable(key: string): string {
  const formed = key.toWellFormed()
  return formed.includes('\0') ? formed.replaceAll('\0', '\uFFFD') : formed
}

/** Requests whose hits one statement counts at most (a turn's further requests go in the next). */
const MAX_BATCH = 256

export interface PostgresRateLimitStore extends RateLimitStore {
  close(): Promise<void>
}

/**
 * Its own few connections, apart from the pool units of work use, with
 * synchronous_commit off: a counter is not worth a WAL flush per request
 * (measured: with the flush, GET /me lost two thirds of its rate on a durable
 * cluster), and a crash that loses the last few counts only forgets requests
 * of a window that is ending anyway. Never used for anything else.
 */
export function postgresRateLimitStore(url: string, connections: number, prepare = true): PostgresRateLimitStore {
  const target = connectOptions(url)
  const sql = postgres(target.url, {
    ...(target.path ? { path: target.path } : {}),
    max: connections,
    prepare,
    connect_timeout: 5,
    idle_timeout: 60,
    max_lifetime: 30 * 60,
    onnotice: () => {},
    connection: { application_name: 'arena rate limits', synchronous_commit: 'off' },
  })
  /**
   * One statement for the hits of every request of one event-loop turn
   * (batchTurn): each distinct counter once, incremented by the number of
   * hits on it, since PostgreSQL refuses an upsert that touches one row twice.
   * The row's new count is `total`; its k hits get total − k + 1, …, total, in
   * call order: the same counts as k statements one after another, each hit
   * its own. A failed statement fails only that batch's requests (the plugin
   * then lets them through uncounted, as it does for a single hit).
   */
  const hitBatch = async (requests: readonly (readonly RateLimitHit[])[]): Promise<RateLimitCount[][]> => {
    // policy → key → its counter in the statement. One instance gives a policy one window length.
    const counters = new Map<string, Map<string, { index: number; hits: number }>>()
    const policies: string[] = []
    const keys: string[] = []
    const windows: number[] = []
    const increments: number[] = []
    // Each hit's counter and its place among that counter's hits (1-based).
    const placed = requests.map((hits) =>
      hits.map((hit) => {
        let byKey = counters.get(hit.policy)
        if (byKey === undefined) counters.set(hit.policy, (byKey = new Map()))
        const key = storable(hit.key)
        let counter = byKey.get(key)
        if (counter === undefined) {
          counter = { index: policies.length, hits: 0 }
          byKey.set(key, counter)
          policies.push(hit.policy)
          keys.push(key)
          windows.push(hit.windowMs)
          increments.push(0)
        }
        counter.hits++
        increments[counter.index]!++
        return { counter, place: counter.hits }
      }),
    )
    const rows = await sql<{ policy: string; key: string; count: number; window_start: string; now_ms: string }[]>`
      INSERT INTO rate_limit_counters AS c (policy, key, window_start, window_end, count)
      SELECT u.policy, u.key, n.ms - n.ms % u.window_ms, n.ms - n.ms % u.window_ms + u.window_ms, u.hits
      FROM unnest(${policies}::text[], ${keys}::text[], ${windows}::bigint[], ${increments}::int[]) AS u(policy, key, window_ms, hits),
           (SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS ms) AS n
      ON CONFLICT (policy, key, window_start) DO UPDATE SET count = c.count + excluded.count
      RETURNING c.policy, c.key, c.count, c.window_start::text AS window_start, (extract(epoch FROM clock_timestamp()) * 1000)::bigint::text AS now_ms`
    const counted: RateLimitCount[] = new Array(policies.length)
    for (const row of rows) {
      const index = counters.get(row.policy)!.get(row.key)!.index
      counted[index] = { count: row.count, windowStart: Number(row.window_start), nowMs: Number(row.now_ms) }
    }
    return placed.map((hits) =>
      hits.map(({ counter, place }) => {
        const { count, windowStart, nowMs } = counted[counter.index]!
        return { count: count - counter.hits + place, windowStart, nowMs }
      }),
    )
  }
  return {
    hit: batchTurn(hitBatch, { maxSize: MAX_BATCH }),
    // By the database's clock, like the windows (the caller's `now` may be another instance's, or a test's).
    async prune() {
      const result = await sql`DELETE FROM rate_limit_counters WHERE window_end <= (extract(epoch FROM clock_timestamp()) * 1000)::bigint`
      return result.count
    },
    close: () => sql.end({ timeout: 5 }),
  }
}
