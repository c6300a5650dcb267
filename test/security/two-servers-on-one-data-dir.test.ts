// Invariant: at most one arena server serves a SQLite data dir. Its long-poll
// wake-ups, caught-up cache and singleton loops (mail delivery, withdrawal
// resumer, scheduled backups, job worker) live in its process; a second server
// on the same dir is refused at start, naming the first one's pid. The lock is
// the kernel's (flock on <data dir>/serve.lock): a server killed with -9
// leaves no lock behind. Operator commands keep working beside the server;
// the commands that would corrupt or confuse it (migrate, db copy from its
// dir, restore into it, any command of a build with migrations the server
// lacks) are refused, writing nothing. On PostgreSQL there is no such lock:
// instances share one database by design.
// On the compiled binary, on both engines (each describe says which).
import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { postJson, remote, tempDir, testDatabaseEnv } from '../helpers/app'
import { describeOnEngine } from '../helpers/engine'
import { ADMIN_TOKEN, admin, players, type TournamentView } from '../helpers/arena'
import { balance } from '../helpers/purchases'
import { BINARY, buildBinary, run, startServe, type ServerProcess } from '../helpers/process'
import { MasterKey } from '../../src/shared/sealed'
import { loadConfig } from '../../src/config'
import { startServer } from '../../src/server'
import { createLogger } from '../../src/shared/logger'

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
const healthy = async (url: string) => (await fetch(`${url}/healthz`)).status === 200
const holderOf = (dataDir: string) => readFileSync(join(dataDir, 'serve.lock'), 'utf8').split('\n')[0]
const refusal = (pid: number) => `another arena server (pid ${pid}) is serving this data dir`

describeOnEngine('sqlite', 'SQLite: one server per data dir', () => {
  test('a second server on the same data dir is refused, naming the first one\'s pid; the first serves on', async () => {
    const dataDir = tempDir('arena-one-server-')
    const first = await serve({ ARENA_DATA_DIR: dataDir, ARENA_ADMIN_TOKEN: ADMIN_TOKEN })
    expect(holderOf(dataDir)).toBe(String(first.proc.pid))

    // On a free port of its own: nothing but the lock stops it.
    const second = await run([BINARY, 'serve'], { ARENA_DATA_DIR: dataDir, ARENA_ADMIN_TOKEN: ADMIN_TOKEN, ARENA_PORT: '0', ARENA_HOST: '127.0.0.1' })
    expect(second.code).toBe(1)
    expect(second.stderr).toContain(refusal(first.proc.pid))
    expect(second.stdout).not.toContain('"listening"')
    // The refused server wrote nothing over the holder's pid.
    expect(holderOf(dataDir)).toBe(String(first.proc.pid))
    expect(await healthy(first.url)).toBe(true)
  }, 30_000)

  test('after the server is killed with -9, the kernel has released the lock: a new server starts at once', async () => {
    const dataDir = tempDir('arena-one-server-')
    const first = await serve({ ARENA_DATA_DIR: dataDir })
    const killed = await first.signal('SIGKILL')
    expect(killed.code).not.toBe(0)
    // Its lock file is still there, naming a dead process.
    expect(holderOf(dataDir)).toBe(String(first.proc.pid))
    const next = await serve({ ARENA_DATA_DIR: dataDir })
    expect(await healthy(next.url)).toBe(true)
    expect(holderOf(dataDir)).toBe(String(next.proc.pid))
  }, 30_000)

  test('within one process too (flock, unlike fcntl, conflicts between two opens); a stopped server releases the lock', async () => {
    const config = loadConfig({ ARENA_DATA_DIR: tempDir('arena-one-server-'), ARENA_PORT: '0', ARENA_HOST: '127.0.0.1' })
    const silent = createLogger('silent')
    const first = await startServer(config, silent)
    try {
      await expect(startServer(config, silent)).rejects.toThrow(refusal(process.pid))
    } finally {
      await first.stop()
    }
    const again = await startServer(config, silent)
    await again.stop()
  }, 30_000)

  test('operator commands beside a running server work, and the server sees what they wrote', async () => {
    const dataDir = tempDir('arena-one-server-')
    const env = { ARENA_DATA_DIR: dataDir, ARENA_ADMIN_TOKEN: ADMIN_TOKEN }
    const server = await serve(env)
    const ctx = remote(() => server.url)
    const [a, b] = await players(ctx, 2)

    const game = await run([BINARY, 'game', 'create', '--name', 'Beside the server', '--json'], env)
    expect(game.code).toBe(0)
    const gameId = (JSON.parse(game.stdout) as { game: { id: string } }).game.id
    const created = await ctx.handle(postJson('/api/v1/admin/tournaments', { gameId, name: 'Beside', format: 'single_elimination', participants: [a!.userId, b!.userId] }, admin))
    expect(created.status).toBe(201)
    const tournamentId = ((await created.json()) as { tournament: TournamentView }).tournament.id

    const startedByCli = await run([BINARY, 'tournament', 'start', tournamentId, '--json'], env)
    expect(startedByCli.code).toBe(0)
    const credit = await run([BINARY, 'wallet', 'credit', a!.username, '--amount', '7', '--reference', 'beside-1'], env)
    expect(credit.code).toBe(0)
    expect(await balance(ctx, a!)).toBe('7')
    const seeded = await run([BINARY, 'seed'], env)
    expect(seeded.code).toBe(0)
    expect(await healthy(server.url)).toBe(true)
  }, 60_000)

  test('migrate, db copy from the dir and restore into it are refused beside the server, naming it, and write nothing', async () => {
    const root = tempDir('arena-one-server-')
    const dataDir = join(root, 'data')
    const env = { ARENA_DATA_DIR: dataDir, ARENA_ADMIN_TOKEN: ADMIN_TOKEN, ARENA_BACKUP_PASSPHRASE: 'one server per data dir' }
    const server = await serve(env)
    const pid = server.proc.pid
    const before = readdirSync(dataDir).sort()

    const migrate = await run([BINARY, 'migrate'], env)
    expect(migrate.code).toBe(1)
    expect(migrate.stderr).toContain(refusal(pid))
    expect(migrate.stderr).toContain('stop the server before arena migrate')

    // Refused before the target is reached: this one does not exist.
    const copy = await run([BINARY, 'db', 'copy', '--to', 'postgres://arena@127.0.0.1:1/nowhere'], { ...env, ARENA_MASTER_KEY: MasterKey.generateHex() })
    expect(copy.code).toBe(1)
    expect(copy.stderr).toContain(refusal(pid))
    expect(copy.stderr).toContain('stop the server before arena db copy')

    // A backup beside the server is fine (that is what it is for); restoring it into the server's dir is not.
    const archive = join(root, 'arena.age')
    const backup = await run([BINARY, 'backup', '--out', archive], env)
    expect(backup.code).toBe(0)
    const restore = await run([BINARY, 'restore', archive], env)
    expect(restore.code).toBe(1)
    expect(restore.stderr).toContain(refusal(pid))
    // Into a dir of its own it restores.
    const elsewhere = await run([BINARY, 'restore', archive, '--data-dir', join(root, 'restored')], env)
    expect(elsewhere.code).toBe(0)

    expect(readdirSync(dataDir).sort()).toEqual(before)
    expect(readdirSync(root).filter((name) => name.includes('.restoring-'))).toEqual([])
    expect(await healthy(server.url)).toBe(true)
    expect(holderOf(dataDir)).toBe(String(pid))

    // Once the server is gone, migrate runs (the refusals were the server's doing).
    expect((await server.signal('SIGTERM')).code).toBe(0)
    const after = await run([BINARY, 'migrate'], env)
    expect(after.code).toBe(0)
  }, 90_000)

  test('an operator command from a build with migrations the running server lacks is refused before it migrates anything', async () => {
    const dataDir = tempDir('arena-one-server-')
    const env = { ARENA_DATA_DIR: dataDir, ARENA_ADMIN_TOKEN: ADMIN_TOKEN }
    const server = await serve(env)
    // The server's schema as an older build would have left it: its newest
    // migration not recorded, so this binary finds one to apply.
    const db = new Database(join(dataDir, 'arena.sqlite'))
    db.run('PRAGMA busy_timeout = 5000')
    const newest = db.query<{ created_at: number }, []>('SELECT MAX(created_at) AS created_at FROM __drizzle_migrations').get()!.created_at
    db.run('DELETE FROM __drizzle_migrations WHERE created_at = ?', [newest])
    const games = () => db.query<{ n: number }, []>('SELECT count(*) AS n FROM games').get()!.n
    const gamesBefore = games()

    const refused = await run([BINARY, 'game', 'create', '--name', 'From a newer build'], env)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain(refusal(server.proc.pid))
    expect(refused.stderr).toContain('would apply 1 migration(s) the running server does not know')
    expect(games()).toBe(gamesBefore)
    expect(db.query<{ n: number }, [number]>('SELECT count(*) AS n FROM __drizzle_migrations WHERE created_at = ?').get(newest)!.n).toBe(0)
    db.close()
    expect(await healthy(server.url)).toBe(true)
  }, 30_000)
})

describeOnEngine('postgres', 'PostgreSQL: no data dir lock', () => {
  test('two instances on one database start and serve, even with the same ARENA_DATA_DIR', async () => {
    const dataDir = tempDir('arena-one-server-')
    const env = { ARENA_DATA_DIR: dataDir, ARENA_ADMIN_TOKEN: ADMIN_TOKEN, ...(await testDatabaseEnv()) }
    const one = await serve(env)
    const two = await serve(env)
    expect(await healthy(one.url)).toBe(true)
    expect(await healthy(two.url)).toBe(true)
    expect(existsSync(join(dataDir, 'serve.lock'))).toBe(false)
  }, 30_000)
})
