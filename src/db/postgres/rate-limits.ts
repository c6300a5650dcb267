// The rate limiter's counters on PostgreSQL (src/shared/rate-limit.ts): every
// instance counts in the same rows, so a limit holds across them. One
// statement per request for all its counters, in autocommit on the pool,
// never inside a unit of work (a request's transaction, let alone a money
// one, never waits on a counter). Windows are aligned to the database's
// clock, not the instance's, so instances with skewed clocks share windows.
import postgres from 'postgres'
import type { RateLimitStore } from '../../shared/rate-limit'
import { connectOptions } from './connection'

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
  return {
    async hit(hits) {
      const policies = hits.map((hit) => hit.policy)
      const keys = hits.map((hit) => hit.key)
      const windows = hits.map((hit) => hit.windowMs)
      // One statement for every counter of the request; the policies of one request differ, so each row answers one hit.
      const rows = await sql<{ policy: string; count: number; window_start: string; now_ms: string }[]>`
        INSERT INTO rate_limit_counters AS c (policy, key, window_start, window_end, count)
        SELECT u.policy, u.key, n.ms - n.ms % u.window_ms, n.ms - n.ms % u.window_ms + u.window_ms, 1
        FROM unnest(${policies}::text[], ${keys}::text[], ${windows}::bigint[]) AS u(policy, key, window_ms),
             (SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS ms) AS n
        ON CONFLICT (policy, key, window_start) DO UPDATE SET count = c.count + 1
        RETURNING c.policy, c.count, c.window_start::text AS window_start, (extract(epoch FROM clock_timestamp()) * 1000)::bigint::text AS now_ms`
      return hits.map((hit) => {
        const row = rows.find((candidate) => candidate.policy === hit.policy)!
        return { count: row.count, windowStart: Number(row.window_start), nowMs: Number(row.now_ms) }
      })
    },
    // By the database's clock, like the windows (the caller's `now` may be another instance's, or a test's).
    async prune() {
      const result = await sql`DELETE FROM rate_limit_counters WHERE window_end <= (extract(epoch FROM clock_timestamp()) * 1000)::bigint`
      return result.count
    },
    close: () => sql.end({ timeout: 5 }),
  }
}
