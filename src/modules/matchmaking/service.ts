// Matchmaking (contract §16): a game's queues, the tickets players wait in
// them with, the matcher that pairs them, the ready check, and the matches a
// queue or a challenge makes. The match itself, once it runs, is a match like
// any other: sessions, claims, the arbiter, deadlines, disputes and resolve
// (src/modules/matches, games/tournament-operations.ts applyDecision, which
// settles its stakes with the decision: ./stakes.ts).
//
// The matcher runs as a background loop held by one runner among every
// instance (storage.loopLeases): each tick reads every open queue's open
// tickets, pairs them (./matcher.ts, pure), and makes each pair's match in a
// unit of work of its own, which reads the two tickets again (locked on
// PostgreSQL) and makes nothing unless both are still open: a player who left
// meanwhile is not paired, and the other keeps their place.
import { UniqueViolationError } from '../../db/errors'
import type { Storage, Transaction } from '../../db/storage'
import { JOB_KINDS } from '../../jobs/queue'
import type { Clock } from '../../shared/clock'
import { toIso } from '../../shared/clock'
import { AppError } from '../../shared/errors'
import { newId } from '../../shared/ids'
import type { Actor } from '../audit/log'
import { deadlineFrom, scheduleSettle } from '../games/deadlines'
import { notifyReady } from '../games/match-events'
import type { MatchRecord, MatchTerms } from '../games/store'
import { invalid } from '../games/registration'
import type { RatingsService } from '../ratings/service'
import { pairTickets, windowOf, type QueueWindow } from './matcher'
import type { CreateQueueBody, MatchView, Queue, Ticket, UpdateQueueBody } from './model'
import { canonicalRake, canPay, assertCanPay, escrowStakes, formatStake, parseStake, refundStakes } from './stakes'
import type { QueuePatch, QueueRecord, TicketRecord } from './store'

/** The most open queues a game may have. */
export const MAX_QUEUES_PER_GAME = 50
/** How many pairs of one tick are made at once (each its own unit of work; SQLite commits them together). */
const PAIRS_AT_ONCE = 32

export interface MatchmakingServiceDeps {
  storage: Storage
  clock: Clock
  ratings: RatingsService
}

export function toQueue(queue: QueueRecord): Queue {
  return {
    id: queue.id,
    gameId: queue.gameId,
    name: queue.name,
    rated: queue.rated,
    stake: queue.stake === null ? null : formatStake(queue.stake),
    rake: queue.rake,
    window: queue.window,
    readyCheckS: queue.readyCheckS,
    matchDeadlineS: queue.matchDeadlineS,
    rematchCooldownS: queue.rematchCooldownS,
    draws: queue.draws,
    createdAt: toIso(queue.createdAt),
    updatedAt: toIso(queue.updatedAt),
    closedAt: queue.closedAt === null ? null : toIso(queue.closedAt),
  }
}

export function toTicket(ticket: TicketRecord, queue: Pick<QueueRecord, 'name' | 'window'>, now: Date): Ticket {
  return {
    id: ticket.id,
    gameId: ticket.gameId,
    queue: queue.name,
    status: ticket.status,
    display: ticket.display,
    window: ticket.status === 'open' ? Math.round(windowOf(queue.window, ticket.waitingSince, now) * 100) / 100 : 0,
    waitingSince: toIso(ticket.waitingSince),
    matchId: ticket.matchId,
    createdAt: toIso(ticket.createdAt),
    closedAt: ticket.closedAt === null ? null : toIso(ticket.closedAt),
    closeReason: ticket.closeReason,
  }
}

/** A queue's settings as given, checked: 422 validation_failed with every problem. */
function settingsOf(body: UpdateQueueBody, current: QueueRecord | null): QueuePatch {
  const problems: { path: string; message: string }[] = []
  const patch: QueuePatch = {}
  if (body.rated !== undefined) patch.rated = body.rated
  if (body.stake !== undefined) {
    if (body.stake === null) patch.stake = null
    else {
      try {
        patch.stake = parseStake(body.stake, 'body/stake').toString()
      } catch (error) {
        if (!(error instanceof AppError)) throw error
        problems.push(...(error.details as { path: string; message: string }[]))
      }
    }
  }
  if (body.rake !== undefined) {
    const rake = canonicalRake(body.rake)
    if (rake === null) problems.push({ path: 'body/rake', message: 'A decimal fraction from 0 to 0.5, at most 6 decimals ("0.05")' })
    else patch.rake = rake
  }
  if (body.window !== undefined) {
    const w: QueueWindow = body.window
    if (![w.initial, w.widenPerSecond, w.max].every(Number.isFinite)) problems.push({ path: 'body/window', message: 'Finite numbers' })
    else if (w.max < w.initial) problems.push({ path: 'body/window/max', message: 'At least `initial`' })
    else patch.window = { initial: w.initial, widenPerSecond: w.widenPerSecond, max: w.max }
  }
  if (body.readyCheckS !== undefined) patch.readyCheckS = body.readyCheckS
  if (body.matchDeadlineS !== undefined) patch.matchDeadlineS = body.matchDeadlineS
  if (body.rematchCooldownS !== undefined) patch.rematchCooldownS = body.rematchCooldownS
  if (body.draws !== undefined) patch.draws = body.draws
  const stake = patch.stake !== undefined ? patch.stake : (current?.stake ?? null)
  const rake = patch.rake ?? current?.rake ?? '0'
  if (stake === null && rake !== '0') problems.push({ path: 'body/rake', message: 'A rake needs a stake' })
  if (problems.length > 0) throw invalid(problems)
  return patch
}

const noSuchQueue = () => new AppError('not_found', 'No such queue')

export class MatchmakingService {
  private readonly waitObservers = new Set<(seconds: number) => void>()

  constructor(private readonly deps: MatchmakingServiceDeps) {}

  /** Registers for each paired ticket's wait, in seconds from its place in line (waitingSince) to its pairing, told once the pairing commits (/metrics). */
  observeWaits(observe: (seconds: number) => void): void {
    this.waitObservers.add(observe)
  }

  // ---- Queues (operators) ----

  async createQueue(gameId: string, body: CreateQueueBody, by: Actor): Promise<{ queue: Queue }> {
    const patch = settingsOf(body, null)
    return this.deps.storage.write(async (tx) => {
      if (!(await tx.games.gameExists(gameId))) throw new AppError('not_found', 'No such game')
      if ((await tx.matchmaking.queuesOf(gameId, false)).length >= MAX_QUEUES_PER_GAME) {
        throw new AppError('conflict', `A game has at most ${MAX_QUEUES_PER_GAME} open queues`)
      }
      const now = this.deps.clock.now()
      const queue: QueueRecord = {
        id: newId('queue'),
        gameId,
        name: body.name,
        rated: body.rated,
        stake: patch.stake ?? null,
        rake: patch.rake ?? '0',
        window: patch.window!,
        readyCheckS: body.readyCheckS,
        matchDeadlineS: body.matchDeadlineS ?? null,
        rematchCooldownS: body.rematchCooldownS ?? 0,
        draws: body.draws ?? 'replay',
        createdAt: now,
        updatedAt: now,
        closedAt: null,
      }
      try {
        await tx.matchmaking.insertQueue(queue)
      } catch (error) {
        if (error instanceof UniqueViolationError) throw new AppError('queue_exists', 'The game has an open queue of that name')
        throw error
      }
      await by.record(tx, { action: 'queue.create', target: queue.id, details: { gameId, name: queue.name } })
      return { queue: toQueue(queue) }
    })
  }

  /** Changes an open queue's settings; tickets waiting keep their place, matches made keep their terms. */
  async updateQueue(gameId: string, name: string, body: UpdateQueueBody, by: Actor): Promise<{ queue: Queue }> {
    return this.deps.storage.write(async (tx) => {
      const queue = await tx.matchmaking.openQueue(gameId, name)
      if (!queue) throw noSuchQueue()
      const patch = settingsOf(body, queue)
      const now = this.deps.clock.now()
      await tx.matchmaking.updateQueue(queue.id, patch, now)
      await by.record(tx, { action: 'queue.update', target: queue.id, details: { gameId, name, ...body } })
      return { queue: toQueue({ ...queue, ...patch, updatedAt: now }) }
    })
  }

  /** Closes a queue: it takes no ticket, its waiting tickets are cancelled (their players told), its name is free. Matches it made go on. */
  async closeQueue(gameId: string, name: string, by: Actor): Promise<{ queue: Queue }> {
    return this.deps.storage.write(async (tx) => {
      const queue = await tx.matchmaking.openQueue(gameId, name)
      if (!queue) throw noSuchQueue()
      const now = this.deps.clock.now()
      const waiting = await tx.matchmaking.openTicketsOf(queue.id)
      await tx.matchmaking.closeTickets(
        waiting.map((t) => t.id),
        'cancelled',
        'queue_closed',
        now,
      )
      for (const ticket of waiting) {
        await tx.events.append({ userId: ticket.userId, topic: 'status', type: 'ticket.cancelled', data: { ticketId: ticket.id, gameId, queue: name, reason: 'queue_closed' } }, now)
      }
      await tx.matchmaking.closeQueue(queue.id, now)
      await by.record(tx, { action: 'queue.close', target: queue.id, details: { gameId, name, ticketsCancelled: waiting.length } })
      return { queue: toQueue({ ...queue, closedAt: now, updatedAt: now }) }
    })
  }

  /** A game's queues (open ones; closed ones too with `includeClosed`). 404 for an unknown game. */
  async queues(gameId: string, includeClosed: boolean): Promise<{ queues: Queue[] }> {
    const read = this.deps.storage.read
    if (!(await read.games.gameExists(gameId))) throw new AppError('not_found', 'No such game')
    return { queues: (await read.matchmaking.queuesOf(gameId, includeClosed)).map(toQueue) }
  }

  // ---- Tickets (players) ----

  /**
   * Joins a queue: one open ticket per player and game (409 ticket_open), a
   * staked queue only with the stake in the wallet (422 insufficient_funds;
   * checked again when paired). The window is centred on the player's
   * rating display now.
   */
  async join(userId: string, gameId: string, name: string): Promise<{ ticket: Ticket }> {
    // The display first (a read, outside the unit of work): 404 for an unknown game.
    const { rating } = await this.deps.ratings.mine(gameId, userId)
    return this.deps.storage.write(async (tx) => {
      const queue = await tx.matchmaking.openQueue(gameId, name)
      if (!queue) throw noSuchQueue()
      if (await tx.matchmaking.openTicketOf(userId, gameId)) throw ticketOpen()
      if (queue.stake !== null) await assertCanPay(tx, userId, BigInt(queue.stake))
      const now = this.deps.clock.now()
      const ticket: TicketRecord = {
        id: newId('ticket'),
        queueId: queue.id,
        gameId,
        userId,
        display: rating.display,
        waitingSince: now,
        status: 'open',
        matchId: null,
        createdAt: now,
        closedAt: null,
        closeReason: null,
      }
      try {
        await tx.matchmaking.insertTicket(ticket)
      } catch (error) {
        // Two joins of one player at once: the unique index is the backstop.
        if (error instanceof UniqueViolationError) throw ticketOpen()
        throw error
      }
      return { ticket: toTicket(ticket, queue, now) }
    })
  }

  /** Leaves the queue: the player's open ticket in it is closed (`left`). 404 when they have none there. */
  async leave(userId: string, gameId: string, name: string): Promise<{ ticket: Ticket }> {
    return this.deps.storage.write(async (tx) => {
      const queue = await tx.matchmaking.openQueue(gameId, name)
      if (!queue) throw noSuchQueue()
      const ticket = await tx.matchmaking.openTicketOf(userId, gameId)
      if (!ticket || ticket.queueId !== queue.id) throw new AppError('not_found', 'You have no open ticket in this queue')
      const now = this.deps.clock.now()
      await tx.matchmaking.closeTickets([ticket.id], 'cancelled', 'left', now)
      return { ticket: toTicket({ ...ticket, status: 'cancelled', closeReason: 'left', closedAt: now }, queue, now) }
    })
  }

  /** The player's open ticket in the queue. 404 when they have none there. */
  async current(userId: string, gameId: string, name: string): Promise<{ ticket: Ticket }> {
    const read = this.deps.storage.read
    const queue = await read.matchmaking.openQueue(gameId, name)
    if (!queue) throw noSuchQueue()
    const ticket = await read.matchmaking.openTicketOf(userId, gameId)
    if (!ticket || ticket.queueId !== queue.id) throw new AppError('not_found', 'You have no open ticket in this queue')
    return { ticket: toTicket(ticket, queue, this.deps.clock.now()) }
  }

  // ---- The matcher ----

  /**
   * One tick of the matcher over every open queue: the pairs each makes (see
   * the top of this file). Answers how many matches it made. A pair whose
   * unit of work fails (the storage away, a balance spent between its check
   * and its escrow) makes nothing and is tried again next tick; the others
   * go on, and the first failure is thrown once the tick is over (the loop
   * logs it).
   */
  async matchTick(): Promise<number> {
    const read = this.deps.storage.read
    let made = 0
    let failure: { reason: unknown } | undefined
    for (const queue of await read.matchmaking.openQueues()) {
      const tickets = await read.matchmaking.waitingTickets(queue.id)
      if (tickets.length < 2) continue
      const now = this.deps.clock.now()
      const recent = new Set<string>()
      if (queue.rematchCooldownS > 0) {
        for (const [a, b] of await read.matchmaking.recentPairs(queue.gameId, new Date(now.getTime() - queue.rematchCooldownS * 1000))) recent.add(pairKey(a, b))
      }
      const pairs = pairTickets({ now, window: queue.window, tickets, recentlyPlayed: (a, b) => recent.has(pairKey(a, b)) })
      for (let i = 0; i < pairs.length; i += PAIRS_AT_ONCE) {
        for (const result of await Promise.allSettled(pairs.slice(i, i + PAIRS_AT_ONCE).map(([a, b]) => this.pair(queue.id, a.id, b.id)))) {
          if (result.status === 'fulfilled') made += result.value ? 1 : 0
          else failure ??= { reason: result.reason }
        }
      }
    }
    if (failure) throw failure.reason
    return made
  }

  /**
   * Makes the match of two tickets the matcher paired, in one unit of work:
   * both still open (else nothing), each player able to pay the stake (one
   * who cannot is dropped: their ticket closed `insufficient_funds`, the
   * other keeps their place), the match and its seats, both stakes into its
   * escrow, the tickets `matched`, the ready check's job, `match.found` to
   * both. Answers whether it made the match.
   *
   * `rowLocks`: every read it decides on is locked as read on PostgreSQL (the
   * two tickets FOR UPDATE, each player's account by the ledger's balance
   * read), so it runs READ COMMITTED. Under SERIALIZABLE the 32 pairs made at
   * once, sharing index pages (matches, participants, tickets, the ledger),
   * aborted each other: 1 000 players joining over 10 s took about 6 reruns a
   * match and a p50 of 17 s from join to `match.found` (docs/performance.md).
   */
  private pair(queueId: string, a: string, b: string): Promise<boolean> {
    return this.deps.storage.write(async (tx) => {
      const queue = await tx.matchmaking.queueById(queueId)
      if (!queue || queue.closedAt !== null) return false
      const tickets = await tx.matchmaking.ticketsByIds([a, b])
      if (tickets.length !== 2 || tickets.some((t) => t.status !== 'open')) return false
      const now = this.deps.clock.now()
      if (queue.stake !== null) {
        const broke: TicketRecord[] = []
        for (const ticket of tickets) if (!(await canPay(tx, ticket.userId, BigInt(queue.stake)))) broke.push(ticket)
        if (broke.length > 0) {
          await tx.matchmaking.closeTickets(
            broke.map((t) => t.id),
            'cancelled',
            'insufficient_funds',
            now,
          )
          for (const ticket of broke) {
            await tx.events.append({ userId: ticket.userId, topic: 'status', type: 'ticket.cancelled', data: { ticketId: ticket.id, gameId: queue.gameId, queue: queue.name, reason: 'insufficient_funds' } }, now)
          }
          return false
        }
      }
      const readyBy = new Date(now.getTime() + queue.readyCheckS * 1000)
      const terms: MatchTerms = { queueId: queue.id, rake: queue.rake, rated: queue.rated, drawsAreResults: queue.draws === 'result', matchDeadlineS: queue.matchDeadlineS }
      const match = await createStandaloneMatch(tx, now, {
        gameId: queue.gameId,
        kind: 'queue',
        userIds: [tickets[0]!.userId, tickets[1]!.userId],
        stake: queue.stake === null ? null : BigInt(queue.stake),
        terms,
        readyBy,
      })
      await tx.matchmaking.closeTickets(
        tickets.map((t) => t.id),
        'matched',
        'matched',
        now,
        match.id,
      )
      await tx.jobs.enqueue(JOB_KINDS.readyCheck, { matchId: match.id }, now, readyBy)
      const waits = tickets.map((t) => Math.max(0, (now.getTime() - t.waitingSince.getTime()) / 1000))
      tx.afterCommit(() => {
        for (const seconds of waits) for (const observe of this.waitObservers) observe(seconds)
      })
      for (const ticket of tickets) {
        await tx.events.append(
          { userId: ticket.userId, topic: 'status', type: 'match.found', data: { matchId: match.id, gameId: queue.gameId, queue: queue.name, readyBy: toIso(readyBy), stake: queue.stake === null ? null : formatStake(queue.stake) } },
          now,
        )
      }
      return true
    }, { rowLocks: true })
  }

  // ---- The match ----

  /** A match as its players see it (404 to anyone else); `userId` null: an operator's view. */
  async match(matchId: string, userId: string | null): Promise<{ match: MatchView }> {
    const read = this.deps.storage.read
    const match = await read.matches.byId(matchId)
    if (!match) throw new AppError('not_found', 'No such match')
    const view = await matchView(read, match)
    if (userId !== null && !view.players.some((p) => p.userId === userId)) throw new AppError('not_found', 'No such match')
    return { match: view }
  }

  /**
   * A player confirms the ready check of a match a queue found: once both
   * have, it runs (`match.ready` to both, its deadline started). Again after
   * confirming, or once it runs: the match as it is. 409 match_not_waiting
   * once it is cancelled or decided; 409 ready_check_over once its time is up.
   */
  async ready(matchId: string, userId: string): Promise<{ match: MatchView }> {
    return this.deps.storage.write(async (tx) => {
      const match = await tx.matches.byId(matchId)
      if (!match) throw new AppError('not_found', 'No such match')
      const seats = await tx.matchmaking.seatsOfMatch(match)
      const seat = seats.find((s) => s.userId === userId)
      if (!seat) throw new AppError('not_found', 'No such match')
      const now = this.deps.clock.now()
      if (match.status === 'waiting' && match.readyBy != null) {
        if (match.readyBy.getTime() <= now.getTime()) throw new AppError('ready_check_over', 'The ready check is over')
        const already = seat.slot === 1 ? match.slot1ReadyAt : match.slot2ReadyAt
        if (already == null) {
          await tx.matchmaking.markReady(match.id, seat.slot, now)
          const other = seat.slot === 1 ? match.slot2ReadyAt : match.slot1ReadyAt
          if (other != null) {
            const deadline = deadlineFrom(now, match.terms?.matchDeadlineS)
            await tx.matchmaking.startAfterReady(match.id, deadline)
            await notifyReady(tx, now, match)
            await scheduleSettle(tx, match.id, deadline, now)
          }
        }
      } else if (match.status !== 'running' && match.status !== 'disputed') {
        throw new AppError('match_not_waiting', `Match is ${match.status}`)
      }
      return { match: await matchView(tx, (await tx.matches.byId(match.id))!) }
    })
  }

  /** An operator cancels a queue's or a challenge's match not decided yet: both stakes refunded, both players told. */
  async cancel(matchId: string, reason: string, by: Actor): Promise<{ match: MatchView }> {
    return this.deps.storage.write(async (tx) => {
      const match = await tx.matches.byId(matchId)
      if (!match) throw new AppError('not_found', 'No such match')
      if (match.tournamentId !== null) throw new AppError('conflict', 'A tournament\'s match is not cancelled alone: cancel the tournament')
      if (match.status === 'decided' || match.status === 'cancelled') throw new AppError('conflict', `Match is ${match.status}`)
      const now = this.deps.clock.now()
      await cancelStandalone(tx, now, match, { reason: 'operator', detail: reason })
      await by.record(tx, { action: 'match.cancel', target: matchId, reason, details: { gameId: match.gameId, kind: match.kind, stake: match.stake ?? null } })
      return { match: await matchView(tx, (await tx.matches.byId(match.id))!) }
    })
  }

  /** Matches holding stakes (not decided or cancelled), oldest first: the console's "stakes held". */
  async stakesHeld(limit = 200): Promise<MatchView[]> {
    const read = this.deps.storage.read
    return Promise.all((await read.matchmaking.stakesHeld(limit)).map((m) => matchView(read, m)))
  }
}

const ticketOpen = () => new AppError('ticket_open', 'You already have an open ticket in this game')
const pairKey = (a: string, b: string) => (a < b ? `${a} ${b}` : `${b} ${a}`)

/**
 * A match without a tournament and its two seats, stored in `tx`: `waiting`
 * for the ready check until `readyBy`, or running at once (no `readyBy`: an
 * accepted challenge, its deadline started, `match.ready` to both). Each
 * player's stake goes into its escrow (422 insufficient_funds rolls the unit
 * of work back).
 */
export async function createStandaloneMatch(
  tx: Transaction,
  now: Date,
  input: { gameId: string; kind: 'queue' | 'challenge'; userIds: readonly [string, string]; stake: bigint | null; terms: MatchTerms; readyBy: Date | null },
): Promise<MatchRecord> {
  const seats = input.userIds.map((userId) => ({ participantId: newId('participant'), userId }))
  const running = input.readyBy === null
  const deadline = running ? deadlineFrom(now, input.terms.matchDeadlineS) : null
  const match: MatchRecord = {
    id: newId('match'),
    tournamentId: null,
    gameId: input.gameId,
    kind: input.kind,
    bracket: 'winners',
    round: 1,
    position: 1,
    status: running ? 'running' : 'waiting',
    slot1ParticipantId: seats[0]!.participantId,
    slot2ParticipantId: seats[1]!.participantId,
    winnerParticipantId: null,
    outcome: null,
    decidedBy: null,
    nextMatchId: null,
    nextSlot: null,
    loserNextMatchId: null,
    loserNextSlot: null,
    claimRound: 1,
    decidedAt: null,
    deadline,
    createdAt: now,
    stake: input.stake === null ? null : input.stake.toString(),
    terms: input.terms,
    readyBy: input.readyBy,
    slot1ReadyAt: null,
    slot2ReadyAt: null,
  }
  await tx.matchmaking.insertStandaloneMatch({ match, seats })
  tx.count('matchmakingMatches', input.kind, 1)
  if (input.stake !== null) await escrowStakes(tx, now, match.id, input.stake, input.userIds)
  if (running) {
    await notifyReady(tx, now, match)
    await scheduleSettle(tx, match.id, deadline, now)
  }
  return match
}

/** Cancels a match without a tournament (not decided): both stakes back, both players told `match.cancelled`. */
export async function cancelStandalone(tx: Transaction, now: Date, match: MatchRecord, why: { reason: 'ready_timeout' | 'operator'; detail?: string }): Promise<void> {
  await tx.matchmaking.markCancelled(match.id)
  const seats = await tx.games.seatsOf([match.slot1ParticipantId!, match.slot2ParticipantId!])
  await refundStakes(
    tx,
    now,
    match,
    seats.map((s) => s.userId),
    'cancelled',
  )
  for (const seat of seats) {
    await tx.events.append({ userId: seat.userId, topic: 'status', type: 'match.cancelled', data: { matchId: match.id, gameId: match.gameId, reason: why.reason, ...(why.detail ? { detail: why.detail } : {}) } }, now)
  }
}

/**
 * The ready check's end (its job, due at `readyBy`): a match still waiting
 * is cancelled (stakes refunded); the ticket of each player who did not
 * confirm is closed `ready_timeout`, and each who did is back in line with
 * their place kept (unless they joined again meanwhile, or the queue closed).
 * Nothing once both confirmed.
 */
export async function expireReadyCheck(tx: Transaction, clock: Clock, matchId: string): Promise<void> {
  const match = await tx.matches.byId(matchId)
  if (!match || match.status !== 'waiting' || match.readyBy == null) return
  const now = clock.now()
  if (match.readyBy.getTime() > now.getTime()) return
  await cancelStandalone(tx, now, match, { reason: 'ready_timeout' })
  const seats = await tx.matchmaking.seatsOfMatch(match)
  const queue = match.terms?.queueId ? await tx.matchmaking.queueById(match.terms.queueId) : null
  for (const ticket of await tx.matchmaking.ticketsOfMatch(match.id)) {
    const seat = seats.find((s) => s.userId === ticket.userId)
    const confirmed = seat !== undefined && (seat.slot === 1 ? match.slot1ReadyAt : match.slot2ReadyAt) != null
    if (confirmed && queue !== null && queue.closedAt === null && !(await tx.matchmaking.openTicketOf(ticket.userId, ticket.gameId))) {
      await tx.matchmaking.reopenTicket(ticket.id)
    } else if (!confirmed) {
      await tx.matchmaking.failTicket(ticket.id, 'ready_timeout', now)
      await tx.events.append({ userId: ticket.userId, topic: 'status', type: 'ticket.cancelled', data: { ticketId: ticket.id, gameId: ticket.gameId, queue: queue?.name ?? '', reason: 'ready_timeout' } }, now)
    }
  }
}

/**
 * A deleted account's matchmaking, in the deletion's unit of work: its open
 * tickets closed (`account_closed`), its open challenges, made or received,
 * cancelled (the other player told). Its matches go on (decided as any, its
 * winnings to the house: a deleted account holds no money).
 */
export async function closeMatchmaking(tx: Transaction, userId: string, now: Date): Promise<void> {
  await tx.matchmaking.closeTickets(
    (await tx.matchmaking.openTicketsOfUser(userId)).map((t) => t.id),
    'cancelled',
    'account_closed',
    now,
  )
  for (;;) {
    const open = await tx.matchmaking.challengesOf(userId, true, 100)
    if (open.length === 0) return
    for (const challenge of open) {
      await tx.matchmaking.closeChallenge(challenge.id, 'cancelled', now)
      const other = challenge.challengerId === userId ? challenge.opponentId : challenge.challengerId
      await tx.events.append({ userId: other, topic: 'status', type: 'challenge.cancelled', data: { challengeId: challenge.id, gameId: challenge.gameId, reason: 'account_closed' } }, now)
    }
  }
}

/** The match view (GET /matches/{id}) of a stored match, through `stores` (a unit of work or the read connection). */
export async function matchView(stores: Pick<Transaction, 'matchmaking' | 'games'>, match: MatchRecord): Promise<MatchView> {
  const seats = await stores.matchmaking.seatsOfMatch(match)
  const queue = match.terms?.queueId ? await stores.matchmaking.queueById(match.terms.queueId) : null
  const tournament = match.tournamentId === null ? null : await stores.games.tournament(match.tournamentId)
  // A queue match runs only once both confirmed (both stamps set), so its stamps tell, cancelled too; other matches have no ready check.
  const confirmed = (s: { slot: 1 | 2 }) => (match.kind === 'queue' ? (s.slot === 1 ? match.slot1ReadyAt : match.slot2ReadyAt) != null : match.status !== 'waiting')
  return {
    id: match.id,
    kind: match.kind,
    gameId: match.gameId,
    tournamentId: match.tournamentId,
    queue: queue?.name ?? null,
    challengeId: match.terms?.challengeId ?? null,
    status: match.status,
    rated: tournament === null ? match.terms?.rated === true : tournament.options?.rated !== false,
    stake: match.stake == null ? null : formatStake(match.stake),
    rake: match.terms?.rake ?? '0',
    players: seats.map((s) => ({ ...s, ready: confirmed(s) })),
    readyBy: match.readyBy == null ? null : toIso(match.readyBy),
    deadline: match.deadline == null ? null : toIso(match.deadline),
    createdAt: match.createdAt == null ? null : toIso(match.createdAt),
    decision:
      match.status === 'decided' && match.outcome !== null && match.decidedAt !== null
        ? { outcome: match.outcome, winnerParticipantId: match.winnerParticipantId, decidedBy: match.decidedBy ?? 'played', decidedAt: toIso(match.decidedAt) }
        : null,
  }
}
