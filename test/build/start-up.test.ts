// The first hour at the command line: every command a hint names can be
// pasted as it is, and a start that cannot run says why before it writes
// anything.
// - `npx arena <command>` works in a checkout (package.json "bin"), with the
//   flags `npm start` uses, and hints printed from a checkout say `npx arena`;
// - a copied binary's hints name it the way it was started (`./arena`);
// - ARENA_DATA_DIR on a file is a configuration error naming the variable and
//   the path, never an errno;
// - a port in use is reported before the data dir is created or a database
//   migrated, naming the port.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { chmodSync, copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { join } from 'node:path'
import { emptyDatabaseEnv, onEngine, tempDir, testDatabaseEnv } from '../helpers/app'
import { BINARY, buildBinary, ROOT, run, SOURCE_COMMAND, startServe, type ServerProcess } from '../helpers/process'
import { binaryCommand, CHECKOUT_COMMAND } from '../../src/shared/invocation'

const started: ServerProcess[] = []
const listeners: Server[] = []
beforeAll(() => buildBinary(), 180_000)
afterAll(() => {
  for (const server of started) server.proc.kill('SIGKILL')
  for (const listener of listeners) listener.close()
})

const pkg = (await Bun.file(join(ROOT, 'package.json')).json()) as { version: string; bin: Record<string, string>; scripts: Record<string, string> }
const journal = (await Bun.file(join(ROOT, onEngine('postgres') ? 'drizzle-postgres' : 'drizzle', 'meta', '_journal.json')).json()) as { entries: unknown[] }

describe('npx arena in a checkout', () => {
  test('package.json names bin/arena, which starts arena with the flags npm start and the build use', async () => {
    expect(pkg.bin).toEqual({ arena: 'bin/arena' })
    const launcher = await Bun.file(join(ROOT, 'bin', 'arena')).text()
    const flag = pkg.scripts.start!.match(/--max-http-header-size=\d+/)![0]
    expect(launcher).toContain(`"$bun" ${flag} "$root/src/index.ts" "$@"`)
    expect(pkg.scripts.build).toContain(`--compile-exec-argv=${flag}`)
  })

  test('`npx arena version` and `npx arena help` run from the checkout; help names the command as npx arena', async () => {
    // --no: never fetch a package called arena from the registry; the checkout's own bin or nothing.
    const version = await run(['npx', '--no', 'arena', 'version'])
    expect(version.stderr).toBe('')
    expect(version.code).toBe(0)
    expect(version.stdout.trim()).toBe(`arena ${pkg.version}`)
    // `help`, not `--help`: npx answers a bare `npx arena --help` with its own help (a command's `--help` reaches arena).
    const help = await run(['npx', '--no', 'arena', 'help'])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('Usage: npx arena <command> [options]')
    const usage = await run(['npx', '--no', 'arena', 'tournament', '--help'])
    expect(usage.stdout).toContain('Usage: npx arena tournament create')
    expect(usage.stdout).toContain('       npx arena tournament list')
  }, 60_000)

  test('`npx arena admin-token` prints the token the server started by `npm start`\'s code announces, from the same data dir', async () => {
    const dataDir = tempDir('arena-npx-')
    const env = { ARENA_DATA_DIR: dataDir, ...(await testDatabaseEnv()) }
    const server = await startServe([...SOURCE_COMMAND, 'serve'], env)
    started.push(server)
    // From the checkout the hint is the command that works there.
    expect(server.stderr()).toContain('`npx arena admin-token` prints it')
    const printed = await run(['npx', '--no', 'arena', 'admin-token'], env)
    expect(printed.code).toBe(0)
    const token = printed.stdout.trim()
    const games = await fetch(`${server.url}/api/v1/admin/games`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-admin-token': token },
      body: JSON.stringify({ name: 'From npx' }),
    })
    expect(games.status).toBe(201)
    expect((await server.signal('SIGTERM')).code).toBe(0)
  }, 60_000)
})

describe('a copied binary names itself as it was started', () => {
  test('started as ./arena in its directory, its hints say ./arena', async () => {
    const home = tempDir('arena-dot-')
    copyFileSync(BINARY, join(home, 'arena'))
    chmodSync(join(home, 'arena'), 0o755)
    const env = { ARENA_DATA_DIR: './data', ...(await testDatabaseEnv()) }
    // As a person types it: a shell in the binary's directory.
    const server = await startServe(['sh', '-c', 'exec ./arena serve'], env, { cwd: home })
    started.push(server)
    expect(server.stderr()).toContain('`./arena admin-token` prints it')
    expect((await server.signal('SIGTERM')).code).toBe(0)
    const help = Bun.spawnSync(['sh', '-c', './arena --help'], { cwd: home, env: { PATH: process.env.PATH ?? '' } })
    expect(help.stdout.toString()).toContain('Usage: ./arena <command> [options]')
  }, 60_000)

  test('the name for each way of starting it: typed path, PATH, neither', () => {
    const home = tempDir('arena-name-')
    const bin = join(home, 'bin')
    mkdirSync(bin)
    writeFileSync(join(bin, 'arena'), '')
    const exe = join(bin, 'arena')
    // Typed as a path that leads to the binary: as typed.
    expect(binaryCommand({ argv0: './arena', execPath: exe, cwd: bin, path: '/usr/bin' })).toBe('./arena')
    expect(binaryCommand({ argv0: 'bin/arena', execPath: exe, cwd: home, path: '/usr/bin' })).toBe('bin/arena')
    // Found on PATH: its bare name.
    expect(binaryCommand({ argv0: 'arena', execPath: exe, cwd: '/', path: `/nonexistent:${bin}` })).toBe('arena')
    // Started some other way (exec -a, another directory since): a path from here, else the absolute one.
    expect(binaryCommand({ argv0: 'bun', execPath: exe, cwd: home, path: '/usr/bin' })).toBe('./bin/arena')
    expect(binaryCommand({ argv0: 'bun', execPath: exe, cwd: '/', path: '/usr/bin' })).toBe('./' + exe.slice(1))
    expect(binaryCommand({ argv0: './arena', execPath: exe, cwd: tempDir('arena-elsewhere-'), path: '/usr/bin' })).toBe(exe)
    // A bare name that PATH resolves to another program is not this one.
    expect(binaryCommand({ argv0: 'arena', execPath: exe, cwd: tempDir('arena-elsewhere-'), path: '/usr/bin' })).toBe(exe)
    expect(CHECKOUT_COMMAND).toBe('npx arena')
  })
})

describe('start-up errors', () => {
  test('ARENA_DATA_DIR naming a file is a configuration error naming the variable and the path, for the server and every command', async () => {
    const file = join(tempDir('arena-file-'), 'not-a-dir')
    writeFileSync(file, 'x')
    for (const args of [['serve'], ['migrate'], ['admin-token'], ['seed']]) {
      const result = await run([BINARY, ...args], { ARENA_DATA_DIR: file })
      expect(`${args[0]}: ${result.code}`).toBe(`${args[0]}: 1`)
      expect(result.stderr).toContain('invalid configuration')
      expect(result.stderr).toContain(`ARENA_DATA_DIR is "${file}", which is a file, not a directory`)
      expect(result.stderr).not.toContain('EEXIST')
      expect(result.stderr).not.toContain('    at ')
    }
    // A file on the way to it.
    const through = await run([BINARY, 'serve'], { ARENA_DATA_DIR: join(file, 'data') })
    expect(through.code).toBe(1)
    expect(through.stderr).toContain(`ARENA_DATA_DIR is "${join(file, 'data')}", whose path goes through a file`)
    expect(through.stderr).not.toContain('ENOTDIR')
  }, 60_000)

  test('a port in use stops the start before the data dir is created or a migration applied, naming the port', async () => {
    const listener = createServer()
    listeners.push(listener)
    const port = await new Promise<number>((resolve) => listener.listen({ host: '127.0.0.1', port: 0, exclusive: true }, () => resolve((listener.address() as { port: number }).port)))
    const dataDir = join(tempDir('arena-port-'), 'data')
    // On PostgreSQL a database nothing was applied to yet: the failed start must leave it so.
    const env = { ARENA_DATA_DIR: dataDir, ...(await emptyDatabaseEnv()) }
    const result = await run([BINARY, 'serve'], { ...env, ARENA_HOST: '127.0.0.1', ARENA_PORT: String(port) })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(`port ${port} on 127.0.0.1 is already in use (ARENA_PORT=${port})`)
    expect(result.stderr).not.toContain('    at ')
    expect(existsSync(dataDir)).toBe(false)
    // Every migration is still to apply: the failed start applied none.
    const migrate = await run([BINARY, 'migrate', '--json'], env)
    expect(migrate.code).toBe(0)
    expect(JSON.parse(migrate.stdout)).toMatchObject({ applied: journal.entries.length, known: journal.entries.length })
  }, 60_000)
})
