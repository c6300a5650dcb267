// Invariant: the Docker image, which listens on 0.0.0.0, is `production` unless
// its user says otherwise: no generated operator token, no dev mailbox, no
// `arena seed`, production's checks on. Without the settings production needs
// it refuses to start, naming them; with the ones README's first start writes
// it serves. Docker is not needed: the compiled binary runs with exactly the
// environment the Dockerfile's ENV lines set (its /data replaced by a temp dir).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { postJson, remote, tempDir } from '../helpers/app'
import { BINARY, ROOT, buildBinary, run, startServe, type ServerProcess } from '../helpers/process'

const started: ServerProcess[] = []
beforeAll(() => buildBinary(), 180_000)
afterAll(() => {
  for (const server of started) server.proc.kill('SIGKILL')
})

/** The variables the Dockerfile's (last stage's) ENV instructions set, `ENV A=1 \ B=2` form. */
function dockerfileEnv(): Record<string, string> {
  const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ')
  const stages = text.split(/^FROM /m)
  const env: Record<string, string> = {}
  for (const line of stages.at(-1)!.split('\n')) {
    const match = /^ENV\s+(.*)$/.exec(line.trim())
    if (!match) continue
    for (const pair of match[1]!.trim().split(/\s+/)) {
      const [name, ...value] = pair.split('=')
      env[name!] = value.join('=')
    }
  }
  return env
}

/** The env file README's Docker section has the user write once, its `$(openssl rand -hex 32)` run. */
function readmeEnvFile(): Record<string, string> {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const docker = readme.slice(readme.indexOf('\n## Docker\n'))
  const block = /cat > arena\.env <<EOF\n([\s\S]*?)\nEOF\n/.exec(docker)
  expect(block).not.toBeNull()
  const env: Record<string, string> = {}
  for (const line of block![1]!.split('\n')) {
    const [name, ...value] = line.split('=')
    env[name!] = value.join('=').replace('$(openssl rand -hex 32)', () => randomBytes(32).toString('hex'))
  }
  return env
}

/** The image's environment, its volume a temp dir and its port any free one. */
function imageEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { ...dockerfileEnv(), ARENA_DATA_DIR: join(tempDir('arena-image-'), 'data'), ARENA_PORT: '0', ...extra }
}

describe('the Docker image defaults to production', () => {
  test('the Dockerfile sets ARENA_ENV=production beside 0.0.0.0', () => {
    const env = dockerfileEnv()
    expect(env.ARENA_ENV).toBe('production')
    expect(env.ARENA_HOST).toBe('0.0.0.0')
  })

  test('started with nothing more, it refuses to serve, naming what production needs', async () => {
    const result = await run([BINARY, 'serve'], imageEnv())
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('ARENA_ENV=production requires ARENA_JWT_SECRET')
    expect(result.stderr).toContain('ARENA_CUSTODY=cosigner')
    expect(result.stdout).not.toContain('"listening"')
  })

  test('with README\'s first-start env file it serves as production: no operator token generated, no dev mailbox, no seed', async () => {
    const file = readmeEnvFile()
    // The first start's choices, as README states them.
    expect(Object.keys(file).sort()).toEqual(['ARENA_ACCEPT_SINGLE_VOLUME_CUSTODY', 'ARENA_ADMIN_TOKEN', 'ARENA_JWT_SECRET'])
    const env = imageEnv(file)
    const server = await startServe([BINARY, 'serve'], env)
    started.push(server)
    const listening = server.lines.find((line) => line.msg === 'listening')!
    expect(listening.env).toBe('production')
    expect(server.stderr()).not.toContain('local operator token')
    const ctx = remote(() => server.url)

    // The operator API takes the env file's token; the dev mailbox is not there.
    const admin = { 'x-admin-token': file.ARENA_ADMIN_TOKEN! }
    expect((await ctx.handle(postJson('/api/v1/admin/games', { name: 'Image' }, admin))).status).toBe(201)
    const mailbox = await fetch(`${server.url}/api/v1/admin/dev/mail`, { headers: admin })
    expect(mailbox.status).toBe(404)
    // Mail goes nowhere until ARENA_SMTP_URL is set, and says so (never kept in a mailbox).
    const forgot = await ctx.handle(postJson('/api/v1/user/password/forgot', { email: 'someone@example.com' }))
    expect(forgot.status).toBe(503)
    expect(((await forgot.json()) as { error: { code: string } }).error.code).toBe('mail_not_configured')

    // Beside the running server, as `docker exec <container> /app/arena ...` runs them.
    const seed = await run([BINARY, 'seed'], env)
    expect(seed.code).toBe(1)
    expect(seed.stderr).toContain('seed refuses to run with ARENA_ENV=production')
    const { ARENA_ADMIN_TOKEN: _set, ...withoutToken } = env
    const generated = await run([BINARY, 'admin-token'], withoutToken)
    expect(generated.code).toBe(1)
    expect(generated.stderr).toContain('outside ARENA_ENV=local the admin API stays disabled')
    const operator = await run([BINARY, 'operator', 'create', 'first-admin', '--role', 'admin'], env)
    expect(operator.code).toBe(0)
  }, 60_000)

  test('docs: README and docs/operations.md tell the first start, the production default and how to choose local', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
    const docker = readme.slice(readme.indexOf('\n## Docker\n'), readme.indexOf('\n## Development\n'))
    const operations = readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8')
    for (const text of [docker, operations]) {
      expect(text).toContain('ARENA_ENV=production')
      expect(text).toContain('--env-file arena.env')
      expect(text).toContain('operator create')
      expect(text).toContain('ARENA_ENV=local')
    }
  })
})
