// `npm start` runs the server from source; the CLI answers usage errors with
// exit 2 and a usage line, and never a stack trace.
import { afterAll, describe, expect, test } from 'bun:test'
import { tempDir, testDatabaseEnv } from '../helpers/app'
import { run, SOURCE_COMMAND, startServe, type ServerProcess } from '../helpers/process'

const started: ServerProcess[] = []
afterAll(() => {
  for (const server of started) server.proc.kill('SIGKILL')
})

describe('npm start', () => {
  test('serves /healthz and stops gracefully on SIGTERM', async () => {
    const server = await startServe(['npm', 'start', '--silent'], { ARENA_DATA_DIR: tempDir('arena-cli-'), ...(await testDatabaseEnv()) })
    started.push(server)
    const res = await fetch(`${server.url}/healthz`)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ status: 'ok' })
    // npm forwards the signal, waits for the server, then re-raises it on
    // itself (exit 143); the server's own clean exit is what its log shows.
    // (The binary's exit code 0 is checked in test/build.)
    await server.signal('SIGTERM')
    expect(server.lines.some((l) => l.msg === 'stopped')).toBe(true)
  }, 30_000)
})

describe('command line', () => {
  test('no command prints help to stderr and exits 2', async () => {
    const result = await run(SOURCE_COMMAND)
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('Usage: npx arena <command>')
  })

  test('an unknown command or option exits 2 with a usage hint', async () => {
    const unknown = await run([...SOURCE_COMMAND, 'frobnicate'])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain('unknown command "frobnicate"')
    const option = await run([...SOURCE_COMMAND, 'migrate', '--force'])
    expect(option.code).toBe(2)
    expect(option.stderr).toContain('Usage: npx arena migrate')
    expect(option.stderr).not.toContain('    at ')
  })

  test('<command> --help prints that command\'s usage', async () => {
    const result = await run([...SOURCE_COMMAND, 'migrate', '--help'])
    expect(result.code).toBe(0)
    expect(result.stdout).toContain('Usage: npx arena migrate [--json]')
  })

  test('version --json is machine-readable', async () => {
    const result = await run([...SOURCE_COMMAND, 'version', '--json'])
    expect(result.code).toBe(0)
    expect(JSON.parse(result.stdout)).toMatchObject({ version: expect.any(String), bun: Bun.version })
  })
})

describe('operator commands', () => {
  test('game create prints the game and its key; --json is the admin API shape', async () => {
    const env = { ARENA_DATA_DIR: tempDir('arena-cli-'), ...(await testDatabaseEnv()) }
    const text = await run([...SOURCE_COMMAND, 'game', 'create', '--name', 'CLI Game'], env)
    expect(text.code).toBe(0)
    expect(text.stdout).toMatch(/^game gam_[0-9a-f]{32} "CLI Game"\nkey {2}agk_/)
    const json = await run([...SOURCE_COMMAND, 'game', 'create', '--name', 'CLI Game 2', '--json'], env)
    const created = JSON.parse(json.stdout) as { game: { id: string; name: string }; gameKey: string }
    expect(created.game.name).toBe('CLI Game 2')
    const rotated = await run([...SOURCE_COMMAND, 'game', 'rotate-key', created.game.id, '--json'], env)
    expect(JSON.parse(rotated.stdout).gameKey).not.toBe(created.gameKey)
  })

  test('usage mistakes exit 2; a refused operation exits 1 with the reason', async () => {
    const env = { ARENA_DATA_DIR: tempDir('arena-cli-'), ...(await testDatabaseEnv()) }
    for (const args of [['game'], ['game', 'create'], ['game', 'explode'], ['tournament', 'create', '--game', 'g', '--name', 'n', '--players', 'solo'], ['match', 'resolve', 'mat_x']]) {
      const result = await run([...SOURCE_COMMAND, ...args], env)
      expect(result.code).toBe(2)
      expect(result.stderr).toContain('Usage: npx arena')
    }
    const missing = await run([...SOURCE_COMMAND, 'tournament', 'show', 'trn_nope'], env)
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain('No such tournament')
    const unknownUser = await run([...SOURCE_COMMAND, 'tournament', 'create', '--game', 'gam_nope', '--name', 'n', '--players', 'a,b'], env)
    expect(unknownUser.code).toBe(1)
    expect(unknownUser.stderr).toContain('No such game')
  })
})
