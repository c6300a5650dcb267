// Accounts, auth sessions, refresh tokens and login-throttle counters on SQLite.
import { and, asc, desc, eq, getTableColumns, gt, gte, inArray, isNull, lt, ne, notInArray, or, sql, type SQL } from 'drizzle-orm'
import { accountCodes, authSessions, knownSignInPlaces, loginThrottle, refreshTokens, users } from '../../schema'
import { mapEngineError } from '../../errors'
import type {
  AuthSession,
  AuthStore,
  NewAuthSession,
  NewUser,
  RefreshToken,
  RevokeReason,
  SessionWithUser,
  KnownPlace,
  ThrottleCounter,
  UserAccount,
  AccountCode,
  AccountCodePurpose,
  UserBan,
  UserStanding,
} from '../../../modules/auth/store'
import { perConnection, selectList } from '../connection'
import type { SqliteScope } from '../storage'
import { containsPattern, erasedUserColumns, toAccountCode, toAuthSession, toRefreshToken, toThrottleCounter, toUserAccount, toUserBan, userBanColumns } from '../../rows'

/** The authentication statement's row: a session, and its user's public columns as a JSON array in SESSION_USER_COLUMNS order (times in ms). */
interface SessionWithUserRaw {
  userId: string
  lastUsedAt: number
  expiresAt: number
  revokedAt: number | null
  /** null when the user row is gone. */
  user: string | null
}

/** The user's columns of the authentication statement, decoded. */
type SessionUserColumns = [
  email: string,
  username: string,
  country: string,
  createdAt: number,
  emailVerifiedAt: number | null,
  bannedAt: number | null,
  bannedUntil: number | null,
  banReason: string | null,
]

/** AuthStore.standing's row (times in ms). */
interface StandingRaw {
  bannedAt: number | null
  bannedUntil: number | null
  banReason: string | null
  deletedAt: number | null
}

const sessionColumns = getTableColumns(authSessions)
const userColumns = getTableColumns(users)

/** The session's user's columns, in SessionUserColumns order. */
const SESSION_USER_COLUMNS = ['email', 'username', 'country', 'createdAt', 'emailVerifiedAt', 'bannedAt', 'bannedUntil', 'banReason'] as const

// The lookup behind every authenticated request, compiled once per
// connection: one raw statement, the user's columns read by one scalar
// subquery as a JSON array. Every SQLite statement outside a transaction takes
// and drops a read lock (two fcntl and an fstat here), and Drizzle maps each
// row it reads: the two prepared primary-key lookups this replaces were a
// quarter of the CPU of GET /me under load. SQLite ran the equivalent JOIN
// slower than either (it recompiles a statement with a JOIN at every new
// binding); one subquery per column walked the users index eight times.
const statements = perConnection((sqlite) => ({
  standing: sqlite.prepare<StandingRaw, [string]>(
    `SELECT ${selectList(userColumns, ['bannedAt', 'bannedUntil', 'banReason', 'deletedAt'])} FROM users WHERE "${userColumns.id.name}" = ?`,
  ),
  sessionWithUser: sqlite.prepare<SessionWithUserRaw, [string]>(
    `SELECT ${selectList(sessionColumns, ['userId', 'lastUsedAt', 'expiresAt', 'revokedAt'], 's')},
      (SELECT json_array(${SESSION_USER_COLUMNS.map((name) => `"${userColumns[name].name}"`).join(', ')}) FROM users WHERE "${userColumns.id.name}" = s."${sessionColumns.userId.name}") AS "user"
    FROM auth_sessions s WHERE s."${sessionColumns.id.name}" = ?`,
  ),
}))

function optionalDate(ms: number | null): Date | null {
  return ms === null ? null : new Date(ms)
}

function toSessionWithUser(row: SessionWithUserRaw): SessionWithUser {
  let user: SessionWithUser['user'] = null
  if (row.user !== null) {
    const [email, username, country, createdAt, emailVerifiedAt, bannedAt, bannedUntil, banReason] = JSON.parse(row.user) as SessionUserColumns
    user = {
      id: row.userId,
      email,
      username,
      country,
      createdAt: new Date(createdAt),
      emailVerifiedAt: optionalDate(emailVerifiedAt),
      ban: toUserBan({ bannedAt: optionalDate(bannedAt), bannedUntil: optionalDate(bannedUntil), banReason }),
    }
  }
  return {
    userId: row.userId,
    lastUsedAt: new Date(row.lastUsedAt),
    expiresAt: new Date(row.expiresAt),
    revokedAt: row.revokedAt === null ? null : new Date(row.revokedAt),
    user,
  }
}

export class SqliteAuthStore implements AuthStore {
  constructor(private readonly scope: SqliteScope) {}

  private get db() {
    return this.scope.handle.db
  }

  async createUser(user: NewUser): Promise<void> {
    try {
      this.db.insert(users).values(user).run()
    } catch (error) {
      // The unique indexes decide, so two racing registrations cannot both win.
      throw mapEngineError(error)
    }
  }

  async userById(id: string): Promise<UserAccount | null> {
    const row = this.db.select().from(users).where(eq(users.id, id)).get()
    return row ? toUserAccount(row) : null
  }

  async userByEmailKey(emailKey: string): Promise<UserAccount | null> {
    const row = this.db.select().from(users).where(eq(users.emailKey, emailKey)).get()
    return row ? toUserAccount(row) : null
  }

  async userByUsernameKey(usernameKey: string): Promise<UserAccount | null> {
    const row = this.db.select().from(users).where(eq(users.usernameKey, usernameKey)).get()
    return row ? toUserAccount(row) : null
  }

  async usernamesHolding(usernameKeys: readonly string[], emailKeys: readonly string[]): Promise<string[]> {
    return this.db
      .select({ username: users.username })
      .from(users)
      .where(or(inArray(users.usernameKey, [...usernameKeys]), inArray(users.emailKey, [...emailKeys])))
      .all()
      .map((row) => row.username)
  }

  async createSession(session: NewAuthSession): Promise<void> {
    this.db.insert(authSessions).values(session).run()
  }

  async session(id: string): Promise<AuthSession | null> {
    const row = this.db.select().from(authSessions).where(eq(authSessions.id, id)).get()
    return row ? toAuthSession(row) : null
  }

  async sessionWithUser(sessionId: string): Promise<SessionWithUser | null> {
    const row = statements(this.scope.handle.sqlite).sessionWithUser.get(sessionId)
    return row ? toSessionWithUser(row) : null
  }

  async liveSessions(userId: string, now: Date): Promise<AuthSession[]> {
    return this.db
      .select()
      .from(authSessions)
      .where(and(eq(authSessions.userId, userId), isNull(authSessions.revokedAt), gt(authSessions.expiresAt, now)))
      .orderBy(desc(authSessions.lastUsedAt), asc(authSessions.id))
      .all()
      .map(toAuthSession)
  }

  async touchSession(id: string, now: Date): Promise<void> {
    this.db.update(authSessions).set({ lastUsedAt: now }).where(eq(authSessions.id, id)).run()
  }

  async revokeSession(id: string, userId: string, reason: RevokeReason, now: Date): Promise<boolean> {
    const changed = this.db
      .update(authSessions)
      .set({ revokedAt: now, revokedReason: reason })
      .where(and(eq(authSessions.id, id), eq(authSessions.userId, userId), isNull(authSessions.revokedAt)))
      .returning({ id: authSessions.id })
      .all()
    return changed.length === 1
  }

  async refreshToken(tokenHash: string): Promise<RefreshToken | null> {
    const row = this.db.select().from(refreshTokens).where(eq(refreshTokens.tokenHash, tokenHash)).get()
    return row ? toRefreshToken(row) : null
  }

  async issueRefreshToken(tokenHash: string, sessionId: string, now: Date): Promise<void> {
    this.db.insert(refreshTokens).values({ tokenHash, sessionId, issuedAt: now }).run()
  }

  async keepNewestRefreshTokens(sessionId: string, current: string, keep: number): Promise<number> {
    const others = and(eq(refreshTokens.sessionId, sessionId), ne(refreshTokens.tokenHash, current))
    const newest = this.db.select({ tokenHash: refreshTokens.tokenHash }).from(refreshTokens).where(others).orderBy(desc(refreshTokens.issuedAt), desc(refreshTokens.spentAt), desc(refreshTokens.tokenHash)).limit(keep - 1)
    return this.db
      .delete(refreshTokens)
      .where(and(others, notInArray(refreshTokens.tokenHash, newest)))
      .returning({ tokenHash: refreshTokens.tokenHash })
      .all().length
  }

  async sessionRowsOf(userId: string): Promise<AuthSession[]> {
    return this.db.select().from(authSessions).where(eq(authSessions.userId, userId)).orderBy(asc(authSessions.createdAt), asc(authSessions.id)).all().map(toAuthSession)
  }

  async deleteSessions(userId: string, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return
    this.db.delete(refreshTokens).where(inArray(refreshTokens.sessionId, [...ids])).run()
    this.db.delete(authSessions).where(and(eq(authSessions.userId, userId), inArray(authSessions.id, [...ids]))).run()
  }

  async spendRefreshToken(tokenHash: string, now: Date): Promise<boolean> {
    const spent = this.db
      .update(refreshTokens)
      .set({ spentAt: now })
      .where(and(eq(refreshTokens.tokenHash, tokenHash), isNull(refreshTokens.spentAt)))
      .returning({ tokenHash: refreshTokens.tokenHash })
      .all()
    return spent.length === 1
  }

  async throttleCounters(keys: readonly string[]): Promise<ThrottleCounter[]> {
    return this.db.select().from(loginThrottle).where(inArray(loginThrottle.key, [...keys])).all().map(toThrottleCounter)
  }

  async saveThrottleCounter(counter: ThrottleCounter): Promise<void> {
    const state = { failures: counter.failures, windowStartedAt: counter.windowStartedAt, blockedUntil: counter.blockedUntil }
    this.db.insert(loginThrottle).values(counter).onConflictDoUpdate({ target: loginThrottle.key, set: state }).run()
  }

  async deleteThrottleCounter(key: string): Promise<void> {
    this.db.delete(loginThrottle).where(eq(loginThrottle.key, key)).run()
  }

  async pruneThrottleRows(windowCutoff: Date, now: Date): Promise<number> {
    return this.db
      .delete(loginThrottle)
      .where(and(lt(loginThrottle.windowStartedAt, windowCutoff), or(isNull(loginThrottle.blockedUntil), lt(loginThrottle.blockedUntil, now))))
      .returning({ key: loginThrottle.key })
      .all().length
  }

  async knownPlaces(subject: string, placeHashes: readonly string[], since: Date): Promise<string[]> {
    if (placeHashes.length === 0) return []
    return this.db
      .select({ placeHash: knownSignInPlaces.placeHash })
      .from(knownSignInPlaces)
      .where(and(eq(knownSignInPlaces.subject, subject), inArray(knownSignInPlaces.placeHash, [...placeHashes]), gte(knownSignInPlaces.lastSeenAt, since)))
      .all()
      .map((row) => row.placeHash)
  }

  async rememberPlace(place: KnownPlace, keep: number): Promise<void> {
    this.db
      .insert(knownSignInPlaces)
      .values(place)
      .onConflictDoUpdate({ target: [knownSignInPlaces.subject, knownSignInPlaces.placeHash], set: { lastSeenAt: place.lastSeenAt } }).run()
    const ofKind = and(eq(knownSignInPlaces.subject, place.subject), eq(knownSignInPlaces.kind, place.kind))
    const newest = this.db
      .select({ placeHash: knownSignInPlaces.placeHash })
      .from(knownSignInPlaces)
      .where(ofKind)
      .orderBy(desc(knownSignInPlaces.lastSeenAt), desc(knownSignInPlaces.placeHash))
      .limit(keep)
    this.db.delete(knownSignInPlaces).where(and(ofKind, notInArray(knownSignInPlaces.placeHash, newest))).run()
  }

  async forgetPlaces(subject: string): Promise<void> {
    this.db.delete(knownSignInPlaces).where(eq(knownSignInPlaces.subject, subject)).run()
  }

  async pruneKnownPlaces(cutoff: Date): Promise<number> {
    return this.db.delete(knownSignInPlaces).where(lt(knownSignInPlaces.lastSeenAt, cutoff)).returning({ subject: knownSignInPlaces.subject }).all().length
  }

  // ---- accounts (contract §8) ----

  async setPasswordHash(userId: string, passwordHash: string): Promise<void> {
    this.db.update(users).set({ passwordHash }).where(eq(users.id, userId)).run()
  }

  async markEmailVerified(userId: string, now: Date): Promise<boolean> {
    return this.db.update(users).set({ emailVerifiedAt: now }).where(and(eq(users.id, userId), isNull(users.emailVerifiedAt))).returning({ id: users.id }).all().length > 0
  }

  async accountCode(userId: string, purpose: AccountCodePurpose): Promise<AccountCode | null> {
    const row = this.db.select().from(accountCodes).where(and(eq(accountCodes.userId, userId), eq(accountCodes.purpose, purpose))).get()
    return row ? toAccountCode(row) : null
  }

  async saveAccountCode(code: AccountCode): Promise<void> {
    const { userId, purpose, ...rest } = code
    this.db.insert(accountCodes).values(code).onConflictDoUpdate({ target: [accountCodes.userId, accountCodes.purpose], set: rest }).run()
  }

  async countAccountCodeFailure(userId: string, purpose: AccountCodePurpose): Promise<number> {
    const row = this.db
      .update(accountCodes)
      .set({ failures: sql`${accountCodes.failures} + 1` })
      .where(and(eq(accountCodes.userId, userId), eq(accountCodes.purpose, purpose)))
      .returning({ failures: accountCodes.failures })
      .get()
    return row?.failures ?? 0
  }

  async deleteAccountCode(userId: string, purpose: AccountCodePurpose): Promise<boolean> {
    return (
      this.db
        .delete(accountCodes)
        .where(and(eq(accountCodes.userId, userId), eq(accountCodes.purpose, purpose)))
        .returning({ userId: accountCodes.userId })
        .all().length > 0
    )
  }

  async pruneExpiredAccountCodes(now: Date): Promise<number> {
    return this.db.delete(accountCodes).where(lt(accountCodes.expiresAt, now)).returning({ userId: accountCodes.userId }).all().length
  }

  async sessionsOf(userId: string): Promise<AuthSession[]> {
    return this.db.select().from(authSessions).where(eq(authSessions.userId, userId)).orderBy(desc(authSessions.createdAt), desc(authSessions.id)).all().map(toAuthSession)
  }

  async earlierSessions(userId: string, userAgent: string | null): Promise<{ any: boolean; sameAgent: boolean }> {
    const agent = userAgent === null ? isNull(authSessions.userAgent) : eq(authSessions.userAgent, userAgent)
    const exists = (condition: SQL | undefined) => this.db.select({ id: authSessions.id }).from(authSessions).where(condition).limit(1).get() !== undefined
    return { any: exists(eq(authSessions.userId, userId)), sameAgent: exists(and(eq(authSessions.userId, userId), agent)) }
  }

  async setBan(userId: string, ban: UserBan | null): Promise<void> {
    this.db.update(users).set(userBanColumns(ban)).where(eq(users.id, userId)).run()
  }

  async searchUsers(query: string | null, afterId: string | null, limit: number): Promise<UserAccount[]> {
    return this.db
      .select()
      .from(users)
      .where(and(afterId === null ? undefined : gt(users.id, afterId), query === null ? undefined : userMatches(query)))
      .orderBy(asc(users.id))
      .limit(limit)
      .all()
      .map(toUserAccount)
  }

  async eraseUser(userId: string, now: Date): Promise<void> {
    this.db.delete(accountCodes).where(eq(accountCodes.userId, userId)).run()
    // Its refresh tokens go with the sessions (ON DELETE CASCADE).
    this.db.delete(authSessions).where(eq(authSessions.userId, userId)).run()
    this.db.update(users).set(erasedUserColumns(userId, now)).where(eq(users.id, userId)).run()
  }

  async standing(userId: string): Promise<UserStanding | null> {
    // One writer at a time: a ban cannot commit between this read and the end
    // of the write that made it. Compiled once: every claim reads it.
    const row = statements(this.scope.handle.sqlite).standing.get(userId)
    if (!row) return null
    return {
      ban: toUserBan({ bannedAt: optionalDate(row.bannedAt), bannedUntil: optionalDate(row.bannedUntil), banReason: row.banReason }),
      deletedAt: optionalDate(row.deletedAt),
    }
  }
}

/** A user whose id is `query`, or whose username or email key contains it (LIKE's wildcards taken literally). */
function userMatches(query: string) {
  const pattern = containsPattern(query.toLowerCase())
  return or(eq(users.id, query), sql`${users.usernameKey} LIKE ${pattern} ESCAPE '\\'`, sql`${users.emailKey} LIKE ${pattern} ESCAPE '\\'`)
}
