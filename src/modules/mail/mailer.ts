// Queueing mail (contract §8). A service queues a mail inside the unit of
// work that causes it, so the mail exists exactly when that change committed;
// delivery happens later, from the outbox (./delivery.ts).
import type { Config } from '../../config'
import type { Transaction } from '../../db/storage'
import { AppError } from '../../shared/errors'
import { newId } from '../../shared/ids'
import type { ComposedMail, MailBranding } from './templates'

export type MailConfig = Pick<Config, 'env' | 'smtpUrl'> & MailBranding

export class Mailer {
  constructor(readonly config: MailConfig) {}

  /**
   * Where queued mail goes: `smtp` (ARENA_SMTP_URL), `dev_mailbox` (no SMTP
   * in `local`: kept for GET /admin/dev/mail and `arena mail list`), or
   * `nowhere` (no SMTP elsewhere: nothing can be sent).
   */
  get destination(): 'smtp' | 'dev_mailbox' | 'nowhere' {
    if (this.config.smtpUrl !== undefined) return 'smtp'
    return this.config.env === 'local' ? 'dev_mailbox' : 'nowhere'
  }

  /** Refuses (503 mail_not_configured) a request whose whole point is a mail that cannot go anywhere. */
  assertCanSend(): void {
    if (this.destination === 'nowhere') {
      // Every 503 says when to come back (docs/api.md, Errors); a missing setting
      // is not fixed in seconds, so not soon.
      throw new AppError('mail_not_configured', 'Mail is not configured on this server (ARENA_SMTP_URL)', { headers: { 'retry-after': '3600' } })
    }
  }

  /** Queues a mail in the caller's unit of work; false (nothing queued) when mail goes nowhere. */
  async queue(tx: Transaction, to: { address: string; userId: string | null }, mail: ComposedMail, now: Date): Promise<boolean> {
    const destination = this.destination
    if (destination === 'nowhere') return false
    await tx.mail.enqueue({
      id: newId('mail'),
      userId: to.userId,
      toAddress: to.address,
      kind: mail.kind,
      subject: mail.subject,
      textBody: mail.text,
      htmlBody: mail.html,
      status: destination === 'smtp' ? 'queued' : 'kept',
      nextAttemptAt: now,
      createdAt: now,
    })
    return true
  }
}
