// Forgotten passwords (contract §8). POST /user/password/forgot mails a
// one-time reset code to a known address; POST /user/password/reset trades
// the address, the code and a new password for the password change, ending
// every session of the account.
//
// What must stay true:
// - forgot answers the same (status, body, headers) for a known, an unknown
//   and a deleted address, after the same work as far as it can be the same:
//   both run one unit of work that checks and counts the throttles and looks
//   the address up; only a known address then writes its code, its mail and
//   its event. Nothing slow runs on either path.
// - A code works once: the unit of work that applies a reset re-reads it and
//   deletes it, so two resets racing with the right code cannot both win.
// - Guessing is bounded per code (five wrong tries kill it) and per client
//   (ACCOUNT_CODE_LIMITS.resetClient), and the slow hash of a new password
//   runs only for a code that was right when checked.
import type { Storage, Transaction } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import { toIso } from '../../shared/clock'
import { AppError } from '../../shared/errors'
import type { Mailer } from '../mail/mailer'
import { resetMail } from '../mail/templates'
import type { SecurityEventInput } from '../security/event-log'
import { issueAccountCode, judgeAccountCode } from './account-codes'
import { defaultHashGate, type HashGate } from './hash-gate'
import { assertPasswordLength, hashPassword } from './passwords'
import { revokeSessions } from './service'
import type { UserAccount } from './store'
import { accountKey, ACCOUNT_CODE_LIMITS, accountCodeKeys, clearAttempts, rateLimited, recordAttempt, retryAfter } from './throttle'

/** Fifteen minutes (contract §8): a reset code is a password while it lives. */
export const RESET_CODE_VALID_MINUTES = 15
const RESET_CODE_VALID_MS = RESET_CODE_VALID_MINUTES * 60_000

export interface PasswordResetDeps {
  storage: Storage
  clock: Clock
  mailer: Mailer
  hashGate?: HashGate
  onSecurityEvent?: (event: SecurityEventInput) => void
}

/**
 * Whether an account may be sent a reset code and reset with one. Anything
 * else answers exactly as an unknown address does. A deleted account has no
 * address any more (its email is erased); the check stays for clarity, and is
 * where a later rule (a ban refusing resets) belongs.
 */
export function resettable(user: UserAccount | null): user is UserAccount & { email: string } {
  // An account without a password identity has no password to reset, nor an address to mail (contract §13).
  return user !== null && user.deletedAt === null && user.email !== null && user.passwordHash !== null
}

function invalidResetCode(): AppError {
  return new AppError('invalid_reset_code', 'The reset code is wrong, used or expired')
}

export class PasswordReset {
  private readonly hashGate: HashGate

  constructor(private readonly deps: PasswordResetDeps) {
    this.hashGate = deps.hashGate ?? defaultHashGate()
  }

  /**
   * POST /user/password/forgot. Resolves (202) for any address, known or
   * not; throws 503 when mail goes nowhere and 429 when the address or the
   * client is blocked, for known and unknown addresses alike.
   */
  async forgot(input: { email: string; address: string }): Promise<void> {
    const { storage, clock, mailer } = this.deps
    // Configuration, not account state: the same 503 for every address.
    mailer.assertCanSend()
    const emailKey = input.email.trim().toLowerCase()
    const blockedForS = await storage.write(async (tx) => {
      const now = clock.now()
      const keys = [accountCodeKeys.forgotEmail(emailKey), accountCodeKeys.forgotClient(input.address)] as const
      const blocked = await retryAfter(tx.auth, [...keys], now)
      if (blocked !== null) return blocked
      await recordAttempt(tx.auth, keys[0], ACCOUNT_CODE_LIMITS.forgotEmail, now)
      await recordAttempt(tx.auth, keys[1], ACCOUNT_CODE_LIMITS.forgotClient, now)
      const user = await tx.auth.userByEmailKey(emailKey)
      if (resettable(user)) await this.send(tx, user, now)
      return null
    })
    if (blockedForS !== null) throw rateLimited(blockedForS, 'Too many password reset requests; try again later')
  }

  /**
   * POST /user/password/reset: the new password replaces the old, every
   * session ends, the code is spent; returns how many sessions ended. A wrong,
   * used or expired code, or an address with no account, is the same 400.
   */
  async reset(input: { email: string; code: string; newPassword: string; address: string }): Promise<number> {
    const { storage, clock } = this.deps
    assertPasswordLength(input.newPassword, 'body/newPassword')
    const emailKey = input.email.trim().toLowerCase()

    // The attempt is counted against the client and the code judged in one
    // unit of work, before the slow hash: a wrong code costs no argon2id.
    const judged = await storage.write(async (tx) => {
      const now = clock.now()
      const key = accountCodeKeys.resetClient(input.address)
      const blocked = await retryAfter(tx.auth, [key], now)
      if (blocked !== null) return { kind: 'blocked' as const, retryAfterS: blocked }
      await recordAttempt(tx.auth, key, ACCOUNT_CODE_LIMITS.resetClient, now)
      const user = await tx.auth.userByEmailKey(emailKey)
      if (!resettable(user)) return null
      return (await judgeAccountCode(tx.auth, user.id, 'reset_password', input.code, now)) === 'match' ? { kind: 'match' as const, userId: user.id } : null
    })
    if (judged === null) throw invalidResetCode()
    if (judged.kind === 'blocked') throw rateLimited(judged.retryAfterS, 'Too many password reset attempts; try again later')

    const passwordHash = await hashPassword(input.newPassword, this.hashGate)
    const { userId } = judged
    const revoked = await storage.write(async (tx) => {
      const now = clock.now()
      // Judged again: a reset that raced this one with the same code spent it.
      const user = await tx.auth.userById(userId)
      if (!resettable(user) || (await judgeAccountCode(tx.auth, userId, 'reset_password', input.code, now)) !== 'match') return null
      await tx.auth.deleteAccountCode(userId, 'reset_password')
      await tx.auth.setPasswordHash(userId, passwordHash)
      // The code came to this address, so the user reads mail there.
      if (await tx.auth.markEmailVerified(userId, now)) {
        await tx.events.append({ userId, topic: 'account', type: 'account.email_verified', data: { verifiedAt: toIso(now) } }, now)
      }
      // A login block counted against the old password has no more reason to stand.
      await clearAttempts(tx.auth, accountKey(userId, ''))
      const sessions = (await tx.auth.liveSessions(userId, now)).map((session) => session.id)
      const ended = await revokeSessions(tx, clock, userId, sessions, 'password_reset')
      await tx.events.append({ userId, topic: 'account', type: 'account.password_reset', data: { revoked: ended } }, now)
      tx.afterCommit(() =>
        this.deps.onSecurityEvent?.({ userId, source: 'server', kind: 'PASSWORD_RESET', level: 'WARN', details: { revoked: ended, address: input.address } }),
      )
      return ended
    })
    if (revoked === null) throw invalidResetCode()
    return revoked
  }

  private async send(tx: Transaction, user: UserAccount & { email: string }, now: Date): Promise<void> {
    const { mailer } = this.deps
    const code = await issueAccountCode(tx.auth, user.id, 'reset_password', RESET_CODE_VALID_MS, now)
    await mailer.queue(tx, { address: user.email, userId: user.id }, resetMail(mailer.config, user.email, code, RESET_CODE_VALID_MINUTES), now)
    await tx.events.append({ userId: user.id, topic: 'account', type: 'account.code_sent', data: { purpose: 'reset_password' } }, now)
  }
}
