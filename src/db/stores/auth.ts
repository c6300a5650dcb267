// Accounts, auth sessions, refresh tokens, login-throttle counters, known
// sign-in places and account codes, on either engine.
//
// On PostgreSQL every write runs in one SERIALIZABLE transaction that the
// engine retries on 40001/40P01 (src/db/postgres/storage.ts), so the
// read-then-write rules of the auth service hold across instances as they do
// under SQLite's one writer: two rotations of one refresh token both read it
// unspent and both update its row, so one of them fails to serialize and, run
// again, finds it spent; two failed logins counting against one throttle key
// likewise cannot both count from the same number.
//
// SQLite's subclass (src/db/sqlite/stores/auth.ts) answers the two lookups of
// every authenticated request and every claim, sessionWithUser and standing,
// with statements it prepares once (measured there).
import { and, asc, desc, eq, gt, gte, inArray, isNull, lt, ne, notInArray, or, sql, type SQL } from 'drizzle-orm'
import { mapEngineError } from '../errors'
import type {
  AccountCode,
  AccountCodePurpose,
  AuthSession,
  AuthStore,
  KnownPlace,
  NewAuthSession,
  NewUser,
  PasswordIdentity,
  RefreshToken,
  StoredIdentity,
  RevokeReason,
  SessionWithUser,
  ThrottleCounter,
  UserAccount,
  UserBan,
  UserStanding,
} from '../../modules/auth/store'
import { Queries, type Db, type Tables } from './scope'
import {
  containsPattern,
  erasedUserColumns,
  SESSION_USER_COLUMNS,
  toAccountCode,
  toAuthSession,
  toRefreshToken,
  toSessionUser,
  toThrottleCounter,
  toUserAccount,
  toUserBan,
  userBanColumns,
} from '../rows'
import { pick } from '../../shared/pick'

export class AuthQueries extends Queries implements AuthStore {
  async createUser(user: NewUser): Promise<void> {
    const { users } = this.t
    try {
      await this.db.insert(users).values(user)
    } catch (error) {
      // The unique constraints decide, so two racing registrations cannot both
      // win; the second waits for the first and reads `users.email_key` (or
      // `users.username_key`) from PostgreSQL's detail (src/db/errors.ts).
      throw mapEngineError(error)
    }
  }

  async userById(id: string): Promise<UserAccount | null> {
    const { users } = this.t
    const [row] = await this.db.select().from(users).where(eq(users.id, id))
    return row ? toUserAccount(row) : null
  }

  async userByEmailKey(emailKey: string): Promise<UserAccount | null> {
    const { users } = this.t
    const [row] = await this.db.select().from(users).where(eq(users.emailKey, emailKey))
    return row ? toUserAccount(row) : null
  }

  async userByUsernameKey(usernameKey: string): Promise<UserAccount | null> {
    const { users } = this.t
    const [row] = await this.db.select().from(users).where(eq(users.usernameKey, usernameKey))
    return row ? toUserAccount(row) : null
  }

  async usernamesHolding(usernameKeys: readonly string[], emailKeys: readonly string[]): Promise<string[]> {
    const { users } = this.t
    const rows = await this.db
      .select({ username: users.username })
      .from(users)
      .where(or(inArray(users.usernameKey, [...usernameKeys]), inArray(users.emailKey, [...emailKeys])))
    return rows.map((row) => row.username)
  }

  async createSession(session: NewAuthSession): Promise<void> {
    const { authSessions } = this.t
    await this.db.insert(authSessions).values(session)
  }

  async session(id: string): Promise<AuthSession | null> {
    const { authSessions } = this.t
    const [row] = await this.db.select().from(authSessions).where(eq(authSessions.id, id))
    return row ? toAuthSession(row) : null
  }

  async liveSessionIds(ids: readonly string[], now: Date): Promise<string[]> {
    if (ids.length === 0) return []
    const { authSessions } = this.t
    const rows = await this.db
      .select({ id: authSessions.id })
      .from(authSessions)
      .where(and(inArray(authSessions.id, [...ids]), isNull(authSessions.revokedAt), gt(authSessions.expiresAt, now)))
    return rows.map((row) => row.id)
  }

  async sessionWithUser(sessionId: string): Promise<SessionWithUser | null> {
    const { authSessions } = this.t
    // One round trip on every authenticated request: the session joined to its
    // user by primary key (postgres.js prepares it once per connection).
    const [row] = await sessionWithUserQuery(this.db, this.t).where(eq(authSessions.id, sessionId))
    return row ? toSessionWithUser(row) : null
  }

  async liveSessions(userId: string, now: Date): Promise<AuthSession[]> {
    const { authSessions } = this.t
    const rows = await this.db
      .select()
      .from(authSessions)
      .where(and(eq(authSessions.userId, userId), isNull(authSessions.revokedAt), gt(authSessions.expiresAt, now)))
      .orderBy(desc(authSessions.lastUsedAt), asc(authSessions.id))
    return rows.map(toAuthSession)
  }

  async touchSession(id: string, now: Date): Promise<void> {
    const { authSessions } = this.t
    await this.db.update(authSessions).set({ lastUsedAt: now }).where(eq(authSessions.id, id))
  }

  async revokeSession(id: string, userId: string, reason: RevokeReason, now: Date): Promise<boolean> {
    const { authSessions } = this.t
    const changed = await this.db
      .update(authSessions)
      .set({ revokedAt: now, revokedReason: reason })
      .where(and(eq(authSessions.id, id), eq(authSessions.userId, userId), isNull(authSessions.revokedAt)))
      .returning({ id: authSessions.id })
    return changed.length === 1
  }

  async refreshToken(tokenHash: string): Promise<RefreshToken | null> {
    const { refreshTokens } = this.t
    const [row] = await this.db.select().from(refreshTokens).where(eq(refreshTokens.tokenHash, tokenHash))
    return row ? toRefreshToken(row) : null
  }

  async issueRefreshToken(tokenHash: string, sessionId: string, now: Date): Promise<void> {
    const { refreshTokens } = this.t
    await this.db.insert(refreshTokens).values({ tokenHash, sessionId, issuedAt: now })
  }

  async keepNewestRefreshTokens(sessionId: string, current: string, keep: number): Promise<number> {
    const { refreshTokens } = this.t
    const others = and(eq(refreshTokens.sessionId, sessionId), ne(refreshTokens.tokenHash, current))
    const newest = this.db.select({ tokenHash: refreshTokens.tokenHash }).from(refreshTokens).where(others).orderBy(desc(refreshTokens.issuedAt), desc(refreshTokens.spentAt), desc(refreshTokens.tokenHash)).limit(keep - 1)
    const deleted = await this.db
      .delete(refreshTokens)
      .where(and(others, notInArray(refreshTokens.tokenHash, newest)))
      .returning({ tokenHash: refreshTokens.tokenHash })
    return deleted.length
  }

  async sessionRowsOf(userId: string): Promise<AuthSession[]> {
    const { authSessions } = this.t
    const rows = await this.db.select().from(authSessions).where(eq(authSessions.userId, userId)).orderBy(asc(authSessions.createdAt), asc(authSessions.id))
    return rows.map(toAuthSession)
  }

  async deleteSessions(userId: string, ids: readonly string[]): Promise<void> {
    const { authSessions, refreshTokens } = this.t
    if (ids.length === 0) return
    await this.db.delete(refreshTokens).where(inArray(refreshTokens.sessionId, [...ids]))
    await this.db.delete(authSessions).where(and(eq(authSessions.userId, userId), inArray(authSessions.id, [...ids])))
  }

  async spendRefreshToken(tokenHash: string, now: Date): Promise<boolean> {
    const { refreshTokens } = this.t
    // Conditional on the row being unspent: a concurrent rotation that spent
    // it first makes this one fail to serialize (it updates a row changed
    // since its snapshot), and the retry reads it spent.
    const spent = await this.db
      .update(refreshTokens)
      .set({ spentAt: now })
      .where(and(eq(refreshTokens.tokenHash, tokenHash), isNull(refreshTokens.spentAt)))
      .returning({ tokenHash: refreshTokens.tokenHash })
    return spent.length === 1
  }

  async throttleCounters(keys: readonly string[]): Promise<ThrottleCounter[]> {
    const { loginThrottle } = this.t
    const rows = await this.db.select().from(loginThrottle).where(inArray(loginThrottle.key, [...keys]))
    return rows.map(toThrottleCounter)
  }

  async saveThrottleCounter(counter: ThrottleCounter): Promise<void> {
    const { loginThrottle } = this.t
    const state = { failures: counter.failures, windowStartedAt: counter.windowStartedAt, blockedUntil: counter.blockedUntil }
    await this.db.insert(loginThrottle).values(counter).onConflictDoUpdate({ target: loginThrottle.key, set: state })
  }

  async deleteThrottleCounter(key: string): Promise<void> {
    const { loginThrottle } = this.t
    await this.db.delete(loginThrottle).where(eq(loginThrottle.key, key))
  }

  async pruneThrottleRows(windowCutoff: Date, now: Date): Promise<number> {
    const { loginThrottle } = this.t
    const deleted = await this.db
      .delete(loginThrottle)
      .where(and(lt(loginThrottle.windowStartedAt, windowCutoff), or(isNull(loginThrottle.blockedUntil), lt(loginThrottle.blockedUntil, now))))
      .returning({ key: loginThrottle.key })
    return deleted.length
  }

  async knownPlaces(subject: string, placeHashes: readonly string[], since: Date): Promise<string[]> {
    const { knownSignInPlaces } = this.t
    if (placeHashes.length === 0) return []
    const rows = await this.db
      .select({ placeHash: knownSignInPlaces.placeHash })
      .from(knownSignInPlaces)
      .where(and(eq(knownSignInPlaces.subject, subject), inArray(knownSignInPlaces.placeHash, [...placeHashes]), gte(knownSignInPlaces.lastSeenAt, since)))
    return rows.map((row) => row.placeHash)
  }

  async sharedPlaces(subjectA: string, subjectB: string, since: Date): Promise<Array<Pick<KnownPlace, 'kind' | 'placeHash'>>> {
    const { knownSignInPlaces } = this.t
    // A place hash names its kind (known-places.ts hashes `address:…` and `device:…`), so one hash in both subjects' rows is one place.
    const ofB = this.db
      .select({ placeHash: knownSignInPlaces.placeHash })
      .from(knownSignInPlaces)
      .where(and(eq(knownSignInPlaces.subject, subjectB), gte(knownSignInPlaces.lastSeenAt, since)))
    return this.db
      .select({ kind: knownSignInPlaces.kind, placeHash: knownSignInPlaces.placeHash })
      .from(knownSignInPlaces)
      .where(and(eq(knownSignInPlaces.subject, subjectA), gte(knownSignInPlaces.lastSeenAt, since), inArray(knownSignInPlaces.placeHash, ofB)))
      .orderBy(asc(knownSignInPlaces.kind), asc(knownSignInPlaces.placeHash))
  }

  async rememberPlace(place: KnownPlace, keep: number): Promise<void> {
    const { knownSignInPlaces } = this.t
    await this.db
      .insert(knownSignInPlaces)
      .values(place)
      .onConflictDoUpdate({ target: [knownSignInPlaces.subject, knownSignInPlaces.placeHash], set: { lastSeenAt: place.lastSeenAt } })
    const ofKind = and(eq(knownSignInPlaces.subject, place.subject), eq(knownSignInPlaces.kind, place.kind))
    const newest = this.db
      .select({ placeHash: knownSignInPlaces.placeHash })
      .from(knownSignInPlaces)
      .where(ofKind)
      .orderBy(desc(knownSignInPlaces.lastSeenAt), desc(knownSignInPlaces.placeHash))
      .limit(keep)
    await this.db.delete(knownSignInPlaces).where(and(ofKind, notInArray(knownSignInPlaces.placeHash, newest)))
  }

  async forgetPlaces(subject: string): Promise<void> {
    const { knownSignInPlaces } = this.t
    await this.db.delete(knownSignInPlaces).where(eq(knownSignInPlaces.subject, subject))
  }

  async pruneKnownPlaces(cutoff: Date): Promise<number> {
    const { knownSignInPlaces } = this.t
    const deleted = await this.db.delete(knownSignInPlaces).where(lt(knownSignInPlaces.lastSeenAt, cutoff)).returning({ subject: knownSignInPlaces.subject })
    return deleted.length
  }

  // ---- accounts (contract §8) ----

  async setPasswordHash(userId: string, passwordHash: string): Promise<void> {
    const { users } = this.t
    await this.db.update(users).set({ passwordHash }).where(eq(users.id, userId))
  }

  async markEmailVerified(userId: string, now: Date): Promise<boolean> {
    const { users } = this.t
    const rows = await this.db
      .update(users)
      .set({ emailVerifiedAt: now })
      .where(and(eq(users.id, userId), isNull(users.emailVerifiedAt)))
      .returning({ id: users.id })
    return rows.length > 0
  }

  async accountCode(userId: string, purpose: AccountCodePurpose): Promise<AccountCode | null> {
    const { accountCodes } = this.t
    const [row] = await this.db.select().from(accountCodes).where(and(eq(accountCodes.userId, userId), eq(accountCodes.purpose, purpose)))
    return row ? toAccountCode(row) : null
  }

  async saveAccountCode(code: AccountCode): Promise<void> {
    const { accountCodes } = this.t
    const { userId, purpose, ...rest } = code
    await this.db.insert(accountCodes).values(code).onConflictDoUpdate({ target: [accountCodes.userId, accountCodes.purpose], set: rest })
  }

  async countAccountCodeFailure(userId: string, purpose: AccountCodePurpose): Promise<number> {
    const { accountCodes } = this.t
    const [row] = await this.db
      .update(accountCodes)
      .set({ failures: sql`${accountCodes.failures} + 1` })
      .where(and(eq(accountCodes.userId, userId), eq(accountCodes.purpose, purpose)))
      .returning({ failures: accountCodes.failures })
    return row?.failures ?? 0
  }

  async deleteAccountCode(userId: string, purpose: AccountCodePurpose): Promise<boolean> {
    const { accountCodes } = this.t
    const rows = await this.db
      .delete(accountCodes)
      .where(and(eq(accountCodes.userId, userId), eq(accountCodes.purpose, purpose)))
      .returning({ userId: accountCodes.userId })
    return rows.length > 0
  }

  async pruneExpiredAccountCodes(now: Date): Promise<number> {
    const { accountCodes } = this.t
    return (await this.db.delete(accountCodes).where(lt(accountCodes.expiresAt, now)).returning({ userId: accountCodes.userId })).length
  }

  async sessionsOf(userId: string): Promise<AuthSession[]> {
    const { authSessions } = this.t
    const rows = await this.db.select().from(authSessions).where(eq(authSessions.userId, userId)).orderBy(desc(authSessions.createdAt), desc(authSessions.id))
    return rows.map(toAuthSession)
  }

  async earlierSessions(userId: string, userAgent: string | null): Promise<{ any: boolean; sameAgent: boolean }> {
    const { authSessions } = this.t
    const agent = userAgent === null ? isNull(authSessions.userAgent) : eq(authSessions.userAgent, userAgent)
    const exists = async (condition: SQL | undefined) => (await this.db.select({ id: authSessions.id }).from(authSessions).where(condition).limit(1)).length > 0
    return { any: await exists(eq(authSessions.userId, userId)), sameAgent: await exists(and(eq(authSessions.userId, userId), agent)) }
  }

  async setBan(userId: string, ban: UserBan | null): Promise<void> {
    const { users } = this.t
    await this.db.update(users).set(userBanColumns(ban)).where(eq(users.id, userId))
  }

  async searchUsers(query: string | null, afterId: string | null, limit: number): Promise<UserAccount[]> {
    const { users } = this.t
    const rows = await this.db
      .select()
      .from(users)
      .where(and(afterId === null ? undefined : gt(users.id, afterId), query === null ? undefined : userMatches(users, query)))
      .orderBy(asc(users.id))
      .limit(limit)
    return rows.map(toUserAccount)
  }

  async identity(provider: string, subject: string): Promise<StoredIdentity | null> {
    const { identities } = this.t
    const [row] = await this.db.select().from(identities).where(and(eq(identities.provider, provider), eq(identities.subject, subject)))
    return row ?? null
  }

  async identitiesOf(userId: string): Promise<StoredIdentity[]> {
    const { identities } = this.t
    return this.db.select().from(identities).where(eq(identities.userId, userId)).orderBy(asc(identities.linkedAt), asc(identities.provider))
  }

  async addIdentity(identity: StoredIdentity): Promise<void> {
    const { identities } = this.t
    try {
      await this.db.insert(identities).values(identity)
    } catch (error) {
      throw mapEngineError(error)
    }
  }

  async removeIdentity(userId: string, provider: string): Promise<boolean> {
    const { identities } = this.t
    const gone = await this.db.delete(identities).where(and(eq(identities.userId, userId), eq(identities.provider, provider))).returning({ subject: identities.subject })
    return gone.length > 0
  }

  async setIdentityProviders(userId: string, providers: string): Promise<void> {
    const { users } = this.t
    await this.db.update(users).set({ identityProviders: providers }).where(eq(users.id, userId))
  }

  async addPasswordIdentity(userId: string, identity: PasswordIdentity, now: Date): Promise<void> {
    const { users } = this.t
    try {
      await this.db
        .update(users)
        .set({ email: identity.email, emailKey: identity.emailKey, passwordHash: identity.passwordHash, passwordLinkedAt: now, emailVerifiedAt: null, ...identity.username })
        .where(eq(users.id, userId))
    } catch (error) {
      throw mapEngineError(error)
    }
  }

  async removePasswordIdentity(userId: string): Promise<void> {
    const { users } = this.t
    await this.db.update(users).set({ email: null, emailKey: null, passwordHash: null, passwordLinkedAt: null, emailVerifiedAt: null }).where(eq(users.id, userId))
  }

  async updateProfile(userId: string, change: { username?: { username: string; usernameKey: string }; country?: string }): Promise<void> {
    const { users } = this.t
    const set = { ...change.username, ...(change.country === undefined ? {} : { country: change.country }) }
    if (Object.keys(set).length === 0) return
    try {
      await this.db.update(users).set(set).where(eq(users.id, userId))
    } catch (error) {
      throw mapEngineError(error)
    }
  }

  async eraseUser(userId: string, now: Date): Promise<void> {
    const { users, authSessions, accountCodes, identities } = this.t
    await this.db.delete(accountCodes).where(eq(accountCodes.userId, userId))
    // Its identities go: a deleted account is signed in to by nothing, and a provider's id of the person is personal data (contract §13).
    await this.db.delete(identities).where(eq(identities.userId, userId))
    // Its refresh tokens go with the sessions (ON DELETE CASCADE).
    await this.db.delete(authSessions).where(eq(authSessions.userId, userId))
    await this.db.update(users).set(erasedUserColumns(userId, now)).where(eq(users.id, userId))
  }

  async standing(userId: string): Promise<UserStanding | null> {
    const { users } = this.t
    // A plain read, no lock: a ban or deletion that committed first is seen
    // (READ COMMITTED reads the latest committed row, SERIALIZABLE fails one of
    // the two). One committing at the same instant may land just after a claim
    // that read the row before it: the claim was then made before the ban, as
    // far as anyone can tell. A FOR SHARE lock to order them would write to the
    // user's row on every claim, and doubled the claim's time (199 → 413 µs).
    const [row] = await this.db.select({ bannedAt: users.bannedAt, bannedUntil: users.bannedUntil, banReason: users.banReason, deletedAt: users.deletedAt }).from(users).where(eq(users.id, userId))
    return row ? { ban: toUserBan(row), deletedAt: row.deletedAt } : null
  }
}

/** A user whose id is `query`, or whose username or email key contains it (LIKE's wildcards taken literally). */
function userMatches(users: Tables['users'], query: string) {
  const pattern = containsPattern(query.toLowerCase())
  return or(eq(users.id, query), sql`${users.usernameKey} LIKE ${pattern} ESCAPE '\\'`, sql`${users.emailKey} LIKE ${pattern} ESCAPE '\\'`)
}

/**
 * The session lookup's query without its WHERE: the session's fields (its id
 * too, for a lookup of several), joined to its user by primary key. Written
 * once for AuthQueries.sessionWithUser and PostgreSQL's lookup of a turn's
 * sessions in one statement (src/db/postgres/stores/auth.ts).
 */
export function sessionWithUserQuery(db: Db, t: Tables) {
  const { users, authSessions } = t
  return db
    .select({
      id: authSessions.id,
      userId: authSessions.userId,
      lastUsedAt: authSessions.lastUsedAt,
      expiresAt: authSessions.expiresAt,
      revokedAt: authSessions.revokedAt,
      // The id first: Drizzle makes a left-joined object null when its FIRST
      // field is null, and email is null for an account without a password
      // identity (contract §13).
      user: { id: users.id, ...pick(users, SESSION_USER_COLUMNS) },
    })
    .from(authSessions)
    .leftJoin(users, eq(users.id, authSessions.userId))
}

/** A row of sessionWithUserQuery. */
export type SessionWithUserRow = Awaited<ReturnType<typeof sessionWithUserQuery>>[number]

/** The lookup's answer from its row: a new object per call (a caller may keep it). */
export function toSessionWithUser(row: SessionWithUserRow): SessionWithUser {
  // Drizzle gives a left-joined object null when the joined row is missing.
  return { userId: row.userId, lastUsedAt: row.lastUsedAt, expiresAt: row.expiresAt, revokedAt: row.revokedAt, user: row.user && toSessionUser(row.userId, row.user) }
}
