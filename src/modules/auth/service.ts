// Accounts and auth sessions (contract §1). Knows nothing of HTTP: callers
// pass plain values and get plain values or AppErrors back.
import { and, asc, desc, eq, gt, isNull } from 'drizzle-orm'
import type { Statement } from 'bun:sqlite'
import type { Db, Executor } from '../../db/sqlite/connection'
import { authSessions, refreshTokens, users } from '../../db/schema'
import type { Clock } from '../../shared/clock'
import { toIso } from '../../shared/clock'
import { randomToken, sha256Hex } from '../../shared/crypto'
import { isStorageUnavailable } from '../../db/errors'
import { AppError } from '../../shared/errors'
import { newId } from '../../shared/ids'
import { appendEvent } from '../events/outbox'
import type { AccessTokens } from './access-tokens'
import type { SecurityEventInput } from '../security/event-log'
import { COUNTRY_CODES } from './countries'
import type { RegisterBody, TokenResponse, User } from './model'
import { defaultHashGate, type HashGate } from './hash-gate'
import { hashPassword, verifyAgainstDummy, verifyPassword } from './passwords'
import { accountKey, addressKey, clearAttempts, countAttempt, LOGIN_LIMITS, retryAfterSeconds } from './throttle'

type UserRow = typeof users.$inferSelect
type SessionRow = typeof authSessions.$inferSelect

export interface Authenticated {
  user: User
  session: { id: string; userId: string }
}

export interface AuthServiceDeps {
  db: Db
  clock: Clock
  accessTokens: AccessTokens
  refreshTtlS: number
  /**
   * A spent refresh token presented again within this many seconds of the
   * rotation that spent it is a retry, not a replay (contract §7; 0: never).
   * Defaults to 0 for callers that do not say.
   */
  refreshReuseGraceS?: number
  /** Server-side security events (refresh reuse, login throttling) go to the security log. */
  onSecurityEvent?: (event: SecurityEventInput) => void
  /** Bounds concurrent argon2id work (default: the process's gate). */
  hashGate?: HashGate
}

/** lastUsedAt is written at most this often per session, so reads stay reads. */
const LAST_USED_RESOLUTION_MS = 60_000
const MAX_USER_AGENT = 256

/** A session and its user's public columns, as the authentication statement reads them (times in ms). */
interface SessionWithUserRow {
  userId: string
  lastUsedAt: number
  expiresAt: number
  revokedAt: number | null
  email: string | null
  username: string | null
  country: string | null
  createdAt: number | null
}

export function toUser(row: Pick<UserRow, 'id' | 'email' | 'username' | 'country' | 'createdAt'>): User {
  return { id: row.id, email: row.email, username: row.username, country: row.country, createdAt: toIso(row.createdAt) }
}

function unauthorized(message = 'Missing, invalid or revoked access token'): AppError {
  return new AppError('unauthorized', message, { headers: { 'www-authenticate': 'Bearer realm="arena"' } })
}

function isUniqueViolation(error: unknown, column: string): boolean {
  const e = error as { code?: string; message?: string }
  return e?.code === 'SQLITE_CONSTRAINT_UNIQUE' && (e.message ?? '').includes(column)
}

export class AuthService {
  private readonly hashGate: HashGate

  /** The lookup behind every authenticated request: one statement, prepared once. */
  private readonly sessionWithUser: Statement<SessionWithUserRow, [string]>

  constructor(private readonly deps: AuthServiceDeps) {
    // One raw statement, the user's columns read through scalar subqueries.
    // Every SQLite statement outside a transaction takes and drops a read lock
    // (two fcntl and an fstat here), and Drizzle maps each row it reads: the
    // two prepared primary-key lookups this replaces were a quarter of the CPU
    // of GET /me under load. SQLite ran the equivalent JOIN slower than either.
    this.sessionWithUser = deps.db.$client.prepare<SessionWithUserRow, [string]>(
      `SELECT s.user_id AS userId, s.last_used_at AS lastUsedAt, s.expires_at AS expiresAt, s.revoked_at AS revokedAt,
        (SELECT email FROM users WHERE id = s.user_id) AS email,
        (SELECT username FROM users WHERE id = s.user_id) AS username,
        (SELECT country FROM users WHERE id = s.user_id) AS country,
        (SELECT created_at FROM users WHERE id = s.user_id) AS createdAt
      FROM auth_sessions s WHERE s.id = ?`,
    )
    this.hashGate = deps.hashGate ?? defaultHashGate()
  }

  async register(input: RegisterBody): Promise<User> {
    // The schema counts UTF-16 units; "8–128 characters" means code points.
    const passwordLength = [...input.password].length
    if (passwordLength < 8 || passwordLength > 128) {
      throw new AppError('validation_failed', 'Request failed validation', {
        details: [{ path: 'body/password', message: 'Expected 8 to 128 characters' }],
      })
    }
    const country = input.country.toUpperCase()
    if (!COUNTRY_CODES.has(country)) {
      throw new AppError('validation_failed', 'Request failed validation', {
        details: [{ path: 'body/country', message: 'Expected an ISO 3166-1 alpha-2 country code' }],
      })
    }
    const email = input.email.trim()
    const row: UserRow = {
      id: newId('user'),
      email,
      emailKey: email.toLowerCase(),
      username: input.username,
      usernameKey: input.username.toLowerCase(),
      // Hash before the transaction: it is slow and must not hold the write lock.
      // Refused by the hash gate (503): nothing has been written.
      passwordHash: await hashPassword(input.password, this.hashGate),
      country,
      createdAt: this.deps.clock.now(),
    }
    try {
      this.deps.db.insert(users).values(row).run()
    } catch (error) {
      // The unique indexes decide, so two racing registrations cannot both win.
      if (isUniqueViolation(error, 'users.username_key')) throw new AppError('username_taken', 'That username is taken')
      if (isUniqueViolation(error, 'users.email_key')) throw new AppError('email_taken', 'That email is already registered')
      throw error
    }
    return toUser(row)
  }

  async login(input: { identifier: string; password: string; address: string; userAgent: string | null }): Promise<TokenResponse> {
    const { db, clock } = this.deps
    const lookup = input.identifier.trim().toLowerCase()
    const user = db
      .select()
      .from(users)
      .where(lookup.includes('@') ? eq(users.emailKey, lookup) : eq(users.usernameKey, lookup))
      .get()
    const account = accountKey(user?.id, input.identifier)
    const address = addressKey(input.address)

    // A place at the hash gate first, known or unknown user alike. A login
    // the gate refuses (503 + Retry-After) was never judged: it leaves here,
    // before the attempt is counted and before any session exists. (So while
    // the gate is full, even a blocked account hears 503, not 429.) Once
    // admitted, the ticket is run or cancelled on every path: no slot leaks.
    const ticket = this.hashGate.admit()

    // Check and count in one IMMEDIATE transaction, before the slow hash, so
    // parallel guesses are counted one by one (see throttle.ts).
    let retryAfter: number | null
    try {
      retryAfter = db.transaction(
        (tx) => {
          const now = clock.now()
          const blocked = retryAfterSeconds(tx, [account, address], now)
          if (blocked === null) countAttempt(tx, account, LOGIN_LIMITS.account, now)
          return blocked
        },
        { behavior: 'immediate' },
      )
    } catch (error) {
      ticket.cancel()
      throw error
    }
    if (retryAfter !== null) {
      ticket.cancel()
      this.deps.onSecurityEvent?.({
        userId: user?.id ?? null,
        source: 'server',
        kind: 'LOGIN_THROTTLED',
        level: 'WARN',
        details: { address: input.address, retryAfterS: retryAfter },
      })
      throw new AppError('rate_limited', 'Too many failed logins; try again later', {
        headers: { 'retry-after': String(retryAfter) },
      })
    }

    const valid = user ? await verifyPassword(input.password, user.passwordHash, ticket) : await verifyAgainstDummy(input.password, ticket)
    if (!user || !valid) {
      db.transaction((tx) => countAttempt(tx, address, LOGIN_LIMITS.address, clock.now()), { behavior: 'immediate' })
      throw new AppError('invalid_credentials', 'Invalid identifier or password')
    }

    const now = clock.now()
    const sessionId = newId('authSession')
    const refreshToken = randomToken(32)
    try {
      this.openSession(user, sessionId, refreshToken, account, now, input.userAgent)
    } catch (error) {
      // The password was right but the session could not be stored (a full or
      // failing disk: 503). The attempt counted above must not stay counted,
      // or five such 503s would lock the owner out for 15 minutes: clear it on
      // its own, best effort (the disk may refuse this too).
      if (isStorageUnavailable(error)) {
        try {
          db.transaction((tx) => clearAttempts(tx, account), { behavior: 'immediate' })
        } catch {
          // Still failing: the count stays, and expires with its window.
        }
      }
      throw error
    }
    return this.tokenResponse(user, sessionId, refreshToken)
  }

  private openSession(user: UserRow, sessionId: string, refreshToken: string, account: string, now: Date, userAgent: string | null): void {
    this.deps.db.transaction(
      (tx) => {
        clearAttempts(tx, account)
        tx.insert(authSessions)
          .values({
            id: sessionId,
            userId: user.id,
            createdAt: now,
            lastUsedAt: now,
            expiresAt: new Date(now.getTime() + this.deps.refreshTtlS * 1000),
            userAgent: userAgent?.slice(0, MAX_USER_AGENT) ?? null,
          })
          .run()
        tx.insert(refreshTokens).values({ tokenHash: sha256Hex(refreshToken), sessionId, issuedAt: now }).run()
        appendEvent(tx, this.deps.clock, { userId: user.id, topic: 'session', type: 'session.login', data: { sessionId } })
      },
      { behavior: 'immediate' },
    )
  }

  /**
   * Rotates a refresh token (contract §1, §7). `sessionId` comes from the
   * bearer access token, which must belong to the same live session. A spent
   * token presented again within the grace period of its rotation is a retry
   * (two tabs refreshing at once, a retry after a timeout): it gets a new pair
   * of its own, and the pair the first rotation issued stays valid. Later, it
   * is a replay: the whole session is revoked, and that revocation commits
   * even though the call answers 401.
   */
  async rotate(input: { refreshToken: string; sessionId: string; userId: string }): Promise<TokenResponse> {
    const { db, clock } = this.deps
    const presentedHash = sha256Hex(input.refreshToken)
    const next = randomToken(32)
    const outcome = db.transaction(
      (tx) => {
        const now = clock.now()
        const token = tx.select().from(refreshTokens).where(eq(refreshTokens.tokenHash, presentedHash)).get()
        if (!token || token.sessionId !== input.sessionId) return { kind: 'invalid' as const }
        const session = tx.select().from(authSessions).where(eq(authSessions.id, token.sessionId)).get()
        if (!session || session.userId !== input.userId || !isLive(session, now)) return { kind: 'invalid' as const }
        // A retry leaves the token spent at its first rotation's time, so the grace never extends.
        // A clock that stepped back (spent "in the future") is no reason to forgive.
        const sinceSpent = token.spentAt === null ? -1 : now.getTime() - token.spentAt.getTime()
        const retry = sinceSpent >= 0 && sinceSpent < (this.deps.refreshReuseGraceS ?? 0) * 1000
        if (token.spentAt && !retry) {
          revokeSessions(tx, clock, session.userId, [session.id], 'refresh_token_reused', 'session.reuse_revoked')
          return { kind: 'reused' as const }
        }
        if (!token.spentAt) {
          const spent = tx
            .update(refreshTokens)
            .set({ spentAt: now })
            .where(and(eq(refreshTokens.tokenHash, presentedHash), isNull(refreshTokens.spentAt)))
            .returning({ tokenHash: refreshTokens.tokenHash })
            .all()
          if (spent.length !== 1) return { kind: 'invalid' as const }
        }
        tx.insert(refreshTokens).values({ tokenHash: sha256Hex(next), sessionId: session.id, issuedAt: now }).run()
        tx.update(authSessions).set({ lastUsedAt: now }).where(eq(authSessions.id, session.id)).run()
        appendEvent(tx, clock, { userId: session.userId, topic: 'session', type: 'session.refreshed', data: { sessionId: session.id } })
        return { kind: 'rotated' as const, userId: session.userId }
      },
      { behavior: 'immediate' },
    )
    if (outcome.kind === 'reused') {
      this.deps.onSecurityEvent?.({
        userId: input.userId,
        source: 'server',
        kind: 'REFRESH_TOKEN_REUSED',
        level: 'COMPROMISED',
        details: { sessionId: input.sessionId },
      })
      throw new AppError('refresh_token_reused', 'Refresh token was already used; the session has been revoked')
    }
    if (outcome.kind === 'invalid') throw unauthorized('Refresh token is invalid, expired or revoked')
    const user = db.select().from(users).where(eq(users.id, outcome.userId)).get()
    if (!user) throw unauthorized()
    return this.tokenResponse(user, input.sessionId, next)
  }

  /** Revokes the caller's session, or every live session of the user; returns how many. */
  logout(input: { userId: string; sessionId: string; all: boolean }): number {
    const { db, clock } = this.deps
    return db.transaction(
      (tx) => {
        const ids = input.all
          ? tx
              .select({ id: authSessions.id })
              .from(authSessions)
              .where(and(eq(authSessions.userId, input.userId), isNull(authSessions.revokedAt), gt(authSessions.expiresAt, clock.now())))
              .all()
              .map((row) => row.id)
          : [input.sessionId]
        return revokeSessions(tx, clock, input.userId, ids, input.all ? 'logout_all' : 'logout', 'session.logout')
      },
      { behavior: 'immediate' },
    )
  }

  /** The bearer check behind every authenticated route. Throws 401 unless the token and its session are live. */
  async authenticate(token: string | null, options: { allowExpired?: boolean } = {}): Promise<Authenticated> {
    if (!token) throw unauthorized('Bearer access token required')
    const claims = await this.deps.accessTokens.verify(token, options)
    if (!claims) throw unauthorized()
    const { db, clock } = this.deps
    const now = clock.now()
    const row = this.sessionWithUser.get(claims.sessionId)
    // A session without its user cannot exist (ON DELETE CASCADE); refused all the same.
    if (!row || row.email === null || row.userId !== claims.userId || row.revokedAt !== null || row.expiresAt <= now.getTime()) {
      throw unauthorized()
    }
    if (now.getTime() - row.lastUsedAt >= LAST_USED_RESOLUTION_MS) {
      try {
        db.update(authSessions).set({ lastUsedAt: now }).where(eq(authSessions.id, claims.sessionId)).run()
      } catch (error) {
        // Bookkeeping only: a full disk (or a busy or failing one) must not turn
        // a valid token into a 503, or no read would work while writes cannot.
        if (!isStorageUnavailable(error)) throw error
      }
    }
    return {
      user: toUser({ id: row.userId, email: row.email, username: row.username!, country: row.country!, createdAt: new Date(row.createdAt!) }),
      session: { id: claims.sessionId, userId: row.userId },
    }
  }

  /** The user's live sessions, most recently used first. */
  listSessions(userId: string, currentSessionId: string) {
    const now = this.deps.clock.now()
    return this.deps.db
      .select()
      .from(authSessions)
      .where(and(eq(authSessions.userId, userId), isNull(authSessions.revokedAt), gt(authSessions.expiresAt, now)))
      .orderBy(desc(authSessions.lastUsedAt), asc(authSessions.id))
      .all()
      .map((s) => ({
        id: s.id,
        createdAt: toIso(s.createdAt),
        lastUsedAt: toIso(s.lastUsedAt),
        userAgent: s.userAgent,
        current: s.id === currentSessionId,
      }))
  }

  private async tokenResponse(user: UserRow, sessionId: string, refreshToken: string): Promise<TokenResponse> {
    const accessToken = await this.deps.accessTokens.sign({ userId: user.id, sessionId })
    return { accessToken, refreshToken, expiresIn: this.deps.accessTokens.ttlS, tokenType: 'Bearer', user: toUser(user) }
  }
}

function isLive(session: SessionRow, now: Date): boolean {
  return session.revokedAt === null && session.expiresAt.getTime() > now.getTime()
}

function revokeSessions(
  tx: Executor,
  clock: Clock,
  userId: string,
  sessionIds: string[],
  reason: NonNullable<SessionRow['revokedReason']>,
  eventType: string,
): number {
  const now = clock.now()
  let revoked = 0
  for (const id of sessionIds) {
    const changed = tx
      .update(authSessions)
      .set({ revokedAt: now, revokedReason: reason })
      .where(and(eq(authSessions.id, id), eq(authSessions.userId, userId), isNull(authSessions.revokedAt)))
      .returning({ id: authSessions.id })
      .all()
    if (changed.length === 1) {
      revoked++
      appendEvent(tx, clock, { userId, topic: 'session', type: eventType, data: { sessionId: id, reason } })
    }
  }
  return revoked
}
