// What the games module needs from the database, in its own terms (see
// src/db/storage.ts): games and their keys, tournaments, their participants
// and their brackets. The claim path's match-level work is the matches
// module's (src/modules/matches/store.ts); the tournament-level lookups it
// makes (who plays, finalizing) are here, compiled once where they are hot.

import type { BracketKind, DecidedBy, FormatName } from './formats/engine'

/** What made a match (contract §16): a tournament's bracket, a queue's matcher, or a challenge accepted. */
export const MATCH_KINDS = ['tournament', 'queue', 'challenge'] as const

/** What a match without a tournament was made with, fixed when it is made (a queue edited later changes no match of it). */
export interface MatchTerms {
  queueId?: string
  challengeId?: string
  /** The house's share of the pot, a decimal fraction as written (`"0.05"`); `"0"` for none. */
  rake: string
  rated: boolean
  /** An agreed draw is a result (the queue's `draws: "result"`); otherwise it is played again. */
  drawsAreResults: boolean
  /** The deadline of each round of play, from when it starts running (the queue's `matchDeadlineS`). */
  matchDeadlineS?: number | null
}

export type MatchKind = (typeof MATCH_KINDS)[number]

export type TournamentFormatName = FormatName
export type TournamentStatus = 'draft' | 'registration' | 'running' | 'finalizing' | 'completed' | 'cancelled'
export type Seeding = 'registration' | 'random' | 'rating'
export type MatchStatus = 'waiting' | 'running' | 'disputed' | 'decided' | 'cancelled'

/** A tournament's creation options (contract §9), stored as given. */
export interface TournamentOptions {
  /** Seconds a match may run before the deadline job settles it (whole, ≥ 1); absent: no deadline. */
  matchDeadlineS?: number
  /** Whether its results move ratings (contract §15); absent: true. */
  rated?: boolean
  /** Single elimination: the semi-final losers play for third place. */
  thirdPlaceMatch?: boolean
  /** Double elimination: `reset` (the default) or `simple`. */
  grandFinal?: 'simple' | 'reset'
  /** Swiss: how many rounds (default ⌈log2 n⌉). */
  rounds?: number
  /** The entry fee, a canonical decimal string (prizes.ts); absent: free. */
  entryFee?: string
  /** The prizes by rank, rank 1 first, canonical decimal strings (prizes.ts); absent: none. */
  prizes?: string[]
}

/** Who reports a game's results (contract §17): its players' claims, its signed game servers only, or either. */
export type GameResultMode = 'claims' | 'server' | 'either'

/** A game's dedicated server (contract §17): an Ed25519 public key registered by an operator. */
export interface GameServerRecord {
  id: string
  gameId: string
  name: string
  /** Raw 32 bytes, base64url without padding. */
  publicKey: string
  createdAt: Date
  rotatedAt: Date | null
  disabledAt: Date | null
}

export interface GameRecord {
  id: string
  name: string
  /** SHA-256 of the current game key; the key itself is shown once and never stored. */
  keyHash: string
  keyRotatedAt: Date
  createdAt: Date
  challengeRake?: string
  /** Absent: `claims`. */
  results?: GameResultMode
}

export interface TournamentRecord {
  id: string
  gameId: string
  name: string
  format: TournamentFormatName
  status: TournamentStatus
  winnerParticipantId: string | null
  createdAt: Date
  startedAt: Date | null
  completedAt: Date | null
  /** Registration (contract §9): all null for a tournament created with its participants. */
  registrationClosesAt: Date | null
  maxPlayers: number | null
  checkInOpensAt: Date | null
  checkInClosesAt: Date | null
  startsAt: Date | null
  seeding: Seeding | null
  /** Hex; what a `random` seeding shuffles with. */
  seed: string | null
  /** Joins so far; a leave does not lower it. */
  registrationSeq: number
  /** Null: none given. */
  options: TournamentOptions | null
}

/** A tournament as a list shows it, with its participant count. */
export type TournamentSummary = TournamentRecord & { participantCount: number }

/** A player's place in a tournament; seed 1 is the top seed. */
export interface Participant {
  id: string
  userId: string
  /** While registration is open, the registrant's number (in join order); from the start, the bracket seed 1..n. */
  seed: number
  /** When the player registered themself; null when an operator listed them. */
  registeredAt: Date | null
  checkedInAt: Date | null
  /** When an operator disqualified them; null: still in. */
  disqualifiedAt: Date | null
}

export interface MatchRecord {
  id: string
  /** Null for a match without a tournament (a queue's or a challenge's, contract §16). */
  tournamentId: string | null
  gameId: string
  kind: MatchKind
  /** With round and position, the match's place in its tournament (the format engine's key). */
  bracket: BracketKind
  round: number
  position: number
  status: MatchStatus
  slot1ParticipantId: string | null
  slot2ParticipantId: string | null
  winnerParticipantId: string | null
  /** `WIN`, or `DRAW` (round robin and Swiss), once decided; null before. */
  outcome: 'WIN' | 'DRAW' | null
  /** How it was decided; null before. */
  decidedBy: DecidedBy | null
  /** Where the winner goes (the format's bookkeeping); null where it goes nowhere. */
  nextMatchId: string | null
  nextSlot: number | null
  /** Where the loser goes (double elimination, the third-place match); null elsewhere. */
  loserNextMatchId: string | null
  loserNextSlot: number | null
  /** Which round of claims is open; a replay starts the next one. */
  claimRound: number
  decidedAt: Date | null
  /**
   * When the deadline job settles the match if it still runs; null without
   * one. Set by the services when the match starts running (a format's plan
   * leaves it out); the stores always return it.
   */
  deadline?: Date | null
  /** When it was made (null for matches made before matchmaking). */
  createdAt?: Date | null
  /** What each player put in (minor units), null without a stake. */
  stake?: string | null
  /** A queue's or challenge's match: what it was made with; null for a tournament's. */
  terms?: MatchTerms | null
  /** The ready check's end; null once both players are ready, or without one. */
  readyBy?: Date | null
  slot1ReadyAt?: Date | null
  slot2ReadyAt?: Date | null
}

/** A game as operators read it: its name and its rating settings (contract §15), never its key. */
export interface GameSummary {
  id: string
  name: string
  createdAt: Date
  rating: { tau: number; inactivityPeriodS: number }
  /** The house's share of a challenge's pot, a canonical decimal fraction. */
  challengeRake: string
  results: GameResultMode
}

export interface GamesStore {
  insertGame(game: GameRecord): Promise<void>
  /** A game, null when there is no such game. */
  game(gameId: string): Promise<GameSummary | null>
  /** Renames a game; false when there is no such game. */
  renameGame(gameId: string, name: string): Promise<boolean>
  setChallengeRake(gameId: string, rake: string): Promise<void>
  setResultMode(gameId: string, results: GameResultMode): Promise<void>

  // Game servers (contract §17).
  insertGameServer(server: GameServerRecord): Promise<void>
  /** A game's servers, oldest first. */
  gameServersOf(gameId: string): Promise<GameServerRecord[]>
  countGameServers(gameId: string): Promise<number>
  gameServer(id: string): Promise<GameServerRecord | null>
  /** Disables a server not disabled yet; false when it was (or there is none). */
  disableGameServer(id: string, at: Date): Promise<boolean>
  /** Replaces an enabled server's key; false when it is disabled (or there is none). */
  rotateGameServer(id: string, publicKey: string, at: Date): Promise<boolean>
  /** Records an accepted signature. Throws UniqueViolationError when it was accepted already (on any instance). */
  insertServerSignature(signature: { signatureHash: string; serverId: string; expiresAt: Date }): Promise<void>
  /** Housekeeping: deletes the accepted signatures whose window ended before `now`; returns how many. */
  pruneServerSignatures(now: Date): Promise<number>
  /** Replaces a game's key; false when there is no such game. */
  replaceKeyHash(gameId: string, keyHash: string, rotatedAt: Date): Promise<boolean>
  /** The hash of a game's current key, null when there is no such game. Every game-SDK call asks. */
  keyHashOf(gameId: string): Promise<string | null>
  gameExists(gameId: string): Promise<boolean>
  /** The users named by one of `ids` or by one of the lower-cased `usernameKeys`; deleted accounts are no users here. */
  findUsers(ids: readonly string[], usernameKeys: readonly string[]): Promise<{ id: string; usernameKey: string }[]>

  /** A draft tournament and its participants, or one open for registration (no participants yet). */
  insertTournament(tournament: Omit<TournamentRecord, 'winnerParticipantId' | 'startedAt' | 'completedAt' | 'registrationSeq'>, participants: readonly (Participant & { tournamentId: string })[]): Promise<void>
  /**
   * Tournaments by status (all when null), oldest first (ids are
   * time-ordered), after the id `after`, at most `limit`.
   */
  listTournaments(filter: { status: TournamentStatus | null; after: string | null; limit: number }): Promise<TournamentSummary[]>

  // Registration, each inside a unit of work.
  /** Counts a join and returns its number (1, 2, …). Updates the tournament's row: joins to one tournament take turns. */
  nextRegistrationNumber(tournamentId: string): Promise<number>
  countParticipants(tournamentId: string): Promise<number>
  participantOf(tournamentId: string, userId: string): Promise<Participant | null>
  insertParticipant(participant: Participant & { tournamentId: string }): Promise<void>
  /** Removes a user's participant; false when they had none. */
  removeParticipant(tournamentId: string, userId: string): Promise<boolean>
  removeParticipants(participantIds: readonly string[]): Promise<void>
  markCheckedIn(participantId: string, at: Date): Promise<void>
  markDisqualified(participantId: string, at: Date): Promise<void>
  /** Gives the participants seeds 1..n in the order given (every participant of the tournament, each once). */
  assignSeeds(tournamentId: string, participantIds: readonly string[]): Promise<void>
  /** Registration ended with too few players to start. */
  markCancelled(tournamentId: string, at: Date): Promise<void>
  tournament(id: string): Promise<TournamentRecord | null>
  /** A tournament's format (it never changes), null when there is no such tournament. */
  formatOf(tournamentId: string): Promise<TournamentFormatName | null>
  /** A tournament's participants, by seed. */
  participantsOf(tournamentId: string): Promise<Participant[]>
  /** A tournament's matches, by round and position. */
  bracketOf(tournamentId: string): Promise<MatchRecord[]>
  // What a decision reads before (and mostly instead of) the whole bracket (progress.ts, advanceAfter).
  /** Matches of a tournament not decided yet (waiting, running or disputed). */
  countUndecided(tournamentId: string): Promise<number>
  /** Whether an operator disqualified anyone in the tournament. */
  hasDisqualified(tournamentId: string): Promise<boolean>
  /** The matches `ids` of a tournament and those that feed nothing (a final, a third-place match, a grand final). */
  matchesAround(tournamentId: string, ids: readonly string[]): Promise<MatchRecord[]>
  /** Stores matches: a planned bracket, or the matches a format creates as it goes (a Swiss round). */
  insertBracket(matches: readonly MatchRecord[]): Promise<void>
  markRunning(tournamentId: string, startedAt: Date): Promise<void>
  /** Nothing is left to play: the tournament waits for its finalization job (`winnerParticipantId`: the standings' first). */
  markFinalizing(tournamentId: string, winnerParticipantId: string): Promise<void>
  markCompleted(tournamentId: string, winnerParticipantId: string | null, completedAt: Date): Promise<void>
  /** The match deadline of a tournament's options (seconds), null when none or no such tournament. */
  matchDeadlineOf(tournamentId: string): Promise<number | null>

  /** The users playing in a tournament, for addressing status events to each. */
  participantUserIds(tournamentId: string): Promise<string[]>
  /** The users behind one or two participants (a match's players). */
  usersOfParticipants(participantIds: readonly string[]): Promise<string[]>
  /** Who holds each of these participant ids (a rated decision's players). */
  seatsOf(participantIds: readonly string[]): Promise<{ participantId: string; userId: string }[]>
}
