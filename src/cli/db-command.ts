// `arena db copy`: moves a data dir (its SQLite database, its secrets.json and
// its custody shares) into an empty PostgreSQL database (src/db/copy.ts),
// then checks the copy through the PostgreSQL engine with the same functions
// `arena ledger check`, `arena security verify-log` and `arena audit verify`
// run, and opens every secret from the copy's vault, so the operator knows
// before pointing instances at it that the money, the tamper-evident chains
// and the keys came across whole.
import type { Command, Io } from './command'
import { UsageError } from './command'
import { loadConfig, type Config } from '../config'
import type { TableCopy } from '../db/copy'
import { inProcessWakeups } from '../modules/events/wakeups'
import { verifySecurityLog } from '../modules/security/event-log'
import { AuditLog, type AuditVerification } from '../modules/audit/log'
import { systemClock } from '../shared/clock'
import { checkLedger, type LedgerReport } from '../modules/wallet/ledger'
import { openStorage } from '../db/open'
import { vaultFor } from '../services'
import { createLogger } from '../shared/logger'
import { lockDataDir } from '../shared/data-dir-lock'
import { dataDirVaultEntries } from '../vault/import'
import { VAULT_SECRETS } from '../vault/secrets'
import type { Vault } from '../vault/vault'

export const DB_USAGE =
  'arena db copy [--to postgres://user:password@host:5432/db] [--json]\n' +
  '  copies ARENA_DATA_DIR into the target (default: ARENA_DATABASE_URL); ARENA_MASTER_KEY seals the secrets there'

export type SecurityLogReport = Awaited<ReturnType<typeof verifySecurityLog>>

export interface VaultReport {
  ok: boolean
  /** The server's own secrets copied (signing keys, chain key, operator token), by vault name. */
  secrets: string[]
  /** Custody shares copied. */
  shares: number
  problems: string[]
}

export interface DbCopyReport {
  /** Every check passed on the copy. */
  ok: boolean
  source: string
  target: string
  tables: TableCopy[]
  ledger: LedgerReport
  securityLog: SecurityLogReport
  /** The operator audit log's chain, under the same chain key. */
  auditLog: AuditVerification
  vault: VaultReport
}

/**
 * Copies the data dir of `source` (a SQLite configuration) into the database
 * `target` names (ARENA_DATABASE_URL with its ARENA_MASTER_KEY), then checks
 * the copy. Throws TargetNotEmptyError (nothing written) when the target
 * already holds arena data.
 */
export async function copyDataDir(source: Readonly<Config>, target: Readonly<Config>, options: { batchRows?: number } = {}): Promise<DbCopyReport> {
  const { databaseUrl: url, masterKey } = target
  if (url === undefined || masterKey === undefined) throw new Error('the target configuration needs ARENA_DATABASE_URL and ARENA_MASTER_KEY')
  // Read and sealed before anything is written: a data dir whose secrets
  // cannot be read stops here, and the copy's transaction waits on no crypto.
  const { own, shares } = dataDirVaultEntries(source)
  const entries = [...own, ...shares]
  const sealedSecrets = await Promise.all(entries.map(async ([name, value]) => ({ name, sealed: await masterKey.seal(value, name) })))
  // Never beside a server on the data dir: rows it wrote during the copy
  // would be missing from it, and it would go on taking writes the instances
  // on PostgreSQL never see. Held to the end: no server starts mid-copy.
  const lock = lockDataDir(source.dataDir, 'db copy', 'stop the server before arena db copy (what it writes during the copy would be lost)')
  try {
    return await copyAndCheck()
  } finally {
    lock.release()
  }

  async function copyAndCheck(): Promise<DbCopyReport> {
    // Loaded here, not with the binary's other commands: `arena serve` never needs it.
    const { copySqliteToPostgres } = await import('../db/copy')
    const copied = await copySqliteToPostgres({ dataDir: source.dataDir, url: url!, sealedSecrets, ...options })

    // The checks read the copy as an instance will, through the PostgreSQL
    // engine and its vault, and write nothing (an instance would generate a
    // secret it misses: here that is a problem to report). The chain is
    // verified with the data dir's chain key, and the vault must open to
    // exactly the data dir's secrets, that key among them.
    const storage = await openStorage(target, { logger: createLogger('silent'), wakeups: inProcessWakeups() })
    try {
      const ledger = await checkLedger(storage.read.wallet)
      const chainKey = own.find(([name]) => name === VAULT_SECRETS.chainKey)![1]
      const securityLog = await verifySecurityLog(storage.read.security, chainKey)
      const auditLog = await new AuditLog({ key: chainKey, clock: systemClock }).verify(storage.read.audit)
      const problems = await vaultProblems(vaultFor(target, storage), entries)
      const vault = { ok: problems.length === 0, secrets: own.map(([name]) => name), shares: shares.length, problems }
      return { ok: ledger.ok && securityLog.ok && auditLog.ok && vault.ok, ...copied, ledger, securityLog, auditLog, vault }
    } finally {
      await storage.close()
    }
  }
}

/** Every secret of the data dir opens from the vault as the data dir holds it. */
async function vaultProblems(vault: Vault, entries: readonly [string, string][]): Promise<string[]> {
  let stored: Map<string, string>
  try {
    stored = new Map((await vault.list('')).map((secret) => [secret.name, secret.value]))
  } catch (error) {
    return [error instanceof Error ? error.message : String(error)]
  }
  const problems: string[] = []
  for (const [name, value] of entries) {
    const found = stored.get(name)
    if (found === undefined) problems.push(`${name} is not in the vault`)
    else if (found !== value) problems.push(`${name} opens to something else than the data dir holds`)
  }
  return problems
}

function reportText(report: DbCopyReport): string {
  const width = Math.max(...report.tables.map((t) => t.table.length))
  const total = report.tables.reduce((sum, t) => sum + t.rows, 0)
  const { ledger, securityLog, auditLog, vault } = report
  return [
    `copied ${total} rows from ${report.source} to ${report.target}`,
    ...report.tables.map((t) => `  ${t.table.padEnd(width)}  ${String(t.rows).padStart(9)}`),
    `ledger: ${ledger.ok ? 'ok' : 'BREACH'}: ${ledger.accounts} accounts, ${ledger.transactions} transactions, ${ledger.postings} postings`,
    ...ledger.problems.map((p) => `  ${p}`),
    securityLog.ok ? `security log: ok: ${securityLog.rows} events, chain intact` : `security log: BROKEN at event ${securityLog.brokenAt}: ${securityLog.reason}`,
    auditLog.ok ? `audit log: ok: ${auditLog.rows} records, chain intact` : `audit log: BROKEN at record ${auditLog.brokenAt}: ${auditLog.reason}`,
    `vault: ${vault.ok ? 'ok' : 'BROKEN'}: ${vault.secrets.join(', ')} and ${vault.shares} custody shares, sealed under ARENA_MASTER_KEY`,
    ...vault.problems.map((p) => `  ${p}`),
  ].join('\n')
}

export const dbCommand: Command = {
  summary: 'Copy the data dir (database, secrets, custody shares) into an empty PostgreSQL database, then check the copy',
  usage: DB_USAGE,
  options: { to: { type: 'string' }, json: { type: 'boolean' } },
  positionals: true,
  async run({ values, positionals }, io: Io) {
    if (positionals[0] !== 'copy' || positionals.length > 1) throw new UsageError(`unknown action "${positionals.join(' ')}"`)
    // Two configurations: the data dir's, as SQLite reads it (where a master
    // key would be refused: it seals nothing there), and the target's, where
    // config.ts requires ARENA_MASTER_KEY beside the URL.
    const { ARENA_DATABASE_URL, ARENA_MASTER_KEY: _masterKey, ARENA_DATABASE_POOL: _pool, ...dataDirEnv } = process.env
    const to = (values.to as string | undefined) ?? ARENA_DATABASE_URL
    if (to === undefined) throw new UsageError('name the target with --to postgres://... (or ARENA_DATABASE_URL)')
    if (!/^postgres(ql)?:\/\/\S*$/.test(to)) throw new UsageError('--to must be a postgres:// or postgresql:// URL')
    const source = loadConfig(dataDirEnv)
    const target = loadConfig({ ...process.env, ARENA_DATABASE_URL: to })
    const { SchemaMismatchError, TargetNotEmptyError } = await import('../db/copy')
    let report: DbCopyReport
    try {
      report = await copyDataDir(source, target)
    } catch (error) {
      if (error instanceof TargetNotEmptyError || error instanceof SchemaMismatchError) {
        io.err(`arena: ${error.message}`)
        return 1
      }
      throw error
    }
    io.out(values.json === true ? JSON.stringify(report) : reportText(report))
    return report.ok ? 0 : 1
  },
}
