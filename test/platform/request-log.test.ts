// Every response carries x-request-id, every request leaves exactly one
// structured access-log line, and no credential ever reaches the log.
import { afterAll, describe, expect, test } from 'bun:test'
import { Elysia, t } from 'elysia'
import { createTestApp, postJson, req, settle } from '../helpers/app'

const probes = new Elysia()
  .post('/probe/login', ({ body }) => ({ ok: body.identifier.length > 0 }), {
    body: t.Object({ identifier: t.String(), password: t.String(), pin: t.Optional(t.String()) }),
  })
  .get('/probe/raw-response', () => new Response(null, { status: 204 }))

const ctx = await createTestApp({ probes })
afterAll(() => ctx.close())

describe('x-request-id', () => {
  test('is generated for every response, success or error, and is unique', async () => {
    const responses = await Promise.all([
      ctx.handle(req('/healthz')),
      ctx.handle(req('/no/such/route')),
      ctx.handle(postJson('/probe/login', '{oops')),
      ctx.handle(postJson('/probe/login', { identifier: 1 })),
    ])
    const ids = responses.map((r) => r.headers.get('x-request-id'))
    for (const id of ids) expect(id).toMatch(/^req_[0-9a-f]{32}$/)
    expect(new Set(ids).size).toBe(ids.length)
  })

  test('echoes a well-formed incoming id and replaces a malformed one', async () => {
    const echoed = await ctx.handle(req('/healthz', { headers: { 'x-request-id': 'lb-7f3a:2.b_c' } }))
    expect(echoed.headers.get('x-request-id')).toBe('lb-7f3a:2.b_c')
    for (const bad of ['has space', 'x'.repeat(129), 'semi;colon', '']) {
      const res = await ctx.handle(req('/healthz', { headers: { 'x-request-id': bad } }))
      expect(res.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/)
    }
  })
})

describe('access log', () => {
  test('one JSON line per request with method, route, status, duration and request id', async () => {
    await settle()
    const before = ctx.logs.filter((l) => l.msg === 'request').length
    await ctx.handle(req('/healthz', { headers: { 'x-request-id': 'log-ok' } }))
    await ctx.handle(req('/nowhere?token=abc', { headers: { 'x-request-id': 'log-404' } }))
    await ctx.handle(postJson('/probe/login', { identifier: 5 }, { 'x-request-id': 'log-422' }))
    await settle()
    const lines = ctx.logs.filter((l) => l.msg === 'request')
    expect(lines.length - before).toBe(3)
    const byId = (id: string) => lines.find((l) => l.requestId === id)!
    expect(byId('log-ok')).toMatchObject({ method: 'GET', route: '/healthz', path: '/healthz', status: 200, level: 'info' })
    expect(byId('log-404')).toMatchObject({ method: 'GET', route: null, path: '/nowhere', status: 404 })
    expect(byId('log-422')).toMatchObject({ method: 'POST', route: '/probe/login', status: 422 })
    await ctx.handle(req('/probe/raw-response', { headers: { 'x-request-id': 'log-204' } }))
    await settle()
    // A Response returned by the handler is logged with its own status.
    expect(ctx.logs.find((l) => l.msg === 'request' && l.requestId === 'log-204')?.status).toBe(204)
    for (const id of ['log-ok', 'log-404', 'log-422']) {
      expect(typeof byId(id).durationMs).toBe('number')
      expect(typeof byId(id).time).toBe('string')
    }
  })

  test('never contains a password, PIN, bearer token or query value', async () => {
    const secrets = {
      password: 'Sup3r-Secret-Passw0rd!',
      pin: '918273',
      bearer: 'eyJhbGciOiJIUzI1NiJ9.sekrit-bearer-token.sig',
      query: 'cursor-value-not-for-logs',
    }
    await ctx.handle(
      postJson(
        `/probe/login?after=${secrets.query}`,
        { identifier: 'ada', password: secrets.password, pin: secrets.pin },
        { authorization: `Bearer ${secrets.bearer}` },
      ),
    )
    // A validation failure must not echo the submitted values into the log either.
    await ctx.handle(postJson('/probe/login', { identifier: 'ada', password: 42, pin: secrets.pin }))
    await settle()
    const text = ctx.logText()
    for (const value of Object.values(secrets)) expect(text).not.toContain(value)
  })
})
