// Verified email (contract §8). Register mails a code in its own unit of
// work; the user types it back (POST /user/email/verify) and may ask for a
// new one (POST /user/email/resend). The code is mailed, never answered: the
// point is to prove the user reads mail at that address.
import type { Storage, Transaction } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import { toIso } from '../../shared/clock'
import { AppError } from '../../shared/errors'
import type { Mailer } from '../mail/mailer'
import { verificationMail } from '../mail/templates'
import { issueAccountCode, judgeAccountCode } from './account-codes'
import type { User } from './model'
import { toUser, unauthorized } from './service'
import type { UserAccount } from './store'
import { ACCOUNT_CODE_LIMITS, accountCodeKeys, rateLimited, recordAttempt, retryAfter } from './throttle'

/**
 * A day: long enough for a mail that arrives late or is read the next
 * morning. The code only proves the address; it grants nothing else.
 */
export const VERIFY_CODE_VALID_HOURS = 24
const VERIFY_CODE_VALID_MS = VERIFY_CODE_VALID_HOURS * 3_600_000

export interface EmailVerificationDeps {
  storage: Storage
  clock: Clock
  mailer: Mailer
}

export class EmailVerification {
  constructor(private readonly deps: EmailVerificationDeps) {}

  /**
   * In register's unit of work: a code, its mail and an `account.code_sent`
   * event. When mail goes nowhere (no SMTP outside `local`) the account is
   * created without a code; resend gives it one once SMTP is configured.
   */
  async onRegister(tx: Transaction, user: Pick<UserAccount, 'id' | 'email'>, now: Date): Promise<void> {
    if (this.deps.mailer.destination === 'nowhere') return
    await this.send(tx, user, now)
  }

  /**
   * POST /user/email/verify. Already verified: the user as it is, whatever the
   * code (the address is proven; answering an error would only confuse a
   * client that retried). Otherwise the code must be the live one: it is
   * deleted with the change (works once); a wrong one counts toward the five
   * that kill it.
   */
  async verify(userId: string, input: string): Promise<User> {
    const { storage, clock } = this.deps
    const outcome = await storage.write(async (tx) => {
      const now = clock.now()
      const user = await existingUser(tx, userId)
      if (user.emailVerifiedAt !== null) return { user }
      if (user.email === null) return null
      // A refusal is returned, not thrown, so the failure it counted commits.
      if ((await judgeAccountCode(tx.auth, userId, 'verify_email', input, now)) !== 'match') return null
      await tx.auth.deleteAccountCode(userId, 'verify_email')
      await tx.auth.markEmailVerified(userId, now)
      await tx.events.append({ userId, topic: 'account', type: 'account.email_verified', data: { verifiedAt: toIso(now) } }, now)
      return { user: { ...user, emailVerifiedAt: now } }
    })
    if (outcome === null) throw new AppError('invalid_verification_code', 'The verification code is wrong or has expired')
    return toUser(outcome.user)
  }

  /**
   * POST /user/email/resend: a new code (the old one stops working) and its
   * mail. 503 when mail cannot go anywhere, 409 once verified, 429 past
   * ACCOUNT_CODE_LIMITS.resend.
   */
  async resend(userId: string): Promise<void> {
    const { storage, clock } = this.deps
    this.deps.mailer.assertCanSend()
    const blockedForS = await storage.write(async (tx) => {
      const now = clock.now()
      const user = await existingUser(tx, userId)
      if (user.emailVerifiedAt !== null) throw new AppError('conflict', 'The email address is already verified')
      if (user.email === null) throw new AppError('conflict', 'The account has no email address: link a password identity first')
      const key = accountCodeKeys.resend(userId)
      const blocked = await retryAfter(tx.auth, [key], now)
      if (blocked !== null) return blocked
      await recordAttempt(tx.auth, key, ACCOUNT_CODE_LIMITS.resend, now)
      await this.send(tx, user, now)
      return null
    })
    if (blockedForS !== null) throw rateLimited(blockedForS, 'Too many verification mails; try again later')
  }

  private async send(tx: Transaction, user: Pick<UserAccount, 'id' | 'email'>, now: Date): Promise<void> {
    const { mailer } = this.deps
    // An account without a password identity has no address to mail (contract §13).
    if (user.email === null) return
    const code = await issueAccountCode(tx.auth, user.id, 'verify_email', VERIFY_CODE_VALID_MS, now)
    await mailer.queue(tx, { address: user.email, userId: user.id }, verificationMail(mailer.config, user.email, code, VERIFY_CODE_VALID_HOURS), now)
    await tx.events.append({ userId: user.id, topic: 'account', type: 'account.code_sent', data: { purpose: 'verify_email' } }, now)
  }
}

/** The bearer's account, read in the unit of work. Gone only if deleted since the bearer was checked: then the bearer is no good either. */
async function existingUser(tx: Transaction, userId: string): Promise<UserAccount> {
  const user = await tx.auth.userById(userId)
  if (!user || user.deletedAt !== null) throw unauthorized()
  return user
}
