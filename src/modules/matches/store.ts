// What the matches module needs from the database, in its own terms (see
// src/db/storage.ts): match sessions, result claims and the moves a decision
// makes on a match. The session-issue and result-claim paths are the hottest
// in the system; the SQLite store runs them on statements compiled once.
import type { DecidedBy } from '../games/formats/engine'
import type { GameResultMode, MatchRecord } from '../games/store'
import type { UserStanding } from '../auth/store'

/** A single-use match session; the token itself is never stored, only its hash. */
export interface GameSession {
  id: string
  gameId: string
  matchId: string
  participantId: string
  userId: string
  /** The round of claims it was issued for: a replay makes older sessions worthless. */
  claimRound: number
  expiresAt: Date
  consumedAt: Date | null
}

export interface NewGameSession extends Omit<GameSession, 'consumedAt'> {
  tokenHash: string
  createdAt: Date
}

export interface ClaimRecord {
  participantId: string
  outcome: 'WIN' | 'DRAW'
  winnerParticipantId: string | null
}

export interface NewClaim extends ClaimRecord {
  matchId: string
  claimRound: number
  /** Stored, not compared. */
  score: Record<string, unknown> | null
  gameSessionId: string
  createdAt: Date
}

/**
 * What a result claim decides from, read at its start in its unit of work:
 * the game's key, the claimant's standing, the session of the presented token
 * (whoever's it is) and its match with the claims of the match's current round
 * of claims. The match is read as `byId` reads it in a write (locked on
 * PostgreSQL), after the session.
 */
export interface ClaimContext {
  /** The game's key hash; null when there is no such game. */
  keyHash: string | null
  /** Who reports the game's results (contract §17); `claims` when there is no such game. */
  results: GameResultMode
  /** The claimant's standing; null when there is no such user. */
  standing: UserStanding | null
  session: GameSession | null
  /** The session's match; null without a session, or when the match is gone. */
  match: MatchRecord | null
  /** The claims of the match's current round (`match.claimRound`); empty without a match. */
  claims: ClaimRecord[]
}

/** What a session issue decides from, read at its start in its unit of work (the match as `byId` reads it in a write). */
export interface IssueContext {
  /** The game's key hash; null when there is no such game. */
  keyHash: string | null
  /** The match; null when there is none. */
  match: MatchRecord | null
  /** The game the match's tournament is played in (null without a match). */
  gameId: string | null
  /** The user's participant id in the match; null when not seated there. */
  seat: string | null
  /** Whether that seat has claimed in the match's current round of claims. */
  claimed: boolean
}

/** A decided match's result: a draw has no winner. */
export interface MatchResult {
  winnerParticipantId: string | null
  outcome: 'WIN' | 'DRAW'
  decidedBy: DecidedBy
}

/** One of a player's undecided matches, from that player's side. */
export interface OpenMatch {
  match: MatchRecord
  /** Null for a match without a tournament. */
  tournamentName: string | null
  gameId: string
  participantId: string
  slot: 1 | 2
  opponent: { participantId: string; userId: string; username: string } | null
}

export interface MatchesStore {
  byId(matchId: string): Promise<MatchRecord | null>
  /** Which of a match's participants (one or two ids) is `userId`'s; null when none. */
  seatOf(participantIds: readonly string[], userId: string): Promise<string | null>

  /** Everything a result claim checks and decides from (see ClaimContext): the claim path's reads, in one go where the engine can. */
  claimContext(gameId: string, userId: string, tokenHash: string): Promise<ClaimContext>

  /** Everything a session issue checks (see IssueContext). */
  issueContext(gameId: string, matchId: string, userId: string): Promise<IssueContext>
  insertSession(session: NewGameSession): Promise<void>
  sessionByTokenHash(tokenHash: string): Promise<GameSession | null>
  consumeSession(sessionId: string, now: Date): Promise<void>
  /** The user's open sessions (unconsumed, unexpired at `now`) for a game, oldest first. */
  openSessionIds(userId: string, gameId: string, now: Date): Promise<string[]>
  /** Deletes these sessions (superseded: their tokens then answer 401 session_token_invalid, as a used one does). */
  deleteSessions(ids: readonly string[]): Promise<void>
  /** Housekeeping: deletes sessions that expired before `cutoff`; returns how many. */
  pruneGameSessionsExpiredBefore(cutoff: Date): Promise<number>

  hasClaimed(matchId: string, claimRound: number, participantId: string): Promise<boolean>
  /** Records a claim. Throws UniqueViolationError when this participant already claimed in this round. */
  insertClaim(claim: NewClaim): Promise<void>
  /** The claims of one round of claims of a match. */
  claimsOf(matchId: string, claimRound: number): Promise<ClaimRecord[]>

  /** Opens a new round of claims (a replay); earlier claims stay for the record. */
  setClaimRound(matchId: string, claimRound: number): Promise<void>
  markDisputed(matchId: string): Promise<void>
  /** Records the result of a match (a correction records it again). */
  markDecided(matchId: string, result: MatchResult, now: Date): Promise<void>
  /** Seats a participant in a slot of a match (a winner moving on, a correction replacing one). */
  fillSlot(matchId: string, slot: 1 | 2, participantId: string | null): Promise<void>
  /** Opens a waiting match (or a disputed one again) with `deadline` (null: none); the opened match, or null when it was neither. */
  openMatch(matchId: string, deadline: Date | null): Promise<MatchRecord | null>
  /** Deletes matches no longer wanted (a Swiss round paired again) with their game sessions; the caller made sure none has a claim. */
  deleteMatches(matchIds: readonly string[]): Promise<void>
  /** Sets the deadline of a running match (one that opened at tournament start). */
  setDeadline(matchId: string, deadline: Date | null): Promise<void>
  /** Any claim on the match, in any round of claims (a correction is too late once its fed match has one). */
  hasAnyClaim(matchId: string): Promise<boolean>
  /** Every match of a tournament not decided yet becomes `cancelled`; how many. */
  cancelOpenMatches(tournamentId: string): Promise<number>

  /** A user's matches that are not decided yet, in running tournaments, by round and position. */
  openMatchesOf(userId: string): Promise<OpenMatch[]>
  /** Every match the user was seated in, whatever its status or its tournament's, by tournament (oldest first), round and position (export). */
  playedBy(userId: string): Promise<PlayedMatch[]>
}

/** A match a user was seated in, from that user's side. */
export interface PlayedMatch {
  match: MatchRecord
  /** Null for a match without a tournament. */
  tournamentName: string | null
  gameId: string
  participantId: string
}
