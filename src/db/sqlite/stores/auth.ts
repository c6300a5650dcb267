// Accounts, auth sessions, refresh tokens and login-throttle counters on SQLite.
import { and, asc, desc, eq, getTableColumns, gt, inArray, isNull, lt, or } from 'drizzle-orm'
import { authSessions, loginThrottle, refreshTokens, users } from '../../schema'
import { mapEngineError } from '../../errors'
import type {
  AuthSession,
  AuthStore,
  NewAuthSession,
  NewUser,
  RefreshToken,
  RevokeReason,
  SessionWithUser,
  ThrottleCounter,
  UserAccount,
} from '../../../modules/auth/store'
import { perConnection, selectList } from '../connection'
import type { SqliteScope } from '../storage'
import { toUserAccount, toAuthSession, toRefreshToken, toThrottleCounter } from '../../rows'

/** The authentication statement's row: a session and its user's public columns (times in ms). */
interface SessionWithUserRaw {
  userId: string
  lastUsedAt: number
  expiresAt: number
  revokedAt: number | null
  email: string | null
  username: string | null
  country: string | null
  createdAt: number | null
}

const sessionColumns = getTableColumns(authSessions)
const userColumns = getTableColumns(users)

/** One of the session's user's columns, as a scalar subquery named like the property. */
function userColumn(name: 'email' | 'username' | 'country' | 'createdAt'): string {
  return `(SELECT "${userColumns[name].name}" FROM users WHERE "${userColumns.id.name}" = s."${sessionColumns.userId.name}") AS "${name}"`
}

// The lookup behind every authenticated request, compiled once per
// connection: one raw statement, the user's columns read through scalar
// subqueries. Every SQLite statement outside a transaction takes and drops a
// read lock (two fcntl and an fstat here), and Drizzle maps each row it reads:
// the two prepared primary-key lookups this replaces were a quarter of the CPU
// of GET /me under load. SQLite ran the equivalent JOIN slower than either.
const statements = perConnection((sqlite) => ({
  sessionWithUser: sqlite.prepare<SessionWithUserRaw, [string]>(
    `SELECT ${selectList(sessionColumns, ['userId', 'lastUsedAt', 'expiresAt', 'revokedAt'], 's')},
      ${(['email', 'username', 'country', 'createdAt'] as const).map(userColumn).join(', ')}
    FROM auth_sessions s WHERE s."${sessionColumns.id.name}" = ?`,
  ),
}))

function toSessionWithUser(row: SessionWithUserRaw): SessionWithUser {
  return {
    userId: row.userId,
    lastUsedAt: new Date(row.lastUsedAt),
    expiresAt: new Date(row.expiresAt),
    revokedAt: row.revokedAt === null ? null : new Date(row.revokedAt),
    user:
      row.email === null
        ? null
        : { id: row.userId, email: row.email, username: row.username!, country: row.country!, createdAt: new Date(row.createdAt!) },
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
}
