// What the auth module needs from the database, in its own terms (see src/db/storage.ts):
// accounts, auth sessions, their refresh tokens, and the failed-login counters.

/** An account as other users and the account itself may see it. */
export interface UserProfile {
  id: string
  /** Null for an account without a password identity (contract §13). */
  email: string | null
  username: string
  country: string
  createdAt: Date
  /** When the user entered the code mailed to their address; null until then (contract §8). */
  emailVerifiedAt: Date | null
  /** The providers the account signs in with, comma-separated in link order (users.identity_providers; `user.identities` shows them: contract §13). */
  identityProviders: string
}

/**
 * UserProfile's fields besides the id, named once: the stores read a user
 * through this list (the users table's columns of the same names, on both
 * engines and in the lookup behind every authenticated request), and every
 * user answer shows it (toUser). A field of UserProfile missing here does
 * not compile.
 */
export const USER_PROFILE_FIELDS = ['email', 'username', 'country', 'createdAt', 'emailVerifiedAt', 'identityProviders'] as const satisfies readonly (keyof UserProfile)[]
const profileFieldsComplete: Exclude<keyof UserProfile, 'id' | (typeof USER_PROFILE_FIELDS)[number]> extends never ? true : never = true
void profileFieldsComplete

/** An operator's ban (contract §8). In force while `until` is null or later than now. */
export interface UserBan {
  bannedAt: Date
  until: Date | null
  reason: string
}

/** An account with what a login checks. */
export interface UserAccount extends UserProfile {
  /** Null when the account has no password identity (contract §13): no password signs in to it. */
  passwordHash: string | null
  /** The last ban set, possibly expired (see `banInForce`); null when none or lifted. */
  ban: UserBan | null
  /** Set when the account was deleted: its personal columns hold nothing of the person any more. */
  deletedAt: Date | null
  /** When the password identity was linked, if later than the account's creation (a guest that added one). */
  passwordLinkedAt: Date | null
}

/** Whether the ban keeps the user out at `now`. */
export function banInForce(ban: UserBan | null, now: Date): boolean {
  return ban !== null && (ban.until === null || ban.until.getTime() > now.getTime())
}

/**
 * A new account. The keys are the lower-cased email and username: uniqueness
 * is case-insensitive (contract §1), and logins look accounts up by them.
 */
export interface NewUser extends Omit<UserAccount, 'ban' | 'deletedAt' | 'passwordLinkedAt'> {
  emailKey: string | null
  usernameKey: string
}

/** A way to sign in other than the password (contract §13): the identities table's row. */
export interface StoredIdentity {
  provider: string
  /** The provider's id of the player; for `device`, the SHA-256 of the secret the client keeps. */
  subject: string
  userId: string
  email: string | null
  linkedAt: Date
}

/** What becomes of an account that adds a password identity (contract §13): the columns register would have set. */
export interface PasswordIdentity {
  email: string
  emailKey: string
  passwordHash: string
  username?: { username: string; usernameKey: string }
}

/** Why a session ended: the caller's logout, its `all` or `others` form, DELETE /me/sessions/{id}, a replayed refresh token, a password change or reset, a ban. */
export const REVOKE_REASONS = ['logout', 'logout_all', 'logout_others', 'revoked', 'refresh_token_reused', 'password_changed', 'password_reset', 'banned', 'superseded'] as const
export type RevokeReason = (typeof REVOKE_REASONS)[number]

/** What a mailed one-time code is for (contract §8). */
export const ACCOUNT_CODE_PURPOSES = ['verify_email', 'reset_password'] as const
export type AccountCodePurpose = (typeof ACCOUNT_CODE_PURPOSES)[number]

/** A mailed one-time code, known by its hash; one per user and purpose. */
export interface AccountCode {
  userId: string
  purpose: AccountCodePurpose
  codeHash: string
  failures: number
  createdAt: Date
  expiresAt: Date
}

/** One login. Access tokens carry its id; revoking it ends its tokens at once. */
export interface AuthSession {
  id: string
  userId: string
  createdAt: Date
  lastUsedAt: Date
  /** Absolute end of the session: refresh tokens never outlive it. */
  expiresAt: Date
  userAgent: string | null
  revokedAt: Date | null
  revokedReason: RevokeReason | null
}

export type NewAuthSession = Omit<AuthSession, 'revokedAt' | 'revokedReason'>

/** What every authenticated request checks: the session, and its user's public columns. */
export interface SessionWithUser {
  userId: string
  lastUsedAt: Date
  expiresAt: Date
  revokedAt: Date | null
  /** Null only if the user is gone, which cannot be (a user's sessions go with it). */
  user: (UserProfile & { ban: UserBan | null }) | null
}

/** A refresh token, known by its hash. A spent one is kept so a replay can be recognised. */
export interface RefreshToken {
  tokenHash: string
  sessionId: string
  issuedAt: Date
  /** On the database's clock (Transaction.databaseTime): the retry grace runs from it on any instance. */
  spentAt: Date | null
}

/** Failed-login counter of one key (`account:…`, `identifier:…` or `address:…`; see throttle.ts). */
export interface ThrottleCounter {
  key: string
  failures: number
  windowStartedAt: Date
  blockedUntil: Date | null
}

/** A place a subject (`user:<id>`, `operator:<id>`) signed in from: see known-places.ts. */
export interface KnownPlace {
  subject: string
  kind: 'address' | 'device'
  placeHash: string
  lastSeenAt: Date
}

export interface AuthStore {
  /** Creates an account. Throws UniqueViolationError (src/db/errors.ts) naming `email_key` or `username_key` when either is taken. */
  createUser(user: NewUser): Promise<void>
  userById(id: string): Promise<UserAccount | null>
  userByEmailKey(emailKey: string): Promise<UserAccount | null>
  userByUsernameKey(usernameKey: string): Promise<UserAccount | null>
  /** Usernames of the users holding any of these username keys or email keys. */
  usernamesHolding(usernameKeys: readonly string[], emailKeys: readonly string[]): Promise<string[]>

  createSession(session: NewAuthSession): Promise<void>
  session(id: string): Promise<AuthSession | null>
  /** Of these sessions, those neither revoked nor expired at `now` (the event sockets' ping tick: one query for many). */
  liveSessionIds(ids: readonly string[], now: Date): Promise<string[]>
  /** The lookup behind every authenticated request: one read, however the engine does it. */
  sessionWithUser(sessionId: string): Promise<SessionWithUser | null>
  /** The user's sessions neither revoked nor expired at `now`, most recently used first. */
  liveSessions(userId: string, now: Date): Promise<AuthSession[]>
  /** Records that the session was used at `now`. */
  touchSession(id: string, now: Date): Promise<void>
  /** Revokes the user's session unless it already is; whether this call revoked it. */
  revokeSession(id: string, userId: string, reason: RevokeReason, now: Date): Promise<boolean>

  refreshToken(tokenHash: string): Promise<RefreshToken | null>
  issueRefreshToken(tokenHash: string, sessionId: string, now: Date): Promise<void>
  /** Marks the token spent unless it already is, at `databaseNow` (Transaction.databaseTime); whether this call spent it. */
  spendRefreshToken(tokenHash: string, databaseNow: Date): Promise<boolean>
  /** Deletes the session's refresh tokens but `current` and the `keep - 1` others issued last; how many went. */
  keepNewestRefreshTokens(sessionId: string, current: string, keep: number): Promise<number>
  /** Every session row of the user, live or ended, oldest first. */
  sessionRowsOf(userId: string): Promise<AuthSession[]>
  /** Deletes these sessions of the user with their refresh tokens. */
  deleteSessions(userId: string, ids: readonly string[]): Promise<void>

  throttleCounters(keys: readonly string[]): Promise<ThrottleCounter[]>
  /** Creates or replaces the counter of `counter.key`. */
  saveThrottleCounter(counter: ThrottleCounter): Promise<void>
  deleteThrottleCounter(key: string): Promise<void>
  /**
   * Housekeeping: deletes counters whose window started before `windowCutoff`
   * and whose block, if any, ended before `now`; returns how many.
   */
  pruneThrottleRows(windowCutoff: Date, now: Date): Promise<number>

  /** Which of `placeHashes` the subject signed in from at or after `since`. */
  knownPlaces(subject: string, placeHashes: readonly string[], since: Date): Promise<string[]>
  /**
   * The places both subjects signed in from at or after `since` (an address
   * or a device token, as hashes), by kind then hash: what the integrity
   * signals `shared_address` and `shared_device` read (docs/integrity.md).
   */
  sharedPlaces(subjectA: string, subjectB: string, since: Date): Promise<Array<Pick<KnownPlace, 'kind' | 'placeHash'>>>
  /** Records (or refreshes) a place, then forgets the subject's places of that kind beyond the `keep` most recently seen. */
  rememberPlace(place: KnownPlace, keep: number): Promise<void>
  /** Forgets every place of the subject (its account is deleted). */
  forgetPlaces(subject: string): Promise<void>
  /** Housekeeping: deletes places last seen before `cutoff`; how many. */
  pruneKnownPlaces(cutoff: Date): Promise<number>

  // ---- accounts (contract §8) ----

  setPasswordHash(userId: string, passwordHash: string): Promise<void>
  /** Marks the user's email verified at `now` unless it already is; whether this call did. */
  markEmailVerified(userId: string, now: Date): Promise<boolean>
  accountCode(userId: string, purpose: AccountCodePurpose): Promise<AccountCode | null>
  /** Creates or replaces the user's code of `code.purpose`: a new code replaces the old one. */
  saveAccountCode(code: AccountCode): Promise<void>
  /** Counts a wrong try against the user's code; its failures now (0 when there is no code). */
  countAccountCodeFailure(userId: string, purpose: AccountCodePurpose): Promise<number>
  /** Deletes the user's code of that purpose; whether there was one. */
  deleteAccountCode(userId: string, purpose: AccountCodePurpose): Promise<boolean>
  /** Housekeeping: deletes every code that expired before `now`; how many. */
  pruneExpiredAccountCodes(now: Date): Promise<number>

  /** Every session of the user, live or not, newest first (export, operator detail). */
  sessionsOf(userId: string): Promise<AuthSession[]>
  /** Whether the user has any session stored (`any`), and any with this user agent (`sameAgent`): a login from a new device has the first and not the second. */
  earlierSessions(userId: string, userAgent: string | null): Promise<{ any: boolean; sameAgent: boolean }>

  // ---- identities (contract §13) ----

  identity(provider: string, subject: string): Promise<StoredIdentity | null>
  /** The account's identities besides the password, in link order. */
  identitiesOf(userId: string): Promise<StoredIdentity[]>
  /** Throws UniqueViolationError when the identity is linked already (to anyone) or the account has one of that provider. */
  addIdentity(identity: StoredIdentity): Promise<void>
  /** Whether the account had an identity of that provider. */
  removeIdentity(userId: string, provider: string): Promise<boolean>
  /** Sets users.identity_providers (the list `user.identities` shows). */
  setIdentityProviders(userId: string, providers: string): Promise<void>
  /** Gives the account a password identity at `now`. Throws UniqueViolationError naming `email_key` or `username_key`. */
  addPasswordIdentity(userId: string, identity: PasswordIdentity, now: Date): Promise<void>
  /** Takes the password identity away: no password, no address (contract §13). */
  removePasswordIdentity(userId: string): Promise<void>
  /** PATCH /me. Throws UniqueViolationError naming `username_key`. */
  updateProfile(userId: string, change: { username?: { username: string; usernameKey: string }; country?: string }): Promise<void>

  /** Sets or (with null) lifts the user's ban. */
  setBan(userId: string, ban: UserBan | null): Promise<void>
  /**
   * Users in id order (creation order) after `afterId`, at most `limit`;
   * with a `query`, only those whose id equals it or whose username or email
   * contains it, case-insensitively. Deleted users are included.
   */
  searchUsers(query: string | null, afterId: string | null, limit: number): Promise<UserAccount[]>
  /**
   * Erases the account's personal data in place (contract §8): email and
   * username become `erased` (their keys `erased:<id>`, which no address or
   * username can equal, so both are free again), the password hash empty,
   * country `ZZ`, any ban lifted, `deletedAt` set; deletes its sessions
   * (their refresh tokens go with them) and codes. The row stays: the
   * ledger names it.
   */
  eraseUser(userId: string, now: Date): Promise<void>

  // ---- sessions, bans, deletion (contract §8) ----

  /**
   * The user's ban and deletion, for a check inside a unit of work that must
   * not race a ban or a deletion (a claim, a withdrawal, a new session). A
   * plain read on both engines (src/db/stores/auth.ts says why PostgreSQL
   * takes no lock). Null when there is no such user.
   */
  standing(userId: string): Promise<UserStanding | null>
}

/** What decides whether a user may still act: a ban, a deletion. */
export interface UserStanding {
  ban: UserBan | null
  deletedAt: Date | null
}
