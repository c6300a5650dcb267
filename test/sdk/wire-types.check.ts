// Compile-time half of the drift check (the runtime half is
// wire-types.test.ts): the SDK's standalone wire types must be exactly the
// server's TypeBox models. `tsc --noEmit` (the first step of `npm test`)
// fails on this file when a field is added, renamed, retyped or made optional
// on either side. Not a test file: bun never runs it, tsc checks it.
import type { Static, TSchema } from '@sinclair/typebox'
import type * as Sdk from '../../packages/sdk/src/types'
import type * as SdkRequests from '../../packages/sdk/src/requests'
import type * as AuthModel from '../../src/modules/auth/model'
import type * as OidcModel from '../../src/modules/auth/oidc/model'
import type * as GamesModel from '../../src/modules/games/model'
import type * as MatchesModel from '../../src/modules/matches/model'
import type * as SecurityModel from '../../src/modules/security/model'
import type * as WalletModel from '../../src/modules/wallet/model'
import type * as IntegrityModel from '../../src/modules/integrity/model'
import type * as EventsModel from '../../src/modules/events/model'
import type * as RatingsModel from '../../src/modules/ratings/model'
import type * as RatingsRoutes from '../../src/modules/ratings/index'
import type * as MatchmakingModel from '../../src/modules/matchmaking/model'
import type * as EvidenceModel from '../../src/modules/evidence/model'
import type * as Realtime from '../../src/modules/realtime/protocol'
import type * as SharedModels from '../../src/shared/models'
import type { EventTopic as ServerEventTopic } from '../../src/db/schema/events'

/** Exact type equality (not mere assignability: an extra optional field on one side counts). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
/** Fails to compile unless the argument is `true`; the alias names the pair in tsc's message. */
type Same<T extends true> = T

type Model<S extends TSchema> = Static<S>

export type WireTypes = [
  Same<Equal<Sdk.User, Model<typeof AuthModel.User>>>,
  Same<Equal<Sdk.TokenResponse, Model<typeof AuthModel.TokenResponse>>>,
  Same<Equal<Sdk.LogoutResult, Model<typeof AuthModel.LogoutResponse>>>,
  Same<Equal<Sdk.Accepted, Model<typeof AuthModel.AcceptedResponse>>>,
  Same<Equal<Sdk.SessionsEnded, Model<typeof AuthModel.SessionsEndedResponse>>>,
  Same<Equal<Sdk.Session, Model<typeof AuthModel.SessionView>>>,
  Same<Equal<Sdk.RevokeReason, Model<typeof AuthModel.RevokeReason>>>,
  Same<Equal<Sdk.AccountDeleted, Model<typeof AuthModel.DeleteAccountResponse>>>,
  Same<Equal<Sdk.AccountExport, Model<typeof AuthModel.AccountExport>>>,
  Same<Equal<Sdk.SignInResponse, Model<typeof AuthModel.SignInResponse>>>,
  Same<Equal<Sdk.Identity, Model<typeof AuthModel.IdentityView>>>,
  Same<Equal<Sdk.DeviceCode, Model<typeof AuthModel.DeviceCodeResponse>>>,
  Same<Equal<Sdk.Match, Model<typeof GamesModel.Match>>>,
  Same<Equal<Sdk.Tournament, Model<typeof GamesModel.Tournament>>>,
  Same<Equal<Sdk.TournamentStatus, Model<typeof GamesModel.TournamentStatus>>>,
  Same<Equal<Sdk.FormatName, Model<typeof GamesModel.FormatName>>>,
  Same<Equal<Sdk.BracketKind, Model<typeof GamesModel.BracketKind>>>,
  Same<Equal<Sdk.TournamentOptions, Model<typeof GamesModel.TournamentOptions>>>,
  Same<Equal<Sdk.Standing, Model<typeof GamesModel.Standing>>>,
  Same<Equal<Sdk.Registration, Model<typeof GamesModel.Registration>>>,
  Same<Equal<Sdk.TournamentSummary, Model<typeof GamesModel.TournamentSummary>>>,
  Same<Equal<Sdk.TournamentsPage, Model<typeof GamesModel.TournamentsPage>>>,
  Same<Equal<Sdk.RegistrationView, Model<typeof GamesModel.RegistrationView>>>,
  Same<Equal<Sdk.MyMatch, Model<typeof MatchesModel.MyMatch>>>,
  Same<Equal<Sdk.GameSession, Model<typeof MatchesModel.GameSessionResponse>>>,
  Same<Equal<Sdk.Decision, Model<typeof MatchesModel.DecisionResponse>>>,
  Same<Equal<Sdk.IntegrityLevel, Model<typeof SecurityModel.IntegrityLevel>>>,
  Same<Equal<Sdk.Withdrawal, Model<typeof WalletModel.Withdrawal>>>,
  Same<Equal<Sdk.PinSessionResponse, Model<typeof SecurityModel.PinSessionResponse>>>,
  Same<Equal<Sdk.PinVerifyResponse, Model<typeof WalletModel.PinVerifyResponse>>>,
  Same<Equal<Sdk.Wallet, Model<typeof WalletModel.WalletResponse>>>,
  Same<Equal<Sdk.TransactionKind, Model<typeof WalletModel.TransactionKind>>>,
  Same<Equal<Sdk.WalletTransaction, Model<typeof WalletModel.WalletTransaction>>>,
  Same<Equal<Sdk.TransactionsPage, Model<typeof WalletModel.TransactionsPage>>>,
  Same<Equal<Sdk.HeldPayout, Model<typeof IntegrityModel.HeldPayout>>>,
  Same<Equal<Sdk.WithdrawalsPage, Model<typeof WalletModel.WithdrawalsPage>>>,
  Same<Equal<Sdk.RatingView, Model<typeof RatingsModel.RatingView>>>,
  Same<Equal<Sdk.Season, Model<typeof RatingsModel.Season>>>,
  Same<Equal<Sdk.LeaderboardEntry, Model<typeof RatingsModel.LeaderboardEntry>>>,
  Same<Equal<Sdk.Leaderboard, Model<typeof RatingsModel.Leaderboard>>>,
  Same<Equal<Sdk.RatingChange, Model<typeof RatingsModel.RatingChange>>>,
  Same<Equal<Sdk.RatingHistoryPage, Model<typeof RatingsModel.RatingHistoryPage>>>,
  Same<Equal<Sdk.MyRating, Model<typeof RatingsRoutes.MyRatingResponse>>>,
  Same<Equal<Sdk.QueueWindow, Model<typeof MatchmakingModel.QueueWindowSchema>>>,
  Same<Equal<Sdk.DrawRule, Model<typeof MatchmakingModel.DrawRuleSchema>>>,
  Same<Equal<Sdk.Queue, Model<typeof MatchmakingModel.Queue>>>,
  Same<Equal<Sdk.TicketCloseReason, Model<typeof MatchmakingModel.QueueCloseReason>>>,
  Same<Equal<Sdk.Ticket, Model<typeof MatchmakingModel.Ticket>>>,
  Same<Equal<Sdk.MatchPlayer, Model<typeof MatchmakingModel.MatchPlayer>>>,
  Same<Equal<Sdk.MatchView, Model<typeof MatchmakingModel.MatchView>>>,
  Same<Equal<Sdk.Evidence, Model<typeof EvidenceModel.Evidence>>>,
  Same<Equal<Sdk.Challenge, Model<typeof MatchmakingModel.Challenge>>>,
  Same<Equal<Sdk.PlaneEvent, Model<typeof EventsModel.PlaneEvent>>>,
  Same<Equal<Sdk.EventsPage, Model<typeof EventsModel.EventsPage>>>,
  Same<Equal<Sdk.EventTopic, ServerEventTopic>>,
  // The event socket: the ticket, the message the SDK sends, and every frame the server sends.
  Same<Equal<Sdk.SocketTicketResponse, Model<typeof Realtime.SocketTicketResponse>>>,
  Same<Equal<Sdk.SubscribeMessage, Realtime.SubscribeMessage>>,
  Same<Equal<Sdk.ServerFrame, Realtime.ServerFrame>>,
  Same<Equal<Sdk.ErrorEnvelope, Model<typeof SharedModels.ErrorResponse>>>,
  // The bodies the SDK sends.
  Same<Equal<SdkRequests.LoginBody, Model<typeof AuthModel.LoginBody>>>,
  Same<Equal<SdkRequests.RefreshBody, Model<typeof AuthModel.RefreshBody>>>,
  Same<Equal<SdkRequests.LogoutBody, Model<typeof AuthModel.LogoutBody>>>,
  Same<Equal<SdkRequests.VerifyEmailBody, Model<typeof AuthModel.VerifyEmailBody>>>,
  Same<Equal<SdkRequests.ChangePasswordBody, Model<typeof AuthModel.ChangePasswordBody>>>,
  Same<Equal<SdkRequests.ForgotPasswordBody, Model<typeof AuthModel.ForgotPasswordBody>>>,
  Same<Equal<SdkRequests.ResetPasswordBody, Model<typeof AuthModel.ResetPasswordBody>>>,
  Same<Equal<SdkRequests.DeleteAccountBody, Model<typeof AuthModel.DeleteAccountBody>>>,
  Same<Equal<SdkRequests.DeviceLoginBody, Model<typeof AuthModel.DeviceLoginBody>>>,
  Same<Equal<SdkRequests.UpdateProfileBody, Model<typeof AuthModel.UpdateProfileBody>>>,
  Same<Equal<SdkRequests.LinkIdentityBody, Model<typeof AuthModel.LinkIdentityBody>>>,
  Same<Equal<SdkRequests.SteamLoginBody, Model<typeof AuthModel.SteamLoginBody>>>,
  Same<Equal<SdkRequests.IdTokenLoginBody, Model<typeof OidcModel.IdTokenLoginBody>>>,
  Same<Equal<SdkRequests.ExchangeBody, Model<typeof OidcModel.ExchangeBody>>>,
  Same<Equal<SdkRequests.DeviceTokenBody, Model<typeof AuthModel.DeviceTokenBody>>>,
  Same<Equal<SdkRequests.SessionBody, Model<typeof MatchesModel.SessionBody>>>,
  Same<Equal<SdkRequests.CreateChallengeBody, Model<typeof MatchmakingModel.CreateChallengeBody>>>,
  Same<Equal<SdkRequests.VerifyBody, Model<typeof WalletModel.VerifyBody>>>,
  Same<Equal<SdkRequests.SetPinBody, Model<typeof SecurityModel.SetPinBody>>>,
  Same<Equal<SdkRequests.SecurityEventBody, Model<typeof SecurityModel.SecurityEventBody>>>,
  Same<Equal<SdkRequests.SecurityEventAccepted, Model<typeof SecurityModel.SecurityEventAccepted>>>,
  // The claim is a union where the server has one object with optional fields
  // (see ClaimBody): every claim the SDK can build is a body the server takes,
  // and both offer the same outcomes, fields and score.
  Same<Equal<Sdk.Claim extends Model<typeof MatchesModel.ClaimBody> ? true : false, true>>,
  Same<Equal<Sdk.Claim['outcome'], Model<typeof MatchesModel.ClaimBody>['outcome']>>,
  Same<Equal<Exclude<keyof Extract<Sdk.Claim, { outcome: 'WIN' }>, never>, keyof Model<typeof MatchesModel.ClaimBody>>>,
  Same<Equal<Sdk.Claim['score'], Model<typeof MatchesModel.ClaimBody>['score']>>,
]
