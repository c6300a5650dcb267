// The wire types of public-api.md, written out here so that the package stands
// alone: nothing of the server (TypeBox, Elysia) is needed to type-check an app
// that uses it. They mirror the server's TypeBox models field for field;
// test/sdk/wire-types.check.ts fails `tsc` and test/sdk/wire-types.test.ts
// fails `bun test` when the two disagree. Change both sides together.

/** An access token pair and the user it belongs to (login and rotation). */
export interface TokenResponse {
  accessToken: string
  refreshToken: string
  /** Seconds until the access token expires. */
  expiresIn: number
  tokenType: 'Bearer'
  user: User
}

export interface User {
  id: string
  email: string
  username: string
  country: string
  /** ISO-8601 UTC. */
  createdAt: string
}

/** How many sessions a logout revoked. */
export interface LogoutResult {
  revoked: number
}

export interface Match {
  id: string
  round: number
  position: number
  status: 'waiting' | 'running' | 'disputed' | 'decided'
  slot1ParticipantId: string | null
  slot2ParticipantId: string | null
  winnerParticipantId: string | null
  nextMatchId: string | null
}

export interface Tournament {
  id: string
  gameId: string
  name: string
  format: 'single_elimination'
  status: 'draft' | 'running' | 'finalizing' | 'completed' | 'cancelled'
  participants: { id: string; userId: string; seed: number }[]
  matches: Match[]
  winnerParticipantId: string | null
}

/** One of the signed-in player's open matches (`myMatches()`). */
export interface MyMatch {
  matchId: string
  tournamentId: string
  tournamentName: string
  gameId: string
  round: number
  position: number
  status: 'waiting' | 'running' | 'disputed'
  participantId: string
  slot: 1 | 2
  opponent: { participantId: string; userId: string; username: string } | null
}

/** A single-use match session (`game.openSession()`). */
export interface GameSession {
  sessionId: string
  /** Single use: sent as x-session-token with the result. */
  token: string
  expiresAt: string
  context: {
    tournamentId: string
    matchId: string
    participantId: string
    slot: 1 | 2
  }
}

/** A result claim: a win names the winner's participant id; a draw names no one. */
export type Claim =
  | { outcome: 'WIN'; winnerParticipantId: string; score?: Record<string, unknown> }
  | { outcome: 'DRAW'; score?: Record<string, unknown> }

/** The arbiter's answer to a claim. */
export interface Decision {
  decision: 'pending' | 'replay' | 'game_advance' | 'game_advance_pending_finalization' | 'dispute'
  reason: string
  matchId: string
  tournamentId: string
  winnerParticipantId?: string
  nextMatchId?: string
}

export type IntegrityLevel = 'SAFE' | 'WARN' | 'COMPROMISED'

export interface Withdrawal {
  id: string
  status: 'pending_signature' | 'signed' | 'failed'
  /** Decimal string. */
  amount: string
  asset: string
  destinationAddress: string
  idempotencyKey: string
  /** Base58 Ed25519 signature over the canonical withdrawal message. */
  signature?: string
  createdAt: string
}

export interface PinSessionResponse {
  sessionId: string
  sessionToken: string
  expiresAt: string
  maxAttempts: number
}

/** The answer to a PIN verify: a wrong PIN is `valid: false`, not an error. */
export interface PinVerifyResponse {
  valid: boolean
  locked: boolean
  /** Consecutive failures; 0 after a valid PIN. */
  attempt: number
  /** The withdrawal the valid PIN authorized. */
  withdrawal?: Withdrawal
}

export interface Wallet {
  asset: string
  /** Decimal string. */
  balance: string
  /** Base58 Ed25519 public key of the 2-of-3 custody key. */
  address: string
}

/** One event of the event plane, for the signed-in user. */
export interface PlaneEvent {
  id: string
  /** One of the EventTopic values. */
  topic: string
  /** e.g. `wallet.credited`, `match.decided`, `tournament.completed`. */
  type: string
  data: Record<string, unknown>
  createdAt: string
}

/** One page of GET /api/v1/events: the events after the cursor asked for, oldest first, and the cursor to ask after next. */
export interface EventsPage {
  events: PlaneEvent[]
  /** Opaque. */
  cursor: string
}

/** The topics of the event plane (contract §4). */
export type EventTopic = 'session' | 'wallet' | 'status'

export interface ErrorDetail {
  path: string
  message: string
}

/** The error envelope every error answer of arena carries (contract §0). */
export interface ErrorEnvelope {
  error: {
    code: string
    message: string
    status: number
    details?: ErrorDetail[]
  }
}

/** The environments of public-api.md "Environments": the same paths behind different base URLs. */
export type Environment = 'local' | 'sandbox' | 'staging' | 'production'

/** The tokens the client holds; handed to `onTokens` so an app can persist them. */
export interface Tokens {
  accessToken: string
  refreshToken?: string
  /** Epoch ms when the access token expires, when the server said so (login, rotation). */
  expiresAt?: number
}

/** `fetch` or anything with its signature (a test double, a fetch with a proxy agent). */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>
