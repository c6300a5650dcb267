// What the event plane needs from the database (see src/db/storage.ts).
import type { EventCatalogue, EventTopic, EventType } from './catalogue'

/**
 * An event to append, typed by the catalogue (./catalogue.ts): `type` is one
 * of its types, `topic` that type's topic and `data` that type's data, so an
 * uncatalogued type, another topic, or a data field missing, extra or of
 * another type is a compile error. A union discriminated by `type`;
 * `OutboxEvent<K>` is an event of the types K only. Distributive (not a
 * mapped type indexed by K) so that, in a helper generic in K, an
 * `OutboxEvent<K>` is an `OutboxEvent`.
 */
export type OutboxEvent<K extends EventType = EventType> = K extends EventType
  ? {
      /** Who may read it on the event plane; null for operator-only events. */
      userId: string | null
      topic: EventCatalogue[K]['topic']
      /** Lower-dot name of what happened, e.g. `session.login`. */
      type: K
      data: EventCatalogue[K]['data']
    }
  : never

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
  /**
   * Who has events after `afterSeq`, oldest first, at most `limit` events
   * looked at: each user once, and the last seq looked at (`afterSeq` when
   * none). The sockets' re-check (src/modules/realtime/hub.ts).
   */
  usersWithEventsAfter(afterSeq: number, limit: number): Promise<{ userIds: string[]; lastSeq: number; full: boolean }>
  /** Stores a socket ticket (contract §14); only its hash. */
  createSocketTicket(ticket: SocketTicket): Promise<void>
  /** Spends a ticket: deletes it and returns it, or null when there is none (never minted, spent, or its session ended). */
  spendSocketTicket(ticketHash: string): Promise<SocketTicket | null>
  /** Deletes tickets that expired before `now`; `sessionId` only that session's. Returns how many. */
  pruneSocketTickets(now: Date, sessionId?: string): Promise<number>
}

/** A ticket to open one WebSocket (contract §14), as stored. */
export interface SocketTicket {
  ticketHash: string
  sessionId: string
  userId: string
  expiresAt: Date
}
