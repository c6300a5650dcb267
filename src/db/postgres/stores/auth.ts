// The auth store on PostgreSQL: the queries written once (src/db/stores/auth.ts),
// and the lookup behind every authenticated request, outside a unit of work,
// as one statement for all the requests of an event-loop turn.
import { sql } from 'drizzle-orm'
import type { SessionWithUser } from '../../../modules/auth/store'
import { batchTurn } from '../../../shared/batch'
import { AuthQueries, sessionWithUserQuery, toSessionWithUser } from '../../stores/auth'
import type { Tables } from '../../stores/scope'
import type { PgDb } from '../connection'
import type { PostgresScope } from '../scope'

/** Requests whose session lookups one statement answers at most. */
const MAX_LOOKUPS = 256

/**
 * The session lookups of one event-loop turn in one statement: `WHERE id IN
 * (SELECT unnest($1))` over the distinct ids, its SQL built by Drizzle once, run as a
 * prepared statement (one round trip, planned once per connection; unnamed
 * when the pool prepares nothing, ARENA_DATABASE_PREPARE=false, which
 * postgres.js's own option decides over Drizzle's `.prepare`). Each
 * request gets its own answer read from the database by this statement, so a
 * session revoked (on any instance) before the statement runs is refused: the
 * batch is the requests of one turn, and nothing is kept after it.
 * Measured (docs/performance.md, "PostgreSQL: the authenticated read (issue
 * 43)").
 */
export function batchedSessionLookup(db: PgDb, t: Tables): (sessionId: string) => Promise<SessionWithUser | null> {
  const query = sessionWithUserQuery(db, t)
    // Not `= ANY($1)`: PostgreSQL plans that one again at every run (its
    // custom plan for the array given looks cheaper than the generic one),
    // measured 90 µs of the backend's CPU a run against 37 µs for this form,
    // whose generic plan is kept (a nested loop over the pkey's index).
    .where(sql`${t.authSessions.id} IN (SELECT unnest(${sql.placeholder('ids')}::text[]))`)
    .prepare('arena_sessions_with_users')
  return batchTurn(
    async (ids: readonly string[]) => {
      // A client's requests in one turn often share a session: read once, answered to each.
      const rows = await query.execute({ ids: ids.length === 1 ? ids : [...new Set(ids)] })
      const byId = new Map(rows.map((row) => [row.id, row]))
      return ids.map((id) => {
        const row = byId.get(id)
        return row === undefined ? null : toSessionWithUser(row)
      })
    },
    { maxSize: MAX_LOOKUPS },
  )
}

export class PostgresAuthStore extends AuthQueries {
  constructor(protected override readonly scope: PostgresScope) {
    super(scope)
  }

  // On the pool, batched with the turn's other lookups; in a unit of work, its own statement on the transaction.
  override sessionWithUser(sessionId: string): Promise<SessionWithUser | null> {
    const lookup = this.scope.batches?.sessionWithUser
    return lookup ? lookup(sessionId) : super.sessionWithUser(sessionId)
  }
}
