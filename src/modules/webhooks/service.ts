// The operators' side of webhooks (contract §18): endpoints created, listed,
// changed, deleted and their secrets rotated; deliveries listed with their
// attempts and resent. Each action is audited (by.record, the last write of
// its unit of work). What must stay true:
// - the secret leaves the server twice only: in the answer that created it
//   and in the one that rotated it; the database holds it sealed under a key
//   derived from the chain key, named after its endpoint;
// - a URL is checked (its host resolved, every address public unless
//   ARENA_WEBHOOKS_ALLOW_PRIVATE) before the unit of work, never inside it:
//   a slow resolver never holds the database;
// - at most WEBHOOK_LIMIT endpoints, counted in the insert's unit of work, so
//   two racing creations cannot both see 19.
// Knows nothing of HTTP.
import type { Storage } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import { toIso } from '../../shared/clock'
import { AppError, type ErrorDetail } from '../../shared/errors'
import { newId } from '../../shared/ids'
import type { Actor } from '../audit/log'
import { checkDestination } from './destination'
import { WEBHOOK_DESCRIPTION_MAX, WEBHOOK_LIMIT, WEBHOOK_URL_MAX, type DeliveriesPage, type UpdateWebhookBody, type Webhook, type WebhookDelivery, type WebhookWithSecret } from './model'
import { WEBHOOK_TYPES } from './catalogue'
import { newWebhookSecret, sealedSecretName, webhookSealKey } from './secret'
import type { WebhookAttemptRecord, WebhookDeliveryRecord, WebhookRecord, WebhookRow, WebhooksStore } from './store'
import type { MasterKey } from '../../shared/sealed'

/** How long the secret before a rotation keeps signing beside the new one. */
export const PREVIOUS_SECRET_TTL_MS = 24 * 3600_000
export const DELIVERIES_PAGE = 50

/** A change to an endpoint: the PATCH body, its types any strings (checked against the catalogue here, for the CLI's sake). */
export type WebhookChange = Omit<UpdateWebhookBody, 'types'> & { types?: readonly string[] | undefined }

function invalid(details: ErrorDetail[]): AppError {
  return new AppError('validation_failed', 'Request failed validation', { details })
}

/** The problem with `text` as an endpoint's URL, or null: http(s), no credentials, no fragment, at most 2048 characters. */
export function urlProblem(text: string): string | null {
  if (text.length > WEBHOOK_URL_MAX) return `At most ${WEBHOOK_URL_MAX} characters`
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return 'Not a URL'
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'An http or https URL'
  if (url.username !== '' || url.password !== '') return 'No user or password in the URL'
  if (url.hash !== '' || text.includes('#')) return 'No fragment (#…) in the URL'
  if (url.hostname === '') return 'A URL with a host'
  return null
}

/** The endpoint as the admin API answers it: never its secret. */
export function webhookView(row: WebhookRow): Webhook {
  return {
    id: row.id,
    url: row.url,
    types: row.types,
    description: row.description,
    enabled: row.enabled,
    disabledReason: row.disabledReason,
    previousSecretExpiresAt: row.previousExpiresAt === null ? null : toIso(row.previousExpiresAt),
    createdAt: toIso(row.createdAt),
    updatedAt: toIso(row.updatedAt),
  }
}

/** A delivery with its attempts, as the admin API answers it. */
export function deliveryView(delivery: WebhookDeliveryRecord, attempts: readonly WebhookAttemptRecord[]): WebhookDelivery {
  return {
    id: delivery.id,
    webhookId: delivery.webhookId,
    messageId: delivery.messageId,
    type: delivery.type,
    status: delivery.status,
    createdAt: toIso(delivery.createdAt),
    deliveredAt: delivery.deliveredAt === null ? null : toIso(delivery.deliveredAt),
    nextAttemptAt: delivery.status === 'pending' ? toIso(delivery.nextAttemptAt) : null,
    lastError: delivery.lastError,
    payload: JSON.parse(delivery.body) as WebhookDelivery['payload'],
    attempts: attempts
      .filter((a) => a.deliveryId === delivery.id)
      .map((a) => ({ attempt: a.attempt, at: toIso(a.at), durationMs: a.durationMs, statusCode: a.statusCode, error: a.error })),
  }
}

export interface WebhooksDeps {
  storage: Storage
  clock: Clock
  /** The chain key: the secrets' sealing key is derived from it. */
  chainKey: string
  /** ARENA_WEBHOOKS_ALLOW_PRIVATE. */
  allowPrivate: boolean
}

export class WebhooksService {
  private readonly sealKey: MasterKey

  constructor(private readonly deps: WebhooksDeps) {
    this.sealKey = webhookSealKey(deps.chainKey)
  }

  /** Checks a URL's form, then where it resolves to (outside any unit of work). */
  private async checkUrl(text: string): Promise<string> {
    const problem = urlProblem(text)
    if (problem !== null) throw invalid([{ path: 'body/url', message: problem }])
    const check = await checkDestination(new URL(text), this.deps.allowPrivate)
    if (!check.ok) throw new AppError('destination_not_allowed', `${check.detail}: webhooks are sent to public addresses only (ARENA_WEBHOOKS_ALLOW_PRIVATE allows private ones)`)
    return text
  }

  private static types(types: readonly string[]): string[] {
    const unknown = types.filter((type) => !(WEBHOOK_TYPES as readonly string[]).includes(type))
    if (unknown.length > 0) throw invalid([{ path: 'body/types', message: `Unknown types: ${unknown.join(', ')}` }])
    if (types.length === 0) throw invalid([{ path: 'body/types', message: 'At least one type' }])
    return WEBHOOK_TYPES.filter((type) => types.includes(type))
  }

  private static description(text: string | null | undefined): string | null {
    if (text === null || text === undefined) return null
    if (text.length > WEBHOOK_DESCRIPTION_MAX) throw invalid([{ path: 'body/description', message: `At most ${WEBHOOK_DESCRIPTION_MAX} characters` }])
    const trimmed = text.trim()
    return trimmed === '' ? null : trimmed
  }

  private static async found(store: WebhooksStore, id: string): Promise<WebhookRow> {
    const row = await store.get(id)
    if (!row) throw new AppError('not_found', 'No such webhook')
    return row
  }

  async create(input: { url: string; types: readonly string[]; description?: string | null | undefined }, by: Actor): Promise<WebhookWithSecret> {
    const types = WebhooksService.types(input.types)
    const description = WebhooksService.description(input.description)
    const url = await this.checkUrl(input.url)
    const id = newId('webhook')
    const secret = newWebhookSecret()
    const secretSealed = await this.sealKey.seal(secret, sealedSecretName(id))
    return this.deps.storage.write(async (tx) => {
      if ((await tx.webhooks.count()) >= WEBHOOK_LIMIT) throw new AppError('webhook_limit', `At most ${WEBHOOK_LIMIT} webhook endpoints; delete one first`)
      const now = this.deps.clock.now()
      const record: WebhookRecord = { id, url, description, enabled: true, disabledReason: null, secretSealed, previousSecretSealed: null, previousExpiresAt: null, createdAt: now, updatedAt: now }
      await tx.webhooks.insert(record, types)
      await by.record(tx, { action: 'webhook.create', target: id, details: { url, types, description } })
      return { webhook: webhookView({ ...record, types }), secret }
    })
  }

  async list(): Promise<Webhook[]> {
    return (await this.deps.storage.read.webhooks.list()).map(webhookView)
  }

  async get(id: string): Promise<Webhook> {
    return webhookView(await WebhooksService.found(this.deps.storage.read.webhooks, id))
  }

  async update(id: string, input: WebhookChange, by: Actor): Promise<Webhook> {
    if (input.url === undefined && input.types === undefined && input.description === undefined && input.enabled === undefined) {
      throw invalid([{ path: 'body', message: 'Give at least one of url, types, description, enabled' }])
    }
    const types = input.types === undefined ? undefined : WebhooksService.types(input.types)
    const description = input.description === undefined ? undefined : WebhooksService.description(input.description)
    const before = await WebhooksService.found(this.deps.storage.read.webhooks, id)
    // The destination is checked when the URL changes, before the unit of work.
    const url = input.url === undefined || input.url === before.url ? input.url : await this.checkUrl(input.url)
    return this.deps.storage.write(async (tx) => {
      const current = await WebhooksService.found(tx.webhooks, id)
      const now = this.deps.clock.now()
      const enabled =
        input.enabled === undefined || input.enabled === current.enabled
          ? {}
          : input.enabled
            ? { enabled: true, disabledReason: null }
            : { enabled: false, disabledReason: 'operator' as const }
      const row = (await tx.webhooks.update(id, { ...(url === undefined ? {} : { url }), ...(description === undefined ? {} : { description }), ...enabled, updatedAt: now }, types))!
      const changed = Object.fromEntries(
        Object.entries({ url, types, description, enabled: input.enabled }).filter(([, value]) => value !== undefined),
      )
      await by.record(tx, { action: 'webhook.update', target: id, details: changed })
      return webhookView(row)
    })
  }

  async delete(id: string, by: Actor): Promise<void> {
    await this.deps.storage.write(async (tx) => {
      const row = await WebhooksService.found(tx.webhooks, id)
      await tx.webhooks.delete(id)
      await by.record(tx, { action: 'webhook.delete', target: id, details: { url: row.url } })
    })
  }

  /** A new secret; the current one keeps signing beside it for 24 h (an older previous one is dropped). */
  async rotateSecret(id: string, by: Actor): Promise<WebhookWithSecret> {
    const secret = newWebhookSecret()
    const secretSealed = await this.sealKey.seal(secret, sealedSecretName(id))
    return this.deps.storage.write(async (tx) => {
      const current = await WebhooksService.found(tx.webhooks, id)
      const now = this.deps.clock.now()
      const previousExpiresAt = new Date(now.getTime() + PREVIOUS_SECRET_TTL_MS)
      const row = (await tx.webhooks.update(id, { secretSealed, previousSecretSealed: current.secretSealed, previousExpiresAt, updatedAt: now }))!
      await by.record(tx, { action: 'webhook.rotate_secret', target: id, details: { previousSecretExpiresAt: toIso(previousExpiresAt) } })
      return { webhook: webhookView(row), secret }
    })
  }

  /** An endpoint's deliveries with their attempts, newest first, paged by `before`. */
  async deliveries(id: string, query: { limit?: number | undefined; before?: string | undefined }): Promise<DeliveriesPage> {
    if (query.limit !== undefined && !Number.isInteger(query.limit)) throw invalid([{ path: 'query/limit', message: 'Expected a whole number' }])
    const store = this.deps.storage.read.webhooks
    await WebhooksService.found(store, id)
    const limit = query.limit ?? DELIVERIES_PAGE
    const rows = await store.deliveriesOf(id, query.before ?? null, limit + 1)
    const page = rows.slice(0, limit)
    const attempts = await store.attemptsOf(page.map((d) => d.id))
    return { deliveries: page.map((d) => deliveryView(d, attempts)), next: rows.length > limit ? page[page.length - 1]!.id : null }
  }

  /** One delivery with its attempts. */
  async delivery(id: string): Promise<WebhookDelivery> {
    const store = this.deps.storage.read.webhooks
    const delivery = await store.delivery(id)
    if (!delivery) throw new AppError('not_found', 'No such webhook delivery')
    return deliveryView(delivery, await store.attemptsOf([id]))
  }

  /** Puts a delivery back in the queue, due now (its attempts kept, the same webhook-id); refused while its endpoint is disabled. */
  async resend(deliveryId: string, by: Actor): Promise<WebhookDelivery> {
    return this.deps.storage.write(async (tx) => {
      const delivery = await tx.webhooks.delivery(deliveryId)
      if (!delivery) throw new AppError('not_found', 'No such webhook delivery')
      const webhook = await WebhooksService.found(tx.webhooks, delivery.webhookId)
      if (!webhook.enabled) throw new AppError('webhook_disabled', 'Its webhook endpoint is disabled: enable it first')
      const resent = (await tx.webhooks.resend(deliveryId, this.deps.clock.now()))!
      const attempts = await tx.webhooks.attemptsOf([deliveryId])
      await by.record(tx, { action: 'webhook_delivery.resend', target: deliveryId, details: { webhookId: webhook.id, messageId: delivery.messageId, status: delivery.status } })
      return deliveryView(resent, attempts)
    })
  }
}
