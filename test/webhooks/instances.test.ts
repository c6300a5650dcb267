// One sender per endpoint across instances (contract §18, issue 41): two
// processes of the compiled binary on one PostgreSQL database, each running
// the leased delivery loop, facts caused through both at once. The receiver
// is healthy (200 after a short while, so two senders would overlap), and:
// - it never has two requests in flight at once (one sender for the
//   endpoint, whichever instance holds the loop);
// - each fact's webhook-id arrives exactly once (no retries were needed, so
//   a second send could only be a second sender's);
// - the operator API, on either instance, lists each delivery delivered
//   after exactly one attempt.
import { afterAll, expect, test } from 'bun:test'
import { tempDir, testDatabaseEnv } from '../helpers/app'
import { describeOnEngine } from '../helpers/engine'
import { buildBinary, type ServerProcess } from '../helpers/process'
import { waitFor } from '../helpers/wait'
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver'
import { ADMIN_TOKEN, client } from '../faults/helpers'
import { byWebhookId, causeFact, createEndpoint, expectExactlyTheFacts, serveBinary } from './processes'

/** Facts caused, half through each instance. */
const FACTS = 16
/** How long the receiver takes to answer: two senders would be caught overlapping. */
const ANSWER_MS = 30
const JWT_SECRET = 'webhook-instances-signing-secret-0123456789'
const started: ServerProcess[] = []
let receiver: WebhookReceiver | undefined
afterAll(async () => {
  for (const server of started) server.proc.kill('SIGKILL')
  await receiver?.stop()
})

describeOnEngine('postgres', 'webhooks on two instances', () => {
  test(`${FACTS} facts caused through two instances: each delivered once, by one sender, never two requests at once`, async () => {
    await buildBinary()
    const database = await testDatabaseEnv()
    let inFlight = 0
    let mostInFlight = 0
    receiver = startWebhookReceiver(async () => {
      mostInFlight = Math.max(mostInFlight, ++inFlight)
      await Bun.sleep(ANSWER_MS)
      inFlight--
      return 200
    })
    const instances = await Promise.all(
      ['one', 'two'].map((name) => serveBinary({ ...database, ARENA_DATA_DIR: tempDir(`arena-webhook-${name}-`), ARENA_JWT_SECRET: JWT_SECRET }, started)),
    )
    const calls = instances.map((instance) => client(instance.url))
    const endpoint = await createEndpoint(calls[0]!, receiver.url)

    const usernames = Array.from({ length: FACTS }, (_, i) => `two_hook_${i}`)
    await Promise.all(usernames.map((username, i) => causeFact(calls[i % 2]!, username)))

    const listed = await waitFor(
      `${FACTS} deliveries recorded delivered`,
      async () => {
        const answer = await calls[1]!('GET', `/api/v1/admin/webhooks/${endpoint.id}/deliveries?limit=100`, undefined, { 'x-admin-token': ADMIN_TOKEN })
        expect(answer.status).toBe(200)
        const all = answer.body.deliveries as { messageId: string; status: string; attempts: unknown[] }[]
        return all.length === FACTS && all.every((d) => d.status === 'delivered') ? all : undefined
      },
      20_000,
    )
    expect(listed.map((d) => d.attempts.length)).toEqual(listed.map(() => 1))
    expect(receiver.received).toHaveLength(FACTS)
    expect([...byWebhookId(receiver.received).values()].map((sends) => sends.length)).toEqual(usernames.map(() => 1))
    expectExactlyTheFacts(receiver.received, endpoint.secret, usernames)
    expect(new Set(listed.map((d) => d.messageId))).toEqual(new Set(byWebhookId(receiver.received).keys()))
    expect(mostInFlight).toBe(1)
  }, 60_000)
})
