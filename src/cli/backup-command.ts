// `arena backup --out FILE` and `arena restore FILE`: one encrypted archive
// (age format, scrypt passphrase from ARENA_BACKUP_PASSPHRASE) holding a
// consistent snapshot of the SQLite database (VACUUM INTO runs inside one read
// transaction, so under WAL a concurrent writer's uncommitted work is not in
// it and its committed work is whole), then the data dir's secrets.json and
// every custody share (read after the database, so every wallet in the
// snapshot has its shares). Nothing is ever written unencrypted.
import { createHash, randomBytes } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { Decrypter, Encrypter } from 'age-encryption'
import type { Command } from './command'
import { UsageError } from './command'
import { loadConfig, type Config } from '../config'
import { SQLITE_DB_FILE as DB_FILE, sqliteSnapshot } from '../db/snapshot'
import { dataDirSecrets, SECRETS_FILE } from '../secrets'
import { openStorage } from '../db/open'
import { inProcessWakeups } from '../modules/events/wakeups'
import { createLogger } from '../shared/logger'
import { checkLedger } from '../modules/wallet/ledger'
import { verifySecurityLog } from '../modules/security/event-log'
import { AuditLog } from '../modules/audit/log'
import { systemClock } from '../shared/clock'

const FORMAT = 'arena-backup/1'
/** Directories of the data dir copied whole besides the database and secrets.json. */
const DIRECTORIES = ['custody', 'cosigner-keys']

interface Manifest {
  format: string
  createdAt: string
  files: { path: string; sha256: string; data: string }[]
}

export class BackupError extends Error {}

function passphrase(): string {
  const value = process.env.ARENA_BACKUP_PASSPHRASE
  if (value === undefined || value === '') {
    throw new BackupError('ARENA_BACKUP_PASSPHRASE is not set: a backup holds the secrets and custody shares and is never written unencrypted')
  }
  return value
}

function filesUnder(root: string, dir: string): string[] {
  const full = join(root, dir)
  if (!existsSync(full)) return []
  return readdirSync(full, { recursive: true, encoding: 'utf8' })
    .map((name) => join(full, name))
    .filter((path) => statSync(path).isFile())
    .map((path) => relative(root, path))
}

const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest('hex')

/** Writes the encrypted archive of `config`'s data dir to `out` (temp file, then rename; mode 0600). */
export async function writeBackup(config: Readonly<Config>, out: string): Promise<{ files: number; bytes: number }> {
  const pass = passphrase()
  if (config.databaseUrl !== undefined) {
    throw new BackupError('arena backup covers the SQLite data dir; on PostgreSQL use pg_dump and keep ARENA_MASTER_KEY (docs/operations.md)')
  }
  const database = sqliteSnapshot(config.dataDir)
  if (database === null) throw new BackupError(`no database in ${config.dataDir}`)
  const files: Manifest['files'] = []
  const add = (path: string, data: Uint8Array) => files.push({ path, sha256: sha256(data), data: Buffer.from(data).toString('base64') })
  add(DB_FILE, database)
  // Read after the snapshot: every wallet in it has its shares on disk already.
  if (existsSync(join(config.dataDir, SECRETS_FILE))) add(SECRETS_FILE, readFileSync(join(config.dataDir, SECRETS_FILE)))
  for (const dir of DIRECTORIES) for (const path of filesUnder(config.dataDir, dir)) add(path, readFileSync(join(config.dataDir, path)))
  const manifest: Manifest = { format: FORMAT, createdAt: new Date().toISOString(), files }
  const encrypter = new Encrypter()
  encrypter.setPassphrase(pass)
  const sealed = await encrypter.encrypt(JSON.stringify(manifest))
  const tmp = join(dirname(out), `.${randomBytes(6).toString('hex')}.tmp`)
  try {
    writeFileSync(tmp, sealed, { mode: 0o600, flag: 'wx' })
    chmodSync(tmp, 0o600)
    renameSync(tmp, out)
  } catch (error) {
    rmSync(tmp, { force: true })
    throw error
  }
  return { files: files.length, bytes: sealed.length }
}

/** Decrypts and checks an archive; throws BackupError (nothing written) when it is not whole. */
export async function openBackup(file: string): Promise<Manifest> {
  const pass = passphrase()
  const decrypter = new Decrypter()
  decrypter.addPassphrase(pass)
  let text: string
  try {
    text = await decrypter.decrypt(readFileSync(file), 'text')
  } catch (error) {
    throw new BackupError(`cannot decrypt ${file} (wrong ARENA_BACKUP_PASSPHRASE, or the archive is truncated or altered): ${(error as Error).message}`)
  }
  let manifest: Manifest
  try {
    manifest = JSON.parse(text) as Manifest
  } catch {
    throw new BackupError(`${file} is not an arena backup`)
  }
  if (manifest.format !== FORMAT || !Array.isArray(manifest.files)) throw new BackupError(`${file} is not an ${FORMAT} archive`)
  for (const entry of manifest.files) {
    if (typeof entry.path !== 'string' || entry.path.startsWith('/') || entry.path.split(/[\\/]/).includes('..')) throw new BackupError(`bad path in archive: ${entry.path}`)
    if (sha256(Buffer.from(entry.data, 'base64')) !== entry.sha256) throw new BackupError(`checksum mismatch for ${entry.path}`)
  }
  if (!manifest.files.some((entry) => entry.path === DB_FILE)) throw new BackupError('the archive holds no database')
  return manifest
}

export async function restoreBackup(file: string, dataDir: string): Promise<number> {
  const manifest = await openBackup(file)
  if (existsSync(dataDir) && readdirSync(dataDir).length > 0) throw new BackupError(`${dataDir} is not empty: restore writes only into an empty or absent data dir`)
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  for (const entry of manifest.files) {
    const path = join(dataDir, entry.path)
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
    writeFileSync(path, Buffer.from(entry.data, 'base64'), { mode: 0o600, flag: 'wx' })
  }
  return manifest.files.length
}

export const backupCommand: Command = {
  summary: 'Write an encrypted backup of the data dir (database, secrets, custody shares) while the server runs',
  usage: 'arena backup --out FILE [--json]  (needs ARENA_BACKUP_PASSPHRASE)',
  options: { out: { type: 'string' }, json: { type: 'boolean' } },
  async run({ values }, io) {
    const out = values.out as string | undefined
    if (out === undefined) throw new UsageError('--out FILE is required')
    try {
      const result = await writeBackup(loadConfig(), out)
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
  summary: 'Restore an encrypted backup into an empty data dir, then check the ledger and both chains',
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
    let files: number
    try {
      files = await restoreBackup(file, dataDir)
    } catch (error) {
      if (!(error instanceof BackupError)) throw error
      io.err(`arena: ${error.message}`)
      return 1
    }
    const config = { ...base, dataDir }
    const storage = await openStorage(config, { logger: createLogger('silent'), wakeups: inProcessWakeups() })
    try {
      const { chainKey } = dataDirSecrets(config)
      const ledger = await checkLedger(storage.read.wallet)
      const securityLog = await verifySecurityLog(storage.read.security, chainKey)
      const auditLog = await new AuditLog({ key: chainKey, clock: systemClock }).verify(storage.read.audit)
      const ok = ledger.ok && securityLog.ok && auditLog.ok
      io.out(
        values.json
          ? JSON.stringify({ ok, dataDir, files, ledger, securityLog, auditLog })
          : `restored ${files} file(s) into ${dataDir}; ledger ${ledger.ok ? 'ok' : 'FAILED'}, security log ${securityLog.ok ? 'ok' : 'FAILED'}, audit log ${auditLog.ok ? 'ok' : 'FAILED'}`,
      )
      return ok ? 0 : 1
    } finally {
      await storage.close()
    }
  },
}
