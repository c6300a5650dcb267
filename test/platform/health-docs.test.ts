// Probes answer as orchestrators expect; the OpenAPI document and its docs
// page are served, and the page needs nothing from the internet.
import { afterAll, describe, expect, test } from 'bun:test'
import { Elysia } from 'elysia'
import { createTestApp, loseDatabase, req } from '../helpers/app'

const ctx = await createTestApp()
afterAll(() => ctx.close())

describe('the root', () => {
  // Whoever opens the bare address is pointed at the docs page and the console,
  // never left with a 404; every link it gives answers.
  test('GET / names the docs page, the OpenAPI document and the console, as JSON for a client', async () => {
    for (const accept of [undefined, '*/*', 'application/json']) {
      const res = await ctx.handle(req('/', accept === undefined ? {} : { headers: { accept } }))
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toStartWith('application/json')
      const body = (await res.json()) as Record<string, string>
      expect(body).toEqual({ name: 'arena', docs: '/openapi', openapi: '/openapi/json', console: '/console', health: '/healthz' })
    }
    const body = (await (await ctx.handle(req('/'))).json()) as Record<string, string>
    for (const link of [body.docs!, body.openapi!, body.health!]) expect(`${link}: ${(await ctx.handle(req(link))).status}`).toBe(`${link}: 200`)
    // The console sends a stranger to its sign-in page.
    expect([200, 303]).toContain((await ctx.handle(req(body.console!))).status)
  })

  test('a browser gets a short page linking them, with no script and a closed policy', async () => {
    const res = await ctx.handle(req('/', { headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' } }))
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'")
    const html = await res.text()
    expect(html).toStartWith('<!doctype html>')
    for (const href of ['/openapi', '/openapi/json', '/console']) expect(html).toContain(`<a href="${href}">`)
    expect(html).not.toContain('<script')
  })

  test('the OpenAPI document lists GET /', async () => {
    const doc = (await (await ctx.handle(req('/openapi/json'))).json()) as { paths: Record<string, { get?: unknown }> }
    expect(doc.paths['/']?.get).toBeDefined()
  })
})

describe('health', () => {
  test('/healthz is 200 ok', async () => {
    const res = await ctx.handle(req('/healthz'))
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ status: 'ok' })
  })

  test('/readyz is 200 while the database answers', async () => {
    const res = await ctx.handle(req('/readyz'))
    expect(res.status).toBe(200)
    const body = (await res.json()) as { status: string; checks: { database: { ok: boolean } } }
    expect(body.status).toBe('ready')
    expect(body.checks.database.ok).toBe(true)
  })

  test('/readyz is a 503 envelope with Retry-After while draining for shutdown', async () => {
    ctx.lifecycle.draining = true
    try {
      const res = await ctx.handle(req('/readyz'))
      expect(res.status).toBe(503)
      expect(res.headers.get('retry-after')).toBe('1')
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('service_unavailable')
      // Liveness is unaffected: the process is alive, just leaving.
      expect((await ctx.handle(req('/healthz'))).status).toBe(200)
    } finally {
      ctx.lifecycle.draining = false
    }
  })

  test('/readyz is a 503 envelope when the database is gone', async () => {
    const local = await createTestApp()
    await loseDatabase(local)
    try {
      const res = await local.handle(req('/readyz'))
      expect(res.status).toBe(503)
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('service_unavailable')
    } finally {
      // Not awaited: what this test is about is answered; closing a storage
      // whose database is gone is not (on PostgreSQL it waits out its timeouts).
      local.close()
    }
  })
})

describe('OpenAPI', () => {
  test('/openapi/json is an OpenAPI 3 document describing the routes and their schemas', async () => {
    const res = await ctx.handle(req('/openapi/json'))
    expect(res.status).toBe(200)
    const doc = (await res.json()) as { openapi: string; info: { title: string }; paths: Record<string, Record<string, { responses: Record<string, unknown> }>> }
    expect(doc.openapi).toStartWith('3.')
    expect(doc.info.title).toBe('arena')
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/healthz', '/readyz']))
    expect(Object.keys(doc.paths['/readyz']!.get!.responses)).toEqual(expect.arrayContaining(['200', '503']))
    // Authenticated routes declare the bearer scheme.
    const full = doc as unknown as { components: { securitySchemes: Record<string, { scheme: string }> }; paths: Record<string, Record<string, { security?: unknown[] }>> }
    expect(full.components.securitySchemes.bearer!.scheme).toBe('bearer')
    expect(full.paths['/api/v1/me']!.get!.security).toEqual([{ bearer: [] }])
    expect(full.paths['/api/v1/user/login']!.post!.security).toBeUndefined()
    // The docs assets are plumbing, not API.
    expect(Object.keys(doc.paths).some((p) => p.startsWith('/openapi'))).toBe(false)
  })

  test('/openapi is an HTML page whose scripts and styles are served by arena itself', async () => {
    const res = await ctx.handle(req('/openapi'))
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/html')
    const html = await res.text()
    const refs = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!)
    expect(refs.length).toBeGreaterThanOrEqual(2)
    for (const ref of refs) {
      expect(ref).not.toMatch(/^(https?:)?\/\//)
      const asset = await ctx.handle(req(ref))
      expect(asset.status).toBe(200)
      expect((await asset.arrayBuffer()).byteLength).toBeGreaterThan(10_000)
    }
    expect(html).toContain('SwaggerUIBundle')
    // The page finds its document from /openapi and /openapi/ alike.
    expect(html).toContain('"url":"/openapi/json"')
  })

  test('each app documents its own routes', async () => {
    const a = await createTestApp({ probes: new Elysia().get('/only-in-a', () => 'a') })
    const b = await createTestApp({ probes: new Elysia().get('/only-in-b', () => 'b') })
    try {
      const pathsOf = async (app: typeof a) =>
        Object.keys(((await (await app.handle(req('/openapi/json'))).json()) as { paths: object }).paths)
      expect(await pathsOf(a)).toContain('/only-in-a')
      expect(await pathsOf(a)).not.toContain('/only-in-b')
      expect(await pathsOf(b)).toContain('/only-in-b')
    } finally {
      a.close()
      b.close()
    }
  })
})
