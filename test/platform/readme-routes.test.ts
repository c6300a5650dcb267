// The README names routes the server serves, and the bodies it shows are
// bodies the server takes: every `METHOD /path` it mentions is a route of the
// real app (short forms like `PUT /security/pin` under /api/v1), every field
// of a body in its route tables is a field of that route's body schema, every
// field the route requires is in it, and the logout row's bodies, sent as
// written, each do what the README says.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createTestApp, postJson, type TestApp } from '../helpers/app'
import { bearer, login, me, registerUser } from '../helpers/auth'
import { ROOT } from '../helpers/process'

const README = readFileSync(join(ROOT, 'README.md'), 'utf8')
const METHOD = '(?:GET|POST|PUT|PATCH|DELETE)'

interface Mention {
  methods: string[]
  path: string
}

/** Every `METHOD /path` (and `POST`/`DELETE /path`) in the README, query strings left off. */
function mentions(markdown: string): Mention[] {
  const found = new Map<string, Mention>()
  for (const m of markdown.matchAll(new RegExp(`((?:${METHOD}\`/\`)*)(${METHOD}) (/[^\`\\s?)]*)`, 'g'))) {
    const methods = [...m[1]!.split('`/`').filter(Boolean), m[2]!]
    for (const method of methods) found.set(`${method} ${m[3]}`, { methods: [method], path: m[3]! })
  }
  return [...found.values()]
}

interface Row {
  method: string
  path: string
  /** The bodies the row shows before its `→`, each as written. */
  bodies: string[]
}

/** The README's route tables: `| \`METHOD /path\` | what it does |`. */
function routeRows(markdown: string): Row[] {
  return [...markdown.matchAll(new RegExp(`^\\| \`(${METHOD}) (/[^\`]+)\` \\| (.*) \\|$`, 'gm'))].map((m) => {
    const request = m[3]!.split('→')[0]!
    return { method: m[1]!, path: m[2]!, bodies: braceGroups(request.replace(/`/g, '')) }
  })
}

/** The top-level `{ ... }` groups of a text. */
function braceGroups(text: string): string[] {
  const groups: string[] = []
  let depth = 0
  let start = 0
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '{') {
      if (depth === 0) start = i
      depth++
    } else if (text[i] === '}' && depth > 0) {
      depth--
      if (depth === 0) groups.push(text.slice(start, i + 1))
    }
  }
  return groups
}

/** The field names of a body as the README writes it: `{ a, b?, "c": true, d: [x, ...] }` → a, b, c, d. */
function fieldsOf(body: string): string[] {
  const inner = body.slice(1, -1)
  const fields: string[] = []
  let depth = 0
  let part = ''
  for (const ch of inner + ',') {
    if ('[{('.includes(ch)) depth++
    if (']})'.includes(ch)) depth--
    if (ch === ',' && depth === 0) {
      const name = /^\s*"?([A-Za-z_][A-Za-z0-9_]*)"??\??/.exec(part)?.[1]
      if (name && part.trim() !== '...') fields.push(name)
      part = ''
    } else part += ch
  }
  return fields
}

const pattern = (path: string) => path.replace(/\{[^}]+\}|:[A-Za-z]+/g, '{}')

let ctx: TestApp
let routes: { method: string; path: string; body: { properties?: Record<string, unknown> } | undefined }[]

beforeAll(async () => {
  // A provider configured (never contacted), so the OpenID Connect routes the README names are served.
  ctx = await createTestApp({ env: { ARENA_OIDC_PROVIDERS: JSON.stringify([{ name: 'example', issuer: 'https://idp.example.invalid', clientId: 'arena' }]) } })
  routes = ctx.app.routes.map((route) => ({
    method: route.method,
    path: pattern(route.path),
    body: (route.hooks as { body?: { properties?: Record<string, unknown> } } | undefined)?.body,
  }))
  // The PostgreSQL run's first app migrates the run's template database: more than the default 5 s on a busy machine.
}, 60_000)
afterAll(async () => {
  await ctx.close()
})

function routeOf(method: string, path: string) {
  return routes.find((r) => r.method === method && r.path === pattern(path)) ?? routes.find((r) => r.method === method && r.path === pattern(`/api/v1${path}`))
}

describe('the README’s routes', () => {
  test('every route it names is served', () => {
    const named = mentions(README)
    expect(named.length).toBeGreaterThan(30)
    expect(named.filter((m) => !routeOf(m.methods[0]!, m.path)).map((m) => `${m.methods[0]} ${m.path}`)).toEqual([])
  })

  test('every field of a body in its route tables is a field the route takes', () => {
    const rows = routeRows(README)
    expect(rows.length).toBeGreaterThan(15)
    const unknown: string[] = []
    let fields = 0
    for (const row of rows) {
      const route = routeOf(row.method, row.path)
      if (!route) {
        unknown.push(`${row.method} ${row.path}: no such route`)
        continue
      }
      for (const body of row.bodies) {
        for (const field of fieldsOf(body)) {
          fields++
          if (!route.body?.properties || !(field in route.body.properties)) unknown.push(`${row.method} ${row.path}: ${field}`)
        }
      }
    }
    expect(unknown).toEqual([])
    expect(fields).toBeGreaterThan(30)
  })

  test('every body in its route tables carries every field the route requires', () => {
    const missing: string[] = []
    let checked = 0
    for (const row of routeRows(README)) {
      const required = (routeOf(row.method, row.path)?.body as { required?: string[] } | undefined)?.required ?? []
      for (const body of row.bodies) {
        checked++
        const fields = fieldsOf(body)
        for (const field of required) if (!fields.includes(field)) missing.push(`${row.method} ${row.path} ${body}: ${field}`)
      }
    }
    expect(missing).toEqual([])
    expect(checked).toBeGreaterThan(15)
  })

  test('the parsing reads the tables as written', () => {
    expect(fieldsOf('{ gameId, name, format, participants: [userId or username, ...], options? }')).toEqual(['gameId', 'name', 'format', 'participants', 'options'])
    expect(fieldsOf('{ "all": true }')).toEqual(['all'])
    expect(fieldsOf('{}')).toEqual([])
    expect(braceGroups('bearer + { a } or { b: { c } } → { d }'.split('→')[0]!)).toEqual(['{ a }', '{ b: { c } }'])
  })

  test('the logout row’s bodies, sent as written: {} ends this session, all every one, others every one but this', async () => {
    const row = routeRows(README).find((r) => r.method === 'POST' && r.path === '/api/v1/user/s/logout')
    const bodies = row!.bodies.map((b) => JSON.parse(b) as Record<string, boolean>)
    expect(bodies).toEqual([{}, { all: true }, { others: true }])
    for (const body of bodies) {
      const user = await registerUser(ctx)
      const [current, other] = [await login(ctx, user.username), await login(ctx, user.username)]
      const res = await ctx.handle(postJson('/api/v1/user/s/logout', body, bearer(current.accessToken)))
      expect(res.status).toBe(200)
      const { revoked } = (await res.json()) as { revoked: number }
      const [currentLive, otherLive] = [(await me(ctx, current.accessToken)).status === 200, (await me(ctx, other.accessToken)).status === 200]
      if (body.all) expect({ revoked, currentLive, otherLive }).toEqual({ revoked: 2, currentLive: false, otherLive: false })
      else if (body.others) expect({ revoked, currentLive, otherLive }).toEqual({ revoked: 1, currentLive: true, otherLive: false })
      else expect({ revoked, currentLive, otherLive }).toEqual({ revoked: 1, currentLive: false, otherLive: true })
    }
  })
})
