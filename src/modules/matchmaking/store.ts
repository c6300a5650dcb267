// What matchmaking needs from the database (contract §16): queues, the
// tickets players wait in them with, challenges, and the matches they make
// (rows of `matches` without a tournament, with their two seats).
import type { MatchRecord } from '../games/store'
import type { QueueWindow, WaitingTicket } from './matcher'

export type TicketStatus = 'open' | 'matched' | 'cancelled'
export type TicketCloseReason = 'left' | 'matched' | 'ready_timeout' | 'insufficient_funds' | 'queue_closed' | 'account_closed'
export type ChallengeStatus = 'open' | 'accepted' | 'declined' | 'expired' | 'cancelled'
export type DrawRule = 'replay' | 'result'

export interface QueueRecord {
  id: string
  gameId: string
  name: string
  rated: boolean
  /** What each player puts in, minor units; null: no stake. */
  stake: string | null
  /** The house's share of the pot, a canonical decimal fraction (`"0.05"`, `"0"`). */
  rake: string
  window: QueueWindow
  readyCheckS: number
  matchDeadlineS: number | null
  rematchCooldownS: number
  draws: DrawRule
  createdAt: Date
  updatedAt: Date
  closedAt: Date | null
}

/** What an operator may change of a queue (its game and name stay). */
export type QueuePatch = Partial<Pick<QueueRecord, 'rated' | 'stake' | 'rake' | 'window' | 'readyCheckS' | 'matchDeadlineS' | 'rematchCooldownS' | 'draws'>>

export interface TicketRecord {
  id: string
  queueId: string
  gameId: string
  userId: string
  /** The player's rating display when they joined: the centre of their window. */
  display: number
  /** Their place in line, and where the window's widening starts. */
  waitingSince: Date
  status: TicketStatus
  matchId: string | null
  createdAt: Date
  closedAt: Date | null
  closeReason: TicketCloseReason | null
}

export interface ChallengeRecord {
  id: string
  gameId: string
  challengerId: string
  opponentId: string
  /** What each player puts in, minor units; null: no stake. */
  stake: string | null
  status: ChallengeStatus
  expiresAt: Date
  matchId: string | null
  createdAt: Date
  closedAt: Date | null
}

/** A new match without a tournament and its two seats (participants without a tournament, seed 1 and 2). */
export interface NewStandaloneMatch {
  match: MatchRecord
  seats: readonly { participantId: string; userId: string }[]
}

/** A match's seat with its player's name (the match view's `players` add `ready`). */
export interface MatchSeat {
  participantId: string
  userId: string
  username: string
  slot: 1 | 2
}

export interface MatchmakingStore {
  // Queues.
  /** A new queue. A name open in the game already throws the store's unique violation. */
  insertQueue(queue: QueueRecord): Promise<void>
  /** A game's open queue by name (locked in a write on PostgreSQL: a ticket and a close take turns). */
  openQueue(gameId: string, name: string): Promise<QueueRecord | null>
  queueById(queueId: string): Promise<QueueRecord | null>
  /** A game's queues, open ones (and closed ones with `includeClosed`), by name. */
  queuesOf(gameId: string, includeClosed: boolean): Promise<QueueRecord[]>
  /** Every open queue of every game: the matcher's round. */
  openQueues(): Promise<QueueRecord[]>
  updateQueue(queueId: string, patch: QueuePatch, now: Date): Promise<void>
  closeQueue(queueId: string, now: Date): Promise<void>

  // Tickets.
  /** A new open ticket. A second open ticket of the player in the game throws the store's unique violation. */
  insertTicket(ticket: TicketRecord): Promise<void>
  /** The player's open ticket in the game, if any (locked in a write on PostgreSQL). */
  openTicketOf(userId: string, gameId: string): Promise<TicketRecord | null>
  /** A queue's open tickets, oldest first (waitingSince, then id). */
  openTicketsOf(queueId: string): Promise<TicketRecord[]>
  /** A queue's open tickets as the matcher reads them (only what pairing needs), oldest first: a tick reads every one. */
  waitingTickets(queueId: string): Promise<WaitingTicket[]>
  /** These tickets as they are now (locked in a write on PostgreSQL), in id order. */
  ticketsByIds(ids: readonly string[]): Promise<TicketRecord[]>
  /** Closes open tickets: `matched` (with the match) or `cancelled` with a reason. Answers how many it closed. */
  closeTickets(ids: readonly string[], status: 'matched' | 'cancelled', reason: TicketCloseReason, now: Date, matchId?: string): Promise<number>
  /** Closes a matched ticket without its match (its player did not confirm the ready check). */
  failTicket(id: string, reason: TicketCloseReason, now: Date): Promise<void>
  /** Opens a matched ticket again, with its place in line kept (the other player failed the ready check). */
  reopenTicket(id: string): Promise<void>
  /** The tickets that made a match. */
  ticketsOfMatch(matchId: string): Promise<TicketRecord[]>
  /** The open tickets of a user (an account closing). */
  openTicketsOfUser(userId: string): Promise<TicketRecord[]>
  /** Open tickets of every open queue (0 for one nobody waits in), with its game and name: for the console and the metrics. */
  countOpenTickets(): Promise<{ queueId: string; gameId: string; queue: string; open: number }[]>

  // Matches without a tournament.
  insertStandaloneMatch(match: NewStandaloneMatch): Promise<void>
  /**
   * The pairs of players (user ids, each pair once per match) of a game's
   * matches without a tournament made at or after `since`: the rematch
   * cooldown's memory.
   */
  recentPairs(gameId: string, since: Date): Promise<[string, string][]>
  /** A match's two seats with their usernames, in slot order. */
  seatsOfMatch(match: Pick<MatchRecord, 'slot1ParticipantId' | 'slot2ParticipantId'>): Promise<MatchSeat[]>
  /** Records a player's ready (slot 1 or 2) at `now`. */
  markReady(matchId: string, slot: 1 | 2, now: Date): Promise<void>
  /** Both are ready: the ready check is over, the match runs (until `deadline`, when it has one). */
  startAfterReady(matchId: string, deadline: Date | null): Promise<void>
  /** A match without a tournament is cancelled (its ready check failed, or an operator cancelled it). */
  markCancelled(matchId: string): Promise<void>
  /** Matches without a tournament holding stakes (not decided, not cancelled), oldest first: the console's "stakes held". */
  stakesHeld(limit: number): Promise<MatchRecord[]>

  // Challenges.
  insertChallenge(challenge: ChallengeRecord): Promise<void>
  /** A challenge (locked in a write on PostgreSQL: an accept, a decline and the expiry take turns). */
  challengeById(id: string): Promise<ChallengeRecord | null>
  /** How many challenges `challengerId` has open at `now` (the bound on them): an expired one is not, swept or not. */
  countOpenChallenges(challengerId: string, now: Date): Promise<number>
  /** Closes an open challenge; false when it was not open any more. */
  closeChallenge(id: string, status: Exclude<ChallengeStatus, 'open'>, now: Date, matchId?: string): Promise<boolean>
  /** A user's challenges, made or received, newest first, at most `limit`; `openOnly` narrows to open ones. */
  challengesOf(userId: string, openOnly: boolean, limit: number): Promise<ChallengeRecord[]>
  /** Open challenges past their expiry, oldest first, at most `limit`. */
  expiredChallenges(now: Date, limit: number): Promise<ChallengeRecord[]>
  /** Open challenges of every game, oldest first, at most `limit` (the console). */
  openChallenges(limit: number): Promise<ChallengeRecord[]>

  /** Deletes tickets and challenges closed before `before`; answers how many of each. */
  pruneClosed(before: Date): Promise<{ tickets: number; challenges: number }>
}
