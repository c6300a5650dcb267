// What the mail module needs from the database (see src/db/storage.ts): the
// mail outbox. A mail is queued inside the unit of work that causes it; the
// delivery loop (one runner among all instances) sends the due ones and marks
// each sent, so a crash between queueing and sending loses nothing.

/**
 * `queued`: waiting for (another) SMTP attempt; `sent`: the SMTP server took
 * it; `failed`: refused for good (a permanent SMTP error), never retried;
 * `kept`: no SMTP in `local`, held in the dev mailbox and never sent.
 */
export const MAIL_STATUSES = ['queued', 'sent', 'failed', 'kept'] as const
export type MailStatus = (typeof MAIL_STATUSES)[number]

export interface MailMessage {
  id: string
  userId: string | null
  toAddress: string
  kind: string
  subject: string
  textBody: string
  htmlBody: string
  status: MailStatus
  attempts: number
  nextAttemptAt: Date
  lastError: string | null
  createdAt: Date
  sentAt: Date | null
}

export type NewMail = Omit<MailMessage, 'attempts' | 'lastError' | 'sentAt'>

/**
 * What a mail's bodies become once it is sent or failed for good: a body may
 * carry a live one-time code, which the database must not hold in the clear
 * any longer than delivery needs (codes are otherwise kept only as hashes).
 * Kept mail (the dev mailbox, `local` only) keeps its bodies.
 */
export const ERASED_BODIES = { textBody: '', htmlBody: '' } as const

export interface MailStore {
  enqueue(mail: NewMail): Promise<void>
  /** Queued mail whose next attempt is due at `now`, oldest first, at most `limit`. */
  due(now: Date, limit: number): Promise<MailMessage[]>
  /** Marks a queued mail sent, its bodies erased (ERASED_BODIES); false when it was not queued any more (nothing changed). */
  markSent(id: string, now: Date): Promise<boolean>
  /** Records a failed attempt: one more attempt, its error, and either the next attempt's time or `failed` for good (its bodies erased). */
  markAttemptFailed(id: string, failure: { error: string; nextAttemptAt: Date; giveUp: boolean }): Promise<void>
  /** Mail to an address (compared lower-cased), newest first, at most `limit`. */
  toAddress(toKey: string, limit: number): Promise<MailMessage[]>
  /** The newest mail to anyone, newest first, at most `limit`. */
  recent(limit: number): Promise<MailMessage[]>
  /** Deletes every mail sent for the user (account deletion); how many. */
  deleteForUser(userId: string): Promise<number>
  /** Housekeeping: deletes mail sent, failed or kept before `cutoff`; how many. */
  prune(cutoff: Date): Promise<number>
}
