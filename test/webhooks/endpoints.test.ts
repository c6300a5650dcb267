// Webhook endpoints through the admin API (contract §18), on both engines:
// created with a `whsec_` secret answered once (stored sealed, never listed),
// listed, changed field by field, enabled and disabled (with the reason),
// deleted (204, then 404), their secret rotated (the old one signing 24 h
// more); bad URLs, types and descriptions are 422 envelopes; a private,
// loopback, link-local or unresolvable destination is 422
// destination_not_allowed unless ARENA_WEBHOOKS_ALLOW_PRIVATE; the 21st
// endpoint is 409 webhook_limit; lower roles are refused; an endpoint's
// deliveries are listed with their attempts, paged with `before`, and one is
// resent (audited; 409 while its endpoint is disabled; 404 unknown). Every
// action is in the audit log.
import { afterAll, describe, expect, test } from 'bun:test'
import { postJson, req, type TestApp } from '../helpers/app'
import { admin, createArenaApp } from '../helpers/arena'
import { bearer, signedInOperator } from '../helpers/operators'
import { publishMatchDecided, recordAttempt } from '../helpers/webhook-deliveries'
import { sealedSecretName, webhookSealKey } from '../../src/modules/webhooks/secret'
import type { Webhook, WebhookDelivery } from '../../src/modules/webhooks/model'

// The apps of this file: one allowing private destinations (its endpoints are on loopback), one as in production.
const app = await createArenaApp({ ARENA_WEBHOOKS_ALLOW_PRIVATE: 'true' })
const strict = await createArenaApp()
afterAll(async () => {
  await app.close()
  await strict.close()
})

const API = '/api/v1/admin'
/** A public address literal: checked without a resolver. */
const PUBLIC = 'https://93.184.215.14/hooks/arena'

interface Answer {
  status: number
  body: any
}

async function send(ctx: TestApp, request: Request): Promise<Answer> {
  const res = await ctx.handle(request)
  const text = await res.text()
  return { status: res.status, body: text === '' ? null : JSON.parse(text) }
}
const post = (ctx: TestApp, path: string, body: unknown = {}, headers = admin) => send(ctx, postJson(API + path, body, headers))
const get = (ctx: TestApp, path: string, headers = admin) => send(ctx, req(API + path, { headers }))
const patch = (ctx: TestApp, path: string, body: unknown) => send(ctx, new Request(`http://localhost${API}${path}`, { method: 'PATCH', headers: { 'content-type': 'application/json', ...admin }, body: JSON.stringify(body) }))
const del = (ctx: TestApp, path: string) => send(ctx, req(API + path, { method: 'DELETE', headers: admin }))

const audited = async (ctx: TestApp, target: string) => (await ctx.storage.read.audit.auditAfter(0, 1000)).filter((r) => r.target === target).map((r) => [r.action, r.details])
const refusal = (answer: Answer) => [answer.status, answer.body?.error?.code, answer.body?.error?.status]

async function create(ctx: TestApp, body: Record<string, unknown>): Promise<{ webhook: Webhook; secret: string }> {
  const created = await post(ctx, '/webhooks', body)
  expect(created.status).toBe(201)
  return created.body
}

describe('endpoints', () => {
  test('created with its secret answered once (sealed at rest, never listed); listed; each field changed; enabled and disabled with the reason; audited', async () => {
    const created = await post(app, '/webhooks', { url: 'http://127.0.0.1:9/hook', types: ['match.decided', 'user.created', 'match.decided'], description: '  Studio backend ' })
    expect(created.status).toBe(201)
    const { webhook, secret } = created.body as { webhook: Webhook; secret: string }
    const now = app.clock.now().toISOString()
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(webhook).toEqual({
      id: expect.stringMatching(/^whk_/),
      url: 'http://127.0.0.1:9/hook',
      types: ['user.created', 'match.decided'],
      description: 'Studio backend',
      enabled: true,
      disabledReason: null,
      previousSecretExpiresAt: null,
      createdAt: now,
      updatedAt: now,
    })
    // At rest: sealed under the key derived from the chain key, named after its endpoint.
    const row = (await app.storage.read.webhooks.get(webhook.id))!
    expect(row.secretSealed).not.toContain(secret.slice(6))
    expect(await webhookSealKey(app.secrets.chainKey).open(row.secretSealed, sealedSecretName(webhook.id))).toBe(secret)

    const listed = await get(app, '/webhooks')
    expect(listed.status).toBe(200)
    expect(listed.body.webhooks).toContainEqual(webhook)
    expect(JSON.stringify(listed.body)).not.toContain(secret.slice(6))
    expect(app.logText()).not.toContain(secret.slice(6))

    app.clock.advance(1000)
    const changed = await patch(app, `/webhooks/${webhook.id}`, { url: 'http://127.0.0.1:9/other', types: ['rating.updated', 'user.banned'], description: null })
    expect(changed.status).toBe(200)
    expect(changed.body.webhook).toEqual({ ...webhook, url: 'http://127.0.0.1:9/other', types: ['user.banned', 'rating.updated'], description: null, updatedAt: app.clock.now().toISOString() })
    expect((await patch(app, `/webhooks/${webhook.id}`, { description: 'Renamed' })).body.webhook.description).toBe('Renamed')

    const disabled = await patch(app, `/webhooks/${webhook.id}`, { enabled: false })
    expect(disabled.body.webhook).toMatchObject({ enabled: false, disabledReason: 'operator' })
    const enabled = await patch(app, `/webhooks/${webhook.id}`, { enabled: true })
    expect(enabled.body.webhook).toMatchObject({ enabled: true, disabledReason: null })
    // An endpoint that answered 410 is disabled as `gone`; enabling it clears that.
    await app.storage.write((tx) => tx.webhooks.disableGone(webhook.id, app.clock.now()))
    expect((await get(app, '/webhooks')).body.webhooks.find((w: Webhook) => w.id === webhook.id)).toMatchObject({ enabled: false, disabledReason: 'gone' })
    expect((await patch(app, `/webhooks/${webhook.id}`, { enabled: true })).body.webhook).toMatchObject({ enabled: true, disabledReason: null })

    expect(refusal(await patch(app, `/webhooks/${webhook.id}`, {}))).toEqual([422, 'validation_failed', 422])
    expect(refusal(await patch(app, '/webhooks/whk_00000000000000000000000000000000', { enabled: false }))).toEqual([404, 'not_found', 404])

    expect((await audited(app, webhook.id)).map(([action]) => action)).toEqual(['webhook.create', 'webhook.update', 'webhook.update', 'webhook.update', 'webhook.update', 'webhook.update'])
    expect((await audited(app, webhook.id))[0]![1]).toEqual({ url: 'http://127.0.0.1:9/hook', types: ['user.created', 'match.decided'], description: 'Studio backend' })
    expect(JSON.stringify(await audited(app, webhook.id))).not.toContain(secret.slice(6))
  })

  test('rotate-secret: a new secret answered once; the old one becomes the previous for 24 h; a second rotation drops the older', async () => {
    const { webhook, secret: first } = await create(app, { url: 'http://127.0.0.1:9/rotate', types: ['user.created'] })
    const open = (sealed: string | null) => webhookSealKey(app.secrets.chainKey).open(sealed!, sealedSecretName(webhook.id))
    app.clock.advance(60_000)
    const rotated = await post(app, `/webhooks/${webhook.id}/rotate-secret`)
    expect(rotated.status).toBe(200)
    const second = rotated.body.secret as string
    expect(second).toMatch(/^whsec_/)
    expect(second).not.toBe(first)
    expect(rotated.body.webhook).toEqual({ ...webhook, previousSecretExpiresAt: new Date(app.clock.now().getTime() + 24 * 3600_000).toISOString(), updatedAt: app.clock.now().toISOString() })
    let row = (await app.storage.read.webhooks.get(webhook.id))!
    expect([await open(row.secretSealed), await open(row.previousSecretSealed)]).toEqual([second, first])

    app.clock.advance(3600_000)
    const again = await post(app, `/webhooks/${webhook.id}/rotate-secret`)
    row = (await app.storage.read.webhooks.get(webhook.id))!
    expect([await open(row.secretSealed), await open(row.previousSecretSealed)]).toEqual([again.body.secret, second])
    expect(row.previousExpiresAt!.getTime()).toBe(app.clock.now().getTime() + 24 * 3600_000)
    expect((await get(app, '/webhooks')).body.webhooks.find((w: Webhook) => w.id === webhook.id)).not.toHaveProperty('secret')

    expect(refusal(await post(app, '/webhooks/whk_00000000000000000000000000000000/rotate-secret'))).toEqual([404, 'not_found', 404])
    expect((await audited(app, webhook.id)).map(([action]) => action)).toEqual(['webhook.create', 'webhook.rotate_secret', 'webhook.rotate_secret'])
  })

  test('a bad URL, types or description is a 422 envelope naming the field; nothing is created', async () => {
    const before = await app.storage.read.webhooks.count()
    const bad: [Record<string, unknown>, string][] = [
      [{ url: 'ftp://93.184.215.14/x', types: ['user.created'] }, 'body/url'],
      [{ url: 'https://user:pw@93.184.215.14/x', types: ['user.created'] }, 'body/url'],
      [{ url: 'https://93.184.215.14/x#part', types: ['user.created'] }, 'body/url'],
      [{ url: 'not a url', types: ['user.created'] }, 'body/url'],
      [{ url: `https://93.184.215.14/${'a'.repeat(2048)}`, types: ['user.created'] }, 'url'],
      [{ url: PUBLIC, types: [] }, 'types'],
      [{ url: PUBLIC, types: ['user.deleted'] }, 'types'],
      [{ url: PUBLIC }, 'types'],
      [{ url: PUBLIC, types: ['user.created'], description: 'd'.repeat(201) }, 'description'],
      [{ types: ['user.created'] }, 'url'],
    ]
    for (const [body, field] of bad) {
      const answer = await post(app, '/webhooks', body)
      expect({ body, refusal: refusal(answer) }).toEqual({ body, refusal: [422, 'validation_failed', 422] })
      expect(JSON.stringify(answer.body.error.details)).toContain(field)
    }
    const { webhook } = await create(app, { url: PUBLIC, types: ['user.created'] })
    expect(refusal(await patch(app, `/webhooks/${webhook.id}`, { url: 'javascript:alert(1)' }))).toEqual([422, 'validation_failed', 422])
    expect(refusal(await patch(app, `/webhooks/${webhook.id}`, { types: ['nope'] }))).toEqual([422, 'validation_failed', 422])
    expect(refusal(await patch(app, `/webhooks/${webhook.id}`, { enabled: 'yes' }))).toEqual([422, 'validation_failed', 422])
    expect(await app.storage.read.webhooks.count()).toBe(before + 1)
    expect((await app.storage.read.webhooks.get(webhook.id))!.url).toBe(PUBLIC)
  })
})

describe('destinations', () => {
  test('private, loopback, link-local, localhost and unresolvable hosts are 422 destination_not_allowed, at creation and on a URL change; allowed with ARENA_WEBHOOKS_ALLOW_PRIVATE', async () => {
    for (const url of ['http://127.0.0.1:8080/hook', 'http://localhost/hook', 'http://10.1.2.3/hook', 'http://192.168.0.10/hook', 'http://169.254.169.254/latest', 'http://[::1]/hook', 'http://[::ffff:127.0.0.1]/hook', 'https://no-such-host.invalid/hook']) {
      const answer = await post(strict, '/webhooks', { url, types: ['user.created'] })
      expect({ url, refusal: refusal(answer) }).toEqual({ url, refusal: [422, 'destination_not_allowed', 422] })
    }
    expect((await post(strict, '/webhooks', { url: 'https://no-such-host.invalid/', types: ['user.created'] })).body.error.message).toContain('does not resolve')
    expect((await post(strict, '/webhooks', { url: 'http://localhost/', types: ['user.created'] })).body.error.message).toContain('127.0.0.1')
    expect(await strict.storage.read.webhooks.count()).toBe(0)

    const { webhook } = await create(strict, { url: PUBLIC, types: ['user.created'] })
    expect(refusal(await patch(strict, `/webhooks/${webhook.id}`, { url: 'http://10.0.0.1/x' }))).toEqual([422, 'destination_not_allowed', 422])
    expect((await strict.storage.read.webhooks.get(webhook.id))!.url).toBe(PUBLIC)
    expect((await del(strict, `/webhooks/${webhook.id}`)).status).toBe(204)

    // Allowed where the setting says so (tests, a backend on premises).
    const allowed = await create(app, { url: 'http://localhost:9/hook', types: ['user.created'] })
    expect(allowed.webhook.url).toBe('http://localhost:9/hook')
    // Still refused when it does not resolve at all.
    expect(refusal(await post(app, '/webhooks', { url: 'https://no-such-host.invalid/', types: ['user.created'] }))).toEqual([422, 'destination_not_allowed', 422])
  })

  test('at most 20 endpoints: the 21st is 409 webhook_limit; delete is 204, then 404, and frees a place', async () => {
    const existing = await strict.storage.read.webhooks.count()
    const made: Webhook[] = []
    for (let i = existing; i < 20; i++) made.push((await create(strict, { url: `${PUBLIC}/${i}`, types: ['match.decided'] })).webhook)
    expect(refusal(await post(strict, '/webhooks', { url: PUBLIC, types: ['match.decided'] }))).toEqual([409, 'webhook_limit', 409])
    expect(await strict.storage.read.webhooks.count()).toBe(20)

    const doomed = made[0]!
    const [deliveryId] = await publishMatchDecided(strict)
    await recordAttempt(strict, deliveryId!, { statusCode: 500, error: 'http_500', retryInMs: 5000 })
    const deleted = await del(strict, `/webhooks/${doomed.id}`)
    expect([deleted.status, deleted.body]).toEqual([204, null])
    expect(refusal(await del(strict, `/webhooks/${doomed.id}`))).toEqual([404, 'not_found', 404])
    expect(refusal(await get(strict, `/webhooks/${doomed.id}/deliveries`))).toEqual([404, 'not_found', 404])
    // Its deliveries (and their attempts) went with it.
    expect(await strict.storage.read.webhooks.delivery(deliveryId!)).toBeNull()
    expect((await audited(strict, doomed.id)).map(([action]) => action)).toEqual(['webhook.create', 'webhook.delete'])
    expect((await post(strict, '/webhooks', { url: PUBLIC, types: ['match.decided'] })).status).toBe(201)
  })
})

describe('roles', () => {
  test('every webhook route needs the admin role: a finance operator is refused with 403 and nothing changes', async () => {
    const { webhook } = await create(app, { url: 'http://127.0.0.1:9/roles', types: ['user.created'] })
    const { token } = await signedInOperator(app, 'finance')
    const as = bearer(token)
    const attempts = [
      postJson(`${API}/webhooks`, { url: PUBLIC, types: ['user.created'] }, as),
      req(`${API}/webhooks`, { headers: as }),
      new Request(`http://localhost${API}/webhooks/${webhook.id}`, { method: 'PATCH', headers: { 'content-type': 'application/json', ...as }, body: '{"enabled":false}' }),
      req(`${API}/webhooks/${webhook.id}`, { method: 'DELETE', headers: as }),
      postJson(`${API}/webhooks/${webhook.id}/rotate-secret`, {}, as),
      req(`${API}/webhooks/${webhook.id}/deliveries`, { headers: as }),
      postJson(`${API}/webhook-deliveries/whd_00000000000000000000000000000000/resend`, {}, as),
    ]
    for (const request of attempts) expect(refusal(await send(app, request))).toEqual([403, 'forbidden', 403])
    expect(await app.services.webhooks.get(webhook.id)).toEqual(webhook)
  })
})

describe('deliveries', () => {
  test("an endpoint's deliveries with their attempts, newest first, paged with before; a resend (audited) puts one back in the queue; 404 unknown; 409 while disabled", async () => {
    const { webhook } = await create(app, { url: 'http://127.0.0.1:9/deliveries', types: ['match.decided'] })
    const ids: string[] = []
    for (let i = 0; i < 5; i++) {
      const queued = await publishMatchDecided(app, `mat_deliveries_${i}`)
      ids.push(...(await Promise.all(queued.map((id) => app.storage.read.webhooks.delivery(id)))).filter((d) => d!.webhookId === webhook.id).map((d) => d!.id))
      app.clock.advance(1000)
    }
    expect(ids).toHaveLength(5)
    const [delivered, retried, failed] = [ids[0]!, ids[1]!, ids[2]!]
    await recordAttempt(app, delivered, { statusCode: 200, error: null })
    await recordAttempt(app, retried, { statusCode: 500, error: 'http_500', retryInMs: 5000, durationMs: 40 })
    app.clock.advance(5000)
    await recordAttempt(app, retried, { statusCode: null, error: 'timeout', retryInMs: 10_000, durationMs: 10_000 })
    await recordAttempt(app, failed, { statusCode: 503, error: 'http_503' })

    const pages: WebhookDelivery[][] = []
    let before: string | null = null
    do {
      const page: Answer = await get(app, `/webhooks/${webhook.id}/deliveries?limit=2${before === null ? '' : `&before=${before}`}`)
      expect(page.status).toBe(200)
      pages.push(page.body.deliveries)
      before = page.body.next
    } while (before !== null)
    expect(pages.map((p) => p.length)).toEqual([2, 2, 1])
    const all = pages.flat()
    expect(all.map((d) => d.id)).toEqual([...ids].sort().reverse())
    expect((await get(app, `/webhooks/${webhook.id}/deliveries`)).body).toEqual({ deliveries: all, next: null })

    const view = (id: string) => all.find((d) => d.id === id)!
    const stored = (await app.storage.read.webhooks.delivery(retried))!
    expect(view(retried)).toEqual({
      id: retried,
      webhookId: webhook.id,
      messageId: stored.messageId,
      type: 'match.decided',
      status: 'pending',
      createdAt: stored.createdAt.toISOString(),
      deliveredAt: null,
      nextAttemptAt: stored.nextAttemptAt.toISOString(),
      lastError: 'timeout',
      payload: JSON.parse(stored.body),
      attempts: [
        { attempt: 1, at: expect.any(String), durationMs: 40, statusCode: 500, error: 'http_500' },
        { attempt: 2, at: expect.any(String), durationMs: 10_000, statusCode: null, error: 'timeout' },
      ],
    })
    expect(view(retried).messageId).toMatch(/^msg_/)
    expect(view(retried).payload).toMatchObject({ type: 'match.decided', data: { matchId: 'mat_deliveries_1' } })
    expect(view(delivered)).toMatchObject({ status: 'delivered', deliveredAt: expect.any(String), nextAttemptAt: null, lastError: null, attempts: [{ attempt: 1, statusCode: 200, error: null }] })
    expect(view(failed)).toMatchObject({ status: 'failed', nextAttemptAt: null, lastError: 'http_503', attempts: [{ attempt: 1, statusCode: 503, error: 'http_503' }] })
    expect(view(ids[4]!)).toMatchObject({ status: 'pending', attempts: [] })
    expect(refusal(await get(app, `/webhooks/${webhook.id}/deliveries?limit=0`))).toEqual([422, 'validation_failed', 422])
    expect(refusal(await get(app, `/webhooks/${webhook.id}/deliveries?limit=1.5`))).toEqual([422, 'validation_failed', 422])
    expect(refusal(await get(app, '/webhooks/whk_00000000000000000000000000000000/deliveries'))).toEqual([404, 'not_found', 404])

    app.clock.advance(1000)
    const resent = await post(app, `/webhook-deliveries/${failed}/resend`)
    expect(resent.status).toBe(200)
    expect(resent.body.delivery).toEqual({ ...view(failed), status: 'pending', nextAttemptAt: app.clock.now().toISOString() })
    // Due now: the delivery loop picks it up with the same webhook-id.
    expect(await app.storage.read.webhooks.dueFor(webhook.id, app.clock.now(), 10)).toContainEqual(expect.objectContaining({ id: failed, messageId: view(failed).messageId }))
    expect(await audited(app, failed)).toEqual([['webhook_delivery.resend', { webhookId: webhook.id, messageId: view(failed).messageId, status: 'failed' }]])

    expect(refusal(await post(app, '/webhook-deliveries/whd_00000000000000000000000000000000/resend'))).toEqual([404, 'not_found', 404])
    await patch(app, `/webhooks/${webhook.id}`, { enabled: false })
    expect(refusal(await post(app, `/webhook-deliveries/${delivered}/resend`))).toEqual([409, 'webhook_disabled', 409])
    expect((await app.storage.read.webhooks.delivery(delivered))!.status).toBe('delivered')
    expect(await audited(app, delivered)).toEqual([])
  })
})
