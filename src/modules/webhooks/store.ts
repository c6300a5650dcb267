// What webhooks need from the database (see src/db/storage.ts): endpoints and
// their types, the deliveries queued for them, and each delivery's attempts.

/** `pending`: waiting for (another) attempt; `delivered`: a 2xx came; `failed`: 3 days of attempts ended without one (an operator may resend it). */
export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number]

/**
 * What an attempt counts as on `arena_webhook_deliveries_total`, exactly one
 * per attempt: delivered (a 2xx), refused (the destination check refused it),
 * retried (another failure, another attempt scheduled), failed (another
 * failure, given up); housekeeping counts a delivery it expires as failed.
 */
export const WEBHOOK_DELIVERY_OUTCOMES = ['delivered', 'retried', 'failed', 'refused'] as const
export type WebhookDeliveryOutcome = (typeof WEBHOOK_DELIVERY_OUTCOMES)[number]

/** Why an endpoint is disabled: an operator did it, or it answered 410 Gone. */
export const WEBHOOK_DISABLED_REASONS = ['operator', 'gone'] as const
export type WebhookDisabledReason = (typeof WEBHOOK_DISABLED_REASONS)[number]

export interface WebhookRecord {
  id: string
  url: string
  description: string | null
  enabled: boolean
  disabledReason: WebhookDisabledReason | null
  secretSealed: string
  previousSecretSealed: string | null
  previousExpiresAt: Date | null
  createdAt: Date
  updatedAt: Date
}

/** An endpoint with its types, sorted as the catalogue lists them. */
export interface WebhookRow extends WebhookRecord {
  types: string[]
}

export interface WebhookDeliveryRecord {
  id: string
  webhookId: string
  messageId: string
  type: string
  body: string
  status: WebhookDeliveryStatus
  attempts: number
  nextAttemptAt: Date
  lastError: string | null
  createdAt: Date
  deliveredAt: Date | null
}

export interface WebhookAttemptRecord {
  deliveryId: string
  attempt: number
  at: Date
  durationMs: number
  statusCode: number | null
  error: string | null
}

/** A delivery queued by a change: one per subscribed endpoint. */
export type NewWebhookDelivery = Pick<WebhookDeliveryRecord, 'id' | 'webhookId' | 'messageId' | 'type' | 'body' | 'createdAt'>

/** What an attempt ended as, recorded in one write with its delivery's new state. */
export interface WebhookAttemptOutcome {
  at: Date
  durationMs: number
  statusCode: number | null
  /** null: delivered (a 2xx). */
  error: string | null
  /** When the next attempt is due; null with an error: give up (failed). Ignored when delivered. */
  nextAttemptAt: Date | null
}

export interface WebhooksStore {
  // Endpoints (operators).
  insert(webhook: WebhookRecord, types: readonly string[]): Promise<void>
  get(id: string): Promise<WebhookRow | null>
  /** Every endpoint, oldest first. */
  list(): Promise<WebhookRow[]>
  count(): Promise<number>
  /** Changes the fields given (types replaced when given); null when there is no such endpoint. */
  update(
    id: string,
    change: Partial<Pick<WebhookRecord, 'url' | 'description' | 'enabled' | 'disabledReason' | 'secretSealed' | 'previousSecretSealed' | 'previousExpiresAt' | 'updatedAt'>>,
    types?: readonly string[],
  ): Promise<WebhookRow | null>
  /** Deletes an endpoint with its deliveries and attempts; false when there was none. */
  delete(id: string): Promise<boolean>
  /** Disables an endpoint that answered 410 (only if still enabled); true when it changed. */
  disableGone(id: string, now: Date): Promise<boolean>

  // Publishing (inside the change's unit of work; on every change that reports a webhook fact, so cheap when nobody subscribes).
  /** The enabled endpoints subscribed to `type`. */
  subscribers(type: string): Promise<string[]>
  enqueue(deliveries: readonly NewWebhookDelivery[]): Promise<void>

  // Delivery (the loop).
  /** The enabled endpoints with a pending delivery due at `now`. */
  dueEndpoints(now: Date): Promise<string[]>
  /** One endpoint's pending deliveries due at `now`, oldest first, at most `limit`. */
  dueFor(webhookId: string, now: Date, limit: number): Promise<WebhookDeliveryRecord[]>
  /** Records an attempt and moves its delivery (delivered, retried later, or failed); false when the delivery is gone or no longer pending. */
  recordAttempt(deliveryId: string, outcome: WebhookAttemptOutcome): Promise<boolean>

  // Operators' view.
  delivery(id: string): Promise<WebhookDeliveryRecord | null>
  /** An endpoint's deliveries, newest first, before `beforeId` when given, at most `limit`. */
  deliveriesOf(webhookId: string, beforeId: string | null, limit: number): Promise<WebhookDeliveryRecord[]>
  /** The attempts of these deliveries, by attempt. */
  attemptsOf(deliveryIds: readonly string[]): Promise<WebhookAttemptRecord[]>
  /** Puts a delivery back in the queue, due at `now` (its attempts are kept); null when there is none. */
  resend(id: string, now: Date): Promise<WebhookDeliveryRecord | null>

  // Metrics and housekeeping.
  /** Pending deliveries (of enabled endpoints or not) and the creation time of the oldest. */
  queueStats(): Promise<{ pending: number; oldestCreatedAt: Date | null }>
  /** Deletes delivered deliveries delivered before `deliveredBefore` and failed ones created before `failedBefore`; how many. */
  prune(deliveredBefore: Date, failedBefore: Date): Promise<number>
  /** Gives up (failed, last error `expired`) the pending deliveries of disabled endpoints created before `createdBefore`; how many. */
  expireDisabled(createdBefore: Date): Promise<number>
}
