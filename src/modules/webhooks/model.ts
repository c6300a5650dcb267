// TypeBox models of the webhook routes (contract §18): an endpoint as the
// admin API answers it (never its secret, but once, beside it, when created
// or rotated), a delivery with its attempts, and the bodies. The console and
// the CLI show the same types.
import { t, type Static } from 'elysia'
import type { TLiteral } from '@sinclair/typebox'
import { WEBHOOK_TYPES } from './catalogue'
import { WEBHOOK_DELIVERY_STATUSES, WEBHOOK_DISABLED_REASONS } from './store'

/** The most endpoints a server keeps (409 `webhook_limit` beyond). */
export const WEBHOOK_LIMIT = 20
export const WEBHOOK_URL_MAX = 2048
export const WEBHOOK_DESCRIPTION_MAX = 200

/** The literals of a list of names, as the tuple t.Union needs to type them. */
function literals<T extends readonly string[]>(values: T): { -readonly [K in keyof T]: TLiteral<T[K]> } {
  return values.map((value) => t.Literal(value)) as unknown as { -readonly [K in keyof T]: TLiteral<T[K]> }
}

const WebhookType = t.Union(
  literals(WEBHOOK_TYPES),
  { description: 'a type of the catalogue (docs/webhooks.md)' },
)
const Url = t.String({ minLength: 1, maxLength: WEBHOOK_URL_MAX, description: 'http or https, without user:password or a fragment; its host must resolve to public addresses unless ARENA_WEBHOOKS_ALLOW_PRIVATE is set' })
const Types = t.Array(WebhookType, { minItems: 1, maxItems: 64, description: 'the types sent to it; duplicates are collapsed' })
const Description = t.String({ maxLength: WEBHOOK_DESCRIPTION_MAX, description: 'for operators; empty clears it' })

export const Webhook = t.Object(
  {
    id: t.String(),
    url: t.String(),
    types: t.Array(t.String(), { description: 'in the catalogue\'s order' }),
    description: t.Nullable(t.String()),
    enabled: t.Boolean(),
    disabledReason: t.Nullable(t.Union(literals(WEBHOOK_DISABLED_REASONS), { description: '`operator`: disabled by an operator; `gone`: it answered 410; null while enabled' })),
    previousSecretExpiresAt: t.Nullable(t.String({ description: 'until when the secret before the last rotation still signs beside the current one; null: only the current one signs' })),
    createdAt: t.String(),
    updatedAt: t.String(),
  },
  { $id: 'Webhook' },
)
export type Webhook = Static<typeof Webhook>

export const WebhookAttempt = t.Object({
  attempt: t.Integer({ minimum: 1 }),
  at: t.String(),
  durationMs: t.Integer({ minimum: 0 }),
  statusCode: t.Nullable(t.Integer({ description: 'the endpoint\'s answer; null when none came' })),
  error: t.Nullable(t.String({ description: 'null: delivered; else `http_<code>`, `timeout`, `connection_failed`, `redirect_not_followed`, `destination_not_allowed`, …' })),
})
export type WebhookAttempt = Static<typeof WebhookAttempt>

export const WebhookDelivery = t.Object(
  {
    id: t.String(),
    webhookId: t.String(),
    messageId: t.String({ description: 'the `webhook-id` header: the same at every attempt and resend, and for every endpoint of one fact' }),
    type: t.String(),
    status: t.Union(literals(WEBHOOK_DELIVERY_STATUSES)),
    createdAt: t.String(),
    deliveredAt: t.Nullable(t.String()),
    nextAttemptAt: t.Nullable(t.String({ description: 'when it is tried next; null unless pending' })),
    lastError: t.Nullable(t.String()),
    payload: t.Object({ type: t.String(), timestamp: t.String(), data: t.Record(t.String(), t.Unknown()) }, { description: 'the body sent, parsed' }),
    attempts: t.Array(WebhookAttempt, { description: 'oldest first' }),
  },
  { $id: 'WebhookDelivery' },
)
export type WebhookDelivery = Static<typeof WebhookDelivery>

export const CreateWebhookBody = t.Object({ url: Url, types: Types, description: t.Optional(Description) }, { $id: 'CreateWebhookBody' })
export type CreateWebhookBody = Static<typeof CreateWebhookBody>

export const UpdateWebhookBody = t.Object(
  {
    url: t.Optional(Url),
    types: t.Optional(Types),
    description: t.Optional(t.Nullable(Description)),
    enabled: t.Optional(t.Boolean({ description: 'true clears the reason it was disabled; false disables it (reason `operator`)' })),
  },
  { $id: 'UpdateWebhookBody', description: 'at least one field; a field left out keeps its value' },
)
export type UpdateWebhookBody = Static<typeof UpdateWebhookBody>

export const DeliveriesQuery = t.Object({
  limit: t.Optional(t.Numeric({ minimum: 1, maximum: 100, description: '1 to 100, default 50' })),
  before: t.Optional(t.String({ maxLength: 64, description: 'the `next` of the previous page' })),
})
export type DeliveriesQuery = Static<typeof DeliveriesQuery>

export const WebhookResponse = t.Object({ webhook: Webhook })
export type WebhookResponse = Static<typeof WebhookResponse>
export const WebhookWithSecret = t.Object({ webhook: Webhook, secret: t.String({ description: '`whsec_…`: shown this once; store it' }) })
export type WebhookWithSecret = Static<typeof WebhookWithSecret>
export const WebhooksResponse = t.Object({ webhooks: t.Array(Webhook, { description: 'oldest first' }) })
export const DeliveriesPage = t.Object({
  deliveries: t.Array(WebhookDelivery, { description: 'newest first' }),
  next: t.Nullable(t.String({ description: 'pass as `before` for older ones; null at the end' })),
})
export type DeliveriesPage = Static<typeof DeliveriesPage>
export const DeliveryResponse = t.Object({ delivery: WebhookDelivery })
