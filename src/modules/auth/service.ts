// Auth sessions (contract §1, §7): the bearer check behind every
// authenticated route, refresh-token rotation, logout and the caller's list
// of sessions. Knows nothing of HTTP: callers pass plain values and get plain
// values or AppErrors back. Signing in, which opens a session, is
// ./sign-in.ts; registration ./registration.ts; a password asked again
// ./account-passwords.ts.
import { isStorageUnavailable } from '../../db/errors'
import type { Storage, Transaction } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import { toIso } from '../../shared/clock'
import { randomToken, sha256Hex } from '../../shared/crypto'
import { AppError } from '../../shared/errors'
import type { AccessTokens } from './access-tokens'
import type { SecurityEventInput } from '../security/event-log'
import type { TokenResponse, User } from './model'
import { userIdByRef } from './user-ref'
import { banInForce, USER_PROFILE_FIELDS, type AuthSession, type RevokeReason, type UserProfile } from './store'
import { pick } from '../../shared/pick'

export interface Authenticated {
  user: User
  session: { id: string; userId: string }
}

export interface AuthServiceDeps {
  storage: Storage
  clock: Clock
  accessTokens: AccessTokens
  /**
   * A spent refresh token presented again within this many seconds of the
   * rotation that spent it is a retry, not a replay (contract §7; 0: never).
   * Defaults to 0 for callers that do not say.
   */
  refreshReuseGraceS?: number
  /** A replayed refresh token's REFRESH_TOKEN_REUSED goes to the security log. */
  onSecurityEvent?: (event: SecurityEventInput) => void
}

/** lastUsedAt is written at most this often per session, so reads stay reads. */
const LAST_USED_RESOLUTION_MS = 60_000
/** Refresh tokens one session keeps (the current one and the last spent ones, whose replay revokes the session). */
export const MAX_REFRESH_TOKENS_PER_SESSION = 100

export function toUser(profile: UserProfile): User {
  // Every profile field is shown (USER_PROFILE_FIELDS, and nothing else of an
  // account: a UserAccount passed here keeps its hash and ban to itself);
  // only the two instants change form.
  const { createdAt, emailVerifiedAt, identityProviders, ...shown } = pick(profile, USER_PROFILE_FIELDS)
  return { id: profile.id, ...shown, createdAt: toIso(createdAt), emailVerified: emailVerifiedAt !== null, identities: providerList(identityProviders) }
}

/** users.identity_providers as a list (contract §13's `user.identities`). */
export function providerList(providers: string): string[] {
  return providers === '' ? [] : providers.split(',')
}

/** The bearer check's 401, with its WWW-Authenticate challenge. */
export function unauthorized(message = 'Missing, invalid or revoked access token'): AppError {
  return new AppError('unauthorized', message, { headers: { 'www-authenticate': 'Bearer realm="arena"' } })
}

export class AuthService {
  constructor(private readonly deps: AuthServiceDeps) {}

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
    return issueTokens(this.deps.accessTokens, user, input.sessionId, next)
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

  /** An operator's name for a user: its id, or its username in any case. */
  async userIdOf(ref: string): Promise<string | null> {
    const id = await userIdByRef(this.deps.storage, ref)
    return id === null ? null : ((await this.deps.storage.read.auth.userById(id))?.id ?? null)
  }

  /** The bearer check behind every authenticated route. Throws 401 unless the token and its session are live. */
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
}

/** The pair of tokens a login or a rotation answers. */
export async function issueTokens(accessTokens: AccessTokens, user: UserProfile, sessionId: string, refreshToken: string): Promise<TokenResponse> {
  const accessToken = await accessTokens.sign({ userId: user.id, sessionId })
  return { accessToken, refreshToken, expiresIn: accessTokens.ttlS, tokenType: 'Bearer', user: toUser(user) }
}

export function isLive(session: AuthSession, now: Date): boolean {
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
