// Rows to domain records, once for both engines. The PostgreSQL schema
// mirrors the SQLite one column for column, and Drizzle gives both the same
// row types (Date for instants, string for amounts, objects for JSON), so a
// mapper written against SQLite's row type takes PostgreSQL's rows as they
// are: the compiler checks it at each call.
import type { accountCodes, authSessions, ledgerAccounts, ledgerPostings, ledgerTransactions, loginThrottle, pinSessions, refreshTokens, users, wallets, withdrawals } from './schema'
import { USER_PROFILE_FIELDS, type AccountCode, type AuthSession, type RefreshToken, type ThrottleCounter, type UserAccount, type UserBan, type UserProfile } from '../modules/auth/store'
import { pick } from '../shared/pick'
import type { PinSession } from '../modules/security/store'
import type { LedgerAccount, LedgerPosting, LedgerSnapshot, LedgerTransaction, Wallet, Withdrawal } from '../modules/wallet/store'

/** A user row, as both engines read it. */
type UserRow = typeof users.$inferSelect

/**
 * The user's columns others and the account itself may see (UserProfile
 * besides the id): the profile's fields, each a column of the same name
 * (the module names them once, USER_PROFILE_FIELDS). Every user answer is
 * read through this list: toUserAccount, and the lookup behind every
 * authenticated request on both engines (SESSION_USER_COLUMNS).
 */
export const USER_PROFILE_COLUMNS = USER_PROFILE_FIELDS satisfies readonly (keyof UserRow)[]

/** The ban columns of a user row (toUserBan reads them). */
export const USER_BAN_COLUMNS = ['bannedAt', 'bannedUntil', 'banReason'] as const satisfies readonly (keyof UserRow)[]

/** What the lookup behind every authenticated request reads of the session's user besides its id: its profile and its ban. */
export const SESSION_USER_COLUMNS = [...USER_PROFILE_COLUMNS, ...USER_BAN_COLUMNS] as const

/** The session lookup's user columns, by key (SESSION_USER_COLUMNS). */
export type SessionUserRow = Pick<UserRow, (typeof SESSION_USER_COLUMNS)[number]>

/** The profile of user `id` from its columns. */
export function toUserProfile(id: string, row: Pick<UserRow, (typeof USER_PROFILE_COLUMNS)[number]>): UserProfile {
  return { id, ...pick(row, USER_PROFILE_COLUMNS) }
}

/** The session lookup's user (SessionWithUser.user) from its columns. */
export function toSessionUser(id: string, row: SessionUserRow): UserProfile & { ban: UserBan | null } {
  return { ...toUserProfile(id, row), ban: toUserBan(row) }
}

export function toUserAccount(row: UserRow): UserAccount {
  return { ...toUserProfile(row.id, row), passwordHash: row.passwordHash, ban: toUserBan(row), deletedAt: row.deletedAt, passwordLinkedAt: row.passwordLinkedAt }
}

/** The ban columns of a user row as a ban, or null. */
export function toUserBan(row: Pick<UserRow, (typeof USER_BAN_COLUMNS)[number]>): UserBan | null {
  return row.bannedAt === null ? null : { bannedAt: row.bannedAt, until: row.bannedUntil, reason: row.banReason ?? '' }
}

/** A user row's ban columns for `ban` (null lifts it). */
export function userBanColumns(ban: UserBan | null) {
  return { bannedAt: ban?.bannedAt ?? null, bannedUntil: ban?.until ?? null, banReason: ban?.reason ?? null }
}

/** What erasing an account writes over its user row (AuthStore.eraseUser). */
export function erasedUserColumns(userId: string, now: Date) {
  return {
    email: 'erased',
    emailKey: `erased:${userId}`,
    username: 'erased',
    usernameKey: `erased:${userId}`,
    passwordHash: '',
    passwordLinkedAt: null,
    identityProviders: '',
    country: 'ZZ',
    emailVerifiedAt: null,
    ...userBanColumns(null),
    deletedAt: now,
  }
}

export function toAccountCode(row: typeof accountCodes.$inferSelect): AccountCode {
  return { userId: row.userId, purpose: row.purpose, codeHash: row.codeHash, failures: row.failures, createdAt: row.createdAt, expiresAt: row.expiresAt }
}

export function toAuthSession(row: typeof authSessions.$inferSelect): AuthSession {
  return {
    id: row.id,
    userId: row.userId,
    createdAt: row.createdAt,
    lastUsedAt: row.lastUsedAt,
    expiresAt: row.expiresAt,
    userAgent: row.userAgent,
    revokedAt: row.revokedAt,
    revokedReason: row.revokedReason,
  }
}

export function toRefreshToken(row: typeof refreshTokens.$inferSelect): RefreshToken {
  return { tokenHash: row.tokenHash, sessionId: row.sessionId, issuedAt: row.issuedAt, spentAt: row.spentAt }
}

export function toThrottleCounter(row: typeof loginThrottle.$inferSelect): ThrottleCounter {
  return { key: row.key, failures: row.failures, windowStartedAt: row.windowStartedAt, blockedUntil: row.blockedUntil }
}

export function toPinSession(row: typeof pinSessions.$inferSelect): PinSession {
  return { id: row.id, userId: row.userId, tokenHash: row.tokenHash, expiresAt: row.expiresAt, consumedAt: row.consumedAt, createdAt: row.createdAt }
}

export function toWallet(row: typeof wallets.$inferSelect): Wallet {
  return { userId: row.userId, asset: row.asset, address: row.address, keyRef: row.keyRef, createdAt: row.createdAt }
}

export function toAccount(row: typeof ledgerAccounts.$inferSelect): LedgerAccount {
  return { id: row.id, userId: row.userId, asset: row.asset, balance: BigInt(row.balance) }
}

export function toTransaction(row: typeof ledgerTransactions.$inferSelect): LedgerTransaction {
  return { id: row.id, kind: row.kind, reference: row.reference, memo: row.memo ?? null, createdAt: row.createdAt }
}

export function toPosting(row: typeof ledgerPostings.$inferSelect): LedgerPosting {
  return { id: row.id, transactionId: row.transactionId, accountId: row.accountId, asset: row.asset, amount: BigInt(row.amount), balanceAfter: row.balanceAfter === null ? null : BigInt(row.balanceAfter) }
}

/** A held payout as the ledger check reads it (LedgerSnapshot.heldPayouts). */
export function toHeldPayout(row: { kind: 'stake' | 'prize'; matchId: string; tournamentId: string | null; amount: string; stake: string | null }): LedgerSnapshot['heldPayouts'][number] {
  return { kind: row.kind, matchId: row.matchId, tournamentId: row.tournamentId, amount: BigInt(row.amount), stake: row.stake === null ? null : BigInt(row.stake) }
}

export function toWithdrawal(row: typeof withdrawals.$inferSelect): Withdrawal {
  return { ...row, amount: BigInt(row.amount) }
}

/** A LIKE pattern (with ESCAPE '\\') matching any text that contains `text`, its own % and _ taken literally. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
}
