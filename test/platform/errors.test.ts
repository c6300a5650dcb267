// Every failure leaves as the envelope of contract §0 with the right status,
// and nothing internal (stack, message of an unexpected error) reaches the client.
import { afterAll, describe, expect, test } from 'bun:test'
import { Elysia, t } from 'elysia'
import { MAX_BODY_BYTES } from '../../src/plugins/json-body'
import { AppError } from '../../src/shared/errors'
import { createTestApp, postJson, req, settle } from '../helpers/app'

const probes = new Elysia()
  .post('/probe/echo', ({ body }) => ({ received: body }), {
    body: t.Object({ name: t.String({ minLength: 1 }), count: t.Integer({ minimum: 0 }) }),
  })
  .post('/probe/raw', ({ body }) => ({ isObject: typeof body === 'object', keys: Object.keys(body as object), polluted: ({} as Record<string, unknown>).polluted ?? null }), {
    body: t.Record(t.String(), t.Unknown()),
  })
  .post('/probe/no-body', () => ({ ok: true }))
  .get('/probe/boom', () => {
    throw new Error('connection to db with password hunter2 failed')
  })
  .get('/probe/limited', () => {
    throw new AppError('rate_limited', 'Slow down', { headers: { 'retry-after': '7' } })
  })
  .get('/probe/query', ({ query }) => query, { query: t.Object({ limit: t.Numeric({ minimum: 1, maximum: 100 }) }) })

const ctx = createTestApp({ probes })
afterAll(() => ctx.close())

async function expectEnvelope(res: Response, status: number, code: string) {
  expect(res.status).toBe(status)
  expect(res.headers.get('content-type')).toContain('application/json')
  expect(res.headers.get('x-request-id')).toBeTruthy()
  const body = (await res.json()) as { error: { code: string; message: string; status: number; details?: unknown } }
  expect(body.error.code).toBe(code)
  expect(body.error.status).toBe(status)
  expect(typeof body.error.message).toBe('string')
  expect(body.error.message.length).toBeGreaterThan(0)
  return body
}

describe('error envelope', () => {
  test('a valid request passes through untouched', async () => {
    const res = await ctx.handle(postJson('/probe/echo', { name: 'ada', count: 3 }))
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ received: { name: 'ada', count: 3 } })
  })

  test('malformed JSON is 400 malformed_json', async () => {
    const res = await ctx.handle(postJson('/probe/echo', '{"name": "ada",'))
    await expectEnvelope(res, 400, 'malformed_json')
  })

  test('invalid UTF-8 is 400 malformed_json', async () => {
    const bytes = new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d])
    const res = await ctx.handle(
      req('/probe/echo', { method: 'POST', headers: { 'content-type': 'application/json' }, body: bytes }),
    )
    await expectEnvelope(res, 400, 'malformed_json')
  })

  test('schema violations are 422 validation_failed with details per field, without echoing values', async () => {
    const res = await ctx.handle(postJson('/probe/echo', { name: '', count: 'secret-value-123' }))
    const body = await expectEnvelope(res, 422, 'validation_failed')
    const details = body.error.details as { path: string; message: string }[]
    expect(Array.isArray(details)).toBe(true)
    const paths = details.map((d) => d.path)
    expect(paths).toContain('body/name')
    expect(paths).toContain('body/count')
    expect(JSON.stringify(body)).not.toContain('secret-value-123')
  })

  test('a missing body where one is required is 422', async () => {
    const res = await ctx.handle(req('/probe/echo', { method: 'POST' }))
    await expectEnvelope(res, 422, 'validation_failed')
  })

  test('query validation failures are 422 with details', async () => {
    for (const query of ['limit=5000', 'limit=abc', '']) {
      const res = await ctx.handle(req(`/probe/query?${query}`))
      const body = await expectEnvelope(res, 422, 'validation_failed')
      expect((body.error.details as unknown[]).length).toBeGreaterThan(0)
    }
    const missing = (await (await ctx.handle(req('/probe/query'))).json()) as { error: { details: { path: string }[] } }
    expect(missing.error.details[0]!.path).toBe('query/limit')
  })

  test('a body that is not JSON is 415', async () => {
    const res = await ctx.handle(
      req('/probe/echo', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'name=ada' }),
    )
    await expectEnvelope(res, 415, 'unsupported_media_type')
  })

  test('unknown routes are 404 not_found', async () => {
    await expectEnvelope(await ctx.handle(req('/api/v1/nothing-here')), 404, 'not_found')
  })

  test('a known path with the wrong method is a 404 or 405 envelope, never 500', async () => {
    const res = await ctx.handle(req('/probe/echo', { method: 'DELETE' }))
    expect([404, 405]).toContain(res.status)
    const body = (await res.json()) as { error: { status: number } }
    expect(body.error.status).toBe(res.status)
  })

  test('a declared body over 64 KiB is 413 before anything is read', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(MAX_BODY_BYTES), count: 1 })
    await expectEnvelope(await ctx.handle(postJson('/probe/echo', big)), 413, 'payload_too_large')
    // Even a route that never reads its body refuses it, on the declared length alone.
    await expectEnvelope(await ctx.handle(postJson('/probe/no-body', big)), 413, 'payload_too_large')
    expect((await ctx.handle(postJson('/probe/no-body', '{}'))).status).toBe(200)
  })

  test('a streamed body without a length is cut off at 64 KiB with 413', async () => {
    const chunk = new TextEncoder().encode('x'.repeat(16 * 1024))
    let sent = 0
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 10) return controller.close()
        sent++
        controller.enqueue(chunk)
      },
    })
    const request = new Request('http://localhost/probe/echo', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: stream,
    })
    expect(request.headers.get('content-length')).toBeNull()
    await expectEnvelope(await ctx.handle(request), 413, 'payload_too_large')
    // It stopped reading once over the limit instead of buffering all 160 KiB.
    expect(sent).toBeLessThan(10)
  })

  test('a body of exactly 64 KiB is accepted', async () => {
    const prefix = '{"name":"'
    const suffix = '","count":1}'
    const body = prefix + 'x'.repeat(MAX_BODY_BYTES - prefix.length - suffix.length) + suffix
    expect(Buffer.byteLength(body)).toBe(MAX_BODY_BYTES)
    const res = await ctx.handle(postJson('/probe/echo', body))
    expect(res.status).toBe(200)
  })

  test('prototype-pollution keys are dropped at parse time', async () => {
    const res = await ctx.handle(postJson('/probe/raw', '{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},"ok":1}'))
    expect(res.status).toBe(200)
    const body = (await res.json()) as { keys: string[]; polluted: unknown }
    expect(body.keys).toEqual(['ok'])
    expect(body.polluted).toBeNull()
  })

  test('an AppError keeps its status, code and headers', async () => {
    const res = await ctx.handle(req('/probe/limited'))
    await expectEnvelope(res, 429, 'rate_limited')
    expect(res.headers.get('retry-after')).toBe('7')
  })

  test('a thrown error is a 500 envelope with a generic message, and the log has the request id and stack', async () => {
    const res = await ctx.handle(req('/probe/boom', { headers: { 'x-request-id': 'trace-boom-1' } }))
    const text = await res.clone().text()
    const body = await expectEnvelope(res, 500, 'internal')
    expect(body.error.message).toBe('Internal server error')
    expect(text).not.toContain('hunter2')
    expect(text).not.toContain('at ')
    expect(res.headers.get('x-request-id')).toBe('trace-boom-1')
    await settle()
    const line = ctx.logs.find((l) => l.msg === 'unhandled error' && l.requestId === 'trace-boom-1')
    expect(line).toBeDefined()
    expect(String(line!.stack)).toContain('errors.test.ts')
    const access = ctx.logs.find((l) => l.msg === 'request' && l.requestId === 'trace-boom-1')
    expect(access?.status).toBe(500)
  })
})
