// The outbox on PostgreSQL (src/db/stores/events.ts). `seq` is an identity
// column: never reused, but with concurrent writers a sequence hands out
// numbers in the order transactions ask, not the order they commit; a poll that saw seq 8 commit
// before seq 7 would move its cursor past 7 for good. So an append first
// takes a transaction-level advisory lock (ADVISORY_LOCKS.outbox) and draws
// its seq under it: the lock is held to the commit, so event-appending
// transactions draw and commit one after another, seq order is commit order,
// and a cursor never skips an event committed later with a lower seq (the
// per-user ordering the plane promises, as one writer gives it on SQLite).
import type postgres from 'postgres'
import type { EventTopic } from '../../../modules/events/catalogue'
import { batchTurn } from '../../../shared/batch'
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

  // On the pool, batched with the turn's other pages; in a unit of work, its own statement on the transaction.
  async page(userId: string, afterSeq: number, topics: readonly EventTopic[], limit: number): Promise<StoredEvent[]> {
    const pages = this.scope.batches?.eventsPage
    if (pages) return pages({ userId, afterSeq, topics, limit })
    const rows = await this.scope.sql<RawEvent[]>`
      SELECT seq, id, topic, type, data, created_at FROM outbox_events
      WHERE user_id = ${userId} AND seq > ${afterSeq} AND topic = ANY(${topics as EventTopic[]}::text[])
      ORDER BY seq LIMIT ${limit}`
    return rows.map(toStoredEvent)
  }
}

function toStoredEvent(r: RawEvent): StoredEvent {
  return { seq: Number(r.seq), id: r.id, topic: r.topic, type: r.type, data: r.data, createdAt: new Date(r.created_at) }
}

/** One page asked for (EventsStore.page's arguments). */
export interface PageRequest {
  userId: string
  afterSeq: number
  topics: readonly EventTopic[]
  limit: number
}

/** Pages one statement reads at most. */
const MAX_PAGES = 256

/**
 * The event pages of one event-loop turn (long polls, caught-up polls, event
 * sockets catching up) in one statement: each distinct request a row of
 * json_to_recordset, its page read by the same index scan as a page alone (user_id,
 * seq) in a LATERAL subquery, one statement postgres.js prepares once per
 * connection. A page is what a statement of its own would have read at the
 * moment the batch's statement ran: nothing is kept after it. Topics are
 * catalogue names (never a comma), sent as one comma-joined text per page.
 */
export function batchedEventPages(sql: postgres.Sql): (request: PageRequest) => Promise<StoredEvent[]> {
  return batchTurn(
    async (requests: readonly PageRequest[]) => {
      // Identical requests (one client's polls in one turn) are read once, each answered with its own rows.
      const distinct = new Map<string, number>()
      const asked: { user_id: string; after_seq: number; topics: string; page_limit: number; slot: number }[] = []
      const slots = requests.map((request) => {
        const joined = request.topics.join(',')
        const key = `${request.userId} ${request.afterSeq} ${request.limit} ${joined}`
        let slot = distinct.get(key)
        if (slot === undefined) {
          slot = asked.length
          distinct.set(key, slot)
          asked.push({ user_id: request.userId, after_seq: request.afterSeq, topics: joined, page_limit: request.limit, slot })
        }
        return slot
      })
      // The pages as one JSON parameter, not as arrays: PostgreSQL plans a
      // statement over unnest of array parameters again at every run (the
      // arrays' lengths make its custom plan look cheaper), measured 100 µs of
      // the backend's CPU for a page against 25 µs with the generic plan it
      // keeps for json_to_recordset. The values are ours (user ids, catalogue
      // topics, numbers): nothing JSON or PostgreSQL's json refuses.
      const rows = await sql<(RawEvent & { slot: number })[]>`
        SELECT u.slot, e.seq, e.id, e.topic, e.type, e.data, e.created_at
        FROM json_to_recordset(${JSON.stringify(asked)}::json) AS u(user_id text, after_seq bigint, topics text, page_limit int, slot int)
        CROSS JOIN LATERAL (
          SELECT o.seq, o.id, o.topic, o.type, o.data, o.created_at FROM outbox_events o
          WHERE o.user_id = u.user_id AND o.seq > u.after_seq AND o.topic = ANY(string_to_array(u.topics, ','))
          ORDER BY o.seq LIMIT u.page_limit
        ) AS e
        ORDER BY u.slot, e.seq`
      const pages: RawEvent[][] = asked.map(() => [])
      for (const row of rows) pages[row.slot]!.push(row)
      // A page asked for twice: the second caller gets its own copy of the events' data.
      const given = new Set<number>()
      return slots.map((slot) => {
        const events = pages[slot]!.map(toStoredEvent)
        if (given.has(slot)) for (const event of events) event.data = structuredClone(event.data)
        given.add(slot)
        return events
      })
    },
    { maxSize: MAX_PAGES },
  )
}
