// The event outbox (src/modules/events/store.ts), on either engine.
//
// `seq` is never reused, and a cursor (the last seq a poll saw) must never
// skip an event committed later with a lower seq: that is the per-user event
// ordering the plane promises. Each engine keeps it its own way, in its own
// insert: SQLite's one writer draws seq in commit order; PostgreSQL draws it
// under an advisory lock held to the commit. The insert and the page are the
// plane's hot paths, so each engine says them in its own measured form (a
// prepared statement each on SQLite, one postgres.js statement on
// PostgreSQL); what is left is the same on both.
import { and, asc, eq, gt, lt, max } from 'drizzle-orm'
import type { EventTopic } from '../../modules/events/catalogue'
import type { EventsStore, OutboxEvent, SocketTicket, StoredEvent } from '../../modules/events/store'
import { newId } from '../../shared/ids'
import { Queries } from './scope'

export abstract class EventsQueries extends Queries implements EventsStore {
  /**
   * Registers the wake-up of this instance's polls of the event's user for
   * after the commit, before anything is written (so a unit of work that is
   * over refuses the append), then inserts the row. Outside a unit of work
   * (the read stores) the append is refused rather than written in
   * autocommit, outside PostgreSQL's lock.
   */
  async append(event: OutboxEvent, now: Date): Promise<string> {
    const { userId } = event
    const { afterCommit, wakeups } = this.scope
    if (!afterCommit) throw new Error('events.append runs inside a unit of work (storage.write)')
    if (userId !== null) afterCommit(() => wakeups.wake(userId))
    const id = newId('event')
    await this.insert(id, event, now)
    return id
  }

  /** Inserts the event's row, its seq drawn in commit order (see the top of this file). */
  protected abstract insert(id: string, event: OutboxEvent, now: Date): Promise<void> | void

  abstract page(userId: string, afterSeq: number, topics: readonly EventTopic[], limit: number): Promise<StoredEvent[]>

  async newestSeq(): Promise<number> {
    const { outboxEvents } = this.scope.t
    const [row] = await this.scope.db.select({ seq: max(outboxEvents.seq) }).from(outboxEvents)
    return row?.seq ?? 0
  }

  async pruneCreatedBefore(before: Date): Promise<number> {
    const { outboxEvents } = this.scope.t
    const deleted = await this.scope.db.delete(outboxEvents).where(lt(outboxEvents.createdAt, before)).returning({ seq: outboxEvents.seq })
    return deleted.length
  }

  async usersWithEventsAfter(afterSeq: number, limit: number): Promise<{ userIds: string[]; lastSeq: number; full: boolean }> {
    const { outboxEvents } = this.scope.t
    const rows = await this.scope.db
      .select({ seq: outboxEvents.seq, userId: outboxEvents.userId })
      .from(outboxEvents)
      .where(gt(outboxEvents.seq, afterSeq))
      .orderBy(asc(outboxEvents.seq))
      .limit(limit)
    const userIds = new Set<string>()
    for (const row of rows) if (row.userId !== null) userIds.add(row.userId)
    return { userIds: [...userIds], lastSeq: rows.at(-1)?.seq ?? afterSeq, full: rows.length === limit }
  }

  async createSocketTicket(ticket: SocketTicket): Promise<void> {
    await this.scope.db.insert(this.scope.t.socketTickets).values(ticket)
  }

  async spendSocketTicket(ticketHash: string): Promise<SocketTicket | null> {
    const { socketTickets } = this.scope.t
    const [row] = await this.scope.db.delete(socketTickets).where(eq(socketTickets.ticketHash, ticketHash)).returning()
    return row ?? null
  }

  async pruneSocketTickets(now: Date, sessionId?: string): Promise<number> {
    const { socketTickets } = this.scope.t
    const expired = lt(socketTickets.expiresAt, now)
    const deleted = await this.scope.db
      .delete(socketTickets)
      .where(sessionId === undefined ? expired : and(expired, eq(socketTickets.sessionId, sessionId)))
      .returning({ hash: socketTickets.ticketHash })
    return deleted.length
  }
}
