// Mail delivery over real SMTP (smtp-server on 127.0.0.1): a queued mail
// arrives once with its subject, text, HTML and From; a server that fails for
// a while gets the mail later, exactly once, with the attempts and back-off
// recorded; a 5xx to the message fails it for good; credentials in the URL
// are used and never written; TLS as the scheme says; a database that fails
// after the 250 does not make the mail go twice.
import { afterEach, expect, test } from 'bun:test'
import { MailDelivery, RETRY_BASE_MS, RETRY_CAP_MS, retryDelayMs } from '../../src/modules/mail/delivery'
import type { MailMessage } from '../../src/modules/mail/store'
import { testMail, verificationMail } from '../../src/modules/mail/templates'
import { StorageUnavailableError } from '../../src/db/errors'
import type { Storage } from '../../src/db/storage'
import { createLogger } from '../../src/shared/logger'
import type { TestApp } from '../helpers/app'
import { createArenaApp } from '../helpers/arena'
import { freePort, startSmtp, type TestSmtp } from '../helpers/smtp'

const FROM = 'Duel Arena <no-reply@duel.example>'
const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

async function app(): Promise<TestApp> {
  // Any smtp:// URL: it makes queued mail `queued` (not `kept`); each test sends through its own.
  const ctx = await createArenaApp({ ARENA_SMTP_URL: 'smtp://127.0.0.1:1', ARENA_MAIL_FROM: FROM, ARENA_PRODUCT_NAME: 'Duel Arena' })
  cleanups.push(() => ctx.close())
  return ctx
}

async function smtp(options: Parameters<typeof startSmtp>[0] = {}): Promise<TestSmtp> {
  const server = await startSmtp(options)
  cleanups.push(() => server.close())
  return server
}

/** A delivery through `url`, its log lines kept. */
function delivery(ctx: TestApp, url: string, storage: Storage = ctx.storage) {
  const lines: string[] = []
  const sender = new MailDelivery({ storage, clock: ctx.clock, logger: createLogger('debug', (line) => lines.push(line)), config: { smtpUrl: url, mailFrom: FROM } })
  cleanups.push(async () => sender.stop())
  return { sender, lines, logs: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>) }
}

async function queue(ctx: TestApp, to: string, mail = testMail(ctx.config, ctx.clock.now())): Promise<MailMessage> {
  expect(await ctx.storage.write((tx) => ctx.services.mailer.queue(tx, { address: to, userId: null }, mail, ctx.clock.now()))).toBe(true)
  return (await ctx.storage.read.mail.toAddress(to.toLowerCase(), 1))[0]!
}

async function row(ctx: TestApp, id: string): Promise<MailMessage> {
  return (await ctx.storage.read.mail.recent(100)).find((m) => m.id === id)!
}

test('a queued mail arrives once: subject, text, HTML, From, a Message-ID made of its id; then it is sent', async () => {
  const ctx = await app()
  const server = await smtp()
  const { sender, lines, logs } = delivery(ctx, `smtp://127.0.0.1:${server.port}`)
  const mail = await queue(ctx, 'Player.One@Example.com', verificationMail(ctx.config, 'Player.One@Example.com', 'ABCDE-FGH12', 48))

  expect(await sender.deliverDue()).toEqual({ sent: 1, failed: 0, retried: 0 })
  expect(server.received).toHaveLength(1)
  const got = server.received[0]!
  // (nodemailer writes the domain in lower case, as DNS reads it anyway)
  expect(got.envelopeTo.map((a) => a.toLowerCase())).toEqual(['player.one@example.com'])
  expect(got.envelopeFrom).toBe('no-reply@duel.example')
  expect(got.header('from')).toBe(FROM)
  expect(got.header('to')?.toLowerCase()).toBe('player.one@example.com')
  expect(got.header('subject')).toBe('Your Duel Arena verification code')
  expect(got.header('message-id')).toBe(`<${mail.id}@duel.example>`)
  expect(got.header('auto-submitted')).toBe('auto-generated')
  expect(new Date(got.header('date')!).getTime()).toBe(Math.floor(mail.createdAt.getTime() / 1000) * 1000)
  expect(got.text).toBe(mail.textBody)
  expect(got.text).toContain('ABCDE-FGH12')
  expect(got.html).toBe(mail.htmlBody)
  expect(got.html).toContain('<strong>ABCDE-FGH12</strong>')

  const sent = await row(ctx, mail.id)
  expect({ status: sent.status, attempts: sent.attempts, sentAt: sent.sentAt, lastError: sent.lastError }).toEqual({ status: 'sent', attempts: 1, sentAt: ctx.clock.now(), lastError: null })
  // Delivered, its code is no longer kept in the clear: the bodies are erased, the subject stays.
  expect({ text: sent.textBody, html: sent.htmlBody, subject: sent.subject }).toEqual({ text: '', html: '', subject: 'Your Duel Arena verification code' })

  // Nothing is due any more, however late it gets.
  ctx.clock.advance(RETRY_CAP_MS * 4)
  expect(await sender.deliverDue()).toEqual({ sent: 0, failed: 0, retried: 0 })
  expect(server.offered).toBe(1)

  // The address is personal data: debug may name it, info and above never; no line carries the code.
  expect(logs().filter((l) => l.level !== 'debug').map((l) => l.msg)).toEqual(['mail sent'])
  expect(logs().find((l) => l.msg === 'mail sent')).toMatchObject({ mailId: mail.id, kind: 'verify_email', attempt: 1 })
  for (const line of lines.filter((l) => !l.includes('"level":"debug"'))) expect(line.toLowerCase()).not.toContain('player.one@example.com')
  expect(lines.join('\n')).not.toContain('ABCDE-FGH12')
})

test('a server that answers 451 for a while: the mail stays queued with its attempts and back-off, then arrives exactly once', async () => {
  const ctx = await app()
  const to = 'grey@example.com'
  // The refusal echoes the recipient, as real servers do.
  const server = await smtp({ verdict: (n) => (n <= 2 ? { code: 451, message: `4.7.1 <${to}>: greylisted, try again later` } : null) })
  const { sender, lines, logs } = delivery(ctx, `smtp://127.0.0.1:${server.port}`)
  const mail = await queue(ctx, to)
  const start = ctx.clock.now().getTime()

  expect(await sender.deliverDue()).toEqual({ sent: 0, failed: 0, retried: 1 })
  let now = await row(ctx, mail.id)
  expect({ status: now.status, attempts: now.attempts, next: now.nextAttemptAt.getTime() - start }).toEqual({ status: 'queued', attempts: 1, next: RETRY_BASE_MS })
  expect(now.lastError).toContain('451')
  expect(now.lastError).not.toContain(to)

  // Not due before its time: the server hears nothing.
  ctx.clock.advance(RETRY_BASE_MS - 1)
  expect(await sender.deliverDue()).toEqual({ sent: 0, failed: 0, retried: 0 })
  expect(server.offered).toBe(1)

  ctx.clock.advance(1)
  expect(await sender.deliverDue()).toEqual({ sent: 0, failed: 0, retried: 1 })
  now = await row(ctx, mail.id)
  expect({ attempts: now.attempts, next: now.nextAttemptAt.getTime() - ctx.clock.now().getTime() }).toEqual({ attempts: 2, next: 2 * RETRY_BASE_MS })

  ctx.clock.advance(2 * RETRY_BASE_MS)
  expect(await sender.deliverDue()).toEqual({ sent: 1, failed: 0, retried: 0 })
  for (let i = 0; i < 3; i++) {
    ctx.clock.advance(RETRY_CAP_MS)
    await sender.deliverDue()
  }
  expect(server.received).toHaveLength(1)
  expect(server.offered).toBe(3)
  expect((await row(ctx, mail.id)).status).toBe('sent')
  expect((await row(ctx, mail.id)).attempts).toBe(3)

  const warnings = logs().filter((l) => l.level === 'warn')
  expect(warnings).toHaveLength(2)
  expect(warnings[0]).toMatchObject({ msg: 'mail delivery failed, will retry', mailId: mail.id, kind: 'test', attempt: 1 })
  expect(warnings[1]).toMatchObject({ attempt: 2 })
  expect(String(warnings[0]!.error)).toContain('451')
  expect(String(warnings[0]!.error)).toContain('[redacted]')
  expect(lines.filter((l) => !l.includes('"level":"debug"')).join('\n')).not.toContain(to)
})

test('a server not listening yet: the attempt is counted, the mail waits, and arrives once the server is up', async () => {
  const ctx = await app()
  const port = await freePort()
  const { sender } = delivery(ctx, `smtp://127.0.0.1:${port}`)
  const first = await queue(ctx, 'early@example.com')
  const second = await queue(ctx, 'later@example.com')

  // A connection that fails would fail the next mail too: the tick stops at the first.
  expect(await sender.deliverDue()).toEqual({ sent: 0, failed: 0, retried: 1 })
  const failed = await row(ctx, first.id)
  expect({ status: failed.status, attempts: failed.attempts }).toEqual({ status: 'queued', attempts: 1 })
  expect(failed.nextAttemptAt.getTime()).toBeGreaterThan(ctx.clock.now().getTime())
  expect(failed.lastError).toMatch(/ECONNECTION|ECONNREFUSED/)
  expect((await row(ctx, second.id)).attempts).toBe(0)

  const server = await smtp({ port })
  ctx.clock.advance(RETRY_BASE_MS)
  expect(await sender.deliverDue()).toEqual({ sent: 2, failed: 0, retried: 0 })
  ctx.clock.advance(RETRY_CAP_MS)
  expect(await sender.deliverDue()).toEqual({ sent: 0, failed: 0, retried: 0 })
  expect(server.received.map((m) => m.envelopeTo[0]).sort()).toEqual(['early@example.com', 'later@example.com'])
})

test('a permanent 550 fails the mail for good: never offered again; the next mail still goes', async () => {
  const ctx = await app()
  const server = await smtp({ verdict: (n) => (n === 1 ? { code: 550, message: '5.1.1 mailbox unavailable' } : null) })
  const { sender, logs } = delivery(ctx, `smtp://127.0.0.1:${server.port}`)
  const doomed = await queue(ctx, 'gone@example.com')
  const fine = await queue(ctx, 'fine@example.com')

  expect(await sender.deliverDue()).toEqual({ sent: 1, failed: 1, retried: 0 })
  const failed = await row(ctx, doomed.id)
  expect({ status: failed.status, attempts: failed.attempts }).toEqual({ status: 'failed', attempts: 1 })
  expect(failed.lastError).toContain('550')
  expect([failed.textBody, failed.htmlBody]).toEqual(['', ''])
  expect((await row(ctx, fine.id)).status).toBe('sent')

  for (let i = 0; i < 3; i++) {
    ctx.clock.advance(RETRY_CAP_MS)
    expect(await sender.deliverDue()).toEqual({ sent: 0, failed: 0, retried: 0 })
  }
  expect(server.offered).toBe(2)
  expect(server.received.map((m) => m.envelopeTo[0])).toEqual(['fine@example.com'])
  expect(logs().find((l) => l.level === 'warn')).toMatchObject({ msg: 'mail refused for good, not retried', mailId: doomed.id, attempt: 1 })

  // An address nodemailer cannot send to at all fails the same way, without a word to the server.
  const hopeless = await queue(ctx, 'not an address')
  expect(await sender.deliverDue()).toEqual({ sent: 0, failed: 1, retried: 0 })
  expect((await row(ctx, hopeless.id)).status).toBe('failed')
  expect(server.offered).toBe(2)
})

test('a 5xx to our own MAIL FROM is the settings\' fault, not the mail\'s: retried', async () => {
  const ctx = await app()
  const server = await smtp({ refuseSender: { code: 553, message: '5.7.1 sender not allowed to relay' } })
  const { sender } = delivery(ctx, `smtp://127.0.0.1:${server.port}`)
  const mail = await queue(ctx, 'relay@example.com')
  expect(await sender.deliverDue()).toEqual({ sent: 0, failed: 0, retried: 1 })
  const after = await row(ctx, mail.id)
  expect({ status: after.status, attempts: after.attempts }).toEqual({ status: 'queued', attempts: 1 })
  expect(after.lastError).toContain('553')
})

test('credentials in the URL log in (percent-encoded too); a wrong password is retried and written nowhere', async () => {
  const ctx = await app()
  const pass = 'p@ss:w0rd/Secret'
  const server = await smtp({ auth: { user: 'mailer', pass } })
  const good = delivery(ctx, `smtp://mailer:${encodeURIComponent(pass)}@127.0.0.1:${server.port}`)
  await queue(ctx, 'auth@example.com')
  expect(await good.sender.deliverDue()).toEqual({ sent: 1, failed: 0, retried: 0 })
  expect(server.received[0]!.user).toBe('mailer')
  expect(server.logins).toEqual([{ user: 'mailer', ok: true }])

  const wrongPass = 'Wr0ng-Secret-Pass'
  const bad = delivery(ctx, `smtp://mailer:${wrongPass}@127.0.0.1:${server.port}`)
  const mail = await queue(ctx, 'auth2@example.com')
  // A refused login is the settings' fault, not this mail's: retried.
  expect(await bad.sender.deliverDue()).toEqual({ sent: 0, failed: 0, retried: 1 })
  const failed = await row(ctx, mail.id)
  expect({ status: failed.status, attempts: failed.attempts }).toEqual({ status: 'queued', attempts: 1 })
  expect(failed.lastError).toContain('EAUTH')
  for (const text of [failed.lastError!, ...good.lines, ...bad.lines, ctx.logText()]) {
    expect(text).not.toContain(pass)
    expect(text).not.toContain(encodeURIComponent(pass))
    expect(text).not.toContain(wrongPass)
  }
  expect(server.received).toHaveLength(1)
})

test('smtps:// is TLS from the first byte; smtp:// upgrades with STARTTLS when the server offers it', async () => {
  const ctx = await app()
  // smtp-server's own certificate is self-signed: the URL's tls.* options reach the TLS layer.
  const implicit = await smtp({ tls: 'tls' })
  await queue(ctx, 'tls@example.com')
  expect(await delivery(ctx, `smtps://127.0.0.1:${implicit.port}?tls.rejectUnauthorized=false`).sender.deliverDue()).toMatchObject({ sent: 1 })
  expect(implicit.received[0]!.secure).toBe(true)

  const upgraded = await smtp({ tls: 'starttls' })
  await queue(ctx, 'starttls@example.com')
  expect(await delivery(ctx, `smtp://127.0.0.1:${upgraded.port}?tls.rejectUnauthorized=false`).sender.deliverDue()).toMatchObject({ sent: 1 })
  expect(upgraded.received[0]!.secure).toBe(true)

  // Without the opt-out a self-signed certificate is refused (and the mail waits).
  const strict = await smtp({ tls: 'starttls' })
  const mail = await queue(ctx, 'strict@example.com')
  expect(await delivery(ctx, `smtp://127.0.0.1:${strict.port}`).sender.deliverDue()).toEqual({ sent: 0, failed: 0, retried: 1 })
  expect((await row(ctx, mail.id)).status).toBe('queued')
  expect(strict.received).toHaveLength(0)
})

test('the database failing after the 250: the mail is marked at the next tick, never sent again', async () => {
  const ctx = await app()
  const server = await smtp()
  let failWrites = 1
  // The real storage, whose next write fails as a lost database would.
  const flaky: Storage = Object.create(ctx.storage, {
    write: {
      value: (work: Parameters<Storage['write']>[0]) => {
        if (failWrites-- > 0) return Promise.reject(new StorageUnavailableError('SQLITE_IOERR', { cause: new Error('disk gone') }))
        return ctx.storage.write(work)
      },
    },
  })
  const { sender } = delivery(ctx, `smtp://127.0.0.1:${server.port}`, flaky)
  const mail = await queue(ctx, 'once@example.com')

  await expect(sender.deliverDue()).rejects.toThrow('storage unavailable')
  expect(server.received).toHaveLength(1)
  expect((await row(ctx, mail.id)).status).toBe('queued')

  expect(await sender.deliverDue()).toEqual({ sent: 0, failed: 0, retried: 0 })
  expect((await row(ctx, mail.id)).status).toBe('sent')
  expect(server.offered).toBe(1)
})

test('stop abandons a send the server does not answer: it returns at once and the mail stays queued', async () => {
  const ctx = await app()
  const server = await smtp({ stall: () => true })
  const { sender } = delivery(ctx, `smtp://127.0.0.1:${server.port}`)
  const mail = await queue(ctx, 'stalled@example.com')
  const running = sender.deliverDue()
  while (server.offered === 0) await Bun.sleep(5)
  const started = performance.now()
  sender.stop()
  expect(await running).toEqual({ sent: 0, failed: 0, retried: 1 })
  expect(performance.now() - started).toBeLessThan(1000)
  const after = await row(ctx, mail.id)
  expect({ status: after.status, attempts: after.attempts }).toEqual({ status: 'queued', attempts: 0 })
})

test('the back-off doubles from 5 s and stops at 15 minutes', () => {
  expect([0, 1, 2, 3, 7, 8, 50, 5000].map(retryDelayMs)).toEqual([5_000, 10_000, 20_000, 40_000, 640_000, RETRY_CAP_MS, RETRY_CAP_MS, RETRY_CAP_MS])
})
