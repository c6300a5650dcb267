// PIN and one-time PIN sessions over HTTP (contract §3); the verify that
// spends a session on a withdrawal is the wallet's (../wallet/index.ts).
import { Elysia, t } from 'elysia'
import { PinSessionResponse, SecurityEventAccepted, SecurityEventBody, SetPinBody } from './model'
import { authGuard } from '../../plugins/auth'
import { BEARER, BEARER_SECURITY, errors, JSON_BODY, optionalBody, STORAGE } from '../../plugins/openapi'
import { EmptyBody } from '../../shared/models'
import type { AuthService } from '../auth/service'
import type { PinService } from './pin-service'
import type { SecurityEventLog } from './event-log'
import { AppError } from '../../shared/errors'

export const MAX_DETAILS_BYTES = 8 * 1024
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/

/** Per-user token bucket: a burst of 30, refilled at 10 per second. */
function createRateLimiter(burst = 30, perSecond = 10) {
  const buckets = new Map<string, { tokens: number; at: number }>()
  return (key: string): boolean => {
    const now = performance.now()
    // Forget users whose bucket has refilled, so the map does not grow forever.
    if (buckets.size > 10_000) {
      for (const [k, b] of buckets) if (b.tokens + ((now - b.at) / 1000) * perSecond >= burst) buckets.delete(k)
    }
    const bucket = buckets.get(key) ?? { tokens: burst, at: now }
    bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.at) / 1000) * perSecond)
    bucket.at = now
    buckets.set(key, bucket)
    if (bucket.tokens < 1) return false
    bucket.tokens -= 1
    return true
  }
}

export function securityModule(auth: AuthService, pins: PinService, securityLog: SecurityEventLog) {
  const allow = createRateLimiter()
  return new Elysia({ name: 'arena/security', prefix: '/api/v1/security' })
    .use(authGuard(auth))
    .post(
      '/events',
      async ({ body, auth: { user }, set }) => {
        if (!allow(user.id)) throw new AppError('rate_limited', 'Too many security events; slow down', { headers: { 'retry-after': '1' } })
        const details = body.details ?? {}
        if (Buffer.byteLength(JSON.stringify(details)) > MAX_DETAILS_BYTES) {
          throw new AppError('payload_too_large', `details exceeds ${MAX_DETAILS_BYTES} bytes`)
        }
        const occurredAt = body.occurredAt === undefined ? undefined : new Date(body.occurredAt)
        const receivedAt = securityLog.now().getTime()
        // An ISO-8601 UTC time within the last 30 days and not ahead by more than 5 minutes.
        if (
          occurredAt !== undefined &&
          (!ISO_UTC.test(body.occurredAt!) || Number.isNaN(occurredAt.getTime()) || occurredAt.getTime() > receivedAt + 300_000 || occurredAt.getTime() < receivedAt - 30 * 86_400_000)
        ) {
          throw new AppError('validation_failed', 'Request failed validation', {
            details: [{ path: 'body/occurredAt', message: 'Expected an ISO-8601 UTC time within the last 30 days' }],
          })
        }
        // The account's daily bound (429 once reached) is checked before the status is set.
        const accepted = await securityLog.report({ userId: user.id, kind: body.kind, level: body.level ?? 'WARN', details, ...(occurredAt ? { occurredAt } : {}) })
        set.status = 202
        return { accepted }
      },
      {
        auth: true,
        body: SecurityEventBody,
        response: { 202: SecurityEventAccepted, ...errors(JSON_BODY, BEARER, { 429: ['rate_limited'] }, STORAGE) },
        detail: { tags: ['security'], summary: 'Report a security event (best effort)', security: BEARER_SECURITY },
      },
    )
    .put(
      '/pin',
      async ({ body, auth: { user } }) => {
        await pins.setPin(user.id, body.pin, body.password)
        return { ok: true as const }
      },
      {
        auth: true,
        body: SetPinBody,
        // 429: the password check shares the login throttle; 503 also when the hash gate is full.
        response: { 200: t.Object({ ok: t.Literal(true) }), ...errors(JSON_BODY, BEARER, { 403: ['forbidden'], 429: ['rate_limited'] }, STORAGE) },
        detail: { tags: ['security'], summary: 'Set or change the PIN', security: BEARER_SECURITY },
      },
    )
    .post(
      '/pin-session',
      ({ auth: { user }, set }) => {
        set.status = 201
        return pins.mint(user.id)
      },
      {
        auth: true,
        ...optionalBody(EmptyBody),
        response: { 201: PinSessionResponse, ...errors(JSON_BODY, BEARER, { 409: ['conflict'], 429: ['pin_locked', 'rate_limited'] }, STORAGE) },
        detail: { tags: ['security'], summary: 'Mint a one-time PIN session', security: BEARER_SECURITY },
      },
    )
}
