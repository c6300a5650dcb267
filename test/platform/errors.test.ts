// Every failure leaves as the envelope of contract §0 with the right status,
// and nothing internal (stack, message of an unexpected error) reaches the client.
import { afterAll, describe, expect, test } from 'bun:test'
import { Elysia, status, t } from 'elysia'
import { MAX_BODY_BYTES, MAX_JSON_DEPTH } from '../../src/plugins/json-body'
import { listen } from '../../src/server'
import { AppError } from '../../src/shared/errors'
import { createTestApp, postJson, req, settle } from '../helpers/app'
import { bearer, login, registerUser } from '../helpers/auth'
import { ADMIN_TOKEN } from '../helpers/arena'

const probes = new Elysia()
  .post('/probe/echo', ({ body }) => ({ received: body }), {
    body: t.Object({ name: t.String({ minLength: 1 }), count: t.Integer({ minimum: 0 }) }),
  })
  .post(
    '/probe/raw',
    ({ body }) => ({
      keys: Object.keys(body as object),
      // Either the body's own prototype or Object.prototype could be the victim.
      inherited: (body as Record<string, unknown>).polluted ?? null,
      global: ({} as Record<string, unknown>).polluted ?? null,
      plainPrototype: Object.getPrototypeOf(body) === Object.prototype,
    }),
    { body: t.Record(t.String(), t.Unknown()) },
  )
  .post('/probe/no-body', () => ({ ok: true }))
  .post('/probe/typed', ({ body }) => body, {
    body: t.Object({ name: t.String(), count: t.Integer(), tags: t.Optional(t.Record(t.String(), t.Unknown())) }),
  })
  .get('/probe/boom', () => {
    throw new Error('probe failure with internal detail xyzzy')
  })
  .get('/probe/throw-null', () => {
    throw null
  })
  .get('/probe/bad-response', () => ({ a: 1 }) as unknown as { a: string }, {
    response: { 200: t.Object({ a: t.String() }) },
  })
  .get('/probe/status-envelope', () => {
    throw status(401, { error: { code: 'unauthorized', message: 'Bearer token required', status: 401 } })
  })
  .get('/probe/status-text', () => {
    throw status(403, 'Not yours')
  })
  .get('/probe/headers-then-throw', ({ set }) => {
    set.headers['content-type'] = 'text/csv'
    set.headers['cache-control'] = 'public, max-age=86400'
    throw new Error('after setting headers')
  })
  .get('/probe/limited', () => {
    throw new AppError('rate_limited', 'Slow down', { headers: { 'retry-after': '7' } })
  })
  .get('/probe/query', ({ query }) => query, { query: t.Object({ limit: t.Numeric({ minimum: 1, maximum: 100 }) }) })

const ctx = await createTestApp({ probes })
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

  test('a value of the wrong type is refused, never reshaped into the declared one', async () => {
    for (const body of ['123', '"name"', 'true', '[1,2]', '{"name":"ada","count":1,"tags":"abc"}']) {
      const res = await ctx.handle(postJson('/probe/typed', body))
      expect(res.status).toBe(422)
    }
    const ok = await ctx.handle(postJson('/probe/typed', '{"name":"ada","count":1,"tags":{"a":1},"extra":true}'))
    expect(ok.status).toBe(200)
    // Undeclared properties are dropped, not echoed.
    expect(await ok.json()).toEqual({ name: 'ada', count: 1, tags: { a: 1 } })
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

  test('a number out of its bounds in the query names its parameter (query/wait), as a body error names its field', async () => {
    const user = await registerUser(ctx)
    const { accessToken } = await login(ctx, user.username)
    const cases = [
      ['/api/v1/events?wait=31', 'query/wait', 'Expected number to be less or equal to 30'],
      ['/api/v1/events?topics=wallet&wait=-1', 'query/wait', 'Expected number to be greater or equal to 0'],
      ['/api/v1/wallet/transactions?limit=101', 'query/limit', 'Expected number to be less or equal to 100'],
      ['/api/v1/wallet/transactions?after=&limit=0', 'query/limit', 'Expected number to be greater or equal to 1'],
      ['/probe/query?limit=5000', 'query/limit', 'Expected number to be less or equal to 100'],
    ] as const
    for (const [path, place, message] of cases) {
      const body = await expectEnvelope(await ctx.handle(req(path, { headers: bearer(accessToken) })), 422, 'validation_failed')
      expect(`${path}: ${JSON.stringify(body.error.details)}`).toBe(`${path}: ${JSON.stringify([{ path: place, message }])}`)
    }
    // The other failures of a query already named their parameter; still so.
    const notNumber = await expectEnvelope(await ctx.handle(req('/api/v1/events?wait=abc', { headers: bearer(accessToken) })), 422, 'validation_failed')
    expect((notNumber.error.details as { path: string }[]).map((d) => d.path)).toEqual(['query/wait'])
  })

  test('a choice of words (a tournament format) left out or misspelt is answered with the words it takes, not "Expected union value"', async () => {
    const admin = await createTestApp({ env: { ARENA_ADMIN_TOKEN: ADMIN_TOKEN } })
    try {
      const formats = 'Expected one of: single_elimination, double_elimination, round_robin, swiss'
      const create = (body: object) => admin.handle(postJson('/api/v1/admin/tournaments', { gameId: 'gam_x', name: 'Cup', participants: ['a', 'b'], ...body }, { 'x-admin-token': ADMIN_TOKEN }))
      const missing = await expectEnvelope(await create({}), 422, 'validation_failed')
      expect(missing.error.details).toEqual([
        { path: 'body/format', message: 'Expected required property' },
        { path: 'body/format', message: formats },
      ])
      const misspelt = await expectEnvelope(await create({ format: 'knockout' }), 422, 'validation_failed')
      expect(misspelt.error.details).toEqual([{ path: 'body/format', message: formats }])
    } finally {
      await admin.close()
    }
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

  test('a body over 64 KiB is 413, on routes with and without a body schema', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(MAX_BODY_BYTES), count: 1 })
    await expectEnvelope(await ctx.handle(postJson('/probe/echo', big)), 413, 'payload_too_large')
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

  test('prototype-pollution keys are dropped at parse time, spelled out or escaped', async () => {
    for (const text of [
      '{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},"ok":1}',
      '{"\\u005f_proto__":{"polluted":"yes"},"ok":1}',
      '{"\\u0063onstructor":{"prototype":{"polluted":"yes"}},"ok":1}',
    ]) {
      const res = await ctx.handle(postJson('/probe/raw', text))
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({ keys: ['ok'], inherited: null, global: null, plainPrototype: true })
    }
  })

  test('a value that cannot be printed (own toString/valueOf not a function) is a 422, not a 500', async () => {
    // Elysia writes the offending value into its validation message: `${value}`
    // threw "No default value" for these (found by test/fuzz).
    for (const text of ['{"name":{"toString":[]},"count":1}', '{"name":{"toString":{},"valueOf":[]},"count":1}', '{"name":{"\\u0074oString":1},"count":1}']) {
      const res = await ctx.handle(postJson('/probe/typed', text))
      const body = await expectEnvelope(res, 422, 'validation_failed')
      expect(body.error.details).toContainEqual({ path: 'body/name', message: 'Expected string' })
    }
    expect(ctx.logs.filter((l) => l.level === 'error' && l.msg === 'unhandled error')).toEqual([])
  })

  test('a body nested deeper than MAX_JSON_DEPTH is 422 at once, not a 500 after seconds', async () => {
    // 30 000 levels fit in 60 KiB; Elysia's validation error used to pretty-print
    // them (quadratic in the depth): seconds of CPU, then "Out of memory".
    const deep = (depth: number, inner = '1') => '['.repeat(depth) + inner + ']'.repeat(depth)
    for (const text of [deep(30_000), '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000), `{"name":"x","count":1,"tags":{"t":${deep(MAX_JSON_DEPTH)}}}`]) {
      const started = performance.now()
      const body = await expectEnvelope(await ctx.handle(postJson('/probe/echo', text)), 422, 'validation_failed')
      expect(body.error.details).toEqual([{ path: 'body', message: `Nested deeper than ${MAX_JSON_DEPTH} levels` }])
      expect(performance.now() - started).toBeLessThan(1_000)
    }
    // Brackets inside strings are text, not nesting; MAX_JSON_DEPTH levels themselves are fine.
    const inString = JSON.stringify({ name: '['.repeat(1_000), count: 1 })
    expect((await ctx.handle(postJson('/probe/echo', inString))).status).toBe(200)
    const atLimit = `{"name":"x","count":1,"tags":{"t":${deep(MAX_JSON_DEPTH - 2)}}}`
    expect((await ctx.handle(postJson('/probe/typed', atLimit))).status).toBe(200)
  })

  test('a response that breaks its own schema is our 500, not the client\'s 422', async () => {
    const res = await ctx.handle(req('/probe/bad-response', { headers: { 'x-request-id': 'bad-response-1' } }))
    const body = await expectEnvelope(res, 500, 'internal')
    expect(JSON.stringify(body)).not.toContain('response')
    await settle()
    expect(ctx.logs.some((l) => l.msg === 'unhandled error' && l.requestId === 'bad-response-1')).toBe(true)
  })

  test('a thrown status() keeps its status and becomes the envelope', async () => {
    const withEnvelope = await expectEnvelope(await ctx.handle(req('/probe/status-envelope')), 401, 'unauthorized')
    expect(withEnvelope.error.message).toBe('Bearer token required')
    const withText = await expectEnvelope(await ctx.handle(req('/probe/status-text')), 403, 'forbidden')
    expect(withText.error.message).toBe('Not yours')
  })

  test('headers a handler set before throwing do not leak into the error response', async () => {
    const res = await ctx.handle(req('/probe/headers-then-throw'))
    await expectEnvelope(res, 500, 'internal')
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(res.headers.get('cache-control')).toBeNull()
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
    expect(text).not.toContain('xyzzy')
    expect(text).not.toContain('at ')
    expect(res.headers.get('x-request-id')).toBe('trace-boom-1')
    await settle()
    const line = ctx.logs.find((l) => l.msg === 'unhandled error' && l.requestId === 'trace-boom-1')
    expect(line).toBeDefined()
    expect(String(line!.stack)).toContain('errors.test.ts')
    expect(String(line!.error)).toContain('xyzzy')
    const access = ctx.logs.find((l) => l.msg === 'request' && l.requestId === 'trace-boom-1')
    expect(access?.status).toBe(500)
  })
})

describe('over a real socket', () => {
  const server = listen(ctx.app, {
    config: { ...ctx.config, host: '127.0.0.1', port: 0 },
    logger: { debug() {}, info() {}, warn() {}, error() {} },
    lifecycle: { draining: false },
    onStopped: () => {},
  })
  afterAll(() => server.stop('test done'))

  test('a declared Content-Length over 64 KiB is refused before routing, on the length alone', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(MAX_BODY_BYTES) })
    // An unknown route would be a 404: the 413 comes from the declared length.
    const res = await fetch(`${server.url}/api/v1/no-such-route`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: big,
    })
    await expectEnvelope(res, 413, 'payload_too_large')
  })

  test('what Elysia cannot handle (throw null) still answers the 500 envelope with a request id', async () => {
    const res = await fetch(`${server.url}/probe/throw-null`)
    await expectEnvelope(res, 500, 'internal')
  })
})
