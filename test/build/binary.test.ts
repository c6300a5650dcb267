// The compiled binary is the product: it must start from nothing but itself
// (migrations and docs assets embedded), serve, and stop cleanly on SIGTERM.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { chmodSync, copyFileSync, existsSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { emptyDatabaseEnv, onEngine, tempDir, testDatabaseEnv } from '../helpers/app'
import { BINARY, buildBinary, ROOT, run, startServe, type ServerProcess } from '../helpers/process'

const started: ServerProcess[] = []
// The migrations drizzle-kit wrote for the engine of the run; the binary must carry exactly these.
const journal = (await Bun.file(join(ROOT, onEngine('postgres') ? 'drizzle-postgres' : 'drizzle', 'meta', '_journal.json')).json()) as { entries: unknown[] }
const KNOWN = journal.entries.length

beforeAll(async () => {
  await buildBinary()
  expect(existsSync(BINARY)).toBe(true)
  expect(statSync(BINARY).mode & 0o111).not.toBe(0)
}, 180_000)

afterAll(() => {
  for (const server of started) server.proc.kill('SIGKILL')
})

async function serve(env: Record<string, string>, cwd?: string) {
  const server = await startServe([cwd ? join(cwd, 'arena') : BINARY, 'serve'], env, cwd ? { cwd } : {})
  started.push(server)
  return server
}

describe('dist/arena', () => {
  test('serves health, the OpenAPI document, its docs and the error envelope, then stops on SIGTERM with 0 within 5 s; a restart migrates nothing', async () => {
    // A copy of the binary, run from its own directory with a relative data
    // dir: no file of the checkout (./drizzle, node_modules) may be needed.
    const home = tempDir('arena-bin-')
    copyFileSync(BINARY, join(home, 'arena'))
    chmodSync(join(home, 'arena'), 0o755)
    const dataDir = './data'
    // A database with nothing in it yet: the binary migrates it from scratch.
    const env = { ARENA_DATA_DIR: dataDir, ...(await emptyDatabaseEnv()) }
    const first = await serve(env, home)
    expect(first.lines.find((l) => l.msg === 'migrations')).toMatchObject({ applied: KNOWN, known: KNOWN })

    const health = await fetch(`${first.url}/healthz`)
    expect(health.status).toBe(200)
    expect(await health.json()).toEqual({ status: 'ok' })
    expect(health.headers.get('x-request-id')).toMatch(/^req_/)

    const ready = await fetch(`${first.url}/readyz`)
    expect(ready.status).toBe(200)

    const spec = await fetch(`${first.url}/openapi/json`)
    expect(spec.status).toBe(200)
    const doc = (await spec.json()) as { openapi: string; paths: Record<string, Record<string, { requestBody?: unknown }>>; components: { schemas: Record<string, unknown> } }
    expect(doc.openapi).toStartWith('3.')
    expect(Object.keys(doc.paths)).toContain('/healthz')
    // The binary describes bodies as `npm start` does (test/platform/openapi.test.ts): JSON, by component.
    expect(doc.paths['/api/v1/user/login']!.post!.requestBody).toEqual({ required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/LoginBody' } } } })
    expect(doc.paths['/api/v1/user/s/logout']!.post!.requestBody).toMatchObject({ required: false })
    expect(Object.keys(doc.components.schemas)).toContain('LoginBody')

    const docsPage = await (await fetch(`${first.url}/openapi`)).text()
    const script = docsPage.match(/<script src="([^"]+)"/)![1]!
    const bundle = await fetch(`${first.url}${script}`)
    expect(bundle.status).toBe(200)
    expect((await bundle.arrayBuffer()).byteLength).toBeGreaterThan(100_000)

    const missing = await fetch(`${first.url}/api/v1/does-not-exist`)
    expect(missing.status).toBe(404)
    expect(missing.headers.get('x-request-id')).toMatch(/^req_/)
    expect(await missing.json()).toEqual({
      error: { code: 'not_found', message: 'No route for GET /api/v1/does-not-exist', status: 404 },
    })

    // Identity through the binary: argon2, JWT signing, the database.
    const account = { email: 'bin@example.com', username: 'bin_player', password: 'binary password', country: 'NL', accept_terms: true }
    const json = { 'content-type': 'application/json' }
    const registered = await fetch(`${first.url}/api/v1/user/register`, { method: 'POST', headers: json, body: JSON.stringify(account) })
    expect(registered.status).toBe(201)
    const loggedIn = await fetch(`${first.url}/api/v1/user/login`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ identifier: account.username, password: account.password }),
    })
    expect(loggedIn.status).toBe(200)
    const { accessToken } = (await loggedIn.json()) as { accessToken: string }
    const meRes = await fetch(`${first.url}/api/v1/me`, { headers: { authorization: `Bearer ${accessToken}` } })
    expect(((await meRes.json()) as { user: { username: string } }).user.username).toBe('bin_player')
    const events = await fetch(`${first.url}/api/v1/events?topics=session&wait=0`, { headers: { authorization: `Bearer ${accessToken}` } })
    expect(((await events.json()) as { events: { type: string }[] }).events.map((e) => e.type)).toEqual(['session.login'])
    const reported = await fetch(`${first.url}/api/v1/security/events`, {
      method: 'POST',
      headers: { ...json, authorization: `Bearer ${accessToken}` },
      body: JSON.stringify({ kind: 'ENV_COMPROMISED', level: 'COMPROMISED', details: { root: true } }),
    })
    expect(reported.status).toBe(202)

    const stop = await first.signal('SIGTERM')
    expect(stop.code).toBe(0)
    // The buffered security event was written on the way out.
    const listed = await run([join(home, 'arena'), 'security', 'events', '--json'], { ...env, ARENA_DATA_DIR: join(home, 'data') })
    expect((JSON.parse(listed.stdout) as { events: { kind: string }[] }).events.map((e) => e.kind)).toContain('ENV_COMPROMISED')
    expect(stop.ms).toBeLessThan(5000)
    expect(first.lines.some((l) => l.msg === 'stopped')).toBe(true)
    expect(first.lines.filter((l) => l.msg === 'request').length).toBeGreaterThanOrEqual(5)

    // The database is where the configuration put it: the data dir's file, or PostgreSQL (no file at all).
    expect(existsSync(join(home, 'data', 'arena.sqlite'))).toBe(onEngine('sqlite'))

    const second = await serve(env, home)
    expect(second.lines.find((l) => l.msg === 'migrations')).toMatchObject({ applied: 0, known: KNOWN })
    expect((await fetch(`${second.url}/healthz`)).status).toBe(200)
    // Same data dir, same generated secret: the token issued before the restart still works.
    const afterRestart = await fetch(`${second.url}/api/v1/me`, { headers: { authorization: `Bearer ${accessToken}` } })
    expect(afterRestart.status).toBe(200)
    const again = await second.signal('SIGINT')
    expect(again.code).toBe(0)
    expect(again.ms).toBeLessThan(5000)
  }, 60_000)

  test('serves the console: its sign-in page and embedded stylesheet, and an operator made by `arena operator create` signs in to a rendered page', async () => {
    // Preact's JSX and the stylesheet imported as text must survive `bun build --compile`.
    const env = { ARENA_DATA_DIR: tempDir('arena-bin-'), ...(await testDatabaseEnv()) }
    const server = await serve(env)
    const login = await fetch(`${server.url}/console/login`)
    expect(login.status).toBe(200)
    expect(login.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(login.headers.get('content-security-policy')).toContain("default-src 'none'")
    const html = await login.text()
    expect(html).toStartWith('<!doctype html><html lang="en">')
    expect(html).toContain('<form method="post" action="/console/login"')
    const css = await fetch(`${server.url}/console/assets/console.css`)
    expect(css.status).toBe(200)
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8')
    expect(await css.text()).toContain(':root')

    const created = await run([BINARY, 'operator', 'create', 'binary-admin', '--role', 'admin', '--json'], env)
    expect(created.code).toBe(0)
    const { password } = JSON.parse(created.stdout) as { password: string }
    const form = new URLSearchParams({ name: 'binary-admin', password, newPassword: 'binary admin password', next: '/console/operators' })
    const signedIn = await fetch(`${server.url}/console/login`, { method: 'POST', body: form, redirect: 'manual' })
    expect(signedIn.status).toBe(303)
    expect(signedIn.headers.get('location')).toStartWith('/console/operators?notice=')
    const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!
    const operators = await fetch(`${server.url}/console/operators`, { headers: { cookie } })
    expect(operators.status).toBe(200)
    const page = await operators.text()
    expect(page).toContain('<h1>Operators</h1>')
    expect(page).toContain('binary-admin')
    expect((await server.signal('SIGTERM')).code).toBe(0)
  }, 60_000)

  test('healthcheck exits 0 against a live server and 1 when nothing answers', async () => {
    const server = await serve({ ARENA_DATA_DIR: tempDir('arena-bin-'), ...(await testDatabaseEnv()) })
    expect((await run([BINARY, 'healthcheck', '--url', server.url])).code).toBe(0)
    expect((await server.signal('SIGTERM')).code).toBe(0)
    const dead = await run([BINARY, 'healthcheck', '--url', server.url])
    expect(dead.code).toBe(1)
    expect(dead.stderr).toContain('unreachable')
  }, 30_000)

  test('migrate applies the embedded migrations once; version and --help answer', async () => {
    const env = { ARENA_DATA_DIR: tempDir('arena-bin-'), ...(await emptyDatabaseEnv()) }
    const first = await run([BINARY, 'migrate', '--json'], env)
    expect(first.code).toBe(0)
    expect(JSON.parse(first.stdout)).toMatchObject({ applied: KNOWN, known: KNOWN })
    const second = await run([BINARY, 'migrate', '--json'], env)
    expect(JSON.parse(second.stdout)).toMatchObject({ applied: 0, known: KNOWN })

    const pkg = (await Bun.file(join(ROOT, 'package.json')).json()) as { version: string }
    const version = await run([BINARY, 'version'])
    expect(version.stdout.trim()).toBe(`arena ${pkg.version}`)
    const help = await run([BINARY, '--help'])
    expect(help.code).toBe(0)
    for (const command of ['serve', 'migrate', 'version']) expect(help.stdout).toContain(command)
  }, 30_000)

  test('refuses to start on bad configuration, saying why, without a stack trace', async () => {
    const production = await run([BINARY, 'serve'], { ARENA_ENV: 'production', ARENA_DATA_DIR: tempDir('arena-bin-') })
    expect(production.code).toBe(1)
    expect(production.stderr).toContain('ARENA_JWT_SECRET')
    expect(production.stderr).not.toContain('    at ')
    const badPort = await run([BINARY, 'serve'], { ARENA_PORT: 'eighty' })
    expect(badPort.code).toBe(1)
    expect(badPort.stderr).toContain('ARENA_PORT')
  }, 30_000)
})
