// Mail delivery (contract §8): the outbox's due mail, sent over SMTP one at a
// time by a loop that runs in one instance among all (src/server.ts, a
// singleton loop). A mail is marked sent in its own write right after the SMTP
// server accepted it (250), so a crash before that loses nothing: the mail is
// still queued and the next runner sends it. The one window left (a crash
// after the 250, before the mark commits) sends it a second time with the same
// Message-ID, which a receiver may drop (docs/decisions.md).
import { createTransport } from 'nodemailer'
import type { Config } from '../../config'
import type { Storage } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import type { Logger } from '../../shared/logger'
import type { MailMessage } from './store'

/** Back-off after a transient failure: 5 s, 10 s, 20 s, … doubling per attempt, at most 15 minutes. */
export const RETRY_BASE_MS = 5_000
export const RETRY_CAP_MS = 15 * 60_000

/** Mail taken from the outbox per read; a tick reads again while there is more. */
const BATCH = 20

/** SMTP timeouts: short, because one dead server must not hold a tick (or a stop) for minutes. */
const TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000, dnsTimeout: 10_000 }

/** The wait before the next attempt of a mail that failed `attemptsBefore` times before this failure. */
export function retryDelayMs(attemptsBefore: number): number {
  return Math.min(RETRY_BASE_MS * 2 ** Math.min(attemptsBefore, 20), RETRY_CAP_MS)
}

/** What nodemailer puts on the errors it reports. */
interface SmtpError {
  code?: string
  responseCode?: number
  command?: string
  message?: string
}

/**
 * Whether a failure is this mail's for good: a 5xx the server answered to the
 * recipient (RCPT TO) or to the message (DATA), or a recipient nodemailer
 * refuses itself before asking (no reply code). Everything else is retried: a
 * refused or lost connection, a timeout, any 4xx, and also a 5xx to the login
 * (EAUTH), to TLS or to our own MAIL FROM, which say the server is configured
 * wrong, not that this mail cannot go: they would refuse every mail the same
 * way, and an operator fixing the settings must find the mail still queued.
 */
export function isPermanent(error: unknown): boolean {
  const e = (error ?? {}) as SmtpError
  if (e.code !== 'EENVELOPE' && e.code !== 'EMESSAGE') return false
  if (e.command === 'MAIL FROM') return false
  if (e.responseCode === undefined) return /recipient/i.test(e.message ?? '')
  return e.responseCode >= 500
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/**
 * A failure as one line for the log and `last_error`: nodemailer's code, the
 * SMTP command and its message (which carries the server's reply), with every
 * string of `redact` (the SMTP password and user name, the recipient, whom the
 * reply often names) replaced, and no line breaks.
 */
export function describeSmtpError(error: unknown, redact: readonly string[]): string {
  const e = (error ?? {}) as SmtpError
  let text = [e.code, e.command ? `(${e.command})` : undefined, error instanceof Error ? error.message : String(error)].filter(Boolean).join(' ')
  for (const secret of redact) {
    if (secret !== '') text = text.replace(new RegExp(escapeRegExp(secret), 'gi'), '[redacted]')
  }
  return text.replace(/\s+/g, ' ').slice(0, 500)
}

/** The user name and password of an smtp(s):// URL, as written and decoded (what a reply or an error could echo). */
function credentialsOf(smtpUrl: string): string[] {
  try {
    const url = new URL(smtpUrl)
    return [url.password, url.username].flatMap((part) => {
      let decoded = part
      try {
        decoded = decodeURIComponent(part)
      } catch {
        // Not valid percent-encoding: nodemailer uses it as written.
      }
      return decoded === part ? [part] : [decoded, part]
    })
  } catch {
    return []
  }
}

/**
 * The domain of the From address (`arena <no-reply@example.com>` →
 * `example.com`), for Message-IDs; `localhost` when it has none.
 */
export function domainOf(from: string): string {
  const match = /@([^\s<>@"]+?)>?\s*$/.exec(from)
  return match?.[1] ?? 'localhost'
}

/**
 * The Message-ID of a mail, the same at every attempt: a receiver that got a
 * mail twice (the crash window above) can tell it is one mail.
 */
export function messageIdOf(mailId: string, from: string): string {
  return `<${mailId}@${domainOf(from)}>`
}

export interface DeliveryReport {
  sent: number
  failed: number
  retried: number
}

export interface MailDeliveryDeps {
  storage: Storage
  clock: Clock
  logger: Logger
  config: Pick<Config, 'smtpUrl' | 'mailFrom'>
}

/** Sends the outbox over SMTP. One instance per server; `stop` before the database closes. */
export class MailDelivery {
  readonly #transport: ReturnType<typeof createTransport>
  readonly #redact: string[]
  readonly #stopping = new AbortController()
  /**
   * Mail the SMTP server accepted whose `markSent` write failed (the database
   * went away): marked at the next tick instead of being sent again.
   */
  readonly #acceptedUnmarked = new Set<string>()

  constructor(private readonly deps: MailDeliveryDeps) {
    const { smtpUrl } = deps.config
    if (smtpUrl === undefined) throw new Error('mail delivery needs ARENA_SMTP_URL')
    // smtp:// upgrades with STARTTLS when the server offers it, smtps:// is TLS
    // from the first byte; the credentials come from the URL. nodemailer's own
    // log stays off: it would write addresses and, with debug, the bodies.
    this.#transport = createTransport({ url: smtpUrl, ...TIMEOUTS, logger: false, debug: false })
    this.#redact = credentialsOf(smtpUrl)
  }

  /**
   * Sends every due mail, oldest first, until none is due, the server fails
   * in a way that would fail the next mail too (a transient failure), or
   * `stop` is called.
   */
  async deliverDue(): Promise<DeliveryReport> {
    const report: DeliveryReport = { sent: 0, failed: 0, retried: 0 }
    await this.#markAccepted()
    for (;;) {
      const due = await this.deps.storage.read.mail.due(this.deps.clock.now(), BATCH)
      for (const mail of due) {
        if (this.#stopping.signal.aborted) return report
        const outcome = await this.#deliver(mail)
        report[outcome]++
        if (outcome === 'retried') return report
      }
      if (due.length < BATCH) return report
    }
  }

  /** Abandons the send in progress (its mail stays queued), and closes the transport. */
  stop(): void {
    this.#stopping.abort()
    this.#transport.close()
  }

  async #deliver(mail: MailMessage): Promise<keyof DeliveryReport> {
    const { storage, clock, logger, config } = this.deps
    const attempt = mail.attempts + 1
    try {
      await this.#transport.sendMail({
        from: config.mailFrom,
        to: mail.toAddress,
        subject: mail.subject,
        text: mail.textBody,
        html: mail.htmlBody,
        messageId: messageIdOf(mail.id, config.mailFrom),
        // The date it was written, so every attempt is the same message.
        date: mail.createdAt,
        // RFC 3834: a machine's mail; auto-responders do not answer it.
        headers: { 'Auto-Submitted': 'auto-generated' },
        signal: this.#stopping.signal,
      })
    } catch (error) {
      if (this.#stopping.signal.aborted) {
        // Stopped mid-send: no answer means no verdict; the next runner sends it.
        logger.info('mail delivery interrupted by stop', { mailId: mail.id, kind: mail.kind, attempt })
        return 'retried'
      }
      const description = describeSmtpError(error, [...this.#redact, mail.toAddress])
      const permanent = isPermanent(error)
      const nextAttemptAt = new Date(clock.now().getTime() + retryDelayMs(mail.attempts))
      await storage.write((tx) => tx.mail.markAttemptFailed(mail.id, { error: description, nextAttemptAt, giveUp: permanent }))
      logger.warn(permanent ? 'mail refused for good, not retried' : 'mail delivery failed, will retry', {
        mailId: mail.id,
        kind: mail.kind,
        attempt,
        error: description,
        ...(permanent ? {} : { retryAt: nextAttemptAt.toISOString() }),
      })
      return permanent ? 'failed' : 'retried'
    }
    // Accepted (250): from here on the mail must never be sent again.
    this.#acceptedUnmarked.add(mail.id)
    await this.#markAccepted()
    logger.info('mail sent', { mailId: mail.id, kind: mail.kind, attempt })
    logger.debug('mail sent to', { mailId: mail.id, to: mail.toAddress })
    return 'sent'
  }

  /** Marks sent what the server accepted; throws (keeping them) while the database refuses. */
  async #markAccepted(): Promise<void> {
    for (const id of [...this.#acceptedUnmarked]) {
      const now = this.deps.clock.now()
      const marked = await this.deps.storage.write((tx) => tx.mail.markSent(id, now))
      this.#acceptedUnmarked.delete(id)
      if (!marked) this.deps.logger.warn('mail sent, but it was no longer queued', { mailId: id })
    }
  }
}
