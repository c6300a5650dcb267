// Liveness and readiness probes, outside /api/v1 as orchestrators expect, and
// the server's root: where a person who opens the bare address goes next.
import type { Storage } from '../../db/storage'
import { Elysia } from 'elysia'
import { errors, STORAGE } from '../../plugins/openapi'
import { HealthResponse, ReadyResponse, RootResponse } from './model'
import { checkReady, type Lifecycle } from './service'

export function healthModule(storage: Storage, lifecycle: Lifecycle, securityEvents: () => { buffered: number; shed: number; capacity: number }) {
  return new Elysia({ name: 'arena/health' })
    .get('/', ({ request }) => (wantsHtml(request) ? new Response(ROOT_PAGE, { headers: ROOT_PAGE_HEADERS }) : ROOT), {
      response: { 200: RootResponse, ...errors() },
      detail: {
        tags: ['health'],
        summary: 'Where to go from here: the API docs page, the OpenAPI document, the operator console (a short HTML page with links when the client asks for text/html)',
      },
    })
    .get('/healthz', () => ({ status: 'ok' as const }), {
      response: { 200: HealthResponse, ...errors() },
      detail: { tags: ['health'], summary: 'Liveness: the process answers' },
    })
    .get('/readyz', async () => ({ ...(await checkReady(storage, lifecycle)), securityEvents: securityEvents() }), {
      response: { 200: ReadyResponse, ...errors(STORAGE) },
      detail: { tags: ['health'], summary: 'Readiness: the database answers and the server is not draining' },
    })
}

const ROOT = { name: 'arena', docs: '/openapi', openapi: '/openapi/json', console: '/console', health: '/healthz' } as const

/** A browser (its Accept names text/html); curl (any type) and API clients (application/json) get the JSON. */
function wantsHtml(request: Request): boolean {
  return (request.headers.get('accept') ?? '').toLowerCase().includes('text/html')
}

// Fixed text: nothing of the request is in it. No script, no style, no frames.
const ROOT_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>arena</title></head>
<body>
<h1>arena</h1>
<p>This is an arena server: its HTTP API lives under <code>/api/v1</code>.</p>
<ul>
<li><a href="/openapi">API docs</a>: every route, its body and its answers (the OpenAPI document: <a href="/openapi/json">/openapi/json</a>)</li>
<li><a href="/console">Operator console</a>: games, tournaments, users and withdrawals, for operators</li>
<li><a href="/healthz">/healthz</a>: liveness</li>
</ul>
</body></html>
`

const ROOT_PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
}
