// ApiError understands both error shapes of public-api.md "ApiError": the
// envelope arena always sends, and the plain { message } a client must
// tolerate (from a proxy, a gateway, an older server).
import { afterEach, describe, expect, test } from 'bun:test'
import { ApiError, createClient, NetworkError, PinLocked, PinSessionExpired, RateLimited } from '@arena/sdk'
import { createTestApp, type TestApp } from '../helpers/app'
import { sdkClient } from '../helpers/sdk'

let ctx: TestApp | undefined
afterEach(() => ctx?.close())

function answering(status: number, body: string, headers: Record<string, string> = { 'content-type': 'application/json' }) {
  return createClient({ baseUrl: 'http://gateway.test', fetch: async () => new Response(body, { status, headers }) })
}

describe('SDK errors', () => {
  test('the envelope from the real server: code, message, status, details and request id', async () => {
    ctx = await createTestApp()
    const { client } = sdkClient(ctx)
    const error = (await client.auth.login('', '').catch((e: unknown) => e)) as ApiError
    expect(error).toBeInstanceOf(ApiError)
    expect(error.status).toBe(422)
    expect(error.code).toBe('validation_failed')
    expect(error.details!.length).toBeGreaterThan(0)
    expect(error.details![0]).toHaveProperty('path')
    expect(error.requestId).toBeString()
  })

  test('the plain { message } shape: the message kept, the code derived from the status', async () => {
    const error = (await answering(401, JSON.stringify({ message: 'Token expired at the gateway' })).auth.login('a', 'b').catch((e: unknown) => e)) as ApiError
    expect(error).toBeInstanceOf(ApiError)
    expect(error.message).toBe('Token expired at the gateway')
    expect(error.status).toBe(401)
    expect(error.code).toBe('unauthorized')
  })

  test('a body that is not JSON still gives an ApiError with the status', async () => {
    const error = (await answering(502, '<html>Bad Gateway</html>', { 'content-type': 'text/html' }).auth.login('a', 'b').catch((e: unknown) => e)) as ApiError
    expect(error).toBeInstanceOf(ApiError)
    expect(error.status).toBe(502)
    expect(error.code).toBe('http_502')
    expect(error.message).toBe('HTTP 502')
  })

  test('Retry-After is read in seconds or as an HTTP date; the codes pin_locked and session_expired get their classes', () => {
    const locked = ApiError.fromBody(429, { error: { code: 'pin_locked', message: 'locked', status: 429 } }, new Headers({ 'retry-after': '900' }))
    expect(locked).toBeInstanceOf(PinLocked)
    expect(locked.retryAfter).toBe(900)
    const dated = ApiError.fromBody(429, { message: 'slow down' }, new Headers({ 'retry-after': new Date(Date.now() + 60_000).toUTCString() }))
    expect(dated.code).toBe('rate_limited')
    expect(dated.retryAfter).toBeGreaterThanOrEqual(58)
    expect(dated).not.toBeInstanceOf(PinLocked)
    // Without a code, a 410 elsewhere is not a PIN session (the purchase client maps its own routes' 410/429).
    expect(ApiError.fromBody(410, { message: 'gone' })).not.toBeInstanceOf(PinSessionExpired)
    expect(ApiError.fromBody(410, { error: { code: 'session_expired', message: 'expired', status: 410 } })).toBeInstanceOf(PinSessionExpired)
  })

  test('a 429 rate_limited envelope is RateLimited with its Retry-After, never PinLocked', () => {
    const limited = ApiError.fromBody(429, { error: { code: 'rate_limited', message: 'Too many requests; retry in 12 s', status: 429 } }, new Headers({ 'retry-after': '12' }))
    expect(limited).toBeInstanceOf(RateLimited)
    expect(limited).toBeInstanceOf(ApiError)
    expect(limited).not.toBeInstanceOf(PinLocked)
    expect(limited.retryAfter).toBe(12)
  })

  test('an envelope missing its code falls back to the status code; junk details are dropped', () => {
    const error = ApiError.fromBody(409, { error: { message: 'taken', details: [{ path: 1 }, { path: 'body/x', message: 'bad' }] } })
    expect(error.code).toBe('conflict')
    expect(error.status).toBe(409)
    expect(error.details).toEqual([{ path: 'body/x', message: 'bad' }])
  })

  test('no answer at all is a NetworkError, and a timeout says so', async () => {
    const refused = createClient({ baseUrl: 'http://127.0.0.1:9', fetch: async () => Promise.reject(new TypeError('ECONNREFUSED')) })
    const error = await refused.auth.login('a', 'b').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(NetworkError)
    const slow = createClient({
      baseUrl: 'http://slow.test',
      timeoutMs: 50,
      fetch: (_input, init) =>
        new Promise((_, reject) => init.signal!.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')))),
    })
    const timedOut = (await slow.auth.login('a', 'b').catch((e: unknown) => e)) as NetworkError
    expect(timedOut).toBeInstanceOf(NetworkError)
    expect(timedOut.message).toContain('timed out')
  })

  test('headers followed by a body that never comes: the timeout still ends the call', async () => {
    const stalled = createClient({
      baseUrl: 'http://stall.test',
      timeoutMs: 100,
      fetch: async (_input, init) =>
        new Response(
          new ReadableStream({
            start(controller) {
              controller.enqueue(new TextEncoder().encode('{"accessToken":'))
              init.signal!.addEventListener('abort', () => controller.error(new DOMException('aborted', 'AbortError')))
            },
          }),
          { status: 200, headers: { 'content-type': 'application/json' } },
        ),
    })
    const started = performance.now()
    const error = (await stalled.auth.login('a', 'b').catch((e: unknown) => e)) as NetworkError
    expect(error).toBeInstanceOf(NetworkError)
    expect(error.message).toContain('timed out')
    expect(performance.now() - started).toBeLessThan(2000)
  })

  test('environments are base URLs: local has a default, the others must be configured', () => {
    expect(createClient({ environment: 'local' }).baseUrl).toBe('http://127.0.0.1:8080')
    expect(createClient({ environment: 'staging', environments: { staging: 'https://staging.example/' } }).baseUrl).toBe('https://staging.example')
    expect(createClient({ environments: { production: 'https://arena.example' } }).environment).toBe('production')
    expect(() => createClient({ environment: 'sandbox' })).toThrow(/sandbox/)
    expect(() => createClient({})).toThrow(/production/)
    expect(createClient({ baseUrl: 'http://10.0.0.5:8080' }).baseUrl).toBe('http://10.0.0.5:8080')
    // Outside a page there is nothing to resolve a relative URL against.
    expect(() => createClient({ baseUrl: '' })).toThrow(/baseUrl/)
    expect(() => createClient({ baseUrl: 'ftp://files.example' })).toThrow(/http/)
  })
})
