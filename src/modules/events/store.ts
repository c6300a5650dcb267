// What the event plane needs from the database (see src/db/storage.ts).
import type { EventTopic } from './catalogue'

export interface OutboxEvent {
  /** Who may read it on the event plane; null for operator-only events. */
  userId: string | null
  topic: EventTopic
  /** Lower-dot name of what happened, e.g. `session.login`. */
  type: string
  data: Record<string, unknown>
}

/** An event as a poll reads it; `seq` orders a user's events and is never reused. */
export interface StoredEvent {
  seq: number
  id: string
  topic: EventTopic
  type: string
  data: Record<string, unknown>
  createdAt: Date
}

export interface EventsStore {
  /**
   * Appends an event to the outbox inside the current unit of work: if it
   * rolls back, so does the event. The user's waiting polls are woken once it
   * committed. Returns the public event id.
   */
  append(event: OutboxEvent, now: Date): Promise<string>
  /** The user's events after `afterSeq` in the given topics, oldest first, at most `limit`. */
  page(userId: string, afterSeq: number, topics: readonly EventTopic[], limit: number): Promise<StoredEvent[]>
  /** The newest seq ever issued that is still stored (0 when none). */
  newestSeq(): Promise<number>
  /** Deletes events created before `before`; returns how many. */
  pruneCreatedBefore(before: Date): Promise<number>
}
