// Deliveries queued and attempted without the delivery loop, for the tests of
// what operators see of them (the admin API, the console, the CLI): facts
// published as a change publishes them (publishWebhook, in a unit of work),
// and attempts recorded as the loop records them (recordAttempt).
import type { TestApp } from './app'
import { publishWebhook } from '../../src/modules/webhooks/publish'
import type { WebhookAttemptOutcome, WebhookDeliveryRecord } from '../../src/modules/webhooks/store'

/** A `match.decided` fact published now: one delivery per enabled endpoint subscribed to it; their ids. */
export async function publishMatchDecided(ctx: Pick<TestApp, 'storage' | 'clock'>, matchId = `mat_${crypto.randomUUID().replaceAll('-', '')}`): Promise<string[]> {
  const now = ctx.clock.now()
  await ctx.storage.write((tx) =>
    publishWebhook(tx, { type: 'match.decided', data: { matchId, gameId: 'gam_test', tournamentId: null, outcome: 'DRAW', winnerParticipantId: null, winnerUserId: null, players: [], reason: 'claims_agree' } }, now),
  )
  const all = await ctx.storage.read.webhooks.list()
  const ids: string[] = []
  for (const webhook of all) {
    const [latest] = await ctx.storage.read.webhooks.deliveriesOf(webhook.id, null, 1)
    if (latest && JSON.parse(latest.body).data.matchId === matchId) ids.push(latest.id)
  }
  return ids
}

/** Records an attempt of a pending delivery as the delivery loop would: `error` null delivered it; `retryInMs` null gives up. */
export async function recordAttempt(
  ctx: Pick<TestApp, 'storage' | 'clock'>,
  deliveryId: string,
  attempt: { statusCode: number | null; error: string | null; retryInMs?: number | null; durationMs?: number },
): Promise<WebhookDeliveryRecord> {
  const at = ctx.clock.now()
  const outcome: WebhookAttemptOutcome = {
    at,
    durationMs: attempt.durationMs ?? 12,
    statusCode: attempt.statusCode,
    error: attempt.error,
    nextAttemptAt: attempt.retryInMs === null || attempt.retryInMs === undefined ? null : new Date(at.getTime() + attempt.retryInMs),
  }
  const recorded = await ctx.storage.write((tx) => tx.webhooks.recordAttempt(deliveryId, outcome))
  if (!recorded) throw new Error(`delivery ${deliveryId} is not pending`)
  return (await ctx.storage.read.webhooks.delivery(deliveryId))!
}
