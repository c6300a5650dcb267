// Scheduled backups on the compiled binary: `arena serve` with ARENA_BACKUP_DIR
// writes an archive every ARENA_BACKUP_INTERVAL_S (a child `arena backup` of
// the same binary), keeps the newest ARENA_BACKUP_KEEP, stops cleanly on
// SIGTERM, and each archive it kept restores.
import { afterAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { tempDir } from '../helpers/app'
import { BINARY, buildBinary, run, startServe, type ServerProcess } from '../helpers/process'
import { listScheduledBackups } from '../../src/backup/schedule'
import { parseMetrics } from '../helpers/metrics'

const started: ServerProcess[] = []
afterAll(() => started.forEach((s) => s.proc.kill('SIGKILL')))

const PASSPHRASE = 'scheduled on the binary'
const METRICS_TOKEN = 'scheduled-backup-metrics-token-0123456789'

test('arena serve with ARENA_BACKUP_DIR keeps the newest KEEP archives, each restorable', async () => {
  await buildBinary()
  const startedAt = Date.now()
  const root = tempDir('arena-scheduled-bin-')
  const dir = join(root, 'backups')
  const server = await startServe([BINARY, 'serve'], {
    ARENA_DATA_DIR: join(root, 'data'),
    ARENA_BACKUP_DIR: dir,
    ARENA_BACKUP_PASSPHRASE: PASSPHRASE,
    ARENA_BACKUP_INTERVAL_S: '1',
    ARENA_BACKUP_KEEP: '2',
    ARENA_METRICS_TOKEN: METRICS_TOKEN,
  })
  started.push(server)
  const written = () => server.lines.filter((l) => l.msg === 'backup written').length
  const end = performance.now() + 45_000
  while (written() < 4 && performance.now() < end) await Bun.sleep(100)
  expect(written()).toBeGreaterThanOrEqual(4)
  // What a scraper sees: when the last one was written and how big it was.
  const scraped = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
  expect(scraped.status).toBe(200)
  const samples = parseMetrics(await scraped.text())
  const value = (name: string) => samples.find((s) => s.name === name)?.value
  expect(value('arena_backup_last_success_timestamp_seconds')! * 1000).toBeGreaterThan(startedAt)
  expect(value('arena_backup_last_size_bytes')).toBeGreaterThan(1024)
  expect(value('arena_backup_last_failure_timestamp_seconds')).toBeUndefined()
  expect((await server.signal('SIGTERM')).code).toBe(0)
  expect(server.lines.filter((l) => l.msg === 'backup failed')).toEqual([])
  expect(JSON.stringify(server.lines) + server.stderr()).not.toContain(PASSPHRASE)

  const archives = await listScheduledBackups(dir)
  expect(archives).toHaveLength(2)
  for (const name of archives) {
    const restored = await run([BINARY, 'restore', join(dir, name), '--data-dir', join(root, `restored-${name}`), '--json'], { ARENA_BACKUP_PASSPHRASE: PASSPHRASE })
    expect({ code: restored.code, stderr: restored.stderr }).toEqual({ code: 0, stderr: '' })
  }
}, 120_000)
