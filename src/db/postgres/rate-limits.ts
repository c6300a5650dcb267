// The rate limiter's counters on PostgreSQL (src/shared/rate-limit.ts): every
// instance counts in the same rows, so a limit holds across them. One
// statement per request for all its counters, in autocommit on the pool,
// never inside a unit of work (a request's transaction, let alone a money
// one, never waits on a counter). Windows are aligned to the database's
// clock, not the instance's, so instances with skewed clocks share windows.
import type postgres from 'postgres'
import type { RateLimitCount, RateLimitStore } from '../../shared/rate-limit'

export function postgresRateLimitStore(sql: postgres.Sql): RateLimitStore {
  return {
    async hit(hits) {
      const policies = hits.map((hit) => hit.policy)
      const keys = hits.map((hit) => hit.key)
      const windows = hits.map((hit) => hit.windowMs)
      // ord: RETURNING comes back in no promised order; each row says which hit it answers.
      const rows = await sql<{ ord: number; count: number; window_start: string; now_ms: string }[]>`
        WITH now AS (SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS ms),
        hits AS (
          SELECT u.ord, u.policy, u.key, u.window_ms, (now.ms - now.ms % u.window_ms) AS window_start, now.ms AS now_ms
          FROM unnest(${policies}::text[], ${keys}::text[], ${windows}::bigint[]) WITH ORDINALITY AS u(policy, key, window_ms, ord), now
        ),
        counted AS (
          INSERT INTO rate_limit_counters AS c (policy, key, window_start, window_end, count)
          SELECT policy, key, window_start, window_start + window_ms, 1 FROM hits
          ON CONFLICT (policy, key, window_start) DO UPDATE SET count = c.count + 1
          RETURNING c.policy, c.key, c.window_start, c.count
        )
        SELECT hits.ord::int AS ord, counted.count, counted.window_start::text AS window_start, hits.now_ms::text AS now_ms
        FROM hits JOIN counted ON counted.policy = hits.policy AND counted.key = hits.key AND counted.window_start = hits.window_start
        ORDER BY hits.ord`
      const counts: RateLimitCount[] = new Array(hits.length)
      for (const row of rows) counts[row.ord - 1] = { count: row.count, windowStart: Number(row.window_start), nowMs: Number(row.now_ms) }
      return counts
    },
    // By the database's clock, like the windows (the caller's `now` may be another instance's, or a test's).
    async prune() {
      const result = await sql`DELETE FROM rate_limit_counters WHERE window_end <= (extract(epoch FROM clock_timestamp()) * 1000)::bigint`
      return result.count
    },
  }
}
