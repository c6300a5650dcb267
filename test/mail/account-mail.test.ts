// The §8 flows end to end through a real SMTP server: the code a player types
// is the one that arrived by mail, not one read from the database. Register →
// the verification mail arrives → verify with its code; forgot → the reset
// mail arrives → reset with its code → the new password logs in.
import { afterEach, expect, test } from 'bun:test'
import { MailDelivery } from '../../src/modules/mail/delivery'
import { createLogger } from '../../src/shared/logger'
import { bearer, login, registerUser } from '../helpers/auth'
import { forgotPassword, resetPassword, verifyEmail } from '../helpers/account'
import { createArenaApp } from '../helpers/arena'
import { codeIn } from '../helpers/mail'
import { startSmtp, type ReceivedMail } from '../helpers/smtp'
import { req } from '../helpers/app'

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

async function world() {
  const smtp = await startSmtp()
  cleanups.push(() => smtp.close())
  const url = `smtp://127.0.0.1:${smtp.port}`
  const app = await createArenaApp({ ARENA_SMTP_URL: url, ARENA_PRODUCT_NAME: 'Duel Arena', ARENA_PUBLIC_URL: 'https://duel.example' })
  cleanups.push(() => app.close())
  // What the server's mail loop runs, on the test's clock.
  const delivery = new MailDelivery({ storage: app.storage, clock: app.clock, logger: createLogger('silent'), config: { smtpUrl: url, mailFrom: app.config.mailFrom } })
  cleanups.push(async () => delivery.stop())
  const arrived = async (to: string): Promise<ReceivedMail[]> => {
    await delivery.deliverDue()
    return smtp.received.filter((mail) => mail.envelopeTo.includes(to.toLowerCase()) || mail.envelopeTo.includes(to))
  }
  return { app, arrived }
}

test('register mails a verification code over SMTP; that code verifies the email', async () => {
  const { app, arrived } = await world()
  const player = await registerUser(app)
  const mails = await arrived(player.email)
  expect(mails).toHaveLength(1)
  expect(mails[0]!.header('subject')).toBe('Your Duel Arena verification code')
  const code = codeIn({ textBody: mails[0]!.text })
  expect(mails[0]!.html).toContain(code)
  expect(mails[0]!.text).toContain(`https://duel.example/verify-email#code=${code}`)

  const tokens = await login(app, player.username)
  expect(tokens.user).toMatchObject({ emailVerified: false })
  const verified = await verifyEmail(app, tokens.accessToken, code)
  expect(verified.status).toBe(200)
  expect(((await verified.json()) as { user: { emailVerified: boolean } }).user.emailVerified).toBe(true)
  const me = (await (await app.handle(req('/api/v1/me', { headers: bearer(tokens.accessToken) }))).json()) as { user: { emailVerified: boolean } }
  expect(me.user.emailVerified).toBe(true)
})

test('forgot mails a reset code over SMTP; reset with it ends the old sessions and the new password logs in', async () => {
  const { app, arrived } = await world()
  const player = await registerUser(app)
  const before = await login(app, player.username)
  await arrived(player.email) // the verification mail

  expect((await forgotPassword(app, player.email)).status).toBe(202)
  const mails = (await arrived(player.email)).filter((mail) => mail.header('subject') === 'Reset your Duel Arena password')
  expect(mails).toHaveLength(1)
  const code = codeIn({ textBody: mails[0]!.text })

  const reset = await resetPassword(app, { email: player.email, code, newPassword: 'a brand new passphrase' })
  expect(reset.status).toBe(200)
  expect(await reset.json()).toEqual({ revoked: 1 })
  expect((await app.handle(req('/api/v1/me', { headers: bearer(before.accessToken) }))).status).toBe(401)
  await login(app, player.username, 'a brand new passphrase')
  // The mailed code worked once.
  expect((await resetPassword(app, { email: player.email, code, newPassword: 'yet another passphrase' })).status).toBe(400)
})
