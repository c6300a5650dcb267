// What the auth module needs from the database, in its own terms (see src/db/storage.ts):
// accounts, auth sessions, their refresh tokens, and the failed-login counters.

/** An account as other users and the account itself may see it. */
export interface UserProfile {
  id: string
  email: string
  username: string
  country: string
  createdAt: Date
}

/** An account with what a login checks. */
export interface UserAccount extends UserProfile {
  passwordHash: string
}

/**
 * A new account. The keys are the lower-cased email and username: uniqueness
 * is case-insensitive (contract §1), and logins look accounts up by them.
 */
export interface NewUser extends UserAccount {
  emailKey: string
  usernameKey: string
}

export type RevokeReason = 'logout' | 'logout_all' | 'refresh_token_reused'

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
  user: UserProfile | null
}

/** A refresh token, known by its hash. A spent one is kept so a replay can be recognised. */
export interface RefreshToken {
  tokenHash: string
  sessionId: string
  issuedAt: Date
  spentAt: Date | null
}

/** Failed-login counter of one key (`account:…`, `identifier:…` or `address:…`; see throttle.ts). */
export interface ThrottleCounter {
  key: string
  failures: number
  windowStartedAt: Date
  blockedUntil: Date | null
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
  /** Marks the token spent unless it already is; whether this call spent it. */
  spendRefreshToken(tokenHash: string, now: Date): Promise<boolean>

  throttleCounters(keys: readonly string[]): Promise<ThrottleCounter[]>
  /** Creates or replaces the counter of `counter.key`. */
  saveThrottleCounter(counter: ThrottleCounter): Promise<void>
  deleteThrottleCounter(key: string): Promise<void>
  /**
   * Housekeeping: deletes counters whose window started before `windowCutoff`
   * and whose block, if any, ended before `now`; returns how many.
   */
  pruneThrottleRows(windowCutoff: Date, now: Date): Promise<number>
}
