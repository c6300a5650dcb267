import type { Db, Executor } from '../../db/sqlite/connection'
import { outboxEvents } from '../../db/schema'
import type { Clock } from '../../shared/clock'
import { newId } from '../../shared/ids'
import { pokeUser } from './plane'
import type { OutboxEvent } from './store'

export type { OutboxEvent }

/**
 * Appends an event to the outbox. Call it with the transaction that makes the
 * change the event reports: if that transaction rolls back, so does the event.
 */
export function appendEvent(executor: Executor, clock: Clock, event: OutboxEvent): string {
  const id = newId('event')
  executor
    .insert(outboxEvents)
    .values({ id, userId: event.userId, topic: event.topic, type: event.type, data: event.data, createdAt: clock.now() })
    .run()
  // Long polls of this user read again once this transaction is over.
  pokeUser(event.userId)
  return id
}

export type EventAppender = (clock: Clock, event: OutboxEvent) => string

/**
 * appendEvent for hot paths (result claims): the INSERT is compiled once, here,
 * instead of being built by the query builder on every call, which cost more
 * CPU than running it. It writes what appendEvent writes (`data` as JSON text,
 * `created_at` as epoch ms) and pokes the same waiters. It runs on `db`'s one
 * connection, so inside whatever transaction is open there.
 */
export function createEventAppender(db: Db): EventAppender {
  const insert = db.$client.prepare<unknown, { id: string; userId: string | null; topic: string; type: string; data: string; createdAt: number }>(
    'INSERT INTO outbox_events (id, user_id, topic, type, data, created_at) VALUES ($id, $userId, $topic, $type, $data, $createdAt)',
  )
  return (clock, event) => {
    const id = newId('event')
    insert.run({ id, userId: event.userId, topic: event.topic, type: event.type, data: JSON.stringify(event.data), createdAt: clock.now().getTime() })
    // Long polls of this user read again once this transaction is over.
    pokeUser(event.userId)
    return id
  }
}
