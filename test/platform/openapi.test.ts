// The OpenAPI document is a valid OpenAPI document, and it and docs/api.md
// describe every route the app serves: each route's required headers, and
// every error it can answer with the codes of each status, the same in both.
//
// Validator: @seriousme/openapi-schema-validator checks a document against the
// OpenAPI Initiative's published JSON Schemas for 2.0, 3.0, 3.1 and 3.2
// (Elysia emits 3.1), bundled in the package, so it needs no network.
import { afterAll, describe, expect, test, beforeAll } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Validator } from '@seriousme/openapi-schema-validator'
import { Elysia } from 'elysia'
import { createTestApp, req, type TestApp } from '../helpers/app'
import { ADMIN_TOKEN, createArenaApp, createGame } from '../helpers/arena'
import { login, registerUser } from '../helpers/auth'
import { ERROR_CODES, type ErrorCode } from '../../src/shared/errors'
import { openApiPath, SPECIAL_HEADERS, type SpecialHeader } from '../../src/plugins/openapi'
import { RAW_BODY_ROUTES } from '../../src/plugins/json-body'

const ROOT = join(import.meta.dir, '../..')
const API_MD = readFileSync(join(ROOT, 'docs/api.md'), 'utf8')

/** Routes deliberately left out of the document: the docs page and its plumbing. */
const UNDOCUMENTED = new Set(['GET /openapi', 'GET /openapi/json', 'GET /openapi/assets/swagger-ui-bundle.js', 'GET /openapi/assets/swagger-ui.css'])

/** Which operations need which of the headers arena reads besides Authorization. */
const NEEDS: Record<SpecialHeader, (path: string) => boolean> = {
  'x-game-key': (path) => path.startsWith('/api/v1/game-sdk/'),
  'x-session-token': (path) => path === '/api/v1/game-sdk/{gameId}/results',
  'x-secure-session': (path) => path === '/api/v1/security/pin-session/{id}/verify',
  // Every operator route but signing in, which is how an operator without a credential gets one.
  'x-admin-token': (path) => path.startsWith('/api/v1/admin/') && path !== '/api/v1/admin/sessions',
  'x-arena-signature': (path) => path === '/api/v1/game-servers/{gameId}/results',
}
/** What a request without that header is answered (the route's own answer, not a validation 422). */
const MISSING: Record<SpecialHeader, [number, ErrorCode]> = {
  'x-game-key': [403, 'invalid_game_key'],
  'x-session-token': [401, 'session_token_invalid'],
  'x-secure-session': [401, 'unauthorized'],
  'x-admin-token': [401, 'unauthorized'],
  'x-arena-signature': [401, 'invalid_signature'],
}
/**
 * A code answered under another status than its usual one, where the
 * contract says so: a wrong password typed again by a signed-in user (a
 * password change, deleting the account) is 403 (contract §8): a 401 there
 * would read as an expired bearer, which a client refreshes and replays.
 * A failed login's is 401.
 */
const STATUS_OVERRIDES: Record<string, Partial<Record<ErrorCode, number>>> = {
  'POST /api/v1/user/password/change': { invalid_credentials: 403 },
  'POST /api/v1/me/delete': { invalid_credentials: 403 },
}
/** Listed once in docs/api.md's conventions rather than under every route. */
const ANY_ROUTE_STATUSES = new Set([413, 431, 500])
/** The rate limit (contract §20): every route answers it, beside the 429s of its own; also listed once. */
const ANY_ROUTE_CODE = { status: 429, code: 'rate_limited' } as const

interface Parameter {
  name: string
  in: string
  required?: boolean
}
interface Response {
  description: string
  headers?: Record<string, unknown>
  content?: Record<string, { schema: { $ref?: string } }>
}
interface Operation {
  security?: Record<string, unknown>[]
  parameters?: Parameter[]
  requestBody?: unknown
  /** Absent when the route declares no response map. */
  responses: Record<string, Response>
}
interface Doc {
  openapi: string
  paths: Record<string, Record<string, Operation>>
  components: { schemas: Record<string, unknown> }
}

interface Op {
  key: string
  method: string
  path: string
  operation: Operation
}

function operations(doc: Doc): Op[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({ key: `${method.toUpperCase()} ${path}`, method: method.toUpperCase(), path, operation })),
  )
}

async function documentOf(app: Pick<TestApp, 'handle'>): Promise<Doc> {
  const res = await app.handle(req('/openapi/json'))
  expect(res.status).toBe(200)
  return (await res.json()) as Doc
}

/** The error codes a response lists in its description, by status. */
function codesOf(operation: Operation): Map<number, Set<string>> {
  const out = new Map<number, Set<string>>()
  for (const [status, response] of Object.entries(operation.responses ?? {})) {
    if (Number(status) < 400) continue
    out.set(Number(status), new Set([...response.description.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!)))
  }
  return out
}

/** The routes whose body is a file's raw bytes (src/plugins/json-body.ts), as the document names them. */
const RAW = new Set(RAW_BODY_ROUTES.map((r) => `${r.method} ${openApiPath(r.route)}`))

/** What is wrong with the document's description of the app's routes, one line a problem. */
function routeProblems(doc: Doc, routes: { method: string; path: string }[]): string[] {
  const problems: string[] = []
  const served = new Set(routes.map((r) => `${r.method} ${openApiPath(r.path)}`))
  const documented = new Set(operations(doc).map((o) => o.key))
  for (const route of routes) {
    const key = `${route.method} ${openApiPath(route.path)}`
    // The console's pages and forms, and the device-code page's, are HTML for a browser, not API (their routes are `hide`).
    if (UNDOCUMENTED.has(`${route.method} ${route.path}`) || route.path === '/console' || route.path.startsWith('/console/') || route.path === '/device' || route.path.startsWith('/device/')) {
      if (documented.has(key)) problems.push(`${key}: documented, but listed as deliberately undocumented`)
    } else if (!documented.has(key)) problems.push(`${key}: served but not in the OpenAPI document`)
  }
  for (const key of documented) if (!served.has(key)) problems.push(`${key}: documented but not served`)

  for (const { key, method, path, operation } of operations(doc)) {
    const statuses = Object.keys(operation.responses ?? {}).map(Number)
    const codes = codesOf(operation)
    // A redirect (the OpenID Connect web flow's start and callback, which a browser opens) succeeds with its 302;
    // the event socket's upgrade (contract §14) with its 101.
    const success = statuses.filter((s) => (s >= 200 && s < 300) || s === 302 || s === 101)
    if (success.length !== 1) problems.push(`${key}: ${success.length} success responses`)
    if (!statuses.some((s) => s >= 400 && s < 500)) problems.push(`${key}: no 4xx response`)
    const bearer = operation.security?.some((s) => 'bearer' in s) ?? false
    if (bearer && !codes.get(401)?.has('unauthorized')) problems.push(`${key}: bearer route without 401 unauthorized`)

    for (const header of Object.keys(NEEDS) as SpecialHeader[]) {
      const parameter = operation.parameters?.find((p) => p.in === 'header' && p.name === header)
      if (NEEDS[header](path)) {
        if (parameter?.required !== true) problems.push(`${key}: ${header} is not a required header parameter`)
        const [status, code] = MISSING[header]
        if (!codes.get(status)?.has(code)) problems.push(`${key}: needs ${header} but does not declare ${status} ${code}`)
      } else if (parameter) problems.push(`${key}: declares ${header}, which it does not read`)
    }

    const hasInput = (operation.parameters ?? []).some((p) => p.in === 'path' || p.in === 'query') || operation.requestBody !== undefined
    if (hasInput && !statuses.includes(422)) problems.push(`${key}: takes input but declares no 422`)
    // A raw-bytes route (src/plugins/json-body.ts) parses no JSON: no 400, but 415 for a type it does not take.
    if (RAW.has(key) && !statuses.includes(415)) problems.push(`${key}: takes raw bytes but does not declare 415`)
    else if (!RAW.has(key) && (method === 'POST' || method === 'PUT') && !(statuses.includes(400) && statuses.includes(415))) {
      problems.push(`${key}: parses a body but does not declare 400 and 415`)
    }
    for (const s of ANY_ROUTE_STATUSES) if (!statuses.includes(s)) problems.push(`${key}: no ${s}`)
    if (!codes.get(ANY_ROUTE_CODE.status)?.has(ANY_ROUTE_CODE.code)) problems.push(`${key}: no 429 rate_limited`)
    else if (!operation.responses['429']!.headers?.ratelimit || !operation.responses['429']!.headers?.['ratelimit-policy']) problems.push(`${key}: 429 without RateLimit and RateLimit-Policy`)

    for (const [status, set] of codes) {
      const response = operation.responses[String(status)]!
      if (response.content?.['application/json']?.schema.$ref !== '#/components/schemas/Error') problems.push(`${key}: ${status} is not the error envelope`)
      if ((status === 429 || status === 503) && !response.headers?.['retry-after']) problems.push(`${key}: ${status} without Retry-After`)
      if (set.size === 0) problems.push(`${key}: ${status} lists no error code`)
      for (const code of set) {
        const expected = STATUS_OVERRIDES[key]?.[code as ErrorCode] ?? ERROR_CODES[code as ErrorCode]
        if (expected === undefined) problems.push(`${key}: ${status} lists an unknown code ${code}`)
        else if (expected !== status) problems.push(`${key}: ${code} is a ${expected}, listed under ${status}`)
      }
    }
  }
  return problems
}

interface Route {
  method: string
  path: string
  hooks: unknown
}

/**
 * Where the document's request bodies fall short, one line a problem. The
 * validator accepts `requestBody: { content: {} }` (it is valid OpenAPI), yet a
 * client generator types it as no body at all: every body the app validates
 * must be there as JSON, a `$ref` to its model's component.
 */
function bodyProblems(doc: Doc, routes: Route[]): string[] {
  const problems: string[] = []
  const takesBody = new Set(
    routes.filter((r) => typeof (r.hooks as { body?: unknown }).body === 'object').map((r) => `${r.method} ${openApiPath(r.path)}`),
  )
  for (const { key, operation } of operations(doc)) {
    const body = operation.requestBody as { content?: Record<string, { schema?: { $ref?: string; format?: string } }> } | undefined
    if (RAW.has(key)) {
      // Its body is a file: each type it takes, as binary.
      const content = Object.entries(body?.content ?? {})
      if (content.length === 0 || content.some(([, media]) => media.schema?.format !== 'binary')) problems.push(`${key}: a raw-bytes body not described as binary`)
      continue
    }
    if (!takesBody.has(key)) {
      if (body !== undefined) problems.push(`${key}: documents a body the route does not take`)
      continue
    }
    const types = Object.keys(body?.content ?? {})
    const schema = body?.content?.['application/json']?.schema
    if (types.join() !== 'application/json') problems.push(`${key}: its body is described as ${JSON.stringify(types)}, not application/json alone`)
    if (schema === undefined || Object.keys(schema).length === 0) problems.push(`${key}: its body has no schema`)
    else if (!schema.$ref?.startsWith('#/components/schemas/')) problems.push(`${key}: its body is not a component (give its model an $id)`)
    else if (!(schema.$ref.slice('#/components/schemas/'.length) in doc.components.schemas)) problems.push(`${key}: its body refers to a missing ${schema.$ref}`)
  }
  return problems
}

/** The `### METHOD /path` section of docs/api.md, up to the next heading of its level or above. */
function sectionOf(markdown: string, key: string): string | null {
  const lines = markdown.split('\n')
  const start = lines.findIndex((line) => line.trim() === `### ${key}`)
  if (start === -1) return null
  const end = lines.findIndex((line, i) => i > start && /^#{1,3} /.test(line))
  return lines.slice(start + 1, end === -1 ? undefined : end).join('\n')
}

/** The error table of a route section: `| 409 | `a`, `b` | when |` rows, by status. */
function documentedCodes(section: string): Map<number, Set<string>> {
  const out = new Map<number, Set<string>>()
  for (const m of section.matchAll(/^\| *([45]\d\d) *\| *([^|]*)\|/gm)) {
    const status = Number(m[1])
    const set = out.get(status) ?? new Set<string>()
    for (const code of m[2]!.matchAll(/`([a-z_]+)`/g)) set.add(code[1]!)
    out.set(status, set)
  }
  return out
}

/** Where docs/api.md and the OpenAPI document disagree about a route. */
function markdownProblems(doc: Doc, markdown: string): string[] {
  const problems: string[] = []
  for (const { key, operation } of operations(doc)) {
    const section = sectionOf(markdown, key)
    if (section === null) {
      problems.push(`${key}: no "### ${key}" section in docs/api.md`)
      continue
    }
    const inDoc = documentedCodes(section)
    const inSpec = codesOf(operation)
    const show = (m: Map<number, Set<string>>) =>
      [...m]
        .map(([s, c]): [number, Set<string>] => [s, s === ANY_ROUTE_CODE.status ? new Set([...c].filter((code) => code !== ANY_ROUTE_CODE.code)) : c])
        .filter(([s, c]) => !ANY_ROUTE_STATUSES.has(s) && c.size > 0)
        .sort(([a], [b]) => a - b)
        .map(([s, c]) => `${s} ${[...c].sort().join(',')}`)
        .join('; ')
    if (show(inDoc) !== show(inSpec)) problems.push(`${key}: docs/api.md lists ${show(inDoc) || 'no errors'}, the OpenAPI document ${show(inSpec)}`)
  }
  return problems
}

/** A provider configured (never contacted: the document does not ask it anything), so the OpenID Connect routes, served only then, are documented and checked too. */
const WITH_OIDC = { ARENA_OIDC_PROVIDERS: JSON.stringify([{ name: 'example', issuer: 'https://idp.example.invalid', clientId: 'arena' }]) }

describe('the OpenAPI document', () => {
  let ctx!: TestApp
  beforeAll(async () => {
    ctx = await createArenaApp(WITH_OIDC)
  })
  afterAll(() => ctx.close())

  test('is a valid OpenAPI 3.1 document', async () => {
    const doc = await documentOf(ctx)
    const validator = new Validator()
    const result = await validator.validate(structuredClone(doc) as unknown as Record<string, unknown>)
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
    expect(validator.version).toBe('3.1')
    // What the validator lets through: a body with no schema.
    expect(bodyProblems(doc, ctx.app.routes)).toEqual([])
  })

  test('describes every body as JSON, one component per model, and which bodies may be left out', async () => {
    const doc = await documentOf(ctx)
    const bodyOf = (path: string, method = 'post') => doc.paths[path]![method]!.requestBody as { required: boolean; content: Record<string, { schema: { $ref?: string } }> }
    expect(operations(doc).filter((o) => o.operation.requestBody !== undefined).length).toBeGreaterThanOrEqual(32)
    expect(bodyOf('/api/v1/user/login')).toEqual({ required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/LoginBody' } } } })
    // One model, two routes: one component.
    for (const path of ['/api/v1/admin/tournaments/{id}/cancel', '/api/v1/admin/tournaments/{id}/participants/{participantId}/disqualify']) {
      expect(bodyOf(path).content['application/json']!.schema).toEqual({ $ref: '#/components/schemas/ReasonBody' })
    }
    expect(doc.components.schemas.ReasonBody).toEqual({
      type: 'object',
      required: ['reason'],
      properties: { reason: { type: 'string', minLength: 1, maxLength: 500, description: 'why; every affected player sees it in the event' } },
    })
    // The plugin's own rendering (a union of literals is an enum), as in every other schema.
    expect((doc.components.schemas.CreateTournamentBody as { properties: { format: unknown } }).properties.format).toMatchObject({
      type: 'string',
      enum: ['single_elimination', 'double_elimination', 'round_robin', 'swiss'],
    })
    // Taken absent as {}: not required. The rest are.
    const optional = operations(doc).filter((o) => (o.operation.requestBody as { required?: boolean } | undefined)?.required === false).map((o) => o.key)
    expect(optional.sort()).toEqual(['POST /api/v1/auth/device-code', 'POST /api/v1/events/socket-ticket', 'POST /api/v1/security/pin-session', 'POST /api/v1/user/email/resend', 'POST /api/v1/user/s/logout'])
    const { accessToken } = await login(ctx, (await registerUser(ctx)).username)
    for (const key of optional) {
      const res = await ctx.handle(req(key.split(' ')[1]!, { method: 'POST', headers: { authorization: `Bearer ${accessToken}` } }))
      expect({ key, validated: res.status !== 422 }).toEqual({ key, validated: true })
    }
    const required = await ctx.handle(req('/api/v1/user/login', { method: 'POST' }))
    expect(required.status).toBe(422)
  })

  test('documents every route, its required headers and every error it can answer', async () => {
    const doc = await documentOf(ctx)
    expect(routeProblems(doc, ctx.app.routes)).toEqual([])
    // Operator routes are there because this app has an operator token.
    expect(Object.keys(doc.paths)).toContain('/api/v1/admin/games')
  })

  test('describes each model once, in components, whatever requests came before', async () => {
    const before = await documentOf(ctx)
    expect(Object.keys(before.components.schemas)).toEqual(expect.arrayContaining(['Error', 'User', 'Tokens', 'Tournament', 'Match', 'Decision', 'Withdrawal']))
    expect(JSON.stringify(before)).not.toContain('"$id"')
    // Elysia changes a route's schemas when it first runs the route: the document must not.
    for (const route of ctx.app.routes) {
      await ctx.handle(req(route.path.replace(/:[A-Za-z]+/g, 'x'), { method: route.method, headers: { 'x-admin-token': ADMIN_TOKEN } }))
    }
    expect(await documentOf(ctx)).toEqual(before)
  })

  test('the bearer routes are the routes that refuse a request without a bearer', async () => {
    const doc = await documentOf(ctx)
    for (const { key, method, path, operation } of operations(doc)) {
      const res = await ctx.handle(req(path.replace(/\{[^}]+\}/g, 'x'), { method, headers: { 'x-admin-token': ADMIN_TOKEN } }))
      const refusedBearer = res.status === 401 && (res.headers.get('www-authenticate') ?? '').startsWith('Bearer')
      const declaresBearer = operation.security?.some((s) => 'bearer' in s) ?? false
      expect({ key, bearer: declaresBearer }).toEqual({ key, bearer: refusedBearer })
    }
  })

  test('a request without a required header gets the route\'s own answer, never a validation 422', async () => {
    const player = await registerUser(ctx)
    const { accessToken } = await login(ctx, player.username)
    const { game, gameKey } = await createGame(ctx)
    const sent: Record<SpecialHeader, string> = { 'x-game-key': gameKey, 'x-session-token': 'gst_unknown', 'x-secure-session': 'unknown', 'x-admin-token': ADMIN_TOKEN, 'x-arena-signature': 'unknown' }
    // Bodies that pass each route's schema, so only the header is missing.
    const bodies: Record<string, unknown> = {
      '/api/v1/game-sdk/{gameId}/sessions': { matchId: 'mat_unknown' },
      '/api/v1/game-sdk/{gameId}/results': { outcome: 'DRAW' },
      '/api/v1/game-servers/{gameId}/results': { matchId: 'mat_unknown', outcome: 'DRAW' },
      '/api/v1/security/pin-session/{id}/verify': { pin: '482916', amount: '1', destinationAddress: 'unknown', idempotencyKey: 'k1' },
    }
    let checked = 0
    for (const { key, method, path } of operations(await documentOf(ctx))) {
      for (const header of (Object.keys(NEEDS) as SpecialHeader[]).filter((h) => NEEDS[h](path))) {
        const headers: Record<string, string> = { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' }
        for (const other of Object.keys(NEEDS) as SpecialHeader[]) if (other !== header && NEEDS[other](path)) headers[other] = sent[other]
        const url = path.replace('{gameId}', game.id).replace(/\{[^}]+\}/g, 'unknown')
        const body = method === 'GET' ? undefined : JSON.stringify(bodies[path] ?? {})
        const res = await ctx.handle(req(url, { method, headers, ...(body === undefined ? {} : { body }) }))
        const code = ((await res.json()) as { error?: { code?: string } }).error?.code
        expect({ key, header, status: res.status, code }).toEqual({ key, header, status: MISSING[header][0], code: MISSING[header][1] })
        checked++
      }
    }
    expect(checked).toBeGreaterThanOrEqual(12)
  })

  test('the special headers are described in one place', () => {
    expect(Object.keys(SPECIAL_HEADERS).sort()).toEqual(Object.keys(NEEDS).sort())
  })
})

describe('docs/api.md', () => {
  let ctx!: TestApp
  beforeAll(async () => {
    ctx = await createArenaApp(WITH_OIDC)
  })
  afterAll(() => ctx.close())

  test('has a section for every documented route, listing the same errors as the OpenAPI document', async () => {
    expect(markdownProblems(await documentOf(ctx), API_MD)).toEqual([])
  })

  test('its table of every error code lists each code of src/shared/errors.ts under its status, and no other', () => {
    expect(errorTableProblems(API_MD)).toEqual([])
  })

  test('README and docs/ stand alone: nothing points outside the repository', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
    expect(readme.includes('(docs/api.md)')).toBe(true)
    for (const [name, text] of [['README.md', readme] as [string, string], ...docsFiles()]) {
      expect({ name, outside: /\.\.\/shared|shared\/spec/.test(text) }).toEqual({ name, outside: false })
    }
  })
})

/** The "Every code, by status" table of docs/api.md's conventions: codes by status, as written. */
function errorTable(markdown: string): Map<number, Set<string>> {
  const start = markdown.indexOf('Every code, by status:')
  if (start === -1) return new Map()
  const end = markdown.indexOf('\n\n', markdown.indexOf('| status |', start))
  return documentedCodes(markdown.slice(start, end === -1 ? undefined : end))
}

/** Where that table and ERROR_CODES disagree: a code missing, or listed under a status it is never answered with (a route's STATUS_OVERRIDES aside). */
function errorTableProblems(markdown: string): string[] {
  const table = errorTable(markdown)
  const problems: string[] = []
  for (const [code, status] of Object.entries(ERROR_CODES)) if (!table.get(status)?.has(code)) problems.push(`${code}: not listed under ${status}`)
  const overridden = Object.values(STATUS_OVERRIDES).flatMap((o) => Object.entries(o).map(([code, status]) => `${status} ${code}`))
  for (const [status, codes] of table) {
    for (const code of codes) {
      if (ERROR_CODES[code as ErrorCode] !== status && !overridden.includes(`${status} ${code}`)) problems.push(`${code}: listed under ${status}, answered with ${ERROR_CODES[code as ErrorCode] ?? 'no status (no such code)'}`)
    }
  }
  return problems
}

function docsFiles(): [string, string][] {
  const dir = join(ROOT, 'docs')
  return [...new Bun.Glob('**/*.md').scanSync(dir)].map((name) => [`docs/${name}`, readFileSync(join(dir, name), 'utf8')])
}

describe('the checks catch what they are for', () => {
  test('a route missing from the document, or without errors, or missing from docs/api.md', async () => {
    const probes = new Elysia()
      .get('/api/v1/undocumented', () => 'x', { detail: { hide: true } })
      .get('/api/v1/errorless', () => ({ ok: true }))
    const app = await createTestApp({ probes, env: { ARENA_ADMIN_TOKEN: ADMIN_TOKEN } })
    try {
      const doc = await documentOf(app)
      const problems = routeProblems(doc, app.app.routes)
      expect(problems).toContain('GET /api/v1/undocumented: served but not in the OpenAPI document')
      expect(problems).toContain('GET /api/v1/errorless: no 4xx response')
      expect(markdownProblems(doc, API_MD)).toContain('GET /api/v1/errorless: no "### GET /api/v1/errorless" section in docs/api.md')
    } finally {
      app.close()
    }
  })

  test('a body without a schema, inline rather than a component, or described where the route takes none', async () => {
    const ctx = await createArenaApp()
    try {
      const doc = await documentOf(ctx)
      const body = (path: string) => doc.paths[path]!.post!.requestBody as { content: Record<string, unknown> }
      body('/api/v1/user/login').content = {}
      body('/api/v1/auth/validate').content = { 'application/json': { schema: { type: 'object' } } }
      body('/api/v1/admin/games').content['multipart/form-data'] = { schema: { $ref: '#/components/schemas/CreateGameBody' } }
      doc.paths['/api/v1/admin/tournaments/{id}/start']!.post!.requestBody = body('/api/v1/admin/games')
      expect(bodyProblems(doc, ctx.app.routes)).toEqual([
        'POST /api/v1/user/login: its body is described as [], not application/json alone',
        'POST /api/v1/user/login: its body has no schema',
        'POST /api/v1/auth/validate: its body is not a component (give its model an $id)',
        'POST /api/v1/admin/games: its body is described as ["application/json","multipart/form-data"], not application/json alone',
        'POST /api/v1/admin/tournaments/{id}/start: documents a body the route does not take',
      ])
    } finally {
      ctx.close()
    }
  })

  test('a special header not required, an error code under the wrong status, a doc table that disagrees', async () => {
    const ctx = await createArenaApp()
    try {
      const doc = await documentOf(ctx)
      const results = doc.paths['/api/v1/game-sdk/{gameId}/results']!.post!
      results.parameters = results.parameters!.map((p) => (p.name === 'x-session-token' ? { ...p, required: false } : p))
      results.responses['409']!.description = 'Error codes: `match_not_running`, `session_expired`'
      const problems = routeProblems(doc, ctx.app.routes)
      expect(problems).toContain('POST /api/v1/game-sdk/{gameId}/results: x-session-token is not a required header parameter')
      expect(problems).toContain('POST /api/v1/game-sdk/{gameId}/results: session_expired is a 410, listed under 409')
      expect(markdownProblems(doc, API_MD).some((p) => p.startsWith('POST /api/v1/game-sdk/{gameId}/results: docs/api.md lists'))).toBe(true)
    } finally {
      ctx.close()
    }
  })
})
