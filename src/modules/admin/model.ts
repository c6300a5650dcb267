// TypeBox models of the operator's user routes (contract §8): the operator's
// view of a user, its ban, its sessions and its wallet.
import { Withdrawal } from '../wallet/model'
import { t, type Static } from 'elysia'
import { ExportedSession, IdentityView, ProviderParams, User } from '../auth/model'

export const BanView = t.Object(
  {
    reason: t.String(),
    bannedAt: t.String(),
    until: t.Nullable(t.String({ description: 'null: until an operator lifts it' })),
    inForce: t.Boolean({ description: 'false once `until` has passed: the user may log in again' }),
  },
  { $id: 'Ban' },
)

export const AdminUser = t.Object(
  {
    ...User.properties,
    ban: t.Nullable(BanView, { description: 'the last ban set, possibly expired; null when none or lifted' }),
    deletedAt: t.Nullable(t.String({ description: 'set once the account was deleted: email and username then read `erased`' })),
  },
  { $id: 'AdminUser' },
)
export type AdminUser = Static<typeof AdminUser>

export const AdminUserResponse = t.Object({ user: AdminUser })

/** A user named in an operator's path: its id (`usr_…`) or its username (src/modules/auth/user-ref.ts). */
export const UserRefParams = t.Object({
  id: t.String({ minLength: 1, maxLength: 64, description: 'the user id (`usr_…`) or the username, in any case' }),
})

/** The same, under the wallet routes' name for it. */
export const WalletUserParams = t.Object({ userId: UserRefParams.properties.id })

export const UsersQuery = t.Object({
  query: t.Optional(t.String({ maxLength: 254, description: 'a user id, or part of a username or email (any case)' })),
  after: t.Optional(t.String({ maxLength: 64, description: 'the `cursor` of the previous page' })),
  limit: t.Optional(t.Numeric({ minimum: 1, maximum: 100, description: '1 to 100, default 50' })),
})

export const UsersPage = t.Object({
  users: t.Array(AdminUser),
  cursor: t.Nullable(t.String({ description: 'pass as `after` for the next page; null at the end' })),
})

export const AdminSession = t.Object({ ...ExportedSession.properties, live: t.Boolean({ description: 'neither revoked nor expired' }) })

export const Holdings = t.Object({
  address: t.Nullable(t.String({ description: 'null before the wallet was first used' })),
  balances: t.Array(t.Object({ asset: t.String(), balance: t.String() })),
  pendingWithdrawals: t.Integer({ description: 'withdrawals debited and not yet signed' }),
})

export const AdminUserDetail = t.Object({
  user: AdminUser,
  sessions: t.Array(AdminSession, { description: 'every auth session, live or ended, newest first' }),
  wallet: Holdings,
  ban: t.Nullable(BanView),
  identities: t.Array(IdentityView, { description: 'every way the account signs in, as GET /me/identities shows the player; empty once deleted (contract §13)' }),
})

/** POST /admin/users/{id}/identities/{provider}/unlink. */
export const UnlinkIdentityBody = t.Object({ reason: t.String({ minLength: 1, maxLength: 500, description: 'why; recorded in the audit log (user.identity_unlink)' }) }, { $id: 'UnlinkIdentityBody' })

/** A user and one of its identities, named in an operator's path. */
export const UserIdentityParams = t.Object({
  id: UserRefParams.properties.id,
  provider: ProviderParams.properties.provider,
})

export const BanBody = t.Object(
  {
    reason: t.String({ minLength: 1, maxLength: 500, description: 'why; the user sees it in the account.banned event' }),
    until: t.Optional(t.String({ format: 'date-time', maxLength: 40, description: 'ISO-8601 with a zone, in the future; absent: until lifted' })),
  },
  { $id: 'BanBody' },
)

/** A user's PIN as operators see it (src/modules/security/pin-service.ts, PinState). */
export const PinStateModel = t.Object({
  set: t.Boolean({ description: 'the user has a PIN' }),
  locked: t.Boolean({ description: 'a lock is in force now' }),
  lockedUntil: t.Nullable(t.String({ format: 'date-time', description: 'when the last lock ends or ended; null when none since the last reset' })),
  failures: t.Integer({ description: 'wrong PINs since the last lock or reset' }),
  locks: t.Integer({ description: 'locks since the last reset (each lasts twice as long as the one before, at most a day)' }),
})

export const PinUnlockBody = t.Object({ reason: t.String({ minLength: 1, maxLength: 500, description: 'why; recorded in the audit log' }) }, { $id: 'PinUnlockBody' })

export const DeleteUserBody = t.Object({ reason: t.String({ minLength: 1, maxLength: 500, description: 'recorded in the security log' }) }, { $id: 'DeleteUserBody' })

export const CreditBody = t.Object(
  {
    amount: t.String({ maxLength: 64, description: 'decimal string, e.g. "100.00"' }),
    reference: t.String({ minLength: 1, maxLength: 128, description: 'the same reference credits once' }),
  },
  { $id: 'CreditBody' },
)

export const AdjustBody = t.Object(
  {
    amount: t.String({ maxLength: 64, description: 'signed decimal string, never zero: "25.50" adds, "-25.50" takes away' }),
    reason: t.String({ minLength: 1, maxLength: 500, description: 'why; the user sees it in the wallet.adjusted event, operators in the security log' }),
    reference: t.String({ minLength: 1, maxLength: 128, description: 'the idempotency key: the same reference adjusts once' }),
  },
  { $id: 'AdjustBody' },
)

export const RejectWithdrawalBody = t.Object(
  {
    reason: t.String({ minLength: 1, maxLength: 500, description: 'why; the user sees it in the withdrawal (rejectionReason) and the wallet.withdrawal_rejected event' }),
  },
  { $id: 'RejectWithdrawalBody' },
)

/** What POST /admin/withdrawals/{id}/approve and /reject answer: the withdrawal as it now is. */
export const WithdrawalDecisionResponse = t.Object({ withdrawal: Withdrawal })

/** A withdrawal as GET /admin/withdrawals lists it: the player's view of it, and whose it is and when it last changed. */
export const AdminWithdrawal = t.Object(
  {
    ...Withdrawal.properties,
    userId: t.String({ description: 'the user who asked for it' }),
    username: t.String({ description: 'that user\'s username now (`erased` once the account was deleted)' }),
    updatedAt: t.String({ description: 'when its status last changed (ISO 8601)' }),
  },
  { $id: 'AdminWithdrawal' },
)
export type AdminWithdrawal = Static<typeof AdminWithdrawal>

export const WithdrawalsQuery = t.Object({
  status: t.Optional(t.String({ maxLength: 32, description: 'awaiting_approval, held, pending_signature, signed, failed or rejected' })),
  user: t.Optional(t.String({ maxLength: 64, description: 'the user id (`usr_…`) or the username, in any case' })),
  from: t.Optional(t.String({ maxLength: 10, description: 'created on or after this UTC day (YYYY-MM-DD)' })),
  to: t.Optional(t.String({ maxLength: 10, description: 'created on or before this UTC day (YYYY-MM-DD), included' })),
  after: t.Optional(t.String({ maxLength: 64, description: 'the `cursor` of the previous page' })),
  limit: t.Optional(t.Numeric({ minimum: 1, maximum: 100, description: '1 to 100, default 50' })),
})

export const WithdrawalsPage = t.Object(
  {
    withdrawals: t.Array(AdminWithdrawal, { description: 'newest first (by creation time, then id)' }),
    cursor: t.Nullable(t.String({ description: 'pass as `after` for the next page; null on the last' })),
  },
  { $id: 'AdminWithdrawalsPage' },
)
export type WithdrawalsPage = Static<typeof WithdrawalsPage>
