// Scheduled backups (ARENA_BACKUP_DIR): every ARENA_BACKUP_INTERVAL_S the
// server writes `arena-<UTC time>.age` into the dir, then deletes the oldest
// of its own archives beyond ARENA_BACKUP_KEEP (only names it writes; never
// anything else in the dir).
//
// Each backup runs as a child process, `arena backup` of this same
// executable: VACUUM INTO is synchronous (Bun's SQLite driver) and scrypt takes 256
// MiB, and the serving process should pay for neither (a stalled event loop,
// a heap that grows). The child gets the data dir and the passphrase through
// its environment (never its command line, which `ps` shows). A failed
// backup is logged (the child's own message, which holds no secret) and the
// next tick tries again.
import { join } from 'node:path'
import { mkdir, rm, readdir } from 'node:fs/promises'
import type { Config } from '../config'
import type { Logger } from '../shared/logger'
import { startLoop, type Loop, type LoopLeases } from '../background/loops'

/** The archives in `dir` named by the scheduled backups, oldest first. */
export async function listScheduledBackups(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((name) => SCHEDULED_NAME.test(name)).sort()
}

/** `arena-20261124T122247.123Z.age`: UTC, to the millisecond, sorting by name sorts by time. */
export const SCHEDULED_NAME = /^arena-\d{8}T\d{6}\.\d{3}Z\.age$/
/** The temp file a scheduled backup writes before its rename (left by a killed backup). */
export const SCHEDULED_TEMP = /^\.arena-\d{8}T\d{6}\.\d{3}Z\.age\.[0-9a-f]{12}\.tmp$/

export function scheduledBackupName(at: Date): string {
  return `arena-${at.toISOString().replace(/[-:]/g, '')}.age`
}

/** What the scheduled backups last did, for monitoring (times in ms since the epoch). */
export interface BackupStatus {
  lastSuccessAt?: number
  lastFailureAt?: number
  /** The size of the last archive written, in bytes. */
  lastBytes?: number
}

export interface ScheduledBackups extends Loop {
  status(): BackupStatus
}

/** The command that runs this arena: the compiled binary itself, or bun on src/index.ts. */
export function selfCommand(): string[] {
  return import.meta.path.startsWith('/$bunfs/') ? [process.execPath] : [process.execPath, join(import.meta.dir, '..', 'index.ts')]
}

/** Deletes the oldest archives named by the schedule beyond `keep`, and temp files a killed backup left; returns the names deleted. */
export async function pruneBackups(dir: string, keep: number): Promise<string[]> {
  const archives = await listScheduledBackups(dir)
  const stale = [...archives.slice(0, Math.max(0, archives.length - keep)), ...(await readdir(dir)).filter((name) => SCHEDULED_TEMP.test(name))]
  for (const name of stale) await rm(join(dir, name), { force: true })
  return stale
}

/** Runs one backup into `dir` as a child process; resolves with the archive's size, or rejects with the child's message. */
async function backupOnce(config: Readonly<Config>, dir: string, name: string, running: { child?: { kill(): void } }): Promise<number> {
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('ARENA_') && value !== undefined) env[key] = value
  env.ARENA_DATA_DIR = config.dataDir
  env.ARENA_BACKUP_PASSPHRASE = config.backupPassphrase!.reveal()
  env.ARENA_LOG_LEVEL = 'error'
  const child = Bun.spawn([...selfCommand(), 'backup', '--out', join(dir, name), '--json'], { env, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
  running.child = child
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
  if (code !== 0) throw new Error(stderr.trim().slice(-2000) || `arena backup exited with ${code}`)
  return (JSON.parse(stdout) as { bytes: number }).bytes
}

export function startScheduledBackups(options: { config: Readonly<Config>; leases: LoopLeases; logger: Logger; now?: () => Date }): ScheduledBackups {
  const { config, logger } = options
  const dir = config.backupDir!
  const now = options.now ?? (() => new Date())
  const status: BackupStatus = {}
  const running: { child?: { kill(): void } } = {}
  let stopping = false
  const loop = startLoop({
    name: 'scheduled backup',
    everyMs: config.backupIntervalS * 1000,
    leases: options.leases,
    logger,
    tick: async () => {
      const name = scheduledBackupName(now())
      const started = performance.now()
      running.child = undefined
      try {
        await mkdir(dir, { recursive: true, mode: 0o700 })
        // Stopped meanwhile: start no backup the stop would have to wait for.
        if (stopping) return
        const bytes = await backupOnce(config, dir, name, running)
        status.lastSuccessAt = Date.now()
        status.lastBytes = bytes
        const removed = await pruneBackups(dir, config.backupKeep)
        logger.info('backup written', { file: join(dir, name), bytes, ms: Math.round(performance.now() - started), removed })
      } catch (error) {
        if (stopping) return
        status.lastFailureAt = Date.now()
        logger.error('backup failed', { file: join(dir, name), error: (error as Error).message, retryInS: config.backupIntervalS })
      }
    },
  })
  return {
    async stop() {
      // A backup in progress is abandoned (its temp file is deleted at the next start's first tick), not waited for.
      stopping = true
      running.child?.kill()
      await loop.stop()
    },
    status: () => ({ ...status }),
  }
}
