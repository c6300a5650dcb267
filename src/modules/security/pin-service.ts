// PINs and one-time PIN sessions (contract §3). A session is minted, then
// verified once with the PIN and the withdrawal it authorizes. Failures are
// counted per user across sessions; 5 in a row lock the PIN for 15 minutes,
// each later lock twice as long; a correct PIN resets both.
import { eq } from 'drizzle-orm'
import type { Db, Executor } from '../../db/sqlite/connection'
import { pinLocks, pinSessions, userPins, users } from '../../db/schema'
import type { Clock } from '../../shared/clock'
import { toIso } from '../../shared/clock'
import { constantTimeEqual, randomToken, sha256Hex } from '../../shared/crypto'
import { AppError } from '../../shared/errors'
import { newId } from '../../shared/ids'
import { defaultHashGate, type HashGate } from '../auth/hash-gate'
import { hashPassword, verifyPassword } from '../auth/passwords'
import { accountKey, countAttempt, LOGIN_LIMITS, retryAfterSeconds } from '../auth/throttle'
import { isCommonPin } from './pin-rules'
import type { SecurityEventLog } from './event-log'

export const PIN_MAX_ATTEMPTS = 5
export const PIN_LOCK_BASE_MS = 15 * 60_000

export interface PinServiceDeps {
  db: Db
  clock: Clock
  pinSessionTtlS: number
  securityLog?: SecurityEventLog
  /** Bounds concurrent argon2id work (default: the process's gate). */
  hashGate?: HashGate
}

export class PinService {
  /** Shared with the withdrawal verify, which checks the PIN hash through it. */
  readonly hashGate: HashGate

  constructor(private readonly deps: PinServiceDeps) {
    this.hashGate = deps.hashGate ?? defaultHashGate()
  }

  async setPin(userId: string, pin: string, password: string): Promise<void> {
    const { db, clock } = this.deps
    if (isCommonPin(pin)) {
      throw new AppError('validation_failed', 'Request failed validation', {
        details: [{ path: 'body/pin', message: 'This PIN is too easy to guess' }],
      })
    }
    // The password check is a password guess like a login: the same
    // per-account throttle applies, or a stolen bearer could guess freely.
    const account = accountKey(userId, '')
    const retryAfter = retryAfterSeconds(db, [account], clock.now())
    if (retryAfter !== null) {
      throw new AppError('rate_limited', 'Too many wrong passwords; try again later', { headers: { 'retry-after': String(retryAfter) } })
    }
    // Both hashes go through the hash gate. Refused (503 + Retry-After) at
    // the password check: nothing judged, so nothing counted; at the PIN
    // hash: nothing written. Either way the client may simply retry.
    const user = db.select({ passwordHash: users.passwordHash }).from(users).where(eq(users.id, userId)).get()
    if (!user || !(await verifyPassword(password, user.passwordHash, this.hashGate))) {
      db.transaction((tx) => countAttempt(tx, account, LOGIN_LIMITS.account, clock.now()), { behavior: 'immediate' })
      throw new AppError('forbidden', 'Password is incorrect')
    }
    const pinHash = await hashPassword(pin, this.hashGate)
    const now = clock.now()
    db.insert(userPins).values({ userId, pinHash, updatedAt: now }).onConflictDoUpdate({ target: userPins.userId, set: { pinHash, updatedAt: now } }).run()
  }

  mint(userId: string) {
    const { db, clock } = this.deps
    const now = clock.now()
    assertNotLocked(db, userId, now)
    if (!db.select({ userId: userPins.userId }).from(userPins).where(eq(userPins.userId, userId)).get()) {
      throw new AppError('conflict', 'Set a PIN first (PUT /api/v1/security/pin)')
    }
    const sessionToken = randomToken(32)
    const id = newId('pinSession')
    const expiresAt = new Date(now.getTime() + this.deps.pinSessionTtlS * 1000)
    db.insert(pinSessions).values({ id, userId, tokenHash: sha256Hex(sessionToken), expiresAt, createdAt: now }).run()
    return { sessionId: id, sessionToken, expiresAt: toIso(expiresAt), maxAttempts: PIN_MAX_ATTEMPTS }
  }

  /** 401 for a wrong token or another user's session, 410 once expired or consumed, 429 while locked. */
  checkSession(db: Executor, userId: string, sessionId: string, sessionToken: string | null) {
    const now = this.deps.clock.now()
    const session = db.select().from(pinSessions).where(eq(pinSessions.id, sessionId)).get()
    const tokenOk = constantTimeEqual(sha256Hex(sessionToken ?? ''), session?.tokenHash ?? sha256Hex(`none:${sessionId}`))
    if (!session || !sessionToken || session.userId !== userId || !tokenOk) {
      throw new AppError('unauthorized', 'Invalid x-secure-session for this PIN session')
    }
    if (session.consumedAt || session.expiresAt.getTime() <= now.getTime()) {
      throw new AppError('session_expired', 'This PIN session has expired or was already used')
    }
    assertNotLocked(db, userId, now)
    return session
  }

  pinHashOf(userId: string): string {
    const row = this.deps.db.select({ pinHash: userPins.pinHash }).from(userPins).where(eq(userPins.userId, userId)).get()
    if (!row) throw new AppError('conflict', 'No PIN is set')
    return row.pinHash
  }

  /** Records a wrong PIN in the caller's transaction; answers the verify response. */
  recordFailure(tx: Executor, userId: string): { valid: false; locked: boolean; attempt: number } {
    const now = this.deps.clock.now()
    const row = tx.select().from(pinLocks).where(eq(pinLocks.userId, userId)).get()
    const attempt = (row?.failures ?? 0) + 1
    const locks = row?.locks ?? 0
    const locked = attempt >= PIN_MAX_ATTEMPTS
    const state = locked
      ? { failures: 0, locks: locks + 1, lockedUntil: new Date(now.getTime() + PIN_LOCK_BASE_MS * 2 ** locks) }
      : { failures: attempt, locks, lockedUntil: row?.lockedUntil ?? null }
    tx.insert(pinLocks).values({ userId, ...state }).onConflictDoUpdate({ target: pinLocks.userId, set: state }).run()
    if (locked) {
      this.deps.securityLog?.record({ userId, source: 'server', kind: 'PIN_LOCKED', level: 'WARN', details: { lockedUntil: state.lockedUntil?.toISOString(), locks: state.locks } })
    }
    return { valid: false, locked, attempt }
  }

  /** A correct PIN clears the failure count and the doubling. */
  recordSuccess(tx: Executor, userId: string): void {
    tx.delete(pinLocks).where(eq(pinLocks.userId, userId)).run()
  }

  consume(tx: Executor, sessionId: string): void {
    tx.update(pinSessions).set({ consumedAt: this.deps.clock.now() }).where(eq(pinSessions.id, sessionId)).run()
  }
}

function assertNotLocked(db: Executor, userId: string, now: Date): void {
  const lock = db.select({ lockedUntil: pinLocks.lockedUntil }).from(pinLocks).where(eq(pinLocks.userId, userId)).get()
  if (lock?.lockedUntil && lock.lockedUntil.getTime() > now.getTime()) {
    const retryAfter = Math.max(1, Math.ceil((lock.lockedUntil.getTime() - now.getTime()) / 1000))
    throw new AppError('pin_locked', 'Too many wrong PINs; try again later', { headers: { 'retry-after': String(retryAfter) } })
  }
}
