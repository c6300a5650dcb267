// Scheduled backups (ARENA_BACKUP_DIR) in process: one every interval, the
// oldest of arena's own archives beyond ARENA_BACKUP_KEEP deleted (nothing
// else in the dir), each archive restorable; a failure logged without the
// passphrase and retried at the next tick; the status a metrics exporter reads.
import { expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../../src/config'
import { inProcessLeases } from '../../src/background/loops'
import { listScheduledBackups, SCHEDULED_NAME, startScheduledBackups } from '../../src/backup/schedule'
import { createLogger } from '../../src/shared/logger'
import { startServer } from '../../src/server'
import { run, SOURCE_COMMAND } from '../helpers/process'

const PASSPHRASE = 'scheduled backup passphrase'
const arena = (args: string[], env: Record<string, string>) => run([...SOURCE_COMMAND, ...args], env)

async function until(condition: () => boolean, timeoutMs: number): Promise<void> {
  const end = performance.now() + timeoutMs
  while (!condition() && performance.now() < end) await Bun.sleep(50)
  expect(condition()).toBe(true)
}

test('every interval an archive, the newest KEEP kept, each restorable; a failure is logged and retried', async () => {
  const root = mkdtempSync(join(tmpdir(), 'arena-scheduled-'))
  const data = join(root, 'data')
  const dir = join(root, 'backups')
  mkdirSync(dir)
  // Not arena's: never deleted. A temp file a killed backup left: deleted.
  writeFileSync(join(dir, 'notes.txt'), 'keep me')
  writeFileSync(join(dir, 'arena-manual.age'), 'keep me too')
  writeFileSync(join(dir, '.arena-20200101T000000.000Z.age.0123456789ab.tmp'), 'stale')
  const lines: Record<string, unknown>[] = []
  const logger = createLogger('info', (line) => lines.push(JSON.parse(line) as Record<string, unknown>))
  const config = loadConfig({
    ARENA_DATA_DIR: data,
    ARENA_BACKUP_DIR: dir,
    ARENA_BACKUP_PASSPHRASE: PASSPHRASE,
    ARENA_BACKUP_INTERVAL_S: '1',
    ARENA_BACKUP_KEEP: '2',
  })
  const written = () => lines.filter((l) => l.msg === 'backup written').length
  const failed = () => lines.filter((l) => l.msg === 'backup failed').length

  // No database yet: every tick fails, is logged (never with the passphrase), and the next one tries again.
  const backups = startScheduledBackups({ config, leases: inProcessLeases(), logger })
  try {
    expect(backups.status()).toEqual({})
    await until(() => failed() >= 2, 20_000)
    expect(JSON.stringify(lines)).not.toContain(PASSPHRASE)
    expect(String(lines.find((l) => l.msg === 'backup failed')!.error)).toContain('no database in')
    const failure = backups.status()
    expect(failure.lastFailureAt).toBeNumber()
    expect(failure.lastSuccessAt).toBeUndefined()

    expect((await arena(['migrate'], { ARENA_DATA_DIR: data })).code).toBe(0)
    await until(() => written() >= 4, 30_000)
  } finally {
    await backups.stop()
  }
  const archives = await listScheduledBackups(dir)
  expect(archives).toHaveLength(2)
  expect(archives.every((name) => SCHEDULED_NAME.test(name))).toBe(true)
  expect(readdirSync(dir).sort()).toEqual([...archives, 'arena-manual.age', 'notes.txt'].sort())
  const status = backups.status()
  expect(status.lastSuccessAt).toBeGreaterThan(status.lastFailureAt!)
  expect(status.lastBytes).toBe(statSync(join(dir, archives[1]!)).size)
  expect(JSON.stringify(lines)).not.toContain(PASSPHRASE)

  for (const name of archives) {
    const target = join(root, `restored-${name}`)
    const restored = await arena(['restore', join(dir, name), '--data-dir', target, '--json'], { ARENA_BACKUP_PASSPHRASE: PASSPHRASE })
    expect({ code: restored.code, stderr: restored.stderr }).toEqual({ code: 0, stderr: '' })
    rmSync(target, { recursive: true })
  }
}, 90_000)

test('the server hands out the scheduled backups status (for metrics): {} without ARENA_BACKUP_DIR, the last success with it', async () => {
  const root = mkdtempSync(join(tmpdir(), 'arena-scheduled-server-'))
  const silent = createLogger('silent')
  const plain = await startServer(loadConfig({ ARENA_DATA_DIR: join(root, 'plain'), ARENA_PORT: '0' }), silent)
  try {
    expect(plain.backupStatus()).toEqual({})
  } finally {
    await plain.stop()
  }
  const dir = join(root, 'backups')
  const server = await startServer(
    loadConfig({ ARENA_DATA_DIR: join(root, 'data'), ARENA_PORT: '0', ARENA_BACKUP_DIR: dir, ARENA_BACKUP_PASSPHRASE: PASSPHRASE, ARENA_BACKUP_INTERVAL_S: '3600' }),
    silent,
  )
  try {
    await until(() => server.backupStatus().lastSuccessAt !== undefined, 20_000)
    const [name] = await listScheduledBackups(dir)
    expect(server.backupStatus().lastBytes).toBe(statSync(join(dir, name!)).size)
    expect(server.backupStatus().lastFailureAt).toBeUndefined()
  } finally {
    await server.stop()
  }
}, 60_000)
