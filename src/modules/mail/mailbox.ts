// Reading the outbox as a mailbox (the dev mailbox of GET /admin/dev/mail and
// `arena mail list`), and queueing the test mail of `arena mail test`: the
// route and the command call the same functions.
import type { Storage } from '../../db/storage'
import type { Mailer } from './mailer'
import type { MailView } from './model'
import type { MailMessage, MailStore } from './store'
import { testMail } from './templates'

/** At most this many messages per listing: a mailbox to look into, not an archive. */
export const MAILBOX_LIMIT = 100

export function mailView(mail: MailMessage): MailView {
  return { id: mail.id, to: mail.toAddress, subject: mail.subject, text: mail.textBody, createdAt: mail.createdAt.toISOString() }
}

/** The mail queued to `to` (any case), or without it to anyone, newest first, at most MAILBOX_LIMIT. */
export function listMail(read: MailStore, to?: string): Promise<MailMessage[]> {
  return to === undefined ? read.recent(MAILBOX_LIMIT) : read.toAddress(to.toLowerCase(), MAILBOX_LIMIT)
}

/**
 * Queues the test mail to `to`; where it goes (SMTP or the dev mailbox).
 * Refused (503 mail_not_configured) when mail goes nowhere.
 */
export async function queueTestMail(storage: Storage, mailer: Mailer, to: string, now: Date): Promise<'smtp' | 'dev_mailbox'> {
  mailer.assertCanSend()
  const destination = mailer.destination as 'smtp' | 'dev_mailbox'
  await storage.write((tx) => mailer.queue(tx, { address: to, userId: null }, testMail(mailer.config, now), now))
  return destination
}
