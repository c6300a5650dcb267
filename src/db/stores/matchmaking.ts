// Queues, tickets, challenges and the matches they make, on either engine
// (src/modules/matchmaking/store.ts says what each does). Written once; the
// PostgreSQL subclass (src/db/postgres/stores/matchmaking.ts) locks the rows
// a unit of work decides on (lockedInWrite).
import { aliasedTable, and, asc, count, desc, eq, gt, gte, inArray, isNotNull, isNull, lt, lte, ne, or } from 'drizzle-orm'
import { mapEngineError } from '../errors'
import type { MatchRecord } from '../../modules/games/store'
import type {
  ChallengeRecord,
  ChallengeStatus,
  MatchmakingStore,
  NewStandaloneMatch,
  QueuePatch,
  QueueRecord,
  MatchSeat,
  TicketCloseReason,
  TicketRecord,
} from '../../modules/matchmaking/store'
import type { WaitingTicket } from '../../modules/matchmaking/matcher'
import { matchRecordColumns } from './games'
import { Queries, type Tables } from './scope'

type QueueRow = Tables['queues']['$inferSelect']

function toQueue(row: QueueRow): QueueRecord {
  const { windowInitial, windowWidenPerSecond, windowMax, ...rest } = row
  return { ...rest, window: { initial: windowInitial, widenPerSecond: windowWidenPerSecond, max: windowMax } }
}

function queueColumns(queue: QueueRecord | QueuePatch) {
  const { window, ...rest } = queue
  return { ...rest, ...(window ? { windowInitial: window.initial, windowWidenPerSecond: window.widenPerSecond, windowMax: window.max } : {}) }
}

async function mapped<T>(write: Promise<T>): Promise<T> {
  try {
    return await write
  } catch (error) {
    // A unique violation (a second open ticket, a queue name taken) is the caller's to answer in its own terms.
    throw mapEngineError(error)
  }
}

export class MatchmakingQueries extends Queries implements MatchmakingStore {
  /** A read a unit of work decides on: locked by the PostgreSQL subclass inside a write. */
  protected lockedInWrite<Q>(query: Q): Q {
    return query
  }

  async insertQueue(queue: QueueRecord): Promise<void> {
    await mapped(this.db.insert(this.t.queues).values(queueColumns(queue) as QueueRow))
  }

  async openQueue(gameId: string, name: string): Promise<QueueRecord | null> {
    const { queues } = this.t
    const [row] = await this.lockedInWrite(this.db.select().from(queues).where(and(eq(queues.gameId, gameId), eq(queues.name, name), isNull(queues.closedAt))))
    return row ? toQueue(row) : null
  }

  async queueById(queueId: string): Promise<QueueRecord | null> {
    const { queues } = this.t
    const [row] = await this.db.select().from(queues).where(eq(queues.id, queueId))
    return row ? toQueue(row) : null
  }

  async queuesOf(gameId: string, includeClosed: boolean): Promise<QueueRecord[]> {
    const { queues } = this.t
    const rows = await this.db
      .select()
      .from(queues)
      .where(includeClosed ? eq(queues.gameId, gameId) : and(eq(queues.gameId, gameId), isNull(queues.closedAt)))
      .orderBy(asc(queues.name), asc(queues.createdAt), asc(queues.id))
    return rows.map(toQueue)
  }

  async openQueues(): Promise<QueueRecord[]> {
    const { queues } = this.t
    const rows = await this.db.select().from(queues).where(isNull(queues.closedAt)).orderBy(asc(queues.createdAt), asc(queues.id))
    return rows.map(toQueue)
  }

  async updateQueue(queueId: string, patch: QueuePatch, now: Date): Promise<void> {
    const { queues } = this.t
    await this.db
      .update(queues)
      .set({ ...queueColumns(patch), updatedAt: now })
      .where(eq(queues.id, queueId))
  }

  async closeQueue(queueId: string, now: Date): Promise<void> {
    const { queues } = this.t
    await this.db.update(queues).set({ closedAt: now, updatedAt: now }).where(eq(queues.id, queueId))
  }

  async insertTicket(ticket: TicketRecord): Promise<void> {
    await mapped(this.db.insert(this.t.tickets).values(ticket))
  }

  async openTicketOf(userId: string, gameId: string): Promise<TicketRecord | null> {
    const { tickets } = this.t
    const [row] = await this.lockedInWrite(this.db.select().from(tickets).where(and(eq(tickets.userId, userId), eq(tickets.gameId, gameId), eq(tickets.status, 'open'))))
    return row ?? null
  }

  async openTicketsOf(queueId: string): Promise<TicketRecord[]> {
    const { tickets } = this.t
    return this.db
      .select()
      .from(tickets)
      .where(and(eq(tickets.queueId, queueId), eq(tickets.status, 'open')))
      .orderBy(asc(tickets.waitingSince), asc(tickets.id))
  }

  async waitingTickets(queueId: string): Promise<WaitingTicket[]> {
    const { tickets } = this.t
    return this.db
      .select({ id: tickets.id, userId: tickets.userId, display: tickets.display, waitingSince: tickets.waitingSince })
      .from(tickets)
      .where(and(eq(tickets.queueId, queueId), eq(tickets.status, 'open')))
      .orderBy(asc(tickets.waitingSince), asc(tickets.id))
  }

  async ticketsByIds(ids: readonly string[]): Promise<TicketRecord[]> {
    if (ids.length === 0) return []
    const { tickets } = this.t
    return this.lockedInWrite(
      this.db
        .select()
        .from(tickets)
        .where(inArray(tickets.id, [...ids]))
        .orderBy(asc(tickets.id)),
    )
  }

  async closeTickets(ids: readonly string[], status: 'matched' | 'cancelled', reason: TicketCloseReason, now: Date, matchId?: string): Promise<number> {
    if (ids.length === 0) return 0
    const { tickets } = this.t
    const closed = await this.db
      .update(tickets)
      .set({ status, closeReason: reason, closedAt: now, ...(matchId === undefined ? {} : { matchId }) })
      .where(and(inArray(tickets.id, [...ids]), eq(tickets.status, 'open')))
      .returning({ id: tickets.id })
    return closed.length
  }

  async failTicket(id: string, reason: TicketCloseReason, now: Date): Promise<void> {
    const { tickets } = this.t
    await this.db.update(tickets).set({ status: 'cancelled', closeReason: reason, closedAt: now }).where(eq(tickets.id, id))
  }

  async reopenTicket(id: string): Promise<void> {
    const { tickets } = this.t
    await mapped(this.db.update(tickets).set({ status: 'open', closeReason: null, closedAt: null }).where(eq(tickets.id, id)))
  }

  async ticketsOfMatch(matchId: string): Promise<TicketRecord[]> {
    const { tickets } = this.t
    return this.lockedInWrite(this.db.select().from(tickets).where(eq(tickets.matchId, matchId)).orderBy(asc(tickets.id)))
  }

  async openTicketsOfUser(userId: string): Promise<TicketRecord[]> {
    const { tickets } = this.t
    return this.db
      .select()
      .from(tickets)
      .where(and(eq(tickets.userId, userId), eq(tickets.status, 'open')))
      .orderBy(asc(tickets.id))
  }

  async countOpenTickets(): Promise<{ queueId: string; gameId: string; queue: string; open: number }[]> {
    const { queues, tickets } = this.t
    return this.db
      .select({ queueId: queues.id, gameId: queues.gameId, queue: queues.name, open: count(tickets.id) })
      .from(queues)
      .leftJoin(tickets, and(eq(tickets.queueId, queues.id), eq(tickets.status, 'open')))
      .where(isNull(queues.closedAt))
      .groupBy(queues.id, queues.gameId, queues.name)
      .orderBy(asc(queues.id))
  }

  async insertStandaloneMatch({ match, seats }: NewStandaloneMatch): Promise<void> {
    await this.db.insert(this.t.participants).values(seats.map((seat, i) => ({ id: seat.participantId, tournamentId: null, userId: seat.userId, seed: i + 1 })))
    await this.db.insert(this.t.matches).values(match)
  }

  async recentPairs(gameId: string, since: Date): Promise<[string, string][]> {
    const { matches } = this.t
    const one = aliasedTable(this.t.participants, 'one')
    const two = aliasedTable(this.t.participants, 'two')
    const rows = await this.db
      .select({ a: one.userId, b: two.userId })
      .from(matches)
      .innerJoin(one, eq(one.id, matches.slot1ParticipantId))
      .innerJoin(two, eq(two.id, matches.slot2ParticipantId))
      // The partial index matches_game_standalone: a game's matches without a tournament, by creation.
      .where(and(eq(matches.gameId, gameId), ne(matches.kind, 'tournament'), gte(matches.createdAt, since)))
    return rows.map((r) => [r.a, r.b])
  }

  async seatsOfMatch(match: Pick<MatchRecord, 'slot1ParticipantId' | 'slot2ParticipantId'>): Promise<MatchSeat[]> {
    const ids = [match.slot1ParticipantId, match.slot2ParticipantId].filter((id): id is string => id !== null)
    if (ids.length === 0) return []
    const { participants, users } = this.t
    const rows = await this.db
      .select({ participantId: participants.id, userId: participants.userId, username: users.username })
      .from(participants)
      .innerJoin(users, eq(users.id, participants.userId))
      .where(inArray(participants.id, ids))
    return rows
      .map((r) => ({ ...r, slot: r.participantId === match.slot1ParticipantId ? (1 as const) : (2 as const) }))
      .sort((a, b) => a.slot - b.slot)
  }

  async markReady(matchId: string, slot: 1 | 2, now: Date): Promise<void> {
    const { matches } = this.t
    await this.db
      .update(matches)
      .set(slot === 1 ? { slot1ReadyAt: now } : { slot2ReadyAt: now })
      .where(eq(matches.id, matchId))
  }

  async startAfterReady(matchId: string, deadline: Date | null): Promise<void> {
    const { matches } = this.t
    await this.db.update(matches).set({ status: 'running', readyBy: null, deadline }).where(eq(matches.id, matchId))
  }

  async markCancelled(matchId: string): Promise<void> {
    const { matches } = this.t
    await this.db.update(matches).set({ status: 'cancelled', readyBy: null }).where(eq(matches.id, matchId))
  }

  async stakesHeld(limit: number): Promise<MatchRecord[]> {
    const { matches } = this.t
    return this.db
      .select(matchRecordColumns(matches))
      .from(matches)
      .where(and(ne(matches.kind, 'tournament'), isNotNull(matches.stake), inArray(matches.status, ['waiting', 'running', 'disputed'])))
      .orderBy(asc(matches.createdAt), asc(matches.id))
      .limit(limit)
  }

  async insertChallenge(challenge: ChallengeRecord): Promise<void> {
    await mapped(this.db.insert(this.t.challenges).values(challenge))
  }

  async challengeById(id: string): Promise<ChallengeRecord | null> {
    const { challenges } = this.t
    const [row] = await this.lockedInWrite(this.db.select().from(challenges).where(eq(challenges.id, id)))
    return row ?? null
  }

  async countOpenChallenges(challengerId: string, now: Date): Promise<number> {
    const { challenges } = this.t
    const [row] = await this.db
      .select({ n: count() })
      .from(challenges)
      .where(and(eq(challenges.challengerId, challengerId), eq(challenges.status, 'open'), gt(challenges.expiresAt, now)))
    return row?.n ?? 0
  }

  async closeChallenge(id: string, status: Exclude<ChallengeStatus, 'open'>, now: Date, matchId?: string): Promise<boolean> {
    const { challenges } = this.t
    const closed = await this.db
      .update(challenges)
      .set({ status, closedAt: now, ...(matchId === undefined ? {} : { matchId }) })
      .where(and(eq(challenges.id, id), eq(challenges.status, 'open')))
      .returning({ id: challenges.id })
    return closed.length > 0
  }

  async challengesOf(userId: string, openOnly: boolean, limit: number): Promise<ChallengeRecord[]> {
    const { challenges } = this.t
    const mine = or(eq(challenges.challengerId, userId), eq(challenges.opponentId, userId))
    return this.db
      .select()
      .from(challenges)
      .where(openOnly ? and(mine, eq(challenges.status, 'open')) : mine)
      .orderBy(desc(challenges.createdAt), desc(challenges.id))
      .limit(limit)
  }

  async expiredChallenges(now: Date, limit: number): Promise<ChallengeRecord[]> {
    const { challenges } = this.t
    return this.db
      .select()
      .from(challenges)
      .where(and(eq(challenges.status, 'open'), lte(challenges.expiresAt, now)))
      .orderBy(asc(challenges.expiresAt), asc(challenges.id))
      .limit(limit)
  }

  async openChallenges(limit: number): Promise<ChallengeRecord[]> {
    const { challenges } = this.t
    return this.db.select().from(challenges).where(eq(challenges.status, 'open')).orderBy(asc(challenges.createdAt), asc(challenges.id)).limit(limit)
  }

  async pruneClosed(before: Date): Promise<{ tickets: number; challenges: number }> {
    const { tickets, challenges } = this.t
    const t = await this.db
      .delete(tickets)
      .where(and(isNotNull(tickets.closedAt), lt(tickets.closedAt, before)))
      .returning({ id: tickets.id })
    const c = await this.db
      .delete(challenges)
      .where(and(isNotNull(challenges.closedAt), lt(challenges.closedAt, before)))
      .returning({ id: challenges.id })
    return { tickets: t.length, challenges: c.length }
  }
}
