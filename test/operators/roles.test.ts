// Every operator route answers 403 `forbidden` to a role below its own
// (contract §11), and changes nothing: a table-driven test over app.routes,
// the real app's routes, so a route added later (an admin API route, a
// console page or form) is covered without touching this file. Each route
// must declare its role (`x-arena-role` in its detail: operatorRoute,
// consoleRoute); the only routes without one are how a credential is
// obtained (POST /api/v1/admin/sessions, the console's sign-in page) and the
// console's stylesheet.
//
// For each route and each role below its own, a real operator session of
// that role calls it (the API with `Authorization: Bearer`, the console with
// its session cookie and, on a form, a valid CSRF token): 403 forbidden, and
// the audit log is as it was. The route's own role is then let through (not
// 401, not 403: whatever the route answers to a placeholder id or an empty
// body, never a 500).
//
// The docs are held to the same table: each admin route's role is written
// under its heading in docs/api.md and in its role's row in docs/operators.md.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { req, type TestApp } from '../helpers/app'
import { createArenaApp } from '../helpers/arena'
import { bearer, cliActor, OPERATOR_PASSWORD } from '../helpers/operators'
import { OPERATOR_ROLES, rolesBelow, type OperatorRole } from '../../src/modules/operators/roles'

const API = '/api/v1/admin'
const CONSOLE = '/console'

/** Reached without a credential: they hand one out (the first sign-in's step, after a proven one-time password, checks its own ticket), or serve the sign-in page's stylesheet. */
function isPublic(method: string, path: string): boolean {
  if (method === 'POST' && path === `${API}/sessions`) return true
  return path === `${CONSOLE}/login` || path === `${CONSOLE}/login/password` || path.startsWith(`${CONSOLE}/assets/`)
}

interface Guarded {
  method: string
  path: string
  role: OperatorRole | undefined
  console: boolean
}

let ctx: TestApp
let guarded: Guarded[]
const names = new Map<OperatorRole, string>()

beforeAll(async () => {
  ctx = await createArenaApp()
  guarded = ctx.app.routes
    .filter((route) => route.path === API || route.path.startsWith(`${API}/`) || route.path === CONSOLE || route.path.startsWith(`${CONSOLE}/`))
    .filter((route) => !isPublic(route.method, route.path))
    .map((route) => ({
      method: route.method,
      path: route.path,
      role: (route.hooks as { detail?: Record<string, unknown> } | undefined)?.detail?.['x-arena-role'] as OperatorRole | undefined,
      console: route.path.startsWith(CONSOLE),
    }))
  for (const role of OPERATOR_ROLES) {
    const name = `role-${role}`
    const { password } = await ctx.services.operators.create({ name, role }, cliActor(ctx))
    await ctx.services.operatorSessions.signIn({ name, password, newPassword: OPERATOR_PASSWORD, kind: 'api', userAgent: 'test', ip: '127.0.0.1' })
    names.set(role, name)
  }
})
afterAll(async () => {
  await ctx.close()
})

/** A fresh session of `role`: an API bearer, or a console cookie got by signing in through POST /console/login. */
async function sessionOf(role: OperatorRole, console: boolean): Promise<{ headers: Record<string, string>; csrf: string }> {
  const name = names.get(role)!
  if (!console) {
    const signedIn = await ctx.services.operatorSessions.signIn({ name, password: OPERATOR_PASSWORD, kind: 'api', userAgent: 'test', ip: '127.0.0.1' })
    return { headers: bearer(signedIn.token), csrf: '' }
  }
  const res = await ctx.handle(
    req(`${CONSOLE}/login`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ name, password: OPERATOR_PASSWORD }).toString() }),
  )
  expect(res.status).toBe(303)
  const cookie = /^([^;]+)/.exec(res.headers.get('set-cookie') ?? '')?.[1]
  expect(cookie).toBeDefined()
  const token = cookie!.slice(cookie!.indexOf('=') + 1)
  return { headers: { cookie: cookie! }, csrf: ctx.services.operatorSessions.csrfFor(token) }
}

/** The route called with placeholder ids, by its own method; an empty JSON body (API) or a form holding only a valid `_csrf` (console). */
function requestFor(route: Guarded, session: { headers: Record<string, string>; csrf: string }): Request {
  const path = route.path.replace(/:[A-Za-z]+/g, 'placeholder_0').replace(/\*$/, 'placeholder')
  if (route.method === 'GET' || route.method === 'HEAD') return req(path, { method: route.method, headers: session.headers })
  if (!route.console) return req(path, { method: route.method, headers: { 'content-type': 'application/json', ...session.headers }, body: '{}' })
  return req(path, {
    method: route.method,
    headers: { ...session.headers, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: session.csrf }).toString(),
  })
}

async function auditState() {
  const head = await ctx.storage.read.audit.auditHead()
  return { seq: head.seq, hash: head.hash }
}

describe('every operator route declares its role', () => {
  test('the table is not empty: the admin API and the console are both in it', () => {
    expect(guarded.filter((r) => !r.console).length).toBeGreaterThan(20)
    expect(guarded.some((r) => r.console)).toBe(true)
  })

  test('x-arena-role is set on each, to a role', () => {
    const missing = guarded.filter((r) => r.role === undefined || !OPERATOR_ROLES.includes(r.role)).map((r) => `${r.method} ${r.path}`)
    expect(missing).toEqual([])
  })
})

describe('the docs say each admin route\'s role', () => {
  const docs = (file: string) => readFileSync(join(import.meta.dir, '../../docs', file), 'utf8')
  /** `/api/v1/admin/users/:id` as the docs write it: `/api/v1/admin/users/{id}`. */
  const documented = (path: string) => path.replace(/:([A-Za-z]+)/g, '{$1}')

  test('docs/api.md: "Role: **role**." under each route\'s heading', () => {
    const api = docs('api.md')
    const wrong = guarded
      .filter((r) => !r.console)
      .filter((r) => {
        const at = api.indexOf(`\n### ${r.method} ${documented(r.path)}\n`)
        const section = at === -1 ? '' : api.slice(at, api.indexOf('\n### ', at + 5))
        return !section.includes(`Role: **${r.role}**.`)
      })
      .map((r) => `${r.method} ${r.path}: ${r.role}`)
    expect(wrong).toEqual([])
  })

  test('docs/operators.md: the route in its role\'s row of the table', () => {
    const rows = new Map(
      [...docs('operators.md').matchAll(/^\| (viewer|moderator|finance|admin) \| (.+) \|$/gm)].map((m) => [m[1]!, new Set([...m[2]!.matchAll(/`([A-Z]+ [^`]+)`/g)].map((c) => c[1]!))]),
    )
    const wrong = guarded
      .filter((r) => !r.console)
      .filter((r) => !rows.get(r.role!)?.has(`${r.method} ${documented(r.path).slice(API.length)}`))
      .map((r) => `${r.method} ${r.path}: ${r.role}`)
    expect(wrong).toEqual([])
  })
})

describe('a role below the route\'s own: 403 forbidden, nothing changed', () => {
  test('each route, each lower role', async () => {
    const sessions = new Map<string, { headers: Record<string, string>; csrf: string }>()
    const problems: string[] = []
    let checked = 0
    for (const route of guarded) {
      if (route.role === undefined) continue
      for (const role of rolesBelow(route.role)) {
        const key = `${role}:${route.console}`
        if (!sessions.has(key)) sessions.set(key, await sessionOf(role, route.console))
        const before = await auditState()
        const res = await ctx.handle(requestFor(route, sessions.get(key)!))
        const text = await res.text()
        checked++
        if (res.status !== 403) problems.push(`${route.method} ${route.path} as ${role}: ${res.status} ${text.slice(0, 120)}`)
        else if (!route.console && (JSON.parse(text) as { error: { code: string } }).error.code !== 'forbidden') problems.push(`${route.method} ${route.path} as ${role}: ${text.slice(0, 120)}`)
        else if (route.console && !text.includes('needs the')) problems.push(`${route.method} ${route.path} as ${role}: a 403 that is not the role check`)
        expect(await auditState()).toEqual(before)
      }
    }
    expect(problems).toEqual([])
    expect(checked).toBeGreaterThan(30)
  })
})

describe('the route\'s own role passes the check', () => {
  test('each route, as its lowest allowed role: neither 401 nor 403, never a 500', async () => {
    const problems: string[] = []
    for (const route of guarded) {
      if (route.role === undefined) continue
      // A fresh session each time: the route may be the one that ends it (signing out).
      const res = await ctx.handle(requestFor(route, await sessionOf(route.role, route.console)))
      if (res.status === 401 || res.status === 403 || res.status >= 500) problems.push(`${route.method} ${route.path} as ${route.role}: ${res.status} ${(await res.text()).slice(0, 160)}`)
    }
    expect(problems).toEqual([])
    // A sign-in (an argon2id hash) per route: over 5 s on a loaded machine.
  }, 60_000)
})
