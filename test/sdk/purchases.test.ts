// The SDK's purchase client against the real server: integrity checks block
// before anything is minted, and a PIN verify is sent once and only once,
// whatever happens to it (public-api.md verify rule 1).
import { afterEach, describe, expect, test } from 'bun:test'
import { ApiError, IntegrityBlocked, NetworkError, OutcomeUnknown, PinLocked, PinSessionExpired, RateLimited } from '@arena/sdk'
import { listSecurityEvents } from '../../src/modules/security/event-log'
import type { TestApp } from '../helpers/app'
import { createArenaApp, type Player } from '../helpers/arena'
import { PASSWORD } from '../helpers/auth'
import { balance, funded, PIN, someAddress } from '../helpers/purchases'
import { sdkClient, type Interceptor } from '../helpers/sdk'

let ctx: TestApp
afterEach(() => ctx?.close())

const VERIFY = /^\/api\/v1\/security\/pin-session\/[^/]+\/verify$/
const MINT = /^\/api\/v1\/security\/pin-session$/
const EVENTS = /^\/api\/v1\/security\/events$/

async function buyer(options: Parameters<typeof sdkClient>[1] = {}): Promise<{ player: Player } & ReturnType<typeof sdkClient>> {
  const player = await funded(ctx, '100')
  const sdk = sdkClient(ctx, options)
  await sdk.client.auth.login(player.username, PASSWORD)
  return { player, ...sdk }
}

async function securityEvents() {
  await ctx.services.securityLog.flush()
  return (await listSecurityEvents(ctx.services.storage.read.security, 0, 100)).events
}

/** Sends the verify to the server, then loses the answer as a dropped connection would. */
const loseVerifyAnswer: Interceptor = async (request, forward) => {
  const response = await forward()
  if (VERIFY.test(request.path)) {
    await response.body?.cancel()
    throw new TypeError('fetch failed: connection reset')
  }
  return response
}

describe('SDK purchases: authorize', () => {
  test('a correct PIN authorizes one withdrawal with one mint and one verify', async () => {
    ctx = await createArenaApp()
    const { client, count, player } = await buyer()
    const to = someAddress()
    const result = await client.purchases.authorize({ pin: PIN, amount: '12.5', destinationAddress: to })
    expect(result.valid).toBe(true)
    expect(result.locked).toBe(false)
    expect(result.attempt).toBe(0)
    expect(result.withdrawal).toMatchObject({ amount: '12.5', destinationAddress: to, idempotencyKey: result.idempotencyKey })
    expect(result.idempotencyKey).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(count('POST', MINT)).toBe(1)
    expect(count('POST', VERIFY)).toBe(1)
    expect(await balance(ctx, player)).toBe('87.5')
  })

  test('a wrong PIN is a result, not an error: valid false with the attempt count', async () => {
    ctx = await createArenaApp()
    const { client, count, player } = await buyer()
    const result = await client.purchases.authorize({ pin: '000111', amount: '1', destinationAddress: someAddress() })
    expect(result).toMatchObject({ valid: false, locked: false, attempt: 1 })
    expect(result.withdrawal).toBeUndefined()
    expect(count('POST', VERIFY)).toBe(1)
    expect(await balance(ctx, player)).toBe('100')
  })

  test('the answer lost after the server debited: OutcomeUnknown with the key, one verify sent; the same key then finds the withdrawal and never debits twice', async () => {
    ctx = await createArenaApp()
    const { client, count, player } = await buyer({ intercept: loseVerifyAnswer })
    const to = someAddress()
    const error = await client.purchases.authorize({ pin: PIN, amount: '30', destinationAddress: to }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(OutcomeUnknown)
    const unknown = error as OutcomeUnknown
    expect(unknown.idempotencyKey).toBeString()
    expect(count('POST', VERIFY)).toBe(1)
    expect(await balance(ctx, player)).toBe('70')

    // A second client that does not lose answers learns the outcome with the same key.
    const { client: again, count: againCount } = sdkClient(ctx)
    await again.auth.login(player.username, PASSWORD)
    const found = await again.purchases.authorize({ pin: PIN, amount: '30', destinationAddress: to, idempotencyKey: unknown.idempotencyKey })
    expect(found.valid).toBe(true)
    expect(found.withdrawal!.idempotencyKey).toBe(unknown.idempotencyKey)
    expect(againCount('POST', VERIFY)).toBe(1)
    expect(await balance(ctx, player)).toBe('70')
  })

  test('a connection that fails before the server saw the verify is still OutcomeUnknown and still not retried', async () => {
    ctx = await createArenaApp()
    const { client, count, player } = await buyer({
      intercept: async (request, forward) => {
        if (VERIFY.test(request.path)) throw new TypeError('fetch failed: ECONNREFUSED')
        return forward()
      },
    })
    const error = await client.purchases.authorize({ pin: PIN, amount: '5', destinationAddress: someAddress() }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(OutcomeUnknown)
    expect(count('POST', VERIFY)).toBe(1)
    expect(await balance(ctx, player)).toBe('100')
  })

  test('a 5xx from a proxy on verify is OutcomeUnknown, not retried', async () => {
    ctx = await createArenaApp()
    const { client, count } = await buyer({
      intercept: async (request, forward) => {
        if (!VERIFY.test(request.path)) return forward()
        const response = await forward()
        await response.body?.cancel()
        return new Response('<html>502 Bad Gateway</html>', { status: 502, headers: { 'content-type': 'text/html' } })
      },
    })
    const error = await client.purchases.authorize({ pin: PIN, amount: '5', destinationAddress: someAddress() }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(OutcomeUnknown)
    expect((error as OutcomeUnknown).cause).toBeInstanceOf(ApiError)
    expect(count('POST', VERIFY)).toBe(1)
  })

  test('an access token that expires between mint and verify: the verify is not replayed after rotating', async () => {
    ctx = await createArenaApp()
    const { client, count } = await buyer({
      intercept: async (request, forward) => {
        const response = await forward()
        if (MINT.test(request.path)) ctx.clock.advance((ctx.config.accessTtlS + 1) * 1000)
        return response
      },
    })
    const error = (await client.purchases.authorize({ pin: PIN, amount: '5', destinationAddress: someAddress() }).catch((e: unknown) => e)) as ApiError
    expect(error).toBeInstanceOf(ApiError)
    expect(error.status).toBe(401)
    expect(count('POST', VERIFY)).toBe(1)
    // Other calls still rotate and go on.
    expect((await client.wallet()).balance).toBe('100')
  })

  test('410: a PIN session that expired before the verify is PinSessionExpired', async () => {
    ctx = await createArenaApp()
    const { client, count } = await buyer({
      intercept: async (request, forward) => {
        const response = await forward()
        if (MINT.test(request.path)) ctx.clock.advance((ctx.config.pinSessionTtlS + 1) * 1000)
        return response
      },
    })
    const error = await client.purchases.authorize({ pin: PIN, amount: '5', destinationAddress: someAddress() }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(PinSessionExpired)
    expect((error as PinSessionExpired).status).toBe(410)
    expect(count('POST', VERIFY)).toBe(1)
  })

  test('429: after the failure that locks the PIN, authorize throws PinLocked with Retry-After', async () => {
    ctx = await createArenaApp()
    const { client, count } = await buyer()
    let last
    for (let i = 0; i < 5; i++) last = await client.purchases.authorize({ pin: '000111', amount: '1', destinationAddress: someAddress() })
    expect(last).toMatchObject({ valid: false, locked: true, attempt: 5 })
    const error = await client.purchases.authorize({ pin: PIN, amount: '1', destinationAddress: someAddress() }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(PinLocked)
    expect((error as PinLocked).status).toBe(429)
    expect((error as PinLocked).retryAfter).toBeGreaterThan(0)
    expect(count('POST', VERIFY)).toBe(5)
  })

  test('refusals that are not PIN failures come through as ApiError with their code', async () => {
    ctx = await createArenaApp()
    const { client } = await buyer()
    const poor = (await client.purchases.authorize({ pin: PIN, amount: '1000', destinationAddress: someAddress() }).catch((e: unknown) => e)) as ApiError
    expect(poor).toBeInstanceOf(ApiError)
    expect(poor.code).toBe('insufficient_funds')
    const nowhere = (await client.purchases.authorize({ pin: PIN, amount: '1', destinationAddress: 'not-an-address' }).catch((e: unknown) => e)) as ApiError
    expect(nowhere.code).toBe('invalid_destination')
  })
})

describe('SDK purchases: integrity checks', () => {
  test('COMPROMISED blocks the purchase on the client and reports ENV_COMPROMISED; nothing is minted', async () => {
    ctx = await createArenaApp()
    const debuggerAttached = () => 'COMPROMISED' as const
    const rooted = () => ({ level: 'SAFE' as const })
    const { client, count, player } = await buyer({ integrityChecks: [rooted, debuggerAttached] })
    const error = await client.purchases.authorize({ pin: PIN, amount: '5', destinationAddress: someAddress() }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(IntegrityBlocked)
    expect((error as IntegrityBlocked).reported).toBe(true)
    expect((error as IntegrityBlocked).findings).toContainEqual({ check: 'debuggerAttached', level: 'COMPROMISED' })
    expect(count('POST', MINT)).toBe(0)
    expect(count('POST', VERIFY)).toBe(0)
    expect(await balance(ctx, player)).toBe('100')
    const reported = (await securityEvents()).filter((e) => e.userId === player.userId && e.kind === 'ENV_COMPROMISED')
    expect(reported).toHaveLength(1)
    expect(reported[0]!.level).toBe('COMPROMISED')
    expect(reported[0]!.details).toMatchObject({ findings: [{ check: 'rooted', level: 'SAFE' }, { check: 'debuggerAttached', level: 'COMPROMISED' }] })
  })

  test('a check that throws fails closed (COMPROMISED); a check added later runs too', async () => {
    ctx = await createArenaApp()
    const { client, count } = await buyer()
    client.purchases.addIntegrityCheck(function screenCapture() {
      throw new Error('hook detected')
    })
    const report = await client.purchases.checkIntegrity()
    expect(report.level).toBe('COMPROMISED')
    expect(report.findings[0]).toMatchObject({ check: 'screenCapture', level: 'COMPROMISED' })
    expect(await client.purchases.authorize({ pin: PIN, amount: '5', destinationAddress: someAddress() }).catch((e: unknown) => e)).toBeInstanceOf(IntegrityBlocked)
    expect(count('POST', MINT)).toBe(0)
  })

  test('WARN goes on with the purchase and reports ENV_WARN; SAFE reports nothing', async () => {
    ctx = await createArenaApp()
    let level: 'SAFE' | 'WARN' = 'WARN'
    const { client, count, player } = await buyer({ integrityChecks: [async () => level] })
    expect((await client.purchases.authorize({ pin: PIN, amount: '5', destinationAddress: someAddress() })).valid).toBe(true)
    expect(count('POST', EVENTS)).toBe(1)
    level = 'SAFE'
    expect((await client.purchases.authorize({ pin: PIN, amount: '5', destinationAddress: someAddress() })).valid).toBe(true)
    expect(count('POST', EVENTS)).toBe(1)
    expect((await securityEvents()).filter((e) => e.userId === player.userId && e.kind === 'ENV_WARN')).toHaveLength(1)
  })

  test('a report that cannot be delivered still blocks the purchase', async () => {
    ctx = await createArenaApp()
    const { client, count } = await buyer({
      integrityChecks: [() => 'COMPROMISED'],
      intercept: async (request, forward) => {
        if (EVENTS.test(request.path)) throw new TypeError('offline')
        return forward()
      },
    })
    const error = await client.purchases.authorize({ pin: PIN, amount: '5', destinationAddress: someAddress() }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(IntegrityBlocked)
    expect((error as IntegrityBlocked).reported).toBe(false)
    expect(count('POST', MINT)).toBe(0)
  })

  test('a report the server shed (202, accepted false) counts as not reported', async () => {
    ctx = await createArenaApp()
    const { client } = await buyer({
      integrityChecks: [() => 'COMPROMISED'],
      intercept: async (request, forward) => {
        if (!EVENTS.test(request.path)) return forward()
        await (await forward()).body?.cancel()
        return Response.json({ accepted: false }, { status: 202 })
      },
    })
    const error = (await client.purchases.authorize({ pin: PIN, amount: '5', destinationAddress: someAddress() }).catch((e: unknown) => e)) as IntegrityBlocked
    expect(error).toBeInstanceOf(IntegrityBlocked)
    expect(error.reported).toBe(false)
  })
})

describe('SDK purchases: error mapping on the PIN routes', () => {
  test('a plain { message } 429 on verify is PinLocked; a plain 410 is PinSessionExpired', async () => {
    for (const [status, kind] of [[429, PinLocked], [410, PinSessionExpired]] as const) {
      ctx = await createArenaApp()
      const { client, count } = await buyer({
        intercept: async (request, forward) => {
          if (!VERIFY.test(request.path)) return forward()
          return new Response(JSON.stringify({ message: 'from a gateway' }), { status, headers: { 'retry-after': '60' } })
        },
      })
      const error = await client.purchases.authorize({ pin: PIN, amount: '1', destinationAddress: someAddress() }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(kind)
      expect((error as ApiError).message).toBe('from a gateway')
      expect(count('POST', VERIFY)).toBe(1)
      ctx.close()
    }
  })

  test('a 429 rate_limited envelope on verify is RateLimited (the server\'s rate limit), not PinLocked', async () => {
    ctx = await createArenaApp()
    const { client } = await buyer({
      intercept: async (request, forward) => {
        if (!VERIFY.test(request.path)) return forward()
        return Response.json({ error: { code: 'rate_limited', message: 'Too many requests; retry in 7 s', status: 429 } }, { status: 429, headers: { 'retry-after': '7' } })
      },
    })
    const error = await client.purchases.authorize({ pin: PIN, amount: '1', destinationAddress: someAddress() }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(RateLimited)
    expect(error).not.toBeInstanceOf(PinLocked)
    expect((error as RateLimited).retryAfter).toBe(7)
  })

  test('a token that cannot be refreshed before the verify: an ordinary error, and no verify sent', async () => {
    ctx = await createArenaApp()
    let now = Date.now()
    const { client, count } = await buyer({
      now: () => now,
      intercept: async (request, forward) => {
        if (/\/auth\/validate$/.test(request.path)) throw new TypeError('offline')
        if (MINT.test(request.path)) now += (ctx.config.accessTtlS + 1) * 1000 // the client knows its token has expired
        return forward()
      },
    })
    const error = await client.purchases.authorize({ pin: PIN, amount: '1', destinationAddress: someAddress() }).catch((e: unknown) => e)
    expect(error).not.toBeInstanceOf(OutcomeUnknown)
    expect(error).toBeInstanceOf(NetworkError)
    expect(count('POST', VERIFY)).toBe(0)
  })
})
