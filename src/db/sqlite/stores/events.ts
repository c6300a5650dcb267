// The outbox on SQLite (src/db/stores/events.ts). `seq` is an AUTOINCREMENT
// key: never reused, and with one writer it grows in commit order, so a
// cursor (the last seq a poll saw) never skips an event committed later with
// a lower seq. That is the
// per-user event ordering the plane promises; an engine with concurrent
// writers must provide it another way.
import type { Statement } from 'bun:sqlite'
import { getTableColumns } from 'drizzle-orm'
import { outboxEvents } from '../../schema'
import { EVENT_TOPICS, type EventTopic } from '../../../modules/events/catalogue'
import type { OutboxEvent, StoredEvent } from '../../../modules/events/store'
import { EventsQueries } from '../../stores/events'
import { insertInto, perConnection, selectList } from '../connection'
import type { SqliteScope } from '../storage'

type Raw = Omit<StoredEvent, 'data' | 'createdAt'> & { data: string; createdAt: number }

// Compiled once per connection: building these with Drizzle cost most of a
// caught-up poll's CPU and more than running the INSERT on the claim path.
const statements = perConnection((sqlite) => ({
  insert: sqlite.prepare<unknown, { id: string; userId: string | null; topic: string; type: string; data: string; createdAt: number }>(
    insertInto(outboxEvents, ['id', 'userId', 'topic', 'type', 'data', 'createdAt']),
  ),
  newest: sqlite.prepare<{ seq: number | null }, []>('SELECT max(seq) AS seq FROM outbox_events'),
  // One placeholder per topic there is; a caller asking for fewer repeats one.
  page: sqlite.prepare<Raw, (string | number)[]>(
    `SELECT ${selectList(getTableColumns(outboxEvents), ['seq', 'id', 'topic', 'type', 'data', 'createdAt'])} FROM outbox_events
     WHERE user_id = ? AND seq > ? AND topic IN (${EVENT_TOPICS.map(() => '?').join(', ')}) ORDER BY seq LIMIT ?`,
  ) as Statement<Raw, (string | number)[]>,
}))

export class SqliteEventsStore extends EventsQueries {
  constructor(protected override readonly scope: SqliteScope) {
    super(scope)
  }

  protected insert(id: string, event: OutboxEvent, now: Date): void {
    statements(this.scope.handle.sqlite).insert.run({
      id,
      userId: event.userId,
      topic: event.topic,
      type: event.type,
      data: JSON.stringify(event.data),
      createdAt: now.getTime(),
    })
  }

  async page(userId: string, afterSeq: number, topics: readonly EventTopic[], limit: number): Promise<StoredEvent[]> {
    const padded = EVENT_TOPICS.map((_, i) => topics[i] ?? topics[0]!)
    return statements(this.scope.handle.sqlite)
      .page.all(userId, afterSeq, ...padded, limit)
      .map((r) => ({ ...r, data: JSON.parse(r.data) as Record<string, unknown>, createdAt: new Date(r.createdAt) }))
  }

  // Prepared with the page: a poll whose cursor is past what this process issued asks it first.
  override async newestSeq(): Promise<number> {
    return statements(this.scope.handle.sqlite).newest.get()?.seq ?? 0
  }
}
