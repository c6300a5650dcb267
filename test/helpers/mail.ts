// Reading the mail arena queued, straight from its outbox (what the dev
// mailbox and the SMTP delivery both read), and the code a mail carries.
import type { TestApp } from './app'
import type { MailMessage } from '../../src/modules/mail/store'

/** Every mail queued to `address` (any case), newest first. */
export function mailTo(app: Pick<TestApp, 'storage'>, address: string): Promise<MailMessage[]> {
  return app.storage.read.mail.toAddress(address.toLowerCase(), 100)
}

/** The one-time code (e.g. `7KQ2M-R9W4T`) in a mail's text. */
export function codeIn(mail: Pick<MailMessage, 'textBody'>): string {
  const match = /\b([0-9A-Z]{5}-[0-9A-Z]{5})\b/.exec(mail.textBody)
  if (!match) throw new Error(`no code in mail: ${mail.textBody}`)
  return match[1]!
}

/** The code in the newest mail of `kind` to `address`; fails when there is none. */
export async function latestCode(app: Pick<TestApp, 'storage'>, address: string, kind: 'verify_email' | 'reset_password'): Promise<string> {
  const mail = (await mailTo(app, address)).find((m) => m.kind === kind)
  if (!mail) throw new Error(`no ${kind} mail to ${address}`)
  return codeIn(mail)
}
