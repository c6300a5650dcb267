// The outbox on PostgreSQL (src/db/stores/events.ts). `seq` is an identity
// column: never reused, but with concurrent writers a sequence hands out
// numbers in the order transactions ask, not the order they commit; a poll that saw seq 8 commit
// before seq 7 would move its cursor past 7 for good. So an append first
// takes a transaction-level advisory lock (ADVISORY_LOCKS.outbox) and draws
// its seq under it: the lock is held to the commit, so event-appending
// transactions draw and commit one after another, seq order is commit order,
// and a cursor never skips an event committed later with a lower seq (the
// per-user ordering the plane promises, as one writer gives it on SQLite).
import type { EventTopic } from '../../../modules/events/catalogue'
import type { OutboxEvent, StoredEvent } from '../../../modules/events/store'
import { EventsQueries } from '../../stores/events'
import { ADVISORY_LOCKS, EVENTS_CHANNEL, type PostgresScope } from '../scope'

/** The lock key as text: postgres.js's parameter types do not include bigint. */
const OUTBOX_LOCK = ADVISORY_LOCKS.outbox.toString()

/** A page row as postgres.js hands it over: int8 as a string, timestamptz as text (see scope.ts), json parsed. */
interface RawEvent {
  seq: string
  id: string
  topic: EventTopic
  type: string
  data: Record<string, unknown>
  created_at: string
}

export class PostgresEventsStore extends EventsQueries {
  constructor(protected override readonly scope: PostgresScope) {
    super(scope)
  }

  // This instance's polls wake after the commit (EventsQueries.append);
  // other instances' through the NOTIFY below.
  protected async insert(id: string, event: OutboxEvent, now: Date): Promise<void> {
    const { userId } = event
    // One round trip: the lock (in a subquery PostgreSQL does not flatten, a
    // volatile function in its select list) is taken before the row's seq is
    // drawn; pg_notify queues the wake-up for other instances, delivered by
    // PostgreSQL on commit, dropped on rollback (NOTIFY is transactional).
    // Timestamps go over as ISO text: Drizzle has made postgres.js pass Date
    // parameters through unserialized (scope.ts).
    await this.scope.sql`
      WITH appended AS (
        INSERT INTO outbox_events (id, user_id, topic, type, data, created_at)
        SELECT ${id}::text, ${userId}::text, ${event.topic}::text, ${event.type}::text, ${JSON.stringify(event.data)}::json, ${now.toISOString()}::timestamptz
        FROM (SELECT pg_advisory_xact_lock(${OUTBOX_LOCK}::bigint)) AS outbox_lock
        RETURNING user_id
      )
      SELECT pg_notify(${EVENTS_CHANNEL}, user_id) FROM appended WHERE user_id IS NOT NULL`
  }

  async page(userId: string, afterSeq: number, topics: readonly EventTopic[], limit: number): Promise<StoredEvent[]> {
    // The long poll's hot path: one statement postgres.js prepares once per
    // connection, without building it through Drizzle on every poll.
    const rows = await this.scope.sql<RawEvent[]>`
      SELECT seq, id, topic, type, data, created_at FROM outbox_events
      WHERE user_id = ${userId} AND seq > ${afterSeq} AND topic = ANY(${topics as EventTopic[]}::text[])
      ORDER BY seq LIMIT ${limit}`
    return rows.map((r) => ({ seq: Number(r.seq), id: r.id, topic: r.topic, type: r.type, data: r.data, createdAt: new Date(r.created_at) }))
  }
}
