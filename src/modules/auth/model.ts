import { t, type Static } from 'elysia'
import { IntegrityLevel } from '../security/model'
import { Withdrawal } from '../wallet/model'
import { PlayedMatch } from '../matches/model'
import { RatingChange, RatingView } from '../ratings/model'
import type { RevokeReason as StoredRevokeReason } from './store'

export const User = t.Object(
  {
    id: t.String(),
    email: t.Nullable(t.String({ description: 'null for an account without a password identity' })),
    username: t.String(),
    country: t.String(),
    createdAt: t.String({ description: 'ISO-8601 UTC' }),
    emailVerified: t.Boolean({ description: 'whether the user entered the code mailed to `email`' }),
    identities: t.Array(t.String(), { description: 'the providers the account signs in with, in the order they were linked: `password`, `device`, `steam`, `oidc:<name>`' }),
  },
  { $id: 'User' },
)
export type User = Static<typeof User>

export const RegisterBody = t.Object(
  {
    email: t.String({ format: 'email', maxLength: 254 }),
    username: t.String({ pattern: '^[A-Za-z0-9_]{3,32}$' }),
    password: t.String({ minLength: 8, maxLength: 128 }),
    country: t.String({ pattern: '^[A-Za-z]{2}$', description: 'ISO 3166-1 alpha-2' }),
    accept_terms: t.Literal(true),
  },
  { $id: 'RegisterBody' },
)
export type RegisterBody = Static<typeof RegisterBody>

export const UserResponse = t.Object({ user: User })

export const LoginBody = t.Object(
  {
    identifier: t.String({ minLength: 1, maxLength: 254, description: 'email or username' }),
    password: t.String({ minLength: 1, maxLength: 1024 }),
  },
  { $id: 'LoginBody' },
)

export const TokenResponse = t.Object(
  {
    accessToken: t.String(),
    refreshToken: t.String(),
    expiresIn: t.Integer({ description: 'seconds until the access token expires' }),
    tokenType: t.Literal('Bearer'),
    user: User,
  },
  { $id: 'Tokens' },
)
export type TokenResponse = Static<typeof TokenResponse>

export const RefreshBody = t.Object({ refreshToken: t.String({ minLength: 1, maxLength: 512 }) }, { $id: 'RefreshBody' })

export const LogoutBody = t.Object(
  {
    all: t.Optional(t.Boolean({ description: 'end every session of the user' })),
    others: t.Optional(t.Boolean({ description: 'end every session of the user but this one; not with `all`' })),
  },
  { $id: 'LogoutBody' },
)

export const LogoutResponse = t.Object({ revoked: t.Integer() })

export const SessionView = t.Object({
  id: t.String(),
  createdAt: t.String(),
  lastUsedAt: t.String(),
  userAgent: t.Nullable(t.String()),
  current: t.Boolean({ description: 'the session of the token that asked' }),
})

export const SessionsResponse = t.Object({ sessions: t.Array(SessionView) })

// ---- verified email and passwords (contract §8) ----

/** A one-time code as mailed (e.g. `7KQ2M-R9W4T`); typed back in any case, with or without the dash. */
const MailedCode = t.String({ minLength: 1, maxLength: 64, description: 'the code from the mail (e.g. `7KQ2M-R9W4T`), in any case, dash optional' })

/** A new password, with register's rules (8 to 128 characters). */
const NewPassword = t.String({ minLength: 8, maxLength: 128 })

export const VerifyEmailBody = t.Object({ code: MailedCode }, { $id: 'VerifyEmailBody' })

/** 202: taken; what follows (a mail) happens later. */
export const AcceptedResponse = t.Object({ accepted: t.Literal(true) })

export const ChangePasswordBody = t.Object(
  {
    currentPassword: t.String({ minLength: 1, maxLength: 1024 }),
    newPassword: NewPassword,
  },
  { $id: 'ChangePasswordBody' },
)

export const ForgotPasswordBody = t.Object({ email: t.String({ format: 'email', maxLength: 254 }) }, { $id: 'ForgotPasswordBody' })

export const ResetPasswordBody = t.Object(
  {
    email: t.String({ format: 'email', maxLength: 254 }),
    code: MailedCode,
    newPassword: NewPassword,
  },
  { $id: 'ResetPasswordBody' },
)

/** A password change (the other sessions) or reset (every session): how many sessions it ended. */
export const SessionsEndedResponse = t.Object({ revoked: t.Integer({ description: 'how many sessions the change ended' }) })
export const SessionIdParams = t.Object({ id: t.String({ minLength: 1, maxLength: 64 }) })

// ---- deletion and export (contract §8) ----

export const DeleteAccountBody = t.Object(
  {
    password: t.Optional(
      t.String({ minLength: 1, maxLength: 1024, description: 'the account password, to re-authenticate; required when the account has a password identity, not asked of one without (a guest)' }),
    ),
  },
  { $id: 'DeleteAccountBody' },
)

export const DeleteAccountResponse = t.Object({ deleted: t.Literal(true), deletedAt: t.String({ description: 'ISO-8601 UTC' }) }, { $id: 'AccountDeleted' })


/** Why a session ended (src/modules/auth/store.ts). */
export const RevokeReason = t.Union([
  t.Literal('logout'),
  t.Literal('logout_all'),
  t.Literal('logout_others'),
  t.Literal('revoked'),
  t.Literal('refresh_token_reused'),
  t.Literal('password_changed'),
  t.Literal('password_reset'),
  t.Literal('banned'),
  t.Literal('superseded'),
])

export const ExportedSession = t.Object({
  id: t.String(),
  createdAt: t.String(),
  lastUsedAt: t.String(),
  expiresAt: t.String(),
  userAgent: t.Nullable(t.String()),
  revokedAt: t.Nullable(t.String()),
  revokedReason: t.Nullable(RevokeReason),
})

export const LedgerEntry = t.Object({
  transactionId: t.String(),
  kind: t.Union([
    t.Literal('credit'),
    t.Literal('withdrawal'),
    t.Literal('reversal'),
    t.Literal('adjustment'),
    t.Literal('entry_fee'),
    t.Literal('entry_fee_refund'),
    t.Literal('prize'),
    t.Literal('stake'),
    t.Literal('stake_payout'),
    t.Literal('stake_refund'),
  ]),
  reference: t.Nullable(
    t.String({
      description:
        'the movement\'s idempotency reference: `credit:<reference>` for an operator credit, `adjustment:<reference>` for an operator adjustment, `entry_fee:<participantId>` and `entry_fee_refund:<participantId>` for a tournament\'s fee and its refund, `prize:<tournamentId>:<rank>` for a prize, `stake:<matchId>:<userId>`, `stake_payout:<matchId>` and `stake_refund:<matchId>:<userId>` for a match\'s stake, its payout and its refund',
    }),
  ),
  asset: t.String(),
  amount: t.String({ description: 'signed decimal string: positive credits the wallet, negative debits it' }),
  createdAt: t.String(),
})

export const ReportedSecurityEvent = t.Object({
  id: t.String(),
  kind: t.String(),
  level: IntegrityLevel,
  details: t.Record(t.String(), t.Unknown()),
  occurredAt: t.String(),
  receivedAt: t.String(),
})

// ---- identities (contract §13) ----

export const IdentityView = t.Object(
  {
    provider: t.String({ description: '`password`, `device`, `steam` or `oidc:<name>`' }),
    subject: t.Optional(t.String({ description: "the provider's id of the player (the SteamID, the ID token's `sub`); absent for `password` and `device`" })),
    email: t.Optional(t.String({ description: 'the address of the password identity, or the one the provider gave' })),
    linkedAt: t.String({ description: 'ISO-8601 UTC' }),
  },
  { $id: 'Identity' },
)
export type IdentityView = Static<typeof IdentityView>

export const IdentitiesResponse = t.Object({ identities: t.Array(IdentityView) }, { $id: 'Identities' })

/** The login shape of a sign-in that may create the account (contract §13). */
export const SignInResponse = t.Object({ ...TokenResponse.properties, created: t.Boolean({ description: 'whether this sign-in created the account' }) }, { $id: 'SignIn' })
export type SignInResponse = Static<typeof SignInResponse>

export const DeviceLoginBody = t.Object(
  {
    deviceSecret: t.String({ pattern: '^[A-Za-z0-9_-]{22,128}$', description: 'at least 128 random bits the client generated and keeps (22–128 characters of A–Z, a–z, 0–9, _ and -); stored only as a hash' }),
    create: t.Optional(t.Boolean({ description: 'create a guest account when the secret is unknown' })),
  },
  { $id: 'DeviceLoginBody' },
)
export type DeviceLoginBody = Static<typeof DeviceLoginBody>

export const UpdateProfileBody = t.Object(
  {
    username: t.Optional(t.String({ pattern: '^[A-Za-z0-9_]{3,32}$' })),
    country: t.Optional(t.String({ pattern: '^[A-Za-z]{2}$', description: 'ISO 3166-1 alpha-2' })),
  },
  { $id: 'UpdateProfileBody' },
)

/**
 * POST /me/identities/{provider}: the body of that provider's login — `{
 * deviceSecret }`, `{ ticket }` (steam), `{ idToken, nonce? }` (oidc:<name>) —
 * or `{ email, password, username? }` for `password`. One schema for the
 * route; each provider checks its own fields are there.
 */
/** A Steamworks Web API ticket as hex: GetAuthTicketForWebApi's bytes, a few hundred (at most 2 KiB taken). */
export const SteamTicket = t.String({
  pattern: '^([0-9A-Fa-f]{2})+$',
  minLength: 16,
  maxLength: 4096,
  description: "the ticket of Steamworks' GetAuthTicketForWebApi(ARENA_STEAM_IDENTITY), hex-encoded (either case)",
})

export const LinkIdentityBody = t.Object(
  {
    deviceSecret: t.Optional(DeviceLoginBody.properties.deviceSecret),
    ticket: t.Optional(SteamTicket),
    idToken: t.Optional(t.String({ minLength: 1, maxLength: 16384, description: 'oidc:<name>: the ID token' })),
    nonce: t.Optional(t.String({ minLength: 1, maxLength: 512 })),
    email: t.Optional(RegisterBody.properties.email),
    password: t.Optional(RegisterBody.properties.password),
    username: t.Optional(RegisterBody.properties.username),
  },
  { $id: 'LinkIdentityBody' },
)
export type LinkIdentityBody = Static<typeof LinkIdentityBody>

export const ProviderParams = t.Object({ provider: t.String({ minLength: 1, maxLength: 64, description: '`password`, `device`, `steam` or `oidc:<name>`' }) })

export const AccountExport = t.Object(
  {
    exportedAt: t.String(),
    user: t.Object({ ...User.properties, emailVerifiedAt: t.Nullable(t.String()) }),
    identities: t.Array(IdentityView, { description: 'every way the account signs in (contract §13)' }),
    sessions: t.Array(ExportedSession, { description: 'every auth session, live or ended, newest first' }),
    matches: t.Array(PlayedMatch, { description: 'every match the user was seated in' }),
    ledger: t.Array(LedgerEntry, { description: 'every posting on the user\'s wallet, oldest first' }),
    withdrawals: t.Array(Withdrawal, { description: 'oldest first' }),
    securityEvents: t.Array(ReportedSecurityEvent, { description: 'the events the user reported (POST /security/events), oldest first' }),
    ratings: t.Array(
      t.Object({
        gameId: t.String(),
        seasonId: t.String({ description: 'the season the rating is of (the current one)' }),
        rating: RatingView,
        history: t.Array(RatingChange, { description: 'every change of this rating in the game, every season, oldest first (seq 1, 2, 3…)' }),
      }),
      { description: 'the user\'s rating in each game they were rated in (docs/ratings.md), by game id' },
    ),
  },
  { $id: 'AccountExport' },
)
export type AccountExport = Static<typeof AccountExport>

// The model lists every reason the store knows, and no other (a compile error when one side gains one).
const _reasonsAgree: [Static<typeof RevokeReason>, StoredRevokeReason] extends [StoredRevokeReason, Static<typeof RevokeReason>] ? true : never = true
void _reasonsAgree

// ---- sign-in beyond passwords (contract §13) ----

export const SteamLoginBody = t.Object(
  {
    ticket: SteamTicket,
    create: t.Optional(t.Boolean({ description: 'create an account when no account has this Steam identity (default false: 401 invalid_credentials)' })),
  },
  { $id: 'SteamLoginBody' },
)
export type SteamLoginBody = Static<typeof SteamLoginBody>

// ---- devices without a keyboard (contract §13, RFC 8628: ./device-codes.ts) ----

export const DeviceCodeResponse = t.Object(
  {
    deviceCode: t.String({ description: 'the device keeps this secret and polls with it; never shown' }),
    userCode: t.String({ description: 'the code to show the player, `XXXX-XXXX` (Crockford base32)' }),
    verificationUri: t.String({ description: 'the page the player opens in a browser and types the code on' }),
    verificationUriComplete: t.String({ description: 'the same page with the code filled in (for a QR code or a link)' }),
    expiresIn: t.Integer({ description: 'seconds the code waits for the player' }),
    interval: t.Integer({ description: 'seconds to wait between polls' }),
  },
  { $id: 'DeviceCode' },
)
export type DeviceCodeResponse = Static<typeof DeviceCodeResponse>

export const DeviceTokenBody = t.Object({ deviceCode: t.String({ minLength: 1, maxLength: 256 }) }, { $id: 'DeviceTokenBody' })
