// PINs and one-time PIN sessions (contract §3). A session is minted, then
// verified once with the PIN and the withdrawal it authorizes (the wallet's
// verify, src/modules/wallet/withdrawal-request.ts, whose PIN side is
// checkSession, judge and settle below). Failures are
// counted per user across sessions; 5 in a row lock the PIN for 15 minutes,
// each later lock twice as long up to a day (./pin-rules.ts); a correct PIN,
// a password-confirmed PIN change, or a finance operator's audited unlock
// resets both.
import type { Storage, Transaction } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import { toIso } from '../../shared/clock'
import { constantTimeEqual, randomToken, sha256Hex } from '../../shared/crypto'
import { AppError } from '../../shared/errors'
import { newId } from '../../shared/ids'
import { defaultHashGate, type HashGate } from '../auth/hash-gate'
import type { AccountPasswords } from '../auth/account-passwords'
import { hashPassword, verifyPassword } from '../auth/passwords'
import { isCommonPin, PIN_LOCK_BASE_MS, PIN_LOCK_MAX_MS, pinLockMs } from './pin-rules'
import type { Actor } from '../audit/log'
import type { SecurityEventLog } from './event-log'
import type { PinSession, SecurityStore } from './store'

export const PIN_MAX_ATTEMPTS = 5
export const PIN_UNLOCK_REASON_MAX = 500
export { PIN_LOCK_BASE_MS, PIN_LOCK_MAX_MS }

/** A user's PIN as operators see it (GET and POST /admin/users/{id}/pin…, the console's user page). */
export interface PinState {
  /** The user has a PIN. */
  set: boolean
  /** A lock is in force now. */
  locked: boolean
  /** When the last lock ends (or ended); null when there was none since the last reset. */
  lockedUntil: string | null
  /** Wrong PINs since the last lock or reset. */
  failures: number
  /** Locks since the last reset: the next one lasts pinLockMs(locks). */
  locks: number
}

/**
 * Live (unconsumed, unexpired) PIN sessions one account may hold. One more
 * mint answers 429 rate_limited until the soonest of them expires: minting
 * never invalidates a session a client holds, and an account's PIN-session
 * rows stay below this many live plus what expired in the last day
 * (docs/operations.md, "How the database's growth is bounded").
 */
export const MAX_LIVE_PIN_SESSIONS = 20

/** One PIN attempt's verdict, as the verify answers it. */
export type PinVerdict = { valid: false; locked: boolean; attempt: number } | { valid: true; locked: false; attempt: 0 }

export interface PinServiceDeps {
  storage: Storage
  clock: Clock
  pinSessionTtlS: number
  passwords: AccountPasswords
  securityLog?: SecurityEventLog
  /** Bounds concurrent argon2id work (default: the process's gate). */
  hashGate?: HashGate
}

export class PinService {
  /** Bounds the PIN's hashes (setting one, judging one). */
  readonly hashGate: HashGate

  constructor(private readonly deps: PinServiceDeps) {
    this.hashGate = deps.hashGate ?? defaultHashGate()
  }

  async setPin(userId: string, pin: string, password: string): Promise<void> {
    const { storage, clock, passwords } = this.deps
    if (isCommonPin(pin)) {
      throw new AppError('validation_failed', 'Request failed validation', {
        details: [{ path: 'body/pin', message: 'This PIN is too easy to guess' }],
      })
    }
    // Both hashes go through the hash gate. Refused (503 + Retry-After) at
    // the password check: nothing judged, so nothing counted; at the PIN
    // hash: nothing written. Either way the client may simply retry.
    if (!(await passwords.confirm(userId, password)).matched) throw new AppError('forbidden', 'Password is incorrect')
    const pinHash = await hashPassword(pin, this.hashGate)
    // The password proved the owner: the new PIN starts clean, lock and
    // doubling lifted in the same step (a wrong password above lifted nothing).
    await storage.write(async (tx) => {
      await tx.security.setPinHash(userId, pinHash, clock.now())
      await tx.security.clearPinLock(userId)
    })
  }

  /** The user's PIN state now (operators). 404 not_found for no such user. */
  async state(userId: string): Promise<PinState> {
    const { storage, clock } = this.deps
    if (!(await storage.read.auth.userById(userId))) throw new AppError('not_found', 'No such user')
    const [pinHash, lock] = await Promise.all([storage.read.security.pinHash(userId), storage.read.security.pinLock(userId)])
    return pinStateOf(pinHash !== null, lock, clock.now())
  }

  /**
   * A finance operator lifts the user's PIN lock and forgets the failures
   * and the doubling (a player locked out for a day who proved who they are
   * some other way). One unit of work: the lock cleared, the user's
   * account.pin_unlocked event, the audit record with the reason; the
   * PIN_UNLOCKED security event follows the commit. A PIN with nothing to
   * lift (no lock, no failures, no doubling) is answered as it is, and
   * nothing is written (`lifted: false`), as an unban of a user with no ban.
   * 404 for no such user, 409 conflict for a deleted account.
   */
  unlock(userId: string, reason: string, by: Actor): Promise<{ pin: PinState; lifted: boolean }> {
    const { storage, clock } = this.deps
    // The API's schema says so too; the command line reaches here without it.
    if (reason.trim() === '' || reason.length > PIN_UNLOCK_REASON_MAX) {
      throw new AppError('validation_failed', 'Request failed validation', { details: [{ path: 'body/reason', message: `Expected 1 to ${PIN_UNLOCK_REASON_MAX} characters` }] })
    }
    return storage.write(async (tx) => {
      const now = clock.now()
      const account = await tx.auth.userById(userId)
      if (!account) throw new AppError('not_found', 'No such user')
      if (account.deletedAt !== null) throw new AppError('conflict', 'The account was deleted')
      const lock = await tx.security.pinLock(userId)
      const before = pinStateOf((await tx.security.pinHash(userId)) !== null, lock, now)
      if (lock === null || (!before.locked && before.failures === 0 && before.locks === 0)) return { pin: before, lifted: false }
      await tx.security.clearPinLock(userId)
      await tx.events.append({ userId, topic: 'account', type: 'account.pin_unlocked', data: { unlockedAt: toIso(now) } }, now)
      const details = { wasLocked: before.locked, lockedUntil: before.lockedUntil, failures: before.failures, locks: before.locks }
      await by.record(tx, { action: 'user.pin_unlock', target: userId, reason, details })
      const { securityLog } = this.deps
      if (securityLog) tx.afterCommit(() => securityLog.record({ userId, source: 'server', kind: 'PIN_UNLOCKED', level: 'SAFE', details: { ...details, by: by.operator.name } }))
      return { pin: { ...before, locked: false, lockedUntil: null, failures: 0, locks: 0 }, lifted: true }
    })
  }

  async mint(userId: string) {
    const { storage, clock } = this.deps
    return storage.write(async (tx) => {
      const now = clock.now()
      await assertNotLocked(tx.security, userId, now)
      if ((await tx.security.pinHash(userId)) === null) {
        throw new AppError('conflict', 'Set a PIN first (PUT /api/v1/security/pin)')
      }
      // Counted in this write: on PostgreSQL two mints that both counted one
      // below the cap conflict (SERIALIZABLE) and the second, run again, sees the first.
      const live = await tx.security.livePinSessions(userId, now)
      if (live.count >= MAX_LIVE_PIN_SESSIONS) {
        const retryAfter = Math.max(1, Math.ceil(((live.soonestExpiry ?? now).getTime() - now.getTime()) / 1000))
        throw new AppError('rate_limited', `At most ${MAX_LIVE_PIN_SESSIONS} unused PIN sessions at a time; use one or wait for one to expire`, {
          headers: { 'retry-after': String(retryAfter) },
        })
      }
      const sessionToken = randomToken(32)
      const id = newId('pinSession')
      const expiresAt = new Date(now.getTime() + this.deps.pinSessionTtlS * 1000)
      await tx.security.addPinSession({ id, userId, tokenHash: sha256Hex(sessionToken), expiresAt, consumedAt: null, createdAt: now })
      return { sessionId: id, sessionToken, expiresAt: toIso(expiresAt), maxAttempts: PIN_MAX_ATTEMPTS }
    })
  }

  /**
   * 401 for a wrong token or another user's session, 410 once expired or
   * consumed, 429 while locked. `store` is `storage.read.security` for the
   * early check, `tx.security` for the one that decides.
   */
  async checkSession(store: SecurityStore, userId: string, sessionId: string, sessionToken: string | null): Promise<PinSession> {
    const now = this.deps.clock.now()
    const session = await store.pinSession(sessionId)
    const tokenOk = constantTimeEqual(sha256Hex(sessionToken ?? ''), session?.tokenHash ?? sha256Hex(`none:${sessionId}`))
    if (!session || !sessionToken || session.userId !== userId || !tokenOk) {
      throw new AppError('unauthorized', 'Invalid x-secure-session for this PIN session')
    }
    if (session.consumedAt || session.expiresAt.getTime() <= now.getTime()) {
      throw new AppError('session_expired', 'This PIN session has expired or was already used')
    }
    await assertNotLocked(store, userId, now)
    return session
  }

  /**
   * Whether `pin` is the user's PIN: the slow hash, through the hash gate,
   * outside any write (the caller re-checks the session in the write that
   * settles the attempt). 409 conflict when no PIN is set; 503 when the gate
   * is full, with nothing judged and nothing counted.
   */
  async judge(userId: string, pin: string): Promise<boolean> {
    const pinHash = await this.deps.storage.read.security.pinHash(userId)
    if (pinHash === null) throw new AppError('conflict', 'No PIN is set')
    return verifyPassword(pin, pinHash, this.hashGate)
  }

  /**
   * Records an attempt's verdict in the caller's write, the one that acts on
   * it (a withdrawal's): a wrong PIN counts one failure (the fifth in a row
   * locks, logged once the lock commits) and leaves the session for the next
   * guess; a right one clears the failures and the doubling and consumes the
   * session. Answers the verify's PIN fields.
   */
  async settle(tx: Transaction, userId: string, sessionId: string, valid: boolean): Promise<PinVerdict> {
    const now = this.deps.clock.now()
    if (valid) {
      await tx.security.clearPinLock(userId)
      await tx.security.consumePinSession(sessionId, now)
      return { valid: true, locked: false, attempt: 0 }
    }
    const row = await tx.security.pinLock(userId)
    const attempt = (row?.failures ?? 0) + 1
    const locks = row?.locks ?? 0
    const locked = attempt >= PIN_MAX_ATTEMPTS
    const state = locked
      ? { failures: 0, locks: locks + 1, lockedUntil: new Date(now.getTime() + pinLockMs(locks)) }
      : { failures: attempt, locks, lockedUntil: row?.lockedUntil ?? null }
    await tx.security.savePinLock(userId, state)
    const { securityLog } = this.deps
    if (locked && securityLog) {
      // Logged once the lock is stored: a write that rolls back locked nothing.
      tx.afterCommit(() =>
        securityLog.record({ userId, source: 'server', kind: 'PIN_LOCKED', level: 'WARN', details: { lockedUntil: state.lockedUntil?.toISOString(), locks: state.locks } }),
      )
    }
    return { valid: false, locked, attempt }
  }
}

function pinStateOf(set: boolean, lock: { failures: number; locks: number; lockedUntil: Date | null } | null, now: Date): PinState {
  const lockedUntil = lock?.lockedUntil ?? null
  return {
    set,
    locked: lockedUntil !== null && lockedUntil.getTime() > now.getTime(),
    lockedUntil: lockedUntil === null ? null : toIso(lockedUntil),
    failures: lock?.failures ?? 0,
    locks: lock?.locks ?? 0,
  }
}

async function assertNotLocked(store: SecurityStore, userId: string, now: Date): Promise<void> {
  const lock = await store.pinLock(userId)
  if (lock?.lockedUntil && lock.lockedUntil.getTime() > now.getTime()) {
    const retryAfter = Math.max(1, Math.ceil((lock.lockedUntil.getTime() - now.getTime()) / 1000))
    throw new AppError('pin_locked', 'Too many wrong PINs; try again later', { headers: { 'retry-after': String(retryAfter) } })
  }
}
