// `arena backup --out FILE` and `arena restore FILE`: the archive format,
// streaming and the staging-then-rename restore are in src/backup/archive.ts.
// Both take the passphrase from ARENA_BACKUP_PASSPHRASE (through Config, a
// Secret: never printed) and refuse without it.
import type { Command } from './command'
import { UsageError } from './command'
import { loadConfig, type Config } from '../config'
import { BackupError } from '../backup/errors'
import { dataDirSecrets } from '../secrets'
import { openStorage } from '../db/open'
import { inProcessWakeups } from '../modules/events/wakeups'
import { createLogger } from '../shared/logger'
import { checkLedger } from '../modules/wallet/ledger'
import { verifySecurityLog } from '../modules/security/event-log'
import { AuditLog } from '../modules/audit/log'
import { systemClock } from '../shared/clock'
import { refuseBesideServer } from '../shared/data-dir-lock'

export { BackupError }

const NO_PASSPHRASE = 'ARENA_BACKUP_PASSPHRASE is not set: a backup holds the secrets and custody shares and is never written unencrypted'
const POSTGRES = 'arena backup covers the SQLite data dir; on PostgreSQL use pg_dump and keep ARENA_MASTER_KEY (docs/operations.md, "Backup and restore")'

/** The passphrase, or a refusal (checked after the engine: on PostgreSQL the answer is pg_dump either way). */
function passphraseOf(config: Readonly<Config>): string {
  if (config.backupPassphrase === undefined) throw new BackupError(NO_PASSPHRASE)
  return config.backupPassphrase.reveal()
}

/** Ledger check and both chain verifications on a restored data dir (before it is moved into place). */
async function checkRestored(base: Readonly<Config>, dataDir: string) {
  const config = { ...base, dataDir }
  let storage: Awaited<ReturnType<typeof openStorage>>
  try {
    storage = await openStorage(config, { logger: createLogger('silent'), wakeups: inProcessWakeups() })
  } catch (error) {
    throw new BackupError(`the restored database cannot be opened: ${(error as Error).message}`)
  }
  try {
    const { chainKey } = dataDirSecrets(config)
    const ledger = await checkLedger(storage.read.wallet)
    const securityLog = await verifySecurityLog(storage.read.security, chainKey)
    const auditLog = await new AuditLog({ key: chainKey, clock: systemClock }).verify(storage.read.audit)
    return { ok: ledger.ok && securityLog.ok && auditLog.ok, ledger, securityLog, auditLog }
  } finally {
    await storage.close()
  }
}

export const backupCommand: Command = {
  summary: 'Write an encrypted backup of the data dir (database, secrets, custody shares) while the server runs',
  usage: 'arena backup --out FILE [--json]  (needs ARENA_BACKUP_PASSPHRASE)',
  options: { out: { type: 'string' }, json: { type: 'boolean' } },
  async run({ values }, io) {
    const out = values.out as string | undefined
    if (out === undefined) throw new UsageError('--out FILE is required')
    try {
      const config = loadConfig()
      if (config.databaseUrl !== undefined) throw new BackupError(POSTGRES)
      // Loaded here: age encryption is not needed by `arena serve` or any other command.
      const { writeBackup } = await import('../backup/archive')
      const result = await writeBackup({ dataDir: config.dataDir, passphrase: passphraseOf(config), out })
      io.out(values.json ? JSON.stringify({ ok: true, out, ...result }) : `backup written to ${out}: ${result.files} file(s), ${result.bytes} bytes, encrypted`)
      return 0
    } catch (error) {
      if (!(error instanceof BackupError)) throw error
      io.err(`arena: ${error.message}`)
      return 1
    }
  },
}

export const restoreCommand: Command = {
  summary: 'Restore an encrypted backup into an empty data dir, checking the ledger and both chains before moving it into place',
  usage: 'arena restore FILE [--data-dir DIR] [--json]  (needs ARENA_BACKUP_PASSPHRASE; DIR defaults to ARENA_DATA_DIR)',
  options: { 'data-dir': { type: 'string' }, json: { type: 'boolean' } },
  positionals: true,
  async run({ values, positionals }, io) {
    const file = positionals[0]
    if (file === undefined) throw new UsageError('the backup FILE is required')
    const base = loadConfig()
    const dataDir = (values['data-dir'] as string | undefined) ?? base.dataDir
    if (base.databaseUrl !== undefined) {
      io.err('arena: restore writes a SQLite data dir; unset ARENA_DATABASE_URL (PostgreSQL: see docs/operations.md)')
      return 1
    }
    // Said before the passphrase is even tried: a data dir a server is
    // serving is never a restore's target (it is not empty either, but this
    // says why and which process).
    refuseBesideServer(dataDir, 'stop the server first; restore writes only into an empty or absent data dir, then start a server on it')
    try {
      const { restoreBackup } = await import('../backup/archive')
      const { files, report } = await restoreBackup({ file, passphrase: passphraseOf(base), dataDir, check: (staging) => checkRestored(base, staging) })
      const { ok, ledger, securityLog, auditLog } = report
      const verdict = `ledger ${ledger.ok ? 'ok' : 'FAILED'}, security log ${securityLog.ok ? 'ok' : 'FAILED'}, audit log ${auditLog.ok ? 'ok' : 'FAILED'}`
      if (values.json) io.out(JSON.stringify({ ok, dataDir, files, ledger, securityLog, auditLog }))
      else if (ok) io.out(`restored ${files} file(s) into ${dataDir}; ${verdict}`)
      else io.err(`arena: the archive decrypted, but its checks failed (${verdict}): nothing was written to ${dataDir}`)
      return ok ? 0 : 1
    } catch (error) {
      if (!(error instanceof BackupError)) throw error
      io.err(`arena: ${error.message}`)
      return 1
    }
  },
}
