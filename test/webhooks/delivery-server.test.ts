// The webhook delivery loop as `arena serve` runs it (src/server.ts): a fact
// published into the server's database reaches the studio's receiver through
// the leased 'webhook delivery' loop within its second, signed with the
// server's secret; and stopping the server aborts an attempt in flight
// without a verdict (the delivery stays pending, for the next runner) instead
// of waiting for a slow endpoint.
import { expect, test } from 'bun:test'
import { loadConfig } from '../../src/config'
import { openStorage } from '../../src/db/open'
import { inProcessWakeups } from '../../src/modules/events/wakeups'
import { publishWebhook } from '../../src/modules/webhooks/publish'
import { startServer } from '../../src/server'
import { systemClock } from '../../src/shared/clock'
import { createLogger } from '../../src/shared/logger'
import { tempDir, testDatabaseEnv } from '../helpers/app'
import { waitFor } from '../helpers/wait'
import { startWebhookReceiver, verifyDelivery } from '../helpers/webhook-receiver'
import { createEndpoint } from '../helpers/webhooks'

test('the server\'s loop delivers a published fact within its second; stop aborts a slow attempt, leaving it pending', async () => {
  const config = loadConfig({ ARENA_DATA_DIR: tempDir('arena-webhook-server-'), ARENA_HOST: '127.0.0.1', ARENA_PORT: '0', ARENA_WEBHOOKS_ALLOW_PRIVATE: 'true', ...(await testDatabaseEnv()) })
  const logger = createLogger('silent', () => {})
  const server = await startServer(config, logger)
  const storage = await openStorage(config, { logger, wakeups: inProcessWakeups() })
  const hook = startWebhookReceiver()
  let stopped = false
  try {
    const endpoint = await createEndpoint({ storage, clock: systemClock, secrets: server.secrets }, hook.url, ['user.banned'])
    const publish = (userId: string) => storage.write((tx) => publishWebhook(tx, { type: 'user.banned', data: { userId, reason: 'cheating', until: null } }, new Date()))
    const published = Date.now()
    await publish('usr_server_1')
    const [first] = await hook.waitForCount(1, 5_000)
    expect(Date.now() - published).toBeLessThan(2_500)
    expect(verifyDelivery(endpoint.secret, first!).data).toEqual({ userId: 'usr_server_1', reason: 'cheating', until: null })
    await waitFor('the delivery recorded', async () => ((await storage.read.webhooks.deliveriesOf(endpoint.id, null, 5))[0]?.status === 'delivered' ? true : undefined), 5_000)

    // An endpoint that would answer in 10 s: the stop does not wait for it.
    hook.respond(async () => {
      await Bun.sleep(10_000)
      return 200
    })
    await publish('usr_server_2')
    await hook.waitForCount(2, 5_000)
    const stopping = Date.now()
    await server.stop()
    stopped = true
    expect(Date.now() - stopping).toBeLessThan(5_000)
    const rows = await storage.read.webhooks.deliveriesOf(endpoint.id, null, 5)
    expect(rows.map((row) => [row.status, row.attempts]).sort()).toEqual([
      ['delivered', 1],
      ['pending', 0],
    ])
  } finally {
    if (!stopped) await server.stop()
    await storage.close()
    await hook.stop()
  }
})
