// A studio's backend on loopback, for the webhook tests: a real HTTP server
// that records every delivery (headers and the exact body bytes) and answers
// as the test says (a status, a delay that outlasts the sender's timeout, a
// redirect). Signatures are verified with `standardwebhooks`, the reference
// implementation of Standard Webhooks, never with arena's own code.
import { Webhook } from 'standardwebhooks'
import { waitFor } from './wait'

export interface ReceivedDelivery {
  /** The `webhook-id` header. */
  id: string
  timestamp: string
  signature: string
  /** The body as sent, byte for byte. */
  body: string
  headers: Record<string, string>
  receivedAt: number
}

/** What the receiver answers to its `n`-th request (0-based): a status, or a Response of the test's own; a promise may wait. */
export type Responder = (n: number, request: Request) => number | Response | Promise<number | Response>

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>/hook` (a path of its own so a test can see the path kept). */
  readonly url: string
  readonly port: number
  /** Every request, in arrival order, answered or not. */
  readonly received: ReceivedDelivery[]
  respond(responder: Responder): void
  /** Waits until at least `count` requests arrived. */
  waitForCount(count: number, ms?: number): Promise<ReceivedDelivery[]>
  stop(): Promise<void>
}

export function startWebhookReceiver(responder: Responder = () => 200): WebhookReceiver {
  const received: ReceivedDelivery[] = []
  let current = responder
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 60,
    async fetch(request) {
      const body = await request.text()
      const headers = Object.fromEntries(request.headers.entries())
      const n = received.length
      received.push({
        id: headers['webhook-id'] ?? '',
        timestamp: headers['webhook-timestamp'] ?? '',
        signature: headers['webhook-signature'] ?? '',
        body,
        headers,
        receivedAt: Date.now(),
      })
      const answer = await current(n, request)
      return typeof answer === 'number' ? new Response(answer === 204 ? null : 'ok', { status: answer }) : answer
    },
  })
  const port = server.port!
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    respond(next) {
      current = next
    },
    waitForCount: (count, ms = 15_000) => waitFor(`${count} webhook deliveries`, async () => (received.length >= count ? received : undefined), ms),
    async stop() {
      await server.stop(true)
    },
  }
}

/**
 * Verifies one delivery with the reference implementation under `secret`
 * (`whsec_…`): the parsed body, or throws WebhookVerificationError. It also
 * refuses a timestamp more than 5 minutes from now, so a test on a manual
 * clock keeps it near the real time.
 */
export function verifyDelivery(secret: string, delivery: ReceivedDelivery): { type: string; timestamp: string; data: Record<string, unknown> } {
  return new Webhook(secret).verify(delivery.body, {
    'webhook-id': delivery.id,
    'webhook-timestamp': delivery.timestamp,
    'webhook-signature': delivery.signature,
  }) as { type: string; timestamp: string; data: Record<string, unknown> }
}
