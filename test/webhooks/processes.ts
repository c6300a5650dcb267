// Shared by the webhook tests on real processes (crash.test.ts,
// instances.test.ts): the compiled binary with private destinations allowed
// (the receiver is on loopback), an endpoint created through the operator
// API, facts caused through the public API (user.created by registration),
// and the check that what a receiver got is, de-duplicated by webhook-id,
// exactly the facts caused, each signed under the endpoint's secret.
import { expect } from 'bun:test'
import { ADMIN_TOKEN, register, type Call } from '../faults/helpers'
import { BINARY, startServe, type ServerProcess } from '../helpers/process'
import { verifyDelivery, type ReceivedDelivery } from '../helpers/webhook-receiver'

/** The environment of a binary that delivers to a loopback receiver. */
export const WEBHOOK_ENV = { ARENA_ADMIN_TOKEN: ADMIN_TOKEN, ARENA_WEBHOOKS_ALLOW_PRIVATE: 'true' }

/** `arena serve` of the compiled binary on `env` (plus WEBHOOK_ENV), kept in `started` for the file's afterAll to kill. */
export async function serveBinary(env: Record<string, string>, started: ServerProcess[]): Promise<ServerProcess> {
  const server = await startServe([BINARY, 'serve'], { ...WEBHOOK_ENV, ...env })
  started.push(server)
  return server
}

/** POST /admin/webhooks for user.created to `url`: the endpoint's id and its secret (shown this once). */
export async function createEndpoint(call: Call, url: string): Promise<{ id: string; secret: string }> {
  const created = await call('POST', '/api/v1/admin/webhooks', { url, types: ['user.created'], description: 'process test' }, { 'x-admin-token': ADMIN_TOKEN })
  if (created.status !== 201) throw new Error(`POST /admin/webhooks: ${created.status} ${created.text}`)
  return { id: created.body.webhook.id, secret: created.body.secret }
}

/** Registers `username`: one user.created fact. */
export async function causeFact(call: Call, username: string): Promise<void> {
  const answer = await register(call, username)
  if (answer.status !== 201) throw new Error(`register ${username}: ${answer.status} ${answer.text}`)
}

/** Deliveries by webhook-id, in arrival order. */
export function byWebhookId(received: readonly ReceivedDelivery[]): Map<string, ReceivedDelivery[]> {
  const ids = new Map<string, ReceivedDelivery[]>()
  for (const delivery of received) ids.set(delivery.id, [...(ids.get(delivery.id) ?? []), delivery])
  return ids
}

/**
 * What `received` holds, de-duplicated by webhook-id, is one user.created per
 * name of `usernames` and nothing else; every request (a repeat too) verifies
 * with the reference package under `secret`, and a repeat carries the same
 * bytes as the first send.
 */
export function expectExactlyTheFacts(received: readonly ReceivedDelivery[], secret: string, usernames: readonly string[]): void {
  const facts = new Map<string, string>()
  for (const [id, sends] of byWebhookId(received)) {
    for (const send of sends) expect(send.body).toBe(sends[0]!.body)
    const event = verifyDelivery(secret, sends[0]!)
    for (const send of sends.slice(1)) verifyDelivery(secret, send)
    expect(event.type).toBe('user.created')
    facts.set(id, String(event.data.username))
  }
  expect([...facts.values()].sort()).toEqual([...usernames].sort())
}
