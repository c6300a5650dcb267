// `arena backup` / `arena restore` as processes (source command): refusals, a
// round trip, a restore whose checks fail leaving nothing behind, a large
// database in bounded memory, the PostgreSQL refusals, and the passphrase
// kept out of anything printed. The load-during-backup test with a signed
// withdrawal after restore, on the compiled binary, is
// test/build/backup-restore.test.ts; scheduled backups are
// test/ops/scheduled-backup.test.ts and test/build/scheduled-backup.test.ts.
import { describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { inspect } from 'node:util'
import { loadConfig } from '../../src/config'
import { childEnv, ROOT, run, SOURCE_COMMAND } from '../helpers/process'

const arena = (args: string[], env: Record<string, string>) => run([...SOURCE_COMMAND, ...args], env)
const PASSPHRASE = 'correct horse'

function tempRoot(): string {
  return mkdtempSync(join(tmpdir(), 'arena-backup-'))
}

describe('arena backup and restore', () => {
  test('refusals, and a round trip that checks the ledger and both chains', async () => {
    const root = tempRoot()
    const data = join(root, 'data')
    expect((await arena(['migrate'], { ARENA_DATA_DIR: data })).code).toBe(0)
    const archive = join(root, 'b.age')

    const unencrypted = await arena(['backup', '--out', archive], { ARENA_DATA_DIR: data })
    expect(unencrypted.code).toBe(1)
    expect(unencrypted.stderr).toContain('ARENA_BACKUP_PASSPHRASE')
    expect(readdirSync(root)).toEqual(['data'])

    const nowhere = await arena(['backup', '--out', join(root, 'missing', 'b.age')], { ARENA_DATA_DIR: data, ARENA_BACKUP_PASSPHRASE: PASSPHRASE })
    expect(nowhere.code).toBe(1)
    expect(nowhere.stderr).toContain('does not exist')
    expect(nowhere.stderr).not.toContain('    at ')

    const env = { ARENA_DATA_DIR: data, ARENA_BACKUP_PASSPHRASE: PASSPHRASE }
    const written = await arena(['backup', '--out', archive, '--json'], env)
    expect(written.code).toBe(0)
    expect(JSON.parse(written.stdout)).toMatchObject({ ok: true, files: 1 })
    expect(statSync(archive).mode & 0o777).toBe(0o600)
    // The plaintext framing starts with its format line; age hides it.
    expect(readFileSync(archive).includes('arena-backup/2')).toBe(false)

    const wrong = await arena(['restore', archive, '--data-dir', join(root, 'w')], { ...env, ARENA_BACKUP_PASSPHRASE: 'wrong' })
    expect(wrong.code).toBe(1)
    expect(wrong.stderr).toContain('wrong ARENA_BACKUP_PASSPHRASE')
    expect(wrong.stderr).not.toContain('    at ')
    expect(existsSync(join(root, 'w'))).toBe(false)

    const bytes = readFileSync(archive)
    writeFileSync(join(root, 't.age'), bytes.subarray(0, bytes.length - 100))
    const edited = Buffer.from(bytes)
    edited[edited.length - 50]! ^= 1
    writeFileSync(join(root, 'e.age'), edited)
    for (const name of ['t.age', 'e.age']) {
      const refused = await arena(['restore', join(root, name), '--data-dir', join(root, `r-${name}`)], env)
      expect(refused.code).toBe(1)
      expect(refused.stderr).toContain('truncated or altered')
      expect(existsSync(join(root, `r-${name}`))).toBe(false)
    }
    // No staging dir is left beside the targets.
    expect(readdirSync(root).sort()).toEqual(['b.age', 'data', 'e.age', 't.age'])

    const notEmpty = await arena(['restore', archive, '--data-dir', data], env)
    expect(notEmpty.code).toBe(1)
    expect(notEmpty.stderr).toContain('is not empty')

    const missing = await arena(['restore', join(root, 'nope.age'), '--data-dir', join(root, 'n')], env)
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain('ENOENT')
    expect(missing.stderr).not.toContain('    at ')

    const restored = await arena(['restore', archive, '--data-dir', join(root, 'r'), '--json'], env)
    expect(restored.code).toBe(0)
    expect((JSON.parse(restored.stdout) as { ok: boolean }).ok).toBe(true)
    expect(statSync(join(root, 'r')).mode & 0o777).toBe(0o700)

    // An empty dir that already exists is a target too (a mounted volume).
    mkdirSync(join(root, 'empty'))
    expect((await arena(['restore', archive, '--data-dir', join(root, 'empty')], env)).code).toBe(0)
    expect(readdirSync(join(root, 'empty'))).toContain('arena.sqlite')
  }, 60_000)

  test('a restore whose checks fail leaves nothing at the target', async () => {
    const root = tempRoot()
    const data = join(root, 'data')
    const env = { ARENA_DATA_DIR: data, ARENA_BACKUP_PASSPHRASE: PASSPHRASE }
    // An operator action (audited), then its audit record edited behind arena's back: the chain breaks.
    expect((await arena(['game', 'create', '--name', 'Audited'], { ARENA_DATA_DIR: data })).code).toBe(0)
    const db = new Database(join(data, 'arena.sqlite'))
    db.exec("UPDATE audit_log SET operator_name = 'mallory'")
    db.close()
    expect((await arena(['backup', '--out', join(root, 'b.age')], env)).code).toBe(0)

    const target = join(root, 'restored')
    const result = await arena(['restore', join(root, 'b.age'), '--data-dir', target], env)
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('audit log FAILED')
    expect(result.stderr).toContain('nothing was written')
    expect(existsSync(target)).toBe(false)
    expect(readdirSync(root).sort()).toEqual(['b.age', 'data'])
  }, 60_000)

  test('a large database is backed up and restored in bounded memory (streamed, never whole in memory)', async () => {
    const root = tempRoot()
    const data = join(root, 'data')
    const env = { ARENA_DATA_DIR: data, ARENA_BACKUP_PASSPHRASE: PASSPHRASE }
    expect((await arena(['migrate'], { ARENA_DATA_DIR: data })).code).toBe(0)
    // 160 MiB of incompressible rows beside arena's tables.
    const db = new Database(join(data, 'arena.sqlite'))
    db.exec('CREATE TABLE test_filler (id INTEGER PRIMARY KEY, data BLOB)')
    const insert = db.prepare('INSERT INTO test_filler (data) VALUES (?)')
    db.transaction(() => {
      for (let i = 0; i < 160 * 16; i++) insert.run(randomBytes(64 * 1024))
    })()
    db.close()
    const size = statSync(join(data, 'arena.sqlite')).size

    const peak = async (args: string[]) => {
      const proc = Bun.spawn([...SOURCE_COMMAND, ...args], { cwd: ROOT, env: childEnv(env), stdout: 'pipe', stderr: 'pipe' })
      const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()])
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
      return proc.resourceUsage()!.maxRSS
    }
    const backupPeak = await peak(['backup', '--out', join(root, 'big.age')])
    const restorePeak = await peak(['restore', join(root, 'big.age'), '--data-dir', join(root, 'restored')])
    console.log(`database ${(size / 2 ** 20).toFixed(0)} MiB: peak RSS backup ${(backupPeak / 2 ** 20).toFixed(0)} MiB, restore ${(restorePeak / 2 ** 20).toFixed(0)} MiB`)
    // scrypt (age's work factor 18) alone takes 256 MiB, whatever the size;
    // holding the database in memory even once would go beyond this bound.
    const bound = 400 * 2 ** 20 + size / 2
    expect(backupPeak).toBeLessThan(bound)
    expect(restorePeak).toBeLessThan(bound)
    // Restored whole: every filler row, and the file its size give or take
    // the free pages the backup leaves out (a migration that rebuilds a table
    // frees some).
    const restored = new Database(join(root, 'restored', 'arena.sqlite'), { readonly: true })
    expect(restored.query('SELECT count(*) AS n, sum(length(data)) AS bytes FROM test_filler').get()).toEqual({ n: 160 * 16, bytes: 160 * 16 * 64 * 1024 })
    restored.close()
    const restoredSize = statSync(join(root, 'restored', 'arena.sqlite')).size
    expect(restoredSize).toBeLessThanOrEqual(size)
    expect(restoredSize).toBeGreaterThan(size - 2 ** 20)
  }, 120_000)

  test('PostgreSQL: arena backup points to pg_dump, and scheduled backups are refused at start', async () => {
    const pg = { ARENA_DATABASE_URL: 'postgres://arena@127.0.0.1:1/arena', ARENA_MASTER_KEY: 'ab'.repeat(32) }
    const root = tempRoot()
    const backup = await arena(['backup', '--out', join(root, 'b.age')], { ...pg, ARENA_BACKUP_PASSPHRASE: PASSPHRASE })
    expect(backup.code).toBe(1)
    expect(backup.stderr).toContain('pg_dump')
    expect(backup.stderr).not.toContain('    at ')
    expect(readdirSync(root)).toEqual([])

    const serve = await arena(['serve'], { ...pg, ARENA_BACKUP_PASSPHRASE: PASSPHRASE, ARENA_BACKUP_DIR: root })
    expect(serve.code).toBe(1)
    expect(serve.stderr).toContain('ARENA_BACKUP_DIR backs up the SQLite data dir')
    expect(serve.stderr).toContain('pg_dump')
  }, 30_000)
})

describe('backup configuration', () => {
  test('ARENA_BACKUP_DIR needs the passphrase; the interval and keep need the dir', () => {
    expect(() => loadConfig({ ARENA_BACKUP_DIR: '/backups' })).toThrow('ARENA_BACKUP_DIR requires ARENA_BACKUP_PASSPHRASE')
    expect(() => loadConfig({ ARENA_BACKUP_KEEP: '3' })).toThrow('ARENA_BACKUP_KEEP only applies with ARENA_BACKUP_DIR')
    expect(() => loadConfig({ ARENA_BACKUP_DIR: '/b', ARENA_BACKUP_PASSPHRASE: 'p', ARENA_BACKUP_INTERVAL_S: '0' })).toThrow('ARENA_BACKUP_INTERVAL_S must be between 1')
    const config = loadConfig({ ARENA_BACKUP_DIR: '/b', ARENA_BACKUP_PASSPHRASE: 'p' })
    expect({ dir: config.backupDir, interval: config.backupIntervalS, keep: config.backupKeep }).toEqual({ dir: '/b', interval: 86_400, keep: 7 })
  })

  test('the passphrase is never printed with the configuration', () => {
    const secret = 'hunter2-backup-passphrase'
    const config = loadConfig({ ARENA_BACKUP_PASSPHRASE: secret })
    expect(config.backupPassphrase?.reveal()).toBe(secret)
    for (const printed of [JSON.stringify(config), inspect(config), String(config.backupPassphrase), Bun.inspect(config)]) {
      expect(printed).not.toContain(secret)
    }
    expect(JSON.stringify(config)).toContain('"backupPassphrase":"[redacted]"')
  })
})
