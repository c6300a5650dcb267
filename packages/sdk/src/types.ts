// The SDK's types come from the TypeBox models the server validates with, as
// type-only imports: nothing of the server (Elysia, Drizzle, node:*) reaches a
// bundle of the SDK, and a change to a model changes the SDK's types with it.
import type { Static } from '@sinclair/typebox'
import type { LogoutResponse as LogoutResponseModel } from '../../../src/modules/auth/model'
import type { ClaimBody, DecisionResponse, GameSessionResponse, MyMatch as MyMatchModel } from '../../../src/modules/matches/model'

export type { TokenResponse, User } from '../../../src/modules/auth/model'
export type { Match, Tournament } from '../../../src/modules/games/model'
export type { IntegrityLevel, PinSessionResponse, PinVerifyResponse, Withdrawal } from '../../../src/modules/security/model'
export type { WalletResponse as Wallet } from '../../../src/modules/wallet/model'
export type { EventsPage, PlaneEvent } from '../../../src/modules/events/model'

export type GameSession = Static<typeof GameSessionResponse>
export type Decision = Static<typeof DecisionResponse>
export type MyMatch = Static<typeof MyMatchModel>
export type LogoutResult = Static<typeof LogoutResponseModel>

type ClaimFields = Static<typeof ClaimBody>
/** A result claim: a win names the winner's participant id; a draw names no one. */
export type Claim =
  | { outcome: 'WIN'; winnerParticipantId: string; score?: ClaimFields['score'] }
  | { outcome: 'DRAW'; score?: ClaimFields['score'] }

/** The topics of the event plane (contract §4). */
export type EventTopic = 'session' | 'wallet' | 'status'

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
