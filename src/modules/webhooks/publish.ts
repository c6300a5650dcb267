// Publishing a webhook fact (contract §18): inside the unit of work of the
// change it reports, one delivery per enabled endpoint subscribed to its type.
// So a delivery exists exactly when its change committed, and a crash after
// the commit loses nothing: the delivery loop finds it queued. When nobody
// subscribes to the type, the one read below is all it costs.
import type { Transaction } from '../../db/storage'
import { newId } from '../../shared/ids'
import type { WebhookEvent } from './catalogue'

/** The body every endpoint receives for one fact, byte for byte (what is signed): `{ type, timestamp, data }`. */
export function webhookBody(event: WebhookEvent, at: Date): string {
  return JSON.stringify({ type: event.type, timestamp: at.toISOString(), data: event.data })
}

/** Queues `event` for every endpoint subscribed to its type; how many deliveries were queued. */
export async function publishWebhook(tx: Pick<Transaction, 'webhooks'>, event: WebhookEvent, now: Date): Promise<number> {
  const subscribers = await tx.webhooks.subscribers(event.type)
  if (subscribers.length === 0) return 0
  // One message id per fact: the `webhook-id` header every endpoint and every attempt of it sees.
  const messageId = newId('webhookMessage')
  const body = webhookBody(event, now)
  await tx.webhooks.enqueue(subscribers.map((webhookId) => ({ id: newId('webhookDelivery'), webhookId, messageId, type: event.type, body, createdAt: now })))
  return subscribers.length
}
