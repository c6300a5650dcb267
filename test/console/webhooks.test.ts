// The console's Webhooks section (contract §18) over app.handle, on both
// engines: admin only (lower roles neither see it nor reach a page or form);
// an endpoint added with its signing secret on the answering page, once
// (never in a redirect, never on a later page); a refused URL comes back
// saying why, nothing added; the endpoint's page changes its URL, types and
// description, disables and enables it, rotates its secret (after a
// confirmation; the new secret shown once), lists its deliveries with their
// attempts and sends one again, and deletes it after a confirmation page.
// Every form needs its CSRF token; every action is audited via the console.
import { afterAll, expect, test } from 'bun:test'
import { createArenaApp } from '../helpers/arena'
import { consoleAs, textOf } from '../helpers/operators'
import { publishMatchDecided, recordAttempt } from '../helpers/webhook-deliveries'
import { sealedSecretName, webhookSealKey } from '../../src/modules/webhooks/secret'

const app = await createArenaApp({ ARENA_WEBHOOKS_ALLOW_PRIVATE: 'true' })
afterAll(() => app.close())

const SECTION = '/console/webhooks'
const audited = async (target: string) => (await app.storage.read.audit.auditAfter(0, 500)).filter((r) => r.target === target).map((r) => [r.action, r.via])
const storedSecret = async (id: string) => webhookSealKey(app.secrets.chainKey).open((await app.storage.read.webhooks.get(id))!.secretSealed, sealedSecretName(id))
const secretOn = (html: string) => /whsec_[A-Za-z0-9+/=]+/.exec(html)?.[0] ?? null

test('lower roles neither see the section nor reach its pages and forms', async () => {
  for (const role of ['viewer', 'moderator', 'finance'] as const) {
    const operator = await consoleAs(app, role)
    expect((await operator.get('/console')).html).not.toContain(`href="${SECTION}"`)
    expect((await operator.get(SECTION)).status).toBe(403)
    expect((await operator.post(SECTION, { url: 'http://127.0.0.1:9/x', 'type:user.created': 'on' })).status).toBe(403)
  }
  expect(await app.storage.read.webhooks.count()).toBe(0)
  const admin = await consoleAs(app, 'admin')
  expect((await admin.get('/console')).html).toContain(`href="${SECTION}"`)
})

test('an admin adds an endpoint (the secret on the answering page, once), changes, disables, enables it, sends a delivery again, rotates the secret and deletes it, each confirmed where it cannot be undone, audited via the console', async () => {
  const admin = await consoleAs(app, 'admin')
  expect(textOf((await admin.get(SECTION)).html)).toContain('No webhook endpoint yet.')

  // No CSRF token: nothing added.
  expect((await admin.post(SECTION, { url: 'http://127.0.0.1:9/hook', 'type:match.decided': 'on' }, null)).status).toBe(403)
  // Refused by the service: the form's page again, saying why; nothing added.
  const refused = await admin.post(SECTION, { url: 'https://no-such-host.invalid/hook', 'type:match.decided': 'on' })
  expect(refused.status).toBe(422)
  expect(textOf(refused.html)).toContain('does not resolve')
  const noTypes = await admin.post(SECTION, { url: 'http://127.0.0.1:9/hook' })
  expect([noTypes.status, textOf(noTypes.html)]).toEqual([422, expect.stringContaining('types: At least one type')])
  expect(await app.storage.read.webhooks.count()).toBe(0)

  const added = await admin.post(SECTION, { url: 'http://127.0.0.1:9/hook', 'type:match.decided': 'on', 'type:user.created': 'on', description: 'Discord bot' })
  expect([added.status, added.location]).toEqual([201, null])
  const [webhook] = await app.services.webhooks.list()
  expect(webhook).toMatchObject({ url: 'http://127.0.0.1:9/hook', types: ['user.created', 'match.decided'], description: 'Discord bot', enabled: true })
  const secret = secretOn(added.html)
  expect(secret).toBe(await storedSecret(webhook!.id))
  expect(textOf(added.html)).toContain('Added the webhook endpoint: copy its signing secret below now')
  // Never again: not on the list, not on the endpoint's page.
  const page = `${SECTION}/${webhook!.id}`
  expect(secretOn((await admin.get(SECTION)).html)).toBeNull()
  const shown = await admin.get(page)
  expect(shown.status).toBe(200)
  expect(secretOn(shown.html)).toBeNull()
  expect(textOf(shown.html)).toContain('Types user.created, match.decided')
  expect(textOf(shown.html)).toContain('No delivery.')

  const saved = await admin.post(page, { url: 'http://127.0.0.1:9/other', 'type:rating.updated': 'on', description: '' })
  expect(saved.location).toBe(`${page}?notice=webhook_saved`)
  expect(await app.services.webhooks.get(webhook!.id)).toMatchObject({ url: 'http://127.0.0.1:9/other', types: ['rating.updated'], description: null })
  const badUrl = await admin.post(page, { url: 'ftp://127.0.0.1/x', 'type:rating.updated': 'on' })
  expect(textOf((await admin.get(badUrl.location!)).html)).toContain('url: An http or https URL')
  await admin.post(page, { url: 'http://127.0.0.1:9/other', 'type:match.decided': 'on' })

  // Deliveries with their attempts, each with a button to send it again.
  const [first] = await publishMatchDecided(app)
  const [second] = await publishMatchDecided(app)
  await recordAttempt(app, first!, { statusCode: 500, error: 'http_500' })
  const listed = textOf((await admin.get(page)).html)
  expect(listed).toContain('match.decided failed')
  expect(listed).toContain('http_500 (HTTP 500), 12 ms')
  expect(listed).toContain((await app.storage.read.webhooks.delivery(second!))!.messageId)
  expect((await admin.get(page)).html).toContain(`action="/console/webhook-deliveries/${first}/resend"`)

  const disabled = await admin.post(`${page}/enabled`, { enabled: 'false' })
  expect(disabled.location).toBe(`${page}?notice=webhook_disabled`)
  const whileDisabled = await admin.get(page)
  expect(textOf(whileDisabled.html)).toContain('disabled by an operator')
  expect(whileDisabled.html).not.toContain('/resend"')
  const refusedResend = await admin.post(`/console/webhook-deliveries/${first}/resend`, {})
  expect(textOf((await admin.get(refusedResend.location!)).html)).toContain('Its webhook endpoint is disabled')
  expect((await app.storage.read.webhooks.delivery(first!))!.status).toBe('failed')

  expect((await admin.post(`${page}/enabled`, { enabled: 'true' })).location).toBe(`${page}?notice=webhook_enabled`)
  const resent = await admin.post(`/console/webhook-deliveries/${first}/resend`, {})
  expect(resent.location).toBe(`${page}?notice=webhook_delivery_resent#deliveries`)
  expect((await app.storage.read.webhooks.delivery(first!))!.status).toBe('pending')
  const unknown = await admin.post('/console/webhook-deliveries/whd_00000000000000000000000000000000/resend', {})
  expect(unknown.location).toStartWith(`${SECTION}?error=`)

  // Rotating asks first; the question changes nothing. The answer shows the new secret once.
  const confirmRotate = await admin.get(`${page}/rotate-secret`)
  expect(textOf(confirmRotate.html)).toContain('Rotate the secret of http://127.0.0.1:9/other?')
  expect(await storedSecret(webhook!.id)).toBe(secret!)
  const rotated = await admin.post(`${page}/rotate-secret`, {})
  expect([rotated.status, rotated.location]).toEqual([200, null])
  const fresh = secretOn(rotated.html)
  expect(fresh).not.toBe(secret)
  expect(fresh).toBe(await storedSecret(webhook!.id))
  expect(textOf(rotated.html)).toContain('The previous secret keeps signing beside it for 24 hours')
  expect(secretOn((await admin.get(page)).html)).toBeNull()
  expect((await admin.post(`${page}/rotate-secret`, {}, null)).status).toBe(403)

  // Deleting asks first, too.
  const confirmDelete = await admin.get(`${page}/delete`)
  expect(textOf(confirmDelete.html)).toContain('Delete the webhook endpoint http://127.0.0.1:9/other?')
  expect(await app.storage.read.webhooks.count()).toBe(1)
  expect((await admin.get(`${SECTION}/whk_00000000000000000000000000000000/delete`)).status).toBe(404)
  const deleted = await admin.post(`${page}/delete`, {})
  expect(deleted.location).toBe(`${SECTION}?notice=webhook_deleted`)
  expect(await app.storage.read.webhooks.count()).toBe(0)
  expect((await admin.get(page)).status).toBe(404)

  expect(await audited(webhook!.id)).toEqual([
    ['webhook.create', 'console'],
    ['webhook.update', 'console'],
    ['webhook.update', 'console'],
    ['webhook.update', 'console'],
    ['webhook.update', 'console'],
    ['webhook.rotate_secret', 'console'],
    ['webhook.delete', 'console'],
  ])
  expect(await audited(first!)).toEqual([['webhook_delivery.resend', 'console']])
})
