import type { Executor } from '../../db/client'
import { outboxEvents, type EventTopic } from '../../db/schema'
import type { Clock } from '../../shared/clock'
import { newId } from '../../shared/ids'
import { pokeUser } from './plane'

export interface OutboxEvent {
  /** Who may read it on the event plane; null for operator-only events. */
  userId: string | null
  topic: EventTopic
  /** Lower-dot name of what happened, e.g. `session.login`. */
  type: string
  data: Record<string, unknown>
}

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
