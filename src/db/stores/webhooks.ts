// Webhook endpoints, their deliveries and attempts (src/modules/webhooks/store.ts),
// the same queries on both engines. A change that reports a fact reads the
// enabled subscriptions once per unit of work (`subscribers`); nothing is
// written when nobody subscribes.
import { and, asc, count, desc, eq, inArray, lt, lte, min, or } from 'drizzle-orm'
import type {
  NewWebhookDelivery,
  WebhookAttemptOutcome,
  WebhookAttemptRecord,
  WebhookDeliveryRecord,
  WebhookRecord,
  WebhookRow,
  WebhooksStore,
} from '../../modules/webhooks/store'
import { WEBHOOK_TYPES } from '../../modules/webhooks/catalogue'
import { Queries } from './scope'

const typeOrder = new Map<string, number>(WEBHOOK_TYPES.map((type, i) => [type, i]))
const byCatalogue = (a: string, b: string) => (typeOrder.get(a) ?? 999) - (typeOrder.get(b) ?? 999) || a.localeCompare(b)

export class WebhooksQueries extends Queries implements WebhooksStore {
  private async withTypes(records: WebhookRecord[]): Promise<WebhookRow[]> {
    if (records.length === 0) return []
    const { webhookTypes } = this.t
    const rows = await this.db
      .select()
      .from(webhookTypes)
      .where(
        inArray(
          webhookTypes.webhookId,
          records.map((r) => r.id),
        ),
      )
    const types = new Map<string, string[]>()
    for (const row of rows) types.set(row.webhookId, [...(types.get(row.webhookId) ?? []), row.type])
    return records.map((record) => ({ ...record, types: (types.get(record.id) ?? []).sort(byCatalogue) }))
  }

  async insert(webhook: WebhookRecord, types: readonly string[]): Promise<void> {
    this.#subscriptions = undefined
    await this.db.insert(this.t.webhooks).values(webhook)
    await this.replaceTypes(webhook.id, types)
  }

  private async replaceTypes(webhookId: string, types: readonly string[]): Promise<void> {
    const { webhookTypes } = this.t
    await this.db.delete(webhookTypes).where(eq(webhookTypes.webhookId, webhookId))
    const unique = [...new Set(types)]
    if (unique.length > 0) await this.db.insert(webhookTypes).values(unique.map((type) => ({ webhookId, type })))
  }

  async get(id: string): Promise<WebhookRow | null> {
    const rows = await this.db.select().from(this.t.webhooks).where(eq(this.t.webhooks.id, id))
    const [row] = await this.withTypes(rows)
    return row ?? null
  }

  async list(): Promise<WebhookRow[]> {
    const { webhooks } = this.t
    return this.withTypes(await this.db.select().from(webhooks).orderBy(asc(webhooks.createdAt), asc(webhooks.id)))
  }

  async count(): Promise<number> {
    const [row] = await this.db.select({ n: count() }).from(this.t.webhooks)
    return Number(row?.n ?? 0)
  }

  async update(id: string, change: Parameters<WebhooksStore['update']>[1], types?: readonly string[]): Promise<WebhookRow | null> {
    this.#subscriptions = undefined
    const { webhooks } = this.t
    const set = Object.fromEntries(Object.entries(change).filter(([, value]) => value !== undefined))
    const rows =
      Object.keys(set).length > 0
        ? await this.db.update(webhooks).set(set).where(eq(webhooks.id, id)).returning()
        : await this.db.select().from(webhooks).where(eq(webhooks.id, id))
    if (rows.length === 0) return null
    if (types !== undefined) await this.replaceTypes(id, types)
    const [row] = await this.withTypes(rows)
    return row ?? null
  }

  async delete(id: string): Promise<boolean> {
    this.#subscriptions = undefined
    // Its types, deliveries and their attempts go with it (ON DELETE CASCADE).
    const { webhooks } = this.t
    const removed = await this.db.delete(webhooks).where(eq(webhooks.id, id)).returning({ id: webhooks.id })
    return removed.length > 0
  }

  async disableGone(id: string, now: Date): Promise<boolean> {
    this.#subscriptions = undefined
    const { webhooks } = this.t
    const rows = await this.db
      .update(webhooks)
      .set({ enabled: false, disabledReason: 'gone', updatedAt: now })
      .where(and(eq(webhooks.id, id), eq(webhooks.enabled, true)))
      .returning({ id: webhooks.id })
    return rows.length > 0
  }

  /**
   * Inside a unit of work, every enabled subscription, read at its first
   * publish and kept for the rest of it: a rated decision publishes
   * `match.decided` and `rating.updated`, one read between them. A store
   * lives for one unit of work (one attempt of it on PostgreSQL), so nothing
   * is kept across transactions, and a write to the endpoints in this one
   * forgets it.
   */
  #subscriptions: Map<string, string[]> | undefined

  async subscribers(type: string): Promise<string[]> {
    if (this.scope.afterCommit === undefined) return (await this.enabledSubscriptions()).filter((row) => row.type === type).map((row) => row.webhookId)
    if (this.#subscriptions === undefined) {
      const byType = new Map<string, string[]>()
      for (const row of await this.enabledSubscriptions()) byType.set(row.type, [...(byType.get(row.type) ?? []), row.webhookId])
      this.#subscriptions = byType
    }
    return this.#subscriptions.get(type) ?? []
  }

  /** Every (type, endpoint) of the enabled endpoints: at most 20 endpoints of the catalogue's types. */
  protected async enabledSubscriptions(): Promise<{ type: string; webhookId: string }[]> {
    const { webhooks, webhookTypes } = this.t
    return this.db
      .select({ type: webhookTypes.type, webhookId: webhookTypes.webhookId })
      .from(webhookTypes)
      .innerJoin(webhooks, eq(webhooks.id, webhookTypes.webhookId))
      .where(eq(webhooks.enabled, true))
  }

  async enqueue(deliveries: readonly NewWebhookDelivery[]): Promise<void> {
    if (deliveries.length === 0) return
    await this.db.insert(this.t.webhookDeliveries).values(
      deliveries.map((delivery) => ({ ...delivery, status: 'pending' as const, attempts: 0, nextAttemptAt: delivery.createdAt, lastError: null, deliveredAt: null })),
    )
  }

  async dueEndpoints(now: Date): Promise<string[]> {
    const { webhooks, webhookDeliveries } = this.t
    const rows = await this.db
      .selectDistinct({ id: webhookDeliveries.webhookId })
      .from(webhookDeliveries)
      .innerJoin(webhooks, eq(webhooks.id, webhookDeliveries.webhookId))
      .where(and(eq(webhookDeliveries.status, 'pending'), lte(webhookDeliveries.nextAttemptAt, now), eq(webhooks.enabled, true)))
    return rows.map((row) => row.id)
  }

  async dueFor(webhookId: string, now: Date, limit: number): Promise<WebhookDeliveryRecord[]> {
    const { webhookDeliveries } = this.t
    return this.db
      .select()
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.webhookId, webhookId), eq(webhookDeliveries.status, 'pending'), lte(webhookDeliveries.nextAttemptAt, now)))
      .orderBy(asc(webhookDeliveries.createdAt), asc(webhookDeliveries.id))
      .limit(limit)
  }

  async recordAttempt(deliveryId: string, outcome: WebhookAttemptOutcome): Promise<boolean> {
    const { webhookDeliveries, webhookAttempts } = this.t
    const [delivery] = await this.db
      .select({ attempts: webhookDeliveries.attempts, status: webhookDeliveries.status })
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.id, deliveryId))
    if (delivery === undefined || delivery.status !== 'pending') return false
    const attempt = delivery.attempts + 1
    const moved =
      outcome.error === null
        ? { status: 'delivered' as const, deliveredAt: outcome.at, lastError: null }
        : outcome.nextAttemptAt === null
          ? { status: 'failed' as const, lastError: outcome.error }
          : { nextAttemptAt: outcome.nextAttemptAt, lastError: outcome.error }
    const updated = await this.db
      .update(webhookDeliveries)
      .set({ attempts: attempt, ...moved })
      .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.status, 'pending'), eq(webhookDeliveries.attempts, delivery.attempts)))
      .returning({ id: webhookDeliveries.id })
    if (updated.length === 0) return false
    await this.db.insert(webhookAttempts).values({ deliveryId, attempt, at: outcome.at, durationMs: outcome.durationMs, statusCode: outcome.statusCode, error: outcome.error })
    return true
  }

  async delivery(id: string): Promise<WebhookDeliveryRecord | null> {
    const [row] = await this.db.select().from(this.t.webhookDeliveries).where(eq(this.t.webhookDeliveries.id, id))
    return row ?? null
  }

  async deliveriesOf(webhookId: string, beforeId: string | null, limit: number): Promise<WebhookDeliveryRecord[]> {
    const { webhookDeliveries } = this.t
    return this.db
      .select()
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.webhookId, webhookId), beforeId === null ? undefined : lt(webhookDeliveries.id, beforeId)))
      .orderBy(desc(webhookDeliveries.id))
      .limit(limit)
  }

  async attemptsOf(deliveryIds: readonly string[]): Promise<WebhookAttemptRecord[]> {
    if (deliveryIds.length === 0) return []
    const { webhookAttempts } = this.t
    return this.db
      .select()
      .from(webhookAttempts)
      .where(inArray(webhookAttempts.deliveryId, [...deliveryIds]))
      .orderBy(asc(webhookAttempts.deliveryId), asc(webhookAttempts.attempt))
  }

  async resend(id: string, now: Date): Promise<WebhookDeliveryRecord | null> {
    const { webhookDeliveries } = this.t
    const [row] = await this.db
      .update(webhookDeliveries)
      .set({ status: 'pending', nextAttemptAt: now, deliveredAt: null })
      .where(eq(webhookDeliveries.id, id))
      .returning()
    return row ?? null
  }

  async queueStats(): Promise<{ pending: number; oldestCreatedAt: Date | null }> {
    const { webhookDeliveries } = this.t
    const [row] = await this.db
      .select({ n: count(), oldest: min(webhookDeliveries.createdAt) })
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.status, 'pending'))
    const oldest = row?.oldest ?? null
    return { pending: Number(row?.n ?? 0), oldestCreatedAt: oldest === null ? null : new Date(oldest as Date | string | number) }
  }

  async prune(deliveredBefore: Date, failedBefore: Date): Promise<number> {
    const { webhookDeliveries, webhookAttempts } = this.t
    const condition = or(
      and(eq(webhookDeliveries.status, 'delivered'), lt(webhookDeliveries.deliveredAt, deliveredBefore)),
      and(eq(webhookDeliveries.status, 'failed'), lt(webhookDeliveries.createdAt, failedBefore)),
    )
    const doomed = this.db.select({ id: webhookDeliveries.id }).from(webhookDeliveries).where(condition)
    await this.db.delete(webhookAttempts).where(inArray(webhookAttempts.deliveryId, doomed))
    const removed = await this.db.delete(webhookDeliveries).where(condition).returning({ id: webhookDeliveries.id })
    return removed.length
  }

  async expireDisabled(createdBefore: Date): Promise<number> {
    const { webhooks, webhookDeliveries } = this.t
    const disabled = this.db.select({ id: webhooks.id }).from(webhooks).where(eq(webhooks.enabled, false))
    const expired = await this.db
      .update(webhookDeliveries)
      .set({ status: 'failed', lastError: 'expired' })
      .where(and(eq(webhookDeliveries.status, 'pending'), lt(webhookDeliveries.createdAt, createdBefore), inArray(webhookDeliveries.webhookId, disabled)))
      .returning({ id: webhookDeliveries.id })
    return expired.length
  }
}
