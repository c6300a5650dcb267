// Accounts and auth sessions (contract §1). Knows nothing of HTTP: callers
// pass plain values and get plain values or AppErrors back.
import { isStorageUnavailable, UniqueViolationError } from '../../db/errors'
import type { Storage, Transaction } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import { toIso } from '../../shared/clock'
import { randomToken, sha256Hex } from '../../shared/crypto'
import { AppError } from '../../shared/errors'
import { newId } from '../../shared/ids'
import type { AccessTokens } from './access-tokens'
import type { SecurityEventInput } from '../security/event-log'
import type { AccountPasswords } from '../security/pin-service'
import { COUNTRY_CODES } from './countries'
import type { RegisterBody, TokenResponse, User } from './model'
import { defaultHashGate, type HashGate, type HashTicket } from './hash-gate'
import { assertPasswordLength, hashPassword, verifyAgainstDummy, verifyPassword } from './passwords'
import { bannedError } from './standing'
import { userIdByRef } from './user-ref'
import { banInForce, type AuthSession, type NewUser, type RevokeReason, type UserAccount, type UserProfile } from './store'
import { rememberSignInPlace, signInCounter, signInPlace, userSubject, type SignInCounter, type SignInPlace } from './known-places'
import { accountKey, addressKey, clearAttempts, LOGIN_LIMITS, rateLimited, recordAttempt, retryAfter } from './throttle'

export interface Authenticated {
  user: User
  session: { id: string; userId: string }
}

export interface AuthServiceDeps {
  storage: Storage
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
  /**
   * More of register's unit of work, on the account just created: the
   * verification code, its mail and its event (email-verification.ts). A
   * failure there fails the registration: no account without its code.
   */
  onRegister?: (tx: Transaction, user: NewUser, now: Date) => Promise<void>
}

/** lastUsedAt is written at most this often per session, so reads stay reads. */
const LAST_USED_RESOLUTION_MS = 60_000
const MAX_USER_AGENT = 256
/**
 * Session rows (live or ended) one account keeps: a login past it removes the
 * oldest ended ones, then ends the oldest live one (docs/operations.md, "How
 * the database's growth is bounded"). New-device detection remembers the
 * devices of these rows.
 */
export const MAX_AUTH_SESSIONS = 100
/** Refresh tokens one session keeps (the current one and the last spent ones, whose replay revokes the session). */
export const MAX_REFRESH_TOKENS_PER_SESSION = 100

export function toUser(profile: UserProfile): User {
  return {
    id: profile.id,
    email: profile.email,
    username: profile.username,
    country: profile.country,
    createdAt: toIso(profile.createdAt),
    emailVerified: profile.emailVerifiedAt !== null,
  }
}

/** The bearer check's 401, with its WWW-Authenticate challenge. */
export function unauthorized(message = 'Missing, invalid or revoked access token'): AppError {
  return new AppError('unauthorized', message, { headers: { 'www-authenticate': 'Bearer realm="arena"' } })
}

export class AuthService {
  private readonly hashGate: HashGate

  constructor(private readonly deps: AuthServiceDeps) {
    this.hashGate = deps.hashGate ?? defaultHashGate()
  }

  async register(input: RegisterBody): Promise<User> {
    assertPasswordLength(input.password, 'body/password')
    const country = input.country.toUpperCase()
    if (!COUNTRY_CODES.has(country)) {
      throw new AppError('validation_failed', 'Request failed validation', {
        details: [{ path: 'body/country', message: 'Expected an ISO 3166-1 alpha-2 country code' }],
      })
    }
    const email = input.email.trim()
    const user: NewUser = {
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
      emailVerifiedAt: null,
    }
    await this.deps.storage.write(async (tx) => {
      try {
        await tx.auth.createUser(user)
      } catch (error) {
        // The unique indexes decide, so two racing registrations cannot both win.
        if (error instanceof UniqueViolationError && error.involves('username_key')) throw new AppError('username_taken', 'That username is taken')
        if (error instanceof UniqueViolationError && error.involves('email_key')) throw new AppError('email_taken', 'That email is already registered')
        throw error
      }
      await this.deps.onRegister?.(tx, user, this.deps.clock.now())
    })
    return toUser(user)
  }

  /**
   * Checks an identifier and a password and opens a session. Answers, beside
   * the tokens, the device token the client should keep and send back as
   * `deviceToken` on its next logins (known-places.ts): from a place the
   * account signed in from before, failures elsewhere do not block it.
   */
  async login(input: { identifier: string; password: string; address: string; userAgent: string | null; deviceToken?: string | null }): Promise<TokenResponse & { deviceToken: string }> {
    const { storage, clock } = this.deps
    // Refused before any read or write when the gate is full (see refuseIfFull).
    this.hashGate.refuseIfFull()
    const lookup = input.identifier.trim().toLowerCase()
    const found = lookup.includes('@') ? await storage.read.auth.userByEmailKey(lookup) : await storage.read.auth.userByUsernameKey(lookup)
    // A deleted account is no account: its erased key (`erased:<id>`) names it, but nobody may log in as it.
    const user = found?.deletedAt === null ? found : null
    const account = accountKey(user?.id, input.identifier)
    const address = addressKey(input.address)
    const place = signInPlace(input.address, input.deviceToken)
    // The name's counter, or (from a place this account signed in from) the place's own: decided in the unit of work below.
    let counter: SignInCounter | undefined

    // Admit at the hash gate, check and count in one unit of work, before the
    // slow hash, so parallel guesses are counted one by one (see throttle.ts).
    //
    // A place at the hash gate first, known or unknown user alike. A login
    // the gate refuses (503 + Retry-After) was never judged: it leaves here,
    // before the attempt is counted (its unit of work rolls back, having
    // written nothing) and before any session exists. (So while the gate is
    // full, even a blocked account hears 503, not 429.) Admission happens
    // inside the unit of work, next to the block check, so a burst's logins
    // waiting for their turn to be checked hold no place at the gate: a login
    // that turns out blocked gives its place back before the next is admitted.
    // Once admitted, the ticket is run or cancelled on every path: no slot leaks.
    let ticket: HashTicket | undefined
    let blockedForS: number | null
    try {
      blockedForS = await storage.write(async (tx) => {
        // An engine may run a unit of work again (PostgreSQL, on a
        // serialization failure): the ticket of an attempt that did not
        // commit is given back first, or its slot would be held for good.
        ticket?.cancel()
        ticket = this.hashGate.admit()
        const now = clock.now()
        counter = await signInCounter(tx.auth, account, user ? userSubject(user.id) : null, place, now)
        const blocked = await retryAfter(tx.auth, [counter.key, address], now)
        if (blocked === null) await recordAttempt(tx.auth, counter.key, counter.limit, now)
        else ticket.cancel()
        return blocked
      })
    } catch (error) {
      ticket?.cancel()
      throw error
    }
    const admitted = ticket!
    const counted = counter!
    if (blockedForS !== null) {
      this.deps.onSecurityEvent?.({
        userId: user?.id ?? null,
        source: 'server',
        kind: 'LOGIN_THROTTLED',
        level: 'WARN',
        details: { address: input.address, retryAfterS: blockedForS },
      })
      throw new AppError('rate_limited', 'Too many failed logins; try again later', {
        headers: { 'retry-after': String(blockedForS) },
      })
    }

    const valid = user ? await verifyPassword(input.password, user.passwordHash, admitted) : await verifyAgainstDummy(input.password, admitted)
    if (!user || !valid) {
      await storage.write((tx) => recordAttempt(tx.auth, address, LOGIN_LIMITS.address, clock.now()))
      throw new AppError('invalid_credentials', 'Invalid identifier or password')
    }

    const now = clock.now()
    const sessionId = newId('authSession')
    const refreshToken = randomToken(32)
    let opened: { newDevice: boolean; deviceToken: string }
    try {
      opened = await this.openSession(user, sessionId, refreshToken, counted.key, place, now, input.userAgent)
    } catch (error) {
      // The password was right but the session could not be stored (a full or
      // failing disk: 503). The attempt counted above must not stay counted,
      // or five such 503s would lock the owner out for 15 minutes: clear it on
      // its own, best effort (the disk may refuse this too).
      if (isStorageUnavailable(error)) {
        try {
          await storage.write((tx) => clearAttempts(tx.auth, counted.key))
        } catch {
          // Still failing: the count stays, and expires with its window.
        }
      }
      throw error
    }
    if (opened.newDevice) {
      this.deps.onSecurityEvent?.({
        userId: user.id,
        source: 'server',
        kind: 'NEW_DEVICE_LOGIN',
        level: 'SAFE',
        details: { sessionId, address: input.address, userAgent: input.userAgent?.slice(0, MAX_USER_AGENT) ?? null },
      })
    }
    return { ...(await this.tokenResponse(user, sessionId, refreshToken)), deviceToken: opened.deviceToken }
  }

  /**
   * Keeps the account below MAX_AUTH_SESSIONS session rows, live or ended,
   * before a login adds one: the oldest ended sessions go first, then, if
   * the account really holds that many live ones, the oldest live ones, which
   * end (`superseded`, with their session.logout event) and go.
   */
  private async makeRoomForSession(tx: Transaction, userId: string, now: Date): Promise<void> {
    const rows = await tx.auth.sessionRowsOf(userId)
    const excess = rows.length - (MAX_AUTH_SESSIONS - 1)
    if (excess <= 0) return
    const ended = rows.filter((row) => !isLive(row, now))
    const victims = [...ended, ...rows.filter((row) => isLive(row, now))].slice(0, excess)
    const live = victims.filter((row) => isLive(row, now)).map((row) => row.id)
    await revokeSessions(tx, this.deps.clock, userId, live, 'superseded')
    await tx.auth.deleteSessions(userId, victims.map((row) => row.id))
  }

  /**
   * Opens the session and remembers where it came from (known-places.ts);
   * whether it is the first from this user agent (a new device), and the
   * device token the client keeps.
   */
  private openSession(
    user: UserAccount,
    sessionId: string,
    refreshToken: string,
    counterKey: string,
    place: SignInPlace,
    now: Date,
    userAgent: string | null,
  ): Promise<{ newDevice: boolean; deviceToken: string }> {
    const agent = userAgent?.slice(0, MAX_USER_AGENT) ?? null
    return this.deps.storage.write(async (tx) => {
      // Checked here, in the write that opens the session, not before the
      // hash: a ban committed while the password was being checked is seen
      // (and on PostgreSQL a ban racing this write makes one of the two run
      // again). A wrong password never gets this far: no ban oracle.
      const standing = await tx.auth.standing(user.id)
      if (standing === null || standing.deletedAt !== null) throw new AppError('invalid_credentials', 'Invalid identifier or password')
      if (banInForce(standing.ban, now)) throw bannedError(standing.ban!)
      // The counter this login counted on (the account's, or its known place's): the owner's success forgets its own failures.
      await clearAttempts(tx.auth, counterKey)
      const deviceToken = await rememberSignInPlace(tx.auth, userSubject(user.id), place, now)
      // The first login of an account is not a new device: there is no old one.
      const earlier = await tx.auth.earlierSessions(user.id, agent)
      const newDevice = earlier.any && !earlier.sameAgent
      await this.makeRoomForSession(tx, user.id, now)
      await tx.auth.createSession({
        id: sessionId,
        userId: user.id,
        createdAt: now,
        lastUsedAt: now,
        expiresAt: new Date(now.getTime() + this.deps.refreshTtlS * 1000),
        userAgent: agent,
      })
      await tx.auth.issueRefreshToken(sha256Hex(refreshToken), sessionId, now)
      await tx.events.append({ userId: user.id, topic: 'session', type: 'session.login', data: { sessionId, newDevice } }, now)
      return { newDevice, deviceToken }
    })
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
    const { storage, clock } = this.deps
    const presentedHash = sha256Hex(input.refreshToken)
    const next = randomToken(32)
    const outcome = await storage.write(async (tx) => {
      const now = clock.now()
      const token = await tx.auth.refreshToken(presentedHash)
      if (!token || token.sessionId !== input.sessionId) return { kind: 'invalid' as const }
      const session = await tx.auth.session(token.sessionId)
      if (!session || session.userId !== input.userId || !isLive(session, now)) return { kind: 'invalid' as const }
      // The grace is measured on the database's clock: the token may have been
      // spent by another instance, whose clock can be minutes off this one's
      // (on SQLite, one process, that is this process's clock).
      // A retry leaves the token spent at its first rotation's time, so the grace never extends.
      // A clock that stepped back (spent "in the future") is no reason to forgive.
      const databaseNow = await tx.databaseTime(now)
      const sinceSpent = token.spentAt === null ? -1 : databaseNow.getTime() - token.spentAt.getTime()
      const retry = sinceSpent >= 0 && sinceSpent < (this.deps.refreshReuseGraceS ?? 0) * 1000
      if (token.spentAt && !retry) {
        await revokeSessions(tx, clock, session.userId, [session.id], 'refresh_token_reused')
        return { kind: 'reused' as const }
      }
      if (!token.spentAt && !(await tx.auth.spendRefreshToken(presentedHash, databaseNow))) return { kind: 'invalid' as const }
      const nextHash = sha256Hex(next)
      await tx.auth.issueRefreshToken(nextHash, session.id, now)
      // The session's bound: replays of the tokens it keeps are still recognised; older ones are merely unknown (401).
      await tx.auth.keepNewestRefreshTokens(session.id, nextHash, MAX_REFRESH_TOKENS_PER_SESSION)
      await tx.auth.touchSession(session.id, now)
      await tx.events.append({ userId: session.userId, topic: 'session', type: 'session.refreshed', data: { sessionId: session.id } }, now)
      return { kind: 'rotated' as const, userId: session.userId }
    })
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
    const user = await storage.read.auth.userById(outcome.userId)
    if (!user) throw unauthorized()
    return this.tokenResponse(user, input.sessionId, next)
  }

  /**
   * Revokes the caller's session; with `all` every live session of the user,
   * with `others` every one but the caller's (never both: the route refuses
   * that). Returns how many.
   */
  logout(input: { userId: string; sessionId: string; all: boolean; others?: boolean }): Promise<number> {
    const { storage, clock } = this.deps
    const reason: RevokeReason = input.all ? 'logout_all' : input.others ? 'logout_others' : 'logout'
    return storage.write(async (tx) => {
      const live = reason === 'logout' ? [] : (await tx.auth.liveSessions(input.userId, clock.now())).map((session) => session.id)
      const ids = reason === 'logout' ? [input.sessionId] : reason === 'logout_others' ? live.filter((id) => id !== input.sessionId) : live
      return revokeSessions(tx, clock, input.userId, ids, reason)
    })
  }

  /**
   * Ends one live session of the user (DELETE /me/sessions/{id}), the
   * caller's own included. Another user's session, an unknown id and a
   * session already ended (revoked or expired) are all 404: the answer never
   * says whose a session id is.
   */
  revokeSession(userId: string, sessionId: string): Promise<number> {
    const { storage, clock } = this.deps
    return storage.write(async (tx) => {
      const session = await tx.auth.session(sessionId)
      if (!session || session.userId !== userId || !isLive(session, clock.now())) throw new AppError('not_found', 'No such live session')
      return revokeSessions(tx, clock, userId, [sessionId], 'revoked')
    })
  }

  /** The bearer check behind every authenticated route. Throws 401 unless the token and its session are live. */
  /** An operator's name for a user: its id, or its username in any case. */
  async userIdOf(ref: string): Promise<string | null> {
    const id = await userIdByRef(this.deps.storage, ref)
    return id === null ? null : ((await this.deps.storage.read.auth.userById(id))?.id ?? null)
  }

  /** Which of these usernames or emails (compared case-insensitively) are taken; the holders' usernames. */
  takenNames(usernames: readonly string[], emails: readonly string[]): Promise<string[]> {
    return this.deps.storage.read.auth.usernamesHolding(
      usernames.map((name) => name.toLowerCase()),
      emails.map((email) => email.toLowerCase()),
    )
  }

  /**
   * The account's password and its login throttle, for a module that asks a
   * signed-in user for their password again (PUT /security/pin, a password
   * change, deleting the account): each check counts against the account
   * like a login attempt, before the hash.
   */
  accountPasswords(): AccountPasswords {
    const { storage, clock } = this.deps
    return {
      confirm: async (userId, password) => {
        const account = accountKey(userId, '')
        this.hashGate.refuseIfFull()
        // As a login does (see login): a place at the hash gate, the block
        // checked and the attempt counted in one unit of work, before the hash.
        let ticket: HashTicket | undefined
        let hash: string | null = null
        let blockedForS: number | null
        try {
          blockedForS = await storage.write(async (tx) => {
            ticket?.cancel()
            ticket = this.hashGate.admit()
            const now = clock.now()
            const blocked = await retryAfter(tx.auth, [account], now)
            if (blocked !== null) {
              ticket.cancel()
              return blocked
            }
            await recordAttempt(tx.auth, account, LOGIN_LIMITS.account, now)
            const user = await tx.auth.userById(userId)
            // A deleted account's hash is empty: nothing to check against.
            hash = user && user.deletedAt === null ? user.passwordHash : null
            return null
          })
        } catch (error) {
          ticket?.cancel()
          throw error
        }
        if (blockedForS !== null) throw rateLimited(blockedForS, 'Too many wrong passwords; try again later')
        const matched = hash !== null ? await verifyPassword(password, hash, ticket!) : await verifyAgainstDummy(password, ticket!)
        // Right: the count goes, as after a good login.
        if (matched) await storage.write((tx) => clearAttempts(tx.auth, account))
        return { matched, hash }
      },
    }
  }


  async authenticate(token: string | null, options: { allowExpired?: boolean } = {}): Promise<Authenticated> {
    if (!token) throw unauthorized('Bearer access token required')
    const claims = await this.deps.accessTokens.verify(token, options)
    if (!claims) throw unauthorized()
    const { storage, clock } = this.deps
    const now = clock.now()
    const found = await storage.read.auth.sessionWithUser(claims.sessionId)
    // A session without its user cannot exist (ON DELETE CASCADE); refused all the same.
    if (!found?.user || found.userId !== claims.userId || found.revokedAt !== null || found.expiresAt.getTime() <= now.getTime()) {
      throw unauthorized()
    }
    // A ban revokes every session in its own write; a session a login opened
    // as the ban committed would still be live: refused all the same.
    if (banInForce(found.user.ban, now)) throw unauthorized()
    if (now.getTime() - found.lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS) {
      try {
        await storage.write((tx) => tx.auth.touchSession(claims.sessionId, now))
      } catch (error) {
        // Bookkeeping only: a full disk (or a busy or failing one) must not turn
        // a valid token into a 503, or no read would work while writes cannot.
        if (!isStorageUnavailable(error)) throw error
      }
    }
    return { user: toUser(found.user), session: { id: claims.sessionId, userId: found.userId } }
  }

  /** The user's live sessions, most recently used first. */
  async listSessions(userId: string, currentSessionId: string) {
    const sessions = await this.deps.storage.read.auth.liveSessions(userId, this.deps.clock.now())
    return sessions.map((s) => ({
      id: s.id,
      createdAt: toIso(s.createdAt),
      lastUsedAt: toIso(s.lastUsedAt),
      userAgent: s.userAgent,
      current: s.id === currentSessionId,
    }))
  }

  private async tokenResponse(user: UserProfile, sessionId: string, refreshToken: string): Promise<TokenResponse> {
    const accessToken = await this.deps.accessTokens.sign({ userId: user.id, sessionId })
    return { accessToken, refreshToken, expiresIn: this.deps.accessTokens.ttlS, tokenType: 'Bearer', user: toUser(user) }
  }
}

function isLive(session: AuthSession, now: Date): boolean {
  return session.revokedAt === null && session.expiresAt.getTime() > now.getTime()
}

/** Revokes those of the user's sessions still live, with one event each; returns how many. In the caller's unit of work. */
export async function revokeSessions(tx: Transaction, clock: Clock, userId: string, sessionIds: string[], reason: RevokeReason): Promise<number> {
  const now = clock.now()
  let revoked = 0
  for (const id of sessionIds) {
    if (await tx.auth.revokeSession(id, userId, reason, now)) {
      revoked++
      // The reason says which event: a spent refresh token presented, or a logout.
      await tx.events.append(
        reason === 'refresh_token_reused'
          ? { userId, topic: 'session', type: 'session.reuse_revoked', data: { sessionId: id, reason } }
          : { userId, topic: 'session', type: 'session.logout', data: { sessionId: id, reason } },
        now,
      )
    }
  }
  return revoked
}
