// What the operator console's operations pages need from the database, beside
// what the games, matches and wallet stores already answer: the dashboard's
// counts, the queues an operator works through (disputed matches across
// tournaments, withdrawals waiting for a decision across users), the games
// and the names behind ids. Small interfaces, one per page's need, all read
// only; the engines implement them as one store (`read.operations`).
import type { ClaimRecord } from '../matches/store'
import type { MatchRecord, TournamentFormatName } from '../games/store'
import type { Withdrawal, WithdrawalStatus } from '../wallet/store'

/** The dashboard's numbers, each a count the database answers from an index or a small scan. */
export interface DashboardCounts {
  /** Accounts not deleted (banned ones included: they are still players). */
  players: number
  /** Matches being played now: `running`, in a running tournament. */
  liveMatches: number
  /** Matches whose players claimed different results, waiting for an operator. */
  disputedMatches: number
  /** Tournaments running (or finalizing: played out, paying). */
  runningTournaments: number
  /** Withdrawals above the approval threshold, waiting for a finance operator. */
  withdrawalsAwaitingApproval: number
  /** Withdrawals to a new address, waiting for their hold to end. */
  withdrawalsHeld: number
}

export interface DashboardStore {
  dashboardCounts(): Promise<DashboardCounts>
  /** The database's size in bytes: the SQLite file's pages, or pg_database_size. */
  databaseSizeBytes(): Promise<number>
}

/** One player of a match as the console names them. */
export interface NamedSeat {
  participantId: string
  userId: string
  username: string
  seed: number
}

/** A disputed match with what the operator needs to settle it. */
export interface DisputedMatch {
  match: MatchRecord
  /** The three are null for a match without a tournament (a queue's or a challenge's: `match.kind`). */
  tournamentId: string | null
  tournamentName: string | null
  format: TournamentFormatName | null
  slot1: NamedSeat | null
  slot2: NamedSeat | null
  /** The claims of the round of claims that disagreed. */
  claims: ClaimRecord[]
}

export interface DisputeQueue {
  /** Disputed matches of every running tournament and those without one (first), oldest tournament first, by bracket, round and position; at most `limit`. */
  disputedMatches(limit: number): Promise<DisputedMatch[]>
}

/** A withdrawal waiting for an operator, with its user's name. */
export interface WaitingWithdrawal {
  withdrawal: Withdrawal
  username: string
}

/** Which withdrawals the history shows: each field set narrows it. */
export interface WithdrawalFilter {
  status: WithdrawalStatus | null
  userId: string | null
  /** Created at or after. */
  since: Date | null
  /** Created before. */
  until: Date | null
}

export interface WithdrawalQueue {
  /** `awaiting_approval` and `held` withdrawals of every user, oldest first; at most `limit`. */
  waitingWithdrawals(limit: number): Promise<WaitingWithdrawal[]>
  /**
   * Withdrawals of every user in any status that match `filter`, newest first
   * (by creation time, then id: the withdrawals_created index), strictly
   * after `before` in that order (the last row of the previous page); at most `limit`.
   */
  withdrawalHistory(filter: WithdrawalFilter, before: { createdAt: Date; id: string } | null, limit: number): Promise<WaitingWithdrawal[]>
}

/** A game as the console lists it (never its key's hash). */
export interface GameListing {
  id: string
  name: string
  createdAt: Date
  keyRotatedAt: Date
}

export interface GameCatalogue {
  /** Every game, oldest first; at most `limit`. */
  listGames(limit: number): Promise<GameListing[]>
  /** One game's name; null when there is no such game. */
  gameName(gameId: string): Promise<string | null>
}

export interface UserNames {
  /** Usernames by user id (a deleted account keeps its erased placeholder name). */
  usernamesOf(userIds: readonly string[]): Promise<Map<string, string>>
}

/**
 * What an id the console shows names (an audit record's target, a security
 * event's user): the name an operator knows it by, and where its page is.
 * A deleted user's username reads `erased` (the deletion erased it): `deleted` says so.
 */
export type NamedId =
  | { kind: 'user'; username: string; deleted: boolean }
  | { kind: 'operator'; name: string }
  | { kind: 'tournament'; name: string }
  | { kind: 'game'; name: string }
  | { kind: 'match'; tournamentId: string; tournamentName: string }
  | { kind: 'participant'; userId: string; username: string; deleted: boolean; tournamentId: string; tournamentName: string }
  | { kind: 'withdrawal'; userId: string; username: string; deleted: boolean }

export interface IdNames {
  /**
   * What each id names, in one query whatever the mix of kinds (a console
   * page's ids at once, never one query per row); an id of no kind above, or
   * of nothing stored, is absent from the map.
   */
  namesOf(ids: readonly string[]): Promise<Map<string, NamedId>>
}

export interface OperationsStore extends DashboardStore, DisputeQueue, WithdrawalQueue, GameCatalogue, UserNames, IdNames {}
