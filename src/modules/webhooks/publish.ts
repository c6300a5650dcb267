// Publishing a webhook fact (contract §18): inside the unit of work of the
// change it reports, one delivery per enabled endpoint subscribed to its type.
// So a delivery exists exactly when its change committed, and a crash after
// the commit loses nothing: the delivery loop finds it queued. When nobody
// subscribes to the type, the one read below is all it costs.
import type { Transaction } from '../../db/storage'
import { newId } from '../../shared/ids'
import type { WebhookEvent } from './catalogue'
import type { NewWebhookDelivery } from './store'

/** The body every endpoint receives for one fact, byte for byte (what is signed): `{ type, timestamp, data }`. */
export function webhookBody(event: WebhookEvent, at: Date): string {
  return JSON.stringify({ type: event.type, timestamp: at.toISOString(), data: event.data })
}

/** Queues `event` for every endpoint subscribed to its type; how many deliveries were queued. */
export function publishWebhook(tx: Pick<Transaction, 'webhooks'>, event: WebhookEvent, now: Date): Promise<number> {
  return publishWebhooks(tx, [event], now)
}

/**
 * Queues several facts of one change (a rated decision's two rating updates):
 * the subscribers of each type are read once, and each fact gets its own
 * message id. How many deliveries were queued.
 */
export async function publishWebhooks(tx: Pick<Transaction, 'webhooks'>, events: readonly WebhookEvent[], now: Date): Promise<number> {
  const subscribersOf = new Map<string, string[]>()
  const deliveries: NewWebhookDelivery[] = []
  for (const event of events) {
    let subscribers = subscribersOf.get(event.type)
    if (subscribers === undefined) subscribersOf.set(event.type, (subscribers = await tx.webhooks.subscribers(event.type)))
    if (subscribers.length === 0) continue
    // One message id per fact: the `webhook-id` header every endpoint and every attempt of it sees.
    const messageId = newId('webhookMessage')
    const body = webhookBody(event, now)
    for (const webhookId of subscribers) deliveries.push({ id: newId('webhookDelivery'), webhookId, messageId, type: event.type, body, createdAt: now })
  }
  await tx.webhooks.enqueue(deliveries)
  return deliveries.length
}
