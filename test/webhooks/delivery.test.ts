// The webhook delivery loop (contract §18) against real HTTP receivers on
// loopback, verified with `standardwebhooks` (the reference implementation):
// the signed body, retries with the same webhook-id and their back-off, a
// timeout, 410, secret rotation, destinations refused at the attempt,
// redirects not followed, giving up after 3 days, endpoints served in
// parallel, housekeeping and the metrics. The app's clock is manual, set to
// the real time at each test (the reference package refuses a timestamp more
// than 5 minutes away) and moved by hand for the back-off.
import { afterAll, afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { createTestApp, req } from '../helpers/app'
import { parseMetrics, type Sample } from '../helpers/metrics'
import { startWebhookReceiver, verifyDelivery, type WebhookReceiver } from '../helpers/webhook-receiver'
import { waitFor } from '../helpers/wait'
import { createEndpoint, deleteEndpoints, HOOKS_EXAMPLE_TLS, rotateEndpointSecret } from '../helpers/webhooks'
import { publishWebhook } from '../../src/modules/webhooks/publish'
import { chosenAddress, nextAttempt, pinnedTarget, retryDelayMs, WebhookDelivery } from '../../src/modules/webhooks/delivery'
import type { WebhookEvent } from '../../src/modules/webhooks/catalogue'
import { housekeeping } from '../../src/modules/events/housekeeping'
import { createLogger } from '../../src/shared/logger'
import { VERSION } from '../../src/shared/version'

const TOKEN = 'metrics-token-webhook-delivery'
const DAY = 86_400_000
const ctx = await createTestApp({ env: { ARENA_METRICS_TOKEN: TOKEN } })
const logLines: string[] = []
const logger = createLogger('debug', (line) => logLines.push(line))
const receivers: WebhookReceiver[] = []
const senders: WebhookDelivery[] = []

afterAll(() => ctx.close())
beforeEach(() => ctx.clock.set(new Date()))
afterEach(async () => {
  await Promise.all(senders.splice(0).map((sender) => sender.stop()))
  await Promise.all(receivers.splice(0).map((receiver) => receiver.stop()))
  await deleteEndpoints(ctx)
})

const receiver = (...args: Parameters<typeof startWebhookReceiver>) => {
  const started = startWebhookReceiver(...args)
  receivers.push(started)
  return started
}
const sender = (options: { allowPrivate?: boolean; timeoutMs?: number } = {}) => {
  const made = new WebhookDelivery({
    storage: ctx.storage,
    clock: ctx.clock,
    logger,
    config: { webhooksAllowPrivate: options.allowPrivate ?? true },
    chainKey: ctx.secrets.chainKey,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  })
  senders.push(made)
  return made
}
const banned = (userId: string): WebhookEvent => ({ type: 'user.banned', data: { userId, reason: 'cheating', until: null } })
const publish = (event: WebhookEvent, at = ctx.clock.now()) => ctx.storage.write((tx) => publishWebhook(tx, event, at))
const deliveriesOf = async (webhookId: string) => ctx.storage.read.webhooks.deliveriesOf(webhookId, null, 50)
const onlyDelivery = async (webhookId: string) => {
  const rows = await deliveriesOf(webhookId)
  expect(rows).toHaveLength(1)
  return rows[0]!
}
const attemptsOf = (deliveryId: string) => ctx.storage.read.webhooks.attemptsOf([deliveryId])
const scrape = async (): Promise<Sample[]> => {
  const res = await ctx.handle(req('/metrics', { headers: { authorization: `Bearer ${TOKEN}` } }))
  expect(res.status).toBe(200)
  return parseMetrics(await res.text())
}
const metric = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value
const outcomes = async () => {
  const samples = await scrape()
  return Object.fromEntries(['delivered', 'retried', 'failed', 'refused'].map((outcome) => [outcome, metric(samples, 'arena_webhook_deliveries_total', { outcome })!]))
}

describe('the back-off', () => {
  test('5 s after the first failure, doubling, at most 1 h apart; given up once the next attempt would fall after 3 days', () => {
    expect([0, 1, 2, 3, 9, 10, 11, 50, 5000].map(retryDelayMs)).toEqual([5_000, 10_000, 20_000, 40_000, 2_560_000, 3_600_000, 3_600_000, 3_600_000, 3_600_000])
    const created = new Date('2026-11-01T00:00:00.000Z')
    expect(nextAttempt(created, 0, created)).toEqual(new Date('2026-11-01T00:00:05.000Z'))
    expect(nextAttempt(created, 1, new Date('2026-11-01T00:00:05.000Z'))).toEqual(new Date('2026-11-01T00:00:15.000Z'))
    // The last attempt may fall exactly on the 3 days, not a millisecond after.
    expect(nextAttempt(created, 30, new Date(created.getTime() + 3 * DAY - 3_600_000))).toEqual(new Date(created.getTime() + 3 * DAY))
    expect(nextAttempt(created, 30, new Date(created.getTime() + 3 * DAY - 3_599_999))).toBeNull()
    expect(nextAttempt(created, 0, new Date(created.getTime() + 3 * DAY - 4_999))).toBeNull()
  })
})

describe('delivery', () => {
  test('a fact arrives signed (verified by the reference package), its body exactly { type, timestamp, data }, with the Standard Webhooks headers', async () => {
    const hook = receiver()
    const endpoint = await createEndpoint(ctx, hook.url, ['user.banned'])
    const at = ctx.clock.now()
    expect(await publish(banned('usr_delivered'), at)).toBe(1)
    expect(await sender().deliverDue()).toEqual({ delivered: 1, failed: 0 })
    expect(hook.received).toHaveLength(1)
    const got = hook.received[0]!
    expect(got.body).toBe(`{"type":"user.banned","timestamp":"${at.toISOString()}","data":{"userId":"usr_delivered","reason":"cheating","until":null}}`)
    expect(verifyDelivery(endpoint.secret, got)).toEqual({ type: 'user.banned', timestamp: at.toISOString(), data: { userId: 'usr_delivered', reason: 'cheating', until: null } })
    const row = await onlyDelivery(endpoint.id)
    expect(got.id).toBe(row.messageId)
    expect(got.id).toStartWith('msg_')
    expect(got.timestamp).toBe(String(Math.floor(at.getTime() / 1000)))
    expect(got.signature.split(' ')).toHaveLength(1)
    expect(got.headers['content-type']).toBe('application/json')
    expect(got.headers['user-agent']).toBe(`arena-webhooks/${VERSION}`)
    expect(row).toMatchObject({ status: 'delivered', attempts: 1, lastError: null, deliveredAt: at })
    expect(await attemptsOf(row.id)).toMatchObject([{ attempt: 1, at, statusCode: 200, error: null }])
    // Nothing more to send: the next tick sends nothing.
    expect(await sender().deliverDue()).toEqual({ delivered: 0, failed: 0 })
    expect(hook.received).toHaveLength(1)
    // The secret never reaches the log.
    expect(logLines.join('\n')).not.toContain(endpoint.secret)
  })

  test('a 500 is retried with the same webhook-id, 5 s then 10 s later, each attempt recorded; counted retried, retried, delivered', async () => {
    const hook = receiver((n) => (n < 2 ? 500 : 204))
    const endpoint = await createEndpoint(ctx, hook.url)
    const before = await outcomes()
    await publish(banned('usr_retried'))
    const loop = sender()
    const start = ctx.clock.now().getTime()
    expect(await loop.deliverDue()).toEqual({ delivered: 0, failed: 0 })
    let row = await onlyDelivery(endpoint.id)
    expect(row).toMatchObject({ status: 'pending', attempts: 1, lastError: 'http_500' })
    expect(row.nextAttemptAt.getTime()).toBe(start + 5_000)
    // Not due yet: nothing sent.
    ctx.clock.advance(4_999)
    await loop.deliverDue()
    expect(hook.received).toHaveLength(1)
    ctx.clock.advance(1)
    await loop.deliverDue()
    row = await onlyDelivery(endpoint.id)
    expect(row).toMatchObject({ status: 'pending', attempts: 2, lastError: 'http_500' })
    expect(row.nextAttemptAt.getTime()).toBe(start + 5_000 + 10_000)
    ctx.clock.advance(10_000)
    expect(await loop.deliverDue()).toEqual({ delivered: 1, failed: 0 })
    row = await onlyDelivery(endpoint.id)
    expect(row).toMatchObject({ status: 'delivered', attempts: 3, lastError: null })
    expect(hook.received.map((d) => d.id)).toEqual([row.messageId, row.messageId, row.messageId])
    for (const got of hook.received) verifyDelivery(endpoint.secret, got)
    expect((await attemptsOf(row.id)).map((a) => [a.attempt, a.statusCode, a.error])).toEqual([
      [1, 500, 'http_500'],
      [2, 500, 'http_500'],
      [3, 204, null],
    ])
    const after = await outcomes()
    expect({ delivered: after.delivered! - before.delivered!, retried: after.retried! - before.retried!, failed: after.failed! - before.failed! }).toEqual({ delivered: 1, retried: 2, failed: 0 })
  })

  test('an endpoint slower than the timeout: the attempt fails as timeout and is retried with the same webhook-id', async () => {
    const hook = receiver(async (n) => {
      if (n === 0) await Bun.sleep(1_000)
      return 200
    })
    const endpoint = await createEndpoint(ctx, hook.url)
    await publish(banned('usr_timeout'))
    const loop = sender({ timeoutMs: 150 })
    await loop.deliverDue()
    const row = await onlyDelivery(endpoint.id)
    expect(row).toMatchObject({ status: 'pending', attempts: 1, lastError: 'timeout' })
    const [attempt] = await attemptsOf(row.id)
    expect(attempt).toMatchObject({ statusCode: null, error: 'timeout' })
    expect(attempt!.durationMs).toBeGreaterThanOrEqual(100)
    ctx.clock.advance(5_000)
    expect(await loop.deliverDue()).toEqual({ delivered: 1, failed: 0 })
    expect(hook.received.map((d) => d.id)).toEqual([row.messageId, row.messageId])
  })

  test('410 Gone disables the endpoint (reason gone): nothing more is sent to it', async () => {
    const hook = receiver(() => 410)
    const endpoint = await createEndpoint(ctx, hook.url)
    await publish(banned('usr_gone_1'))
    await sender().deliverDue()
    expect(await ctx.storage.read.webhooks.get(endpoint.id)).toMatchObject({ enabled: false, disabledReason: 'gone' })
    expect(await onlyDelivery(endpoint.id)).toMatchObject({ status: 'pending', attempts: 1, lastError: 'http_410' })
    // A disabled endpoint is not subscribed any more, and its pending delivery is not sent again, however long it waits.
    expect(await publish(banned('usr_gone_2'))).toBe(0)
    ctx.clock.advance(60_000)
    await sender().deliverDue()
    expect(hook.received).toHaveLength(1)
  })

  test('after a rotation both the old and the new secret verify a delivery for 24 h; then only the new one', async () => {
    const hook = receiver()
    const endpoint = await createEndpoint(ctx, hook.url)
    const rotated = await rotateEndpointSecret(ctx, endpoint.id)
    await publish(banned('usr_rotation_1'))
    await sender().deliverDue()
    const during = hook.received[0]!
    expect(during.signature.split(' ')).toHaveLength(2)
    expect(verifyDelivery(endpoint.secret, during).data).toEqual({ userId: 'usr_rotation_1', reason: 'cheating', until: null })
    expect(verifyDelivery(rotated, during).data).toEqual({ userId: 'usr_rotation_1', reason: 'cheating', until: null })
    // The 24 h ran out (the row as it stands then: its previous secret's expiry reached).
    await ctx.storage.write((tx) => tx.webhooks.update(endpoint.id, { previousExpiresAt: ctx.clock.now() }))
    await publish(banned('usr_rotation_2'))
    await sender().deliverDue()
    const after = hook.received[1]!
    expect(after.signature.split(' ')).toHaveLength(1)
    expect(verifyDelivery(rotated, after).data).toMatchObject({ userId: 'usr_rotation_2' })
    expect(() => verifyDelivery(endpoint.secret, after)).toThrow()
    expect(logLines.join('\n')).not.toContain(rotated)
  })

  test('a private destination is refused at the attempt when not allowed, an address or a name resolving to loopback (localhost): nothing is sent', async () => {
    const hook = receiver()
    const byAddress = await createEndpoint(ctx, hook.url)
    const byName = await createEndpoint(ctx, `http://localhost:${hook.port}/hook`)
    const before = await outcomes()
    await publish(banned('usr_private'))
    const strict = sender({ allowPrivate: false })
    expect(await strict.deliverDue()).toEqual({ delivered: 0, failed: 0 })
    expect(hook.received).toHaveLength(0)
    for (const endpoint of [byAddress, byName]) {
      const row = await onlyDelivery(endpoint.id)
      expect(row).toMatchObject({ status: 'pending', attempts: 1, lastError: 'destination_not_allowed' })
      expect(await attemptsOf(row.id)).toMatchObject([{ statusCode: null, error: 'destination_not_allowed' }])
    }
    const after = await outcomes()
    expect(after.refused! - before.refused!).toBe(2)
    expect(after.retried! - before.retried!).toBe(0)
    // Allowed (ARENA_WEBHOOKS_ALLOW_PRIVATE), the same deliveries go: the name is reached at its address, with its own Host.
    ctx.clock.advance(5_000)
    expect(await sender({ allowPrivate: true }).deliverDue()).toEqual({ delivered: 2, failed: 0 })
    expect(hook.received.map((d) => d.headers.host).sort()).toEqual([`127.0.0.1:${hook.port}`, `localhost:${hook.port}`])
  })

  test('a redirect is not followed: the attempt fails as redirect_not_followed and its target receives nothing', async () => {
    const target = receiver()
    const hook = receiver(() => new Response(null, { status: 302, headers: { location: target.url } }))
    const endpoint = await createEndpoint(ctx, hook.url)
    await publish(banned('usr_redirect'))
    await sender().deliverDue()
    expect(hook.received).toHaveLength(1)
    expect(target.received).toHaveLength(0)
    const row = await onlyDelivery(endpoint.id)
    expect(row).toMatchObject({ status: 'pending', lastError: 'redirect_not_followed' })
    expect(await attemptsOf(row.id)).toMatchObject([{ statusCode: 302, error: 'redirect_not_followed' }])
  })

  test('a stored URL that is not http(s) fails its attempts (invalid_url), never the sender', async () => {
    const endpoint = await createEndpoint(ctx, 'ftp://files.example.com/hook')
    await publish(banned('usr_ftp'))
    expect(await sender().deliverDue()).toEqual({ delivered: 0, failed: 0 })
    expect(await onlyDelivery(endpoint.id)).toMatchObject({ status: 'pending', attempts: 1, lastError: 'invalid_url' })
  })

  test('a delivery whose next attempt would fall after its 3 days is given up: failed, counted failed', async () => {
    const hook = receiver(() => 503)
    const endpoint = await createEndpoint(ctx, hook.url)
    const before = await outcomes()
    // Created 3 days ago, less 4 s: a retry 5 s from now would be too late.
    await publish(banned('usr_give_up'), new Date(ctx.clock.now().getTime() - 3 * DAY + 4_000))
    expect(await sender().deliverDue()).toEqual({ delivered: 0, failed: 1 })
    expect(await onlyDelivery(endpoint.id)).toMatchObject({ status: 'failed', attempts: 1, lastError: 'http_503' })
    ctx.clock.advance(3_600_000)
    await sender().deliverDue()
    expect(hook.received).toHaveLength(1)
    const after = await outcomes()
    expect(after.failed! - before.failed!).toBe(1)
  })

  test('endpoints are served in parallel: one answering after 2 s does not delay another; stop aborts the slow attempt and waits for it', async () => {
    const slow = receiver(async () => {
      await Bun.sleep(2_000)
      return 200
    })
    const fast = receiver()
    const slowEndpoint = await createEndpoint(ctx, slow.url)
    const fastEndpoint = await createEndpoint(ctx, fast.url)
    // The slow endpoint's delivery is the older one.
    await publish(banned('usr_parallel'))
    const loop = sender()
    const started = Date.now()
    const tick = loop.deliverDue()
    await fast.waitForCount(1, 1_500)
    await waitFor('the fast endpoint delivered', async () => ((await onlyDelivery(fastEndpoint.id)).status === 'delivered' ? true : undefined), 1_500)
    expect(Date.now() - started).toBeLessThan(1_500)
    await slow.waitForCount(1, 1_500)
    expect(await onlyDelivery(slowEndpoint.id)).toMatchObject({ status: 'pending', attempts: 0 })
    // Stopped mid-attempt: no verdict, nothing recorded; the delivery waits for the next runner.
    await loop.stop()
    expect(await tick).toEqual({ delivered: 1, failed: 0 })
    expect(Date.now() - started).toBeLessThan(1_900)
    expect(await onlyDelivery(slowEndpoint.id)).toMatchObject({ status: 'pending', attempts: 0 })
  })

  test('one endpoint\'s deliveries go oldest first, one at a time, and stop at the first failure', async () => {
    const hook = receiver((n) => (n === 1 ? 500 : 200))
    const endpoint = await createEndpoint(ctx, hook.url)
    const now = ctx.clock.now().getTime()
    for (const [i, ago] of [30_000, 20_000, 10_000].entries()) await publish(banned(`usr_order_${i}`), new Date(now - ago))
    await sender().deliverDue()
    expect(hook.received.map((d) => (JSON.parse(d.body) as { data: { userId: string } }).data.userId)).toEqual(['usr_order_0', 'usr_order_1'])
    const rows = await deliveriesOf(endpoint.id)
    expect(rows.map((r) => [r.status, r.attempts]).sort()).toEqual([
      ['delivered', 1],
      ['pending', 0],
      ['pending', 1],
    ])
  })
})

describe('connecting to the address checked', () => {
  test('the URL carries the address, Host keeps the endpoint\'s host (and port), https names the host for SNI and the certificate', () => {
    expect(pinnedTarget(new URL('https://hooks.example.com/in?x=1'), '203.0.113.7')).toEqual({ url: 'https://203.0.113.7/in?x=1', host: 'hooks.example.com', serverName: 'hooks.example.com' })
    expect(pinnedTarget(new URL('http://hooks.example.com:8080/in'), '2001:db8::7')).toEqual({ url: 'http://[2001:db8::7]:8080/in', host: 'hooks.example.com:8080', serverName: undefined })
    expect(pinnedTarget(new URL('https://203.0.113.7/in'), '203.0.113.7').serverName).toBeUndefined()
    expect(chosenAddress(['2001:db8::7', '203.0.113.7'])).toBe('203.0.113.7')
    expect(chosenAddress(['2001:db8::7'])).toBe('2001:db8::7')
  })

  test('over https, fetch to the address with the server name checks the certificate against the endpoint\'s name (its TLS server name) and keeps its Host', async () => {
    const hosts: string[] = []
    const server = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      tls: HOOKS_EXAMPLE_TLS,
      fetch(request) {
        hosts.push(request.headers.get('host') ?? '')
        return new Response('ok')
      },
    })
    try {
      const target = pinnedTarget(new URL(`https://hooks.example:${server.port}/hook`), '127.0.0.1')
      const post = (serverName: string | undefined) =>
        fetch(target.url, { method: 'POST', body: '{}', headers: { host: target.host }, tls: { ca: HOOKS_EXAMPLE_TLS.cert, ...(serverName ? { serverName } : {}) } })
      expect((await post(target.serverName)).status).toBe(200)
      expect(hosts).toEqual([`hooks.example:${server.port}`])
      // Without the name the certificate is checked against the address, and another name does not match it either: the check is real.
      await expect(post(undefined)).rejects.toThrow()
      await expect(post('other.example')).rejects.toThrow()
      expect(hosts).toHaveLength(1)
    } finally {
      await server.stop(true)
    }
  })
})

describe('housekeeping and the queue metrics', () => {
  test('the queue depth and the oldest pending age read the database; delivered rows go after 3 days, failed after 30, a disabled endpoint\'s pending ones expire after 3', async () => {
    const hook = receiver()
    const live = await createEndpoint(ctx, hook.url)
    const now = ctx.clock.now().getTime()
    await publish(banned('usr_queue_1'), new Date(now - 90_000))
    await publish(banned('usr_queue_2'), new Date(now - 30_000))
    let samples = await scrape()
    expect(metric(samples, 'arena_webhook_queue_depth')).toBe(2)
    expect(metric(samples, 'arena_webhook_oldest_pending_seconds')).toBe(90)
    await sender().deliverDue()
    samples = await scrape()
    expect(metric(samples, 'arena_webhook_queue_depth')).toBe(0)
    expect(metric(samples, 'arena_webhook_oldest_pending_seconds')).toBe(0)

    // A disabled endpoint's deliveries: one older than 3 days, one recent (the first endpoint takes other facts now).
    await ctx.storage.write((tx) => tx.webhooks.update(live.id, {}, ['user.created']))
    const off = await createEndpoint(ctx, hook.url)
    await publish(banned('usr_old'), new Date(now - 3 * DAY - 1_000))
    await publish(banned('usr_recent'), new Date(now - 3_600_000))
    await ctx.storage.write((tx) => tx.webhooks.update(off.id, { enabled: false, disabledReason: 'operator' }))
    const before = await outcomes()
    const first = await housekeeping(ctx.storage, ctx.clock, 30)
    expect(first).toMatchObject({ webhookExpired: 1, webhookDeliveries: 0 })
    const offRows = await deliveriesOf(off.id)
    expect(offRows.map((r) => [(JSON.parse(r.body) as { data: { userId: string } }).data.userId, r.status, r.lastError]).sort()).toEqual([
      ['usr_old', 'failed', 'expired'],
      ['usr_recent', 'pending', null],
    ])
    expect((await outcomes()).failed! - before.failed!).toBe(1)
    // 3 days after their delivery, the delivered rows go (with their attempts).
    ctx.clock.advance(3 * DAY - 1_000)
    // (By then the recent one of the disabled endpoint is older than 3 days too.)
    expect(await housekeeping(ctx.storage, ctx.clock, 30)).toMatchObject({ webhookDeliveries: 0, webhookExpired: 1 })
    ctx.clock.advance(2_000)
    expect(await housekeeping(ctx.storage, ctx.clock, 30)).toMatchObject({ webhookDeliveries: 2, webhookExpired: 0 })
    expect(await deliveriesOf(live.id)).toEqual([])
    // 30 days after its creation, a failed one goes.
    ctx.clock.set(new Date(now + 27 * DAY - 2_000))
    expect((await housekeeping(ctx.storage, ctx.clock, 30)).webhookDeliveries).toBe(0)
    ctx.clock.advance(3_000)
    expect((await housekeeping(ctx.storage, ctx.clock, 30)).webhookDeliveries).toBe(1)
    expect((await deliveriesOf(off.id)).map((r) => r.status)).toEqual(['failed'])
  })
})
