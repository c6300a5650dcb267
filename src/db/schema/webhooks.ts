// Webhooks (contract §18): the studio's endpoints, what each subscribes to,
// and the deliveries queued for them. A delivery is written in the unit of
// work of the change it reports (src/modules/webhooks/publish.ts), one row per
// subscribed endpoint, so it exists exactly when that change committed; the
// delivery loop (src/modules/webhooks/delivery.ts) sends it, records each
// attempt, and retries with back-off for 3 days (docs/webhooks.md).
import { index, integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import { flag, instant } from './columns'
import { WEBHOOK_DELIVERY_STATUSES, WEBHOOK_DISABLED_REASONS } from '../../modules/webhooks/store'

export const webhooks = sqliteTable('webhooks', {
  id: text('id').primaryKey(),
  url: text('url').notNull(),
  description: text('description'),
  enabled: flag('enabled').notNull(),
  /** Why it is disabled: an operator, or the endpoint answered 410 Gone; null while enabled. */
  disabledReason: text('disabled_reason', { enum: WEBHOOK_DISABLED_REASONS }),
  /** The signing secret (`whsec_…`), sealed under a key derived from the chain key (never stored in the clear). */
  secretSealed: text('secret_sealed').notNull(),
  /** The secret before the last rotation, still signing beside the new one until `previous_expires_at`; null when none. */
  previousSecretSealed: text('previous_secret_sealed'),
  previousExpiresAt: instant('previous_expires_at'),
  createdAt: instant('created_at').notNull(),
  updatedAt: instant('updated_at').notNull(),
})

/** The types an endpoint subscribes to, one row each: what a change reads (by type) to know whom to queue a delivery for. */
export const webhookTypes = sqliteTable(
  'webhook_types',
  {
    webhookId: text('webhook_id')
      .notNull()
      .references(() => webhooks.id, { onDelete: 'cascade' }),
    type: text('type').notNull(),
  },
  (table) => [primaryKey({ columns: [table.type, table.webhookId] }), index('webhook_types_webhook').on(table.webhookId)],
)

/**
 * One event for one endpoint. `message_id` is the `webhook-id` header, the
 * same at every attempt and resend (a receiver de-duplicates on it); `body`
 * is the exact bytes signed and sent.
 */
export const webhookDeliveries = sqliteTable(
  'webhook_deliveries',
  {
    id: text('id').primaryKey(),
    webhookId: text('webhook_id')
      .notNull()
      .references(() => webhooks.id, { onDelete: 'cascade' }),
    messageId: text('message_id').notNull(),
    type: text('type').notNull(),
    body: text('body').notNull(),
    status: text('status', { enum: WEBHOOK_DELIVERY_STATUSES }).notNull(),
    attempts: integer('attempts').notNull(),
    nextAttemptAt: instant('next_attempt_at').notNull(),
    /** The last attempt's failure (`http_500`, `timeout`, `destination_not_allowed`, …); null when none failed or it was delivered. */
    lastError: text('last_error'),
    createdAt: instant('created_at').notNull(),
    deliveredAt: instant('delivered_at'),
  },
  (table) => [
    index('webhook_deliveries_due').on(table.status, table.nextAttemptAt),
    index('webhook_deliveries_webhook').on(table.webhookId, table.createdAt),
  ],
)

/** Every attempt of a delivery: when, how long, the endpoint's status code (null when none came) and the failure. */
export const webhookAttempts = sqliteTable(
  'webhook_attempts',
  {
    deliveryId: text('delivery_id')
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: 'cascade' }),
    attempt: integer('attempt').notNull(),
    at: instant('at').notNull(),
    durationMs: integer('duration_ms').notNull(),
    statusCode: integer('status_code'),
    error: text('error'),
  },
  (table) => [primaryKey({ columns: [table.deliveryId, table.attempt] })],
)
