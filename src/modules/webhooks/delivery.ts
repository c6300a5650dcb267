// Webhook delivery (contract §18): the loop that sends the deliveries
// publishing queued (src/modules/webhooks/publish.ts) to the studio's
// endpoints, Standard Webhooks v1, at least once.
//
// It runs as one leased loop among every instance on the database
// (src/server.ts, 'webhook delivery'), so each endpoint has one sender at a
// time across the deployment. A tick serves while there is work: it looks for
// the endpoints with due deliveries (again every 250 ms while a sender runs)
// and starts a sender for each that has none, so endpoints are served in
// parallel and a slow one never delays another. A sender sends its endpoint's
// due deliveries oldest first, one at a time, and stops at its first failure:
// the rest wait for their own next attempt.
//
// An attempt re-reads the endpoint (URL, secrets, enabled), checks the
// destination again (a name may resolve elsewhere since the endpoint was
// created) and connects to the address it checked, never resolving the name
// a second time (a DNS rebinding between check and connection would
// otherwise reach an address the check refused): the URL carries that
// address, the Host header and, over https, the TLS server name (SNI and
// the certificate's check) the endpoint's own host. Redirects are not
// followed. The attempt is recorded after the answer, in its own write: a
// crash before that sends the delivery again with the same `webhook-id`
// (at least once; the receiver de-duplicates on it).
import ipaddr from 'ipaddr.js'
import type { Config } from '../../config'
import type { Storage } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import type { Logger } from '../../shared/logger'
import type { MasterKey } from '../../shared/sealed'
import { VERSION } from '../../shared/version'
import { checkDestination, hostOf } from './destination'
import { sealedSecretName, signatureHeader, webhookSealKey } from './secret'
import type { WebhookDeliveryOutcome, WebhookDeliveryRecord, WebhookRow } from './store'

/** The first retry comes 5 s after the first failure, then 10 s, 20 s, … doubling, at most 1 h apart. */
export const WEBHOOK_RETRY_BASE_MS = 5_000
export const WEBHOOK_RETRY_CAP_MS = 3_600_000
/** A delivery is retried for 3 days from its creation, then given up (failed). */
export const WEBHOOK_GIVE_UP_MS = 3 * 86_400_000
/** How long an attempt waits for the endpoint's answer (the status line and headers). */
export const WEBHOOK_TIMEOUT_MS = 10_000
/** While a sender runs, how often a tick looks for endpoints that became due. */
const RESCAN_MS = 250
/** Deliveries a sender reads per query (it reads again while more are due). */
const BATCH = 20

/** The wait before the next attempt of a delivery that failed `attemptsBefore` times before this failure: 5 s, 10 s, 20 s, …, at most 1 h. */
export function retryDelayMs(attemptsBefore: number): number {
  return Math.min(WEBHOOK_RETRY_BASE_MS * 2 ** Math.min(Math.max(attemptsBefore, 0), 20), WEBHOOK_RETRY_CAP_MS)
}

/**
 * When a delivery created at `createdAt` that just failed at `now` (its
 * `attemptsBefore`-th failure before this one) is tried next; null: give up,
 * the next attempt would fall after its 3 days.
 */
export function nextAttempt(createdAt: Date, attemptsBefore: number, now: Date): Date | null {
  const next = now.getTime() + retryDelayMs(attemptsBefore)
  return next > createdAt.getTime() + WEBHOOK_GIVE_UP_MS ? null : new Date(next)
}

/**
 * Where to connect for `url` once its host resolved to `address`: the URL
 * with the address in place of the host, the Host header to send, and over
 * https the TLS server name (SNI, and the name the certificate is checked
 * against). A URL whose host is an address already needs no server name.
 */
export function pinnedTarget(url: URL, address: string): { url: string; host: string; serverName: string | undefined } {
  const pinned = new URL(url.href)
  pinned.hostname = address.includes(':') ? `[${address}]` : address
  const host = hostOf(url)
  return { url: pinned.href, host: url.host, serverName: url.protocol === 'https:' && !ipaddr.isValid(host) ? host : undefined }
}

/** The address an attempt connects to among those the check accepted: the first IPv4 one (what most hosts reach), else the first. */
export function chosenAddress(addresses: readonly string[]): string {
  return addresses.find((address) => ipaddr.IPv4.isValid(address)) ?? addresses[0]!
}

export interface WebhookDeliveryDeps {
  storage: Storage
  clock: Clock
  logger: Logger
  config: Pick<Config, 'webhooksAllowPrivate'>
  /** The chain key, from which the key sealing the endpoints' secrets is derived. */
  chainKey: string
  /** How long an attempt waits for an answer; 10 s (tests shorter). */
  timeoutMs?: number
}

export interface WebhookDeliveryReport {
  delivered: number
  failed: number
}

interface AttemptResult {
  statusCode: number | null
  /** null: delivered. */
  error: string | null
  /** The endpoint answered 410 Gone: disable it. */
  gone: boolean
}

/** Sends the queued deliveries. One per server; `stop` before the database closes. */
export class WebhookDelivery {
  readonly #senders = new Map<string, Promise<void>>()
  readonly #stopping = new AbortController()
  readonly #sealKey: MasterKey
  readonly #timeoutMs: number

  constructor(private readonly deps: WebhookDeliveryDeps) {
    this.#sealKey = webhookSealKey(deps.chainKey)
    this.#timeoutMs = deps.timeoutMs ?? WEBHOOK_TIMEOUT_MS
  }

  /**
   * One tick: serves until no endpoint has a due delivery its sender could
   * send (every due endpoint's sender stopped at a failure, or had none), or
   * `stop` is called. What the senders of this tick did.
   */
  async deliverDue(): Promise<WebhookDeliveryReport> {
    const report: WebhookDeliveryReport = { delivered: 0, failed: 0 }
    // An endpoint whose sender stopped at a failure this tick waits for the next tick (or its next attempt time).
    const stoppedThisTick = new Set<string>()
    try {
      for (;;) {
        if (this.#stopping.signal.aborted) break
        const due = await this.deps.storage.read.webhooks.dueEndpoints(this.deps.clock.now())
        for (const webhookId of due) {
          if (this.#senders.has(webhookId) || stoppedThisTick.has(webhookId)) continue
          const sender = this.#serve(webhookId, report)
            .then((finished) => {
              if (!finished) stoppedThisTick.add(webhookId)
            })
            .catch((error: unknown) => {
              stoppedThisTick.add(webhookId)
              this.deps.logger.error('webhook sender error', { webhookId, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) })
            })
            .finally(() => this.#senders.delete(webhookId))
          this.#senders.set(webhookId, sender)
        }
        if (this.#senders.size === 0) break
        await Promise.race([...this.#senders.values(), this.#pause(RESCAN_MS)])
      }
    } finally {
      await Promise.all(this.#senders.values())
    }
    return report
  }

  /** Aborts the attempts in flight (they stay pending, sent again later with the same id) and resolves once every sender has stopped. */
  async stop(): Promise<void> {
    this.#stopping.abort()
    await Promise.all(this.#senders.values())
  }

  /** Sends one endpoint's due deliveries, oldest first; true when none is due any more, false when it stopped at a failure (or a stop). */
  async #serve(webhookId: string, report: WebhookDeliveryReport): Promise<boolean> {
    const { storage, clock } = this.deps
    for (;;) {
      const due = await storage.read.webhooks.dueFor(webhookId, clock.now(), BATCH)
      if (due.length === 0) return true
      for (const delivery of due) {
        if (this.#stopping.signal.aborted) return false
        const outcome = await this.#attempt(delivery)
        if (outcome === 'delivered') report.delivered++
        else if (outcome === 'failed') report.failed++
        if (outcome !== 'delivered') return false
      }
    }
  }

  /** One attempt of one delivery, recorded; what it counted as, or 'stopped' when there was no verdict (a stop, the endpoint disabled or gone). */
  async #attempt(delivery: WebhookDeliveryRecord): Promise<WebhookDeliveryOutcome | 'stopped'> {
    const { storage, clock, logger } = this.deps
    const webhook = await storage.read.webhooks.get(delivery.webhookId)
    if (webhook === null || !webhook.enabled) return 'stopped'
    const at = clock.now()
    const started = performance.now()
    const result = await this.#send(webhook, delivery, at)
    if (result === 'stopped') {
      logger.info('webhook attempt interrupted by stop', { webhookId: webhook.id, deliveryId: delivery.id })
      return 'stopped'
    }
    const durationMs = Math.round(performance.now() - started)
    const answeredAt = clock.now()
    const nextAttemptAt = result.error === null ? null : nextAttempt(delivery.createdAt, delivery.attempts, answeredAt)
    const outcome: WebhookDeliveryOutcome =
      result.error === null ? 'delivered' : result.error === 'destination_not_allowed' ? 'refused' : nextAttemptAt === null ? 'failed' : 'retried'
    const recorded = await storage.write(async (tx) => {
      const moved = await tx.webhooks.recordAttempt(delivery.id, { at, durationMs, statusCode: result.statusCode, error: result.error, nextAttemptAt })
      if (moved) tx.count('webhookDeliveries', outcome, 1)
      if (result.gone) await tx.webhooks.disableGone(webhook.id, answeredAt)
      return moved
    })
    const fields = { webhookId: webhook.id, deliveryId: delivery.id, messageId: delivery.messageId, type: delivery.type, attempt: delivery.attempts + 1, durationMs }
    if (!recorded) logger.warn('webhook attempt made, but the delivery was no longer pending', fields)
    else if (result.error === null) logger.debug('webhook delivered', { ...fields, statusCode: result.statusCode })
    else
      logger.warn(nextAttemptAt === null ? 'webhook delivery failed for good' : 'webhook delivery failed, will retry', {
        ...fields,
        statusCode: result.statusCode,
        error: result.error,
        ...(nextAttemptAt === null ? {} : { retryAt: nextAttemptAt.toISOString() }),
      })
    if (result.gone) logger.warn('webhook endpoint answered 410 Gone: disabled', { webhookId: webhook.id })
    return outcome
  }

  /** Checks the destination, signs and posts; what came back, or 'stopped' when `stop` cut it short. */
  async #send(webhook: WebhookRow, delivery: WebhookDeliveryRecord, at: Date): Promise<AttemptResult | 'stopped'> {
    const failed = (error: string, statusCode: number | null = null): AttemptResult => ({ statusCode, error, gone: false })
    // The operators' API accepts only http(s) URLs; a row that is not one fails its attempts instead of its sender.
    const url = URL.parse(webhook.url)
    if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:')) return failed('invalid_url')
    const check = await checkDestination(url, this.deps.config.webhooksAllowPrivate)
    if (!check.ok) return failed(check.reason)
    let secrets: string[]
    try {
      secrets = await this.#secretsOf(webhook, at)
    } catch {
      // Sealed under another chain key, or altered: nothing can be signed.
      this.deps.logger.error('webhook secret does not open', { webhookId: webhook.id })
      return failed('secret_unavailable')
    }
    const timestamp = Math.floor(at.getTime() / 1000)
    const target = pinnedTarget(url, chosenAddress(check.addresses))
    const timeout = AbortSignal.timeout(this.#timeoutMs)
    if (this.#stopping.signal.aborted) return 'stopped'
    try {
      const response = await fetch(target.url, {
        method: 'POST',
        headers: {
          host: target.host,
          'content-type': 'application/json',
          'user-agent': `arena-webhooks/${VERSION}`,
          'webhook-id': delivery.messageId,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signatureHeader(secrets, delivery.messageId, timestamp, delivery.body),
        },
        body: delivery.body,
        redirect: 'manual',
        signal: AbortSignal.any([timeout, this.#stopping.signal]),
        ...(target.serverName === undefined ? {} : { tls: { serverName: target.serverName } }),
      })
      // The answer's body is never read, let alone stored.
      await response.body?.cancel().catch(() => {})
      const status = response.status
      if (status >= 200 && status < 300) return { statusCode: status, error: null, gone: false }
      if (status >= 300 && status < 400) return failed('redirect_not_followed', status)
      return { statusCode: status, error: `http_${status}`, gone: status === 410 }
    } catch {
      if (this.#stopping.signal.aborted) return 'stopped'
      if (timeout.aborted) return failed('timeout')
      return failed('connection_failed')
    }
  }

  /** The secrets that sign now: the current one, and the previous one while its 24 h last. */
  async #secretsOf(webhook: WebhookRow, at: Date): Promise<string[]> {
    const name = sealedSecretName(webhook.id)
    const current = await this.#sealKey.open(webhook.secretSealed, name)
    if (webhook.previousSecretSealed === null || webhook.previousExpiresAt === null || webhook.previousExpiresAt <= at) return [current]
    return [current, await this.#sealKey.open(webhook.previousSecretSealed, name)]
  }

  /** Resolves after `ms`, or at once when stopped. */
  #pause(ms: number): Promise<void> {
    const signal = this.#stopping.signal
    return new Promise((resolve) => {
      const onAbort = () => {
        clearTimeout(timer)
        resolve()
      }
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', onAbort)
        resolve()
      }, ms)
      signal.addEventListener('abort', onAbort, { once: true })
    })
  }
}
