// `arena mail list` and `arena mail test` (contract §8): the outbox read as a
// mailbox (what GET /admin/dev/mail answers), and a test mail queued so an
// operator can check ARENA_SMTP_URL without a player asking for a code.
import type { Command } from './command'
import { UsageError } from './command'
import { withServices } from './operator-commands'
import { listMail, mailView, queueTestMail } from '../modules/mail/mailbox'
import type { MailMessage } from '../modules/mail/store'
import { systemClock } from '../shared/clock'
import { commandName, serveCommand } from '../shared/invocation'

/** Loose on purpose: the SMTP server is the judge of an address; this only catches a slip of the hand. */
const ADDRESS = /^[^\s@]+@[^\s@]+$/

function address(value: unknown, required: boolean): string | undefined {
  if (value === undefined && !required) return undefined
  if (typeof value !== 'string' || value.length > 254 || !ADDRESS.test(value)) throw new UsageError('--to takes a mail address')
  return value
}

/**
 * The text a listing shows: the dev mailbox's own (`kept`) in full; of mail
 * for SMTP, nothing. Queued mail may carry a live code, and an operator's
 * terminal or a CI log is no place for it (sent mail has no body left).
 */
function bodyOf(mail: MailMessage): string {
  return mail.status === 'kept' ? mail.textBody : '(body not shown: it is for the recipient alone)'
}

/** A message for a person at a terminal: where it stands, then its subject and text. */
function messageText(mail: MailMessage): string {
  const state = mail.status === 'failed' || (mail.status === 'queued' && mail.lastError !== null) ? `${mail.status} (${mail.attempts} attempts: ${mail.lastError})` : mail.status
  return [
    `${mail.id}  ${mail.createdAt.toISOString()}  ${state}  ${mail.kind}  to ${mail.toAddress}`,
    `  Subject: ${mail.subject}`,
    ...bodyOf(mail)
      .trimEnd()
      .split('\n')
      .map((line) => `  ${line}`),
  ].join('\n')
}

export const mailCommand: Command = {
  summary: 'List the mail arena queued (the dev mailbox), or queue a test mail to check the SMTP settings',
  usage: 'arena mail list [--to <address>] [--json] | arena mail test --to <address> [--json]',
  options: { to: { type: 'string' }, json: { type: 'boolean' } },
  positionals: true,
  async run({ values, positionals }, io) {
    const json = values.json === true
    if (positionals[0] === 'list' && positionals.length === 1) {
      const to = address(values.to, false)
      const messages = await withServices(({ storage }) => listMail(storage.read.mail, to))
      io.out(json ? JSON.stringify({ messages: messages.map((mail) => ({ ...mailView(mail), text: mail.status === 'kept' ? mail.textBody : '' })) }) : messages.length === 0 ? 'no mail' : messages.map(messageText).join('\n\n'))
      return 0
    }
    if (positionals[0] === 'test' && positionals.length === 1) {
      const to = address(values.to, true)!
      const destination = await withServices(({ storage, mailer }) => queueTestMail(storage, mailer, to, systemClock.now()))
      io.out(
        json
          ? JSON.stringify({ queued: true, destination })
          : destination === 'smtp'
            ? `queued a test mail to ${to}: a running server (\`${serveCommand()}\`) sends it through ARENA_SMTP_URL within seconds (\`${commandName()} mail list --to ${to}\` shows where it stands)`
            : `kept a test mail for ${to} in the dev mailbox (no ARENA_SMTP_URL): \`${commandName()} mail list --to ${to}\` shows it`,
      )
      return 0
    }
    throw new UsageError(`unknown action "${positionals.join(' ')}"`)
  },
}
