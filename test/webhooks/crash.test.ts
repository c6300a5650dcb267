// Webhooks are at least once through a crash (contract §18): the compiled
// binary, on a fresh database of the test engine, is SIGKILLed while it waits
// for the receiver's answer to a delivery (the receiver holds every request
// open), and restarted on the same database. Once the receiver answers 200:
// - every fact caused before the kill (a registration: user.created) reaches
//   it, and the one in flight at the kill is sent again with the same
//   webhook-id (its attempt was never recorded);
// - de-duplicated by webhook-id, what it got is exactly those facts, each
//   signed under the endpoint's secret (verified with the reference package)
//   and the same bytes every time;
// - the operator API lists each delivery delivered.
import { afterAll, expect, test } from 'bun:test'
import { tempDir, testDatabaseEnv } from '../helpers/app'
import { buildBinary, type ServerProcess } from '../helpers/process'
import { waitFor } from '../helpers/wait'
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver'
import { ADMIN_TOKEN, client } from '../faults/helpers'
import { byWebhookId, causeFact, createEndpoint, expectExactlyTheFacts, serveBinary } from './processes'

/** Facts caused before the kill. */
const FACTS = 6
const started: ServerProcess[] = []
let receiver: WebhookReceiver | undefined
let release: () => void = () => {}
afterAll(async () => {
  for (const server of started) server.proc.kill('SIGKILL')
  release()
  await receiver?.stop()
})

test(`SIGKILLed with a delivery in flight and restarted: each of ${FACTS} facts arrives, de-duplicated exactly once each, signed`, async () => {
  await buildBinary()
  const env = { ARENA_DATA_DIR: tempDir('arena-webhook-crash-'), ...(await testDatabaseEnv()) }
  // Every request is held open until the test releases it: the first send is still waiting for its answer at the kill.
  const held = new Promise<void>((resolve) => (release = resolve))
  receiver = startWebhookReceiver(async () => {
    await held
    return 200
  })

  const first = await serveBinary(env, started)
  const call = client(first.url)
  const endpoint = await createEndpoint(call, receiver.url)
  const usernames = Array.from({ length: FACTS }, (_, i) => `crash_hook_${i}`)
  for (const username of usernames) await causeFact(call, username)
  await receiver.waitForCount(1)
  await first.signal('SIGKILL')
  const inFlight = receiver.received[0]!.id

  // Restarted on the same database; from now on the receiver answers at once.
  receiver.respond(() => 200)
  release()
  const second = await serveBinary(env, started)
  await waitFor(`${FACTS} distinct webhook-ids`, async () => (byWebhookId(receiver!.received).size >= FACTS ? true : undefined), 20_000)
  expectExactlyTheFacts(receiver.received, endpoint.secret, usernames)
  expect(byWebhookId(receiver.received).get(inFlight)!.length).toBeGreaterThanOrEqual(2)

  // Each one recorded delivered (the record follows the answer: wait for the last one's).
  const deliveries = await waitFor('every delivery recorded delivered', async () => {
    const listed = await client(second.url)('GET', `/api/v1/admin/webhooks/${endpoint.id}/deliveries?limit=100`, undefined, { 'x-admin-token': ADMIN_TOKEN })
    expect(listed.status).toBe(200)
    const all = listed.body.deliveries as { messageId: string; status: string }[]
    return all.length === FACTS && all.every((d) => d.status === 'delivered') ? all : undefined
  })
  expect(new Set(deliveries.map((d) => d.messageId))).toEqual(new Set(byWebhookId(receiver.received).keys()))
  expect((await second.signal('SIGTERM')).code).toBe(0)
}, 60_000)
