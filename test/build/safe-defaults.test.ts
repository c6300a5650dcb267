// Safe defaults, on the compiled binary, named after what each one guards:
// - a setting that is present but empty never silently becomes the default;
// - `local` works out of the box for operators (a generated operator token),
//   while elsewhere the operator API stays closed until a token is set, and
//   says so;
// - production never keeps every wallet key share on one volume by accident;
// - a copied binary tells its user what to run and how it is configured, with
//   no README beside it.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, statSync } from 'node:fs'
import { connect } from 'node:net'
import { join } from 'node:path'
import { loadConfig, VARIABLES } from '../../src/config'
import { announceOperatorToken } from '../../src/cli/main'
import { resolveSecrets, SECRETS_FILE } from '../../src/secrets'
import { onEngine, tempDir, testDatabaseEnv } from '../helpers/app'
import { BINARY, buildBinary, run, startServe, type ServerProcess } from '../helpers/process'

const started: ServerProcess[] = []
beforeAll(() => buildBinary(), 180_000)
afterAll(() => {
  for (const server of started) server.proc.kill('SIGKILL')
})
async function serve(env: Record<string, string>) {
  const server = await startServe([BINARY, 'serve'], env)
  started.push(server)
  return server
}

const strong = 's'.repeat(40)
const games = (url: string, token?: string) =>
  fetch(`${url}/api/v1/admin/games`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { 'x-admin-token': token } : {}) },
    body: JSON.stringify({ name: 'Out of the box' }),
  })

describe('an empty setting is a mistake, not the default', () => {
  test('ARENA_PORT= stops the server with a message naming it', async () => {
    const result = await run([BINARY, 'serve'], { ARENA_DATA_DIR: tempDir('arena-safe-'), ARENA_PORT: '' })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('ARENA_PORT is set but empty')
  })
})

describe('operator token', () => {
  test('local without ARENA_ADMIN_TOKEN: one is generated once, kept 0600 in the data dir (sealed in the database on PostgreSQL), printed by arena admin-token; a start whose stderr is not a terminal says how to get it, never the token itself', async () => {
    const dataDir = tempDir('arena-safe-')
    const env = { ARENA_DATA_DIR: dataDir, ...(await testDatabaseEnv()) }
    const server = await serve(env)
    const printed = await run([BINARY, 'admin-token'], env)
    expect(printed.code).toBe(0)
    const token = printed.stdout.trim()
    expect(token.length).toBeGreaterThanOrEqual(32)
    // stderr here is a pipe, as under docker or systemd, whose output is collected.
    expect(server.stderr()).toContain('`arena admin-token` prints it')
    expect(server.stderr()).not.toContain(token)
    expect(JSON.stringify(server.lines)).not.toContain(token)
    // With PostgreSQL the secrets are sealed in the database, shared by every instance: none in the data dir.
    if (onEngine('sqlite')) expect(statSync(join(dataDir, SECRETS_FILE)).mode & 0o777).toBe(0o600)
    else expect(existsSync(join(dataDir, SECRETS_FILE))).toBe(false)

    expect((await games(server.url, token)).status).toBe(201)
    expect((await games(server.url, 'wrong')).status).toBe(401)
    expect((await server.signal('SIGTERM')).code).toBe(0)

    // The same token after a restart.
    const again = await serve(env)
    expect((await games(again.url, token)).status).toBe(201)
  }, 30_000)

  test('at a terminal, the start prints the token itself (on stderr, not in the JSON log)', () => {
    const dataDir = tempDir('arena-safe-')
    const config = loadConfig({ ARENA_DATA_DIR: dataDir })
    const token = resolveSecrets(config, { generateOperatorToken: true }).adminToken!
    const said: string[] = []
    const io = { out: (text: string) => said.push(`out:${text}`), err: (text: string) => said.push(`err:${text}`) }
    announceOperatorToken(config, io, true)
    expect(said).toHaveLength(1)
    expect(said[0]).toStartWith('err:')
    expect(said[0]).toContain(token)
    announceOperatorToken(config, io, false)
    expect(said[1]).not.toContain(token)
  })

  test('ARENA_ADMIN_TOKEN set: only it opens the operator API, and nothing is printed', async () => {
    const dataDir = tempDir('arena-safe-')
    const database = await testDatabaseEnv()
    const server = await serve({ ARENA_DATA_DIR: dataDir, ARENA_ADMIN_TOKEN: strong, ...database })
    expect((await games(server.url, strong)).status).toBe(201)
    expect(server.stderr()).not.toContain('operator token')
    const printed = await run([BINARY, 'admin-token'], { ARENA_DATA_DIR: dataDir, ARENA_ADMIN_TOKEN: strong, ...database })
    expect(printed.code).toBe(1)
    expect(printed.stdout).toBe('')
    expect(printed.stderr).toContain('ARENA_ADMIN_TOKEN is set')
  }, 30_000)

  test('outside local without a token, the operator API is closed and says why', async () => {
    const dataDir = tempDir('arena-safe-')
    const database = await testDatabaseEnv()
    const server = await serve({ ARENA_DATA_DIR: dataDir, ARENA_ENV: 'staging', ...database })
    const res = await games(server.url, 'anything')
    expect(res.status).toBe(404)
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('operator_api_disabled')
    expect(server.stderr()).not.toContain('operator token')
    const printed = await run([BINARY, 'admin-token'], { ARENA_DATA_DIR: dataDir, ARENA_ENV: 'staging', ...database })
    expect(printed.code).toBe(1)
    expect(printed.stderr).toContain('ARENA_ADMIN_TOKEN')
  }, 30_000)
})

describe('production and single-volume custody', () => {
  const production = { ARENA_ENV: 'production', ARENA_JWT_SECRET: strong }

  test('refused without the acknowledgement', async () => {
    const result = await run([BINARY, 'serve'], { ...production, ARENA_DATA_DIR: tempDir('arena-safe-') })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('ARENA_ACCEPT_SINGLE_VOLUME_CUSTODY=true')
  })

  test('with it, the server starts and logs a warning', async () => {
    const server = await serve({ ...production, ARENA_ACCEPT_SINGLE_VOLUME_CUSTODY: 'true', ARENA_DATA_DIR: tempDir('arena-safe-'), ...(await testDatabaseEnv()) })
    const warning = server.lines.find((line) => line.level === 'warn' && String(line.msg).includes('custody is local in production'))
    expect(warning).toBeDefined()
  }, 30_000)
})

describe('docker stop', () => {
  // `docker stop` (and Kubernetes) send SIGTERM, then SIGKILL after 10 s. With
  // the default grace, a request that never finishes (a client stalled in the
  // middle of its body) is cut at the grace and the server still exits 0,
  // database closed, inside those 10 s.
  test('with the default grace, a stalled request still lets the server exit cleanly within 10 s of SIGTERM', async () => {
    const server = await serve({ ARENA_DATA_DIR: tempDir('arena-safe-'), ...(await testDatabaseEnv()) })
    const socket = connect(server.port, '127.0.0.1')
    await new Promise<void>((resolve) => socket.on('connect', () => resolve()))
    socket.on('error', () => {})
    socket.write('POST /api/v1/user/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"identi')
    await Bun.sleep(200)
    const stop = await server.signal('SIGTERM')
    socket.destroy()
    expect(stop.code).toBe(0)
    expect(stop.ms).toBeLessThan(10_000)
    expect(server.lines.find((line) => line.msg === 'stopped')).toMatchObject({ outcome: 'timeout' })
  }, 30_000)
})

describe('a copied binary explains itself', () => {
  test('--help lists every setting with its meaning and points at the running server, not at a README', async () => {
    const help = await run([BINARY, '--help'])
    expect(help.code).toBe(0)
    for (const [name, meaning] of Object.entries(VARIABLES)) {
      expect(help.stdout).toContain(name)
      expect(help.stdout).toContain(meaning)
    }
    expect(help.stdout).not.toContain('README')
    expect(help.stdout).toContain('/openapi')
  })

  test('seed, run from the binary, says to start the binary (not npm start)', async () => {
    const seeded = await run([BINARY, 'seed'], { ARENA_DATA_DIR: tempDir('arena-safe-'), ...(await testDatabaseEnv()) })
    expect(seeded.code).toBe(0)
    expect(seeded.stdout).toContain('Next: arena serve')
    expect(seeded.stdout).not.toContain('npm start')
  }, 60_000)
})
