// `arena db copy`: moves a data dir's SQLite database into an empty
// PostgreSQL database (src/db/copy.ts), then checks the copy with the same
// functions `arena ledger check` and `arena security verify-log` run, so the
// operator knows before pointing instances at it that the money and the
// tamper-evident chain came across whole.
import type { Command, Io } from './command'
import { UsageError } from './command'
import { loadConfig, type Config } from '../config'
import { copySqliteToPostgres, SchemaMismatchError, TargetNotEmptyError, type TableCopy } from '../db/copy'
import { openStorage } from '../db/open'
import { inProcessWakeups } from '../modules/events/wakeups'
import { verifySecurityLog } from '../modules/security/event-log'
import { checkLedger, type LedgerReport } from '../modules/wallet/ledger'
import { resolveSecrets } from '../secrets'
import { createLogger } from '../shared/logger'

export const DB_USAGE = 'arena db copy [--to postgres://user:password@host:5432/db] [--json]   (default target: ARENA_DATABASE_URL)'

export type SecurityLogReport = Awaited<ReturnType<typeof verifySecurityLog>>

export interface DbCopyReport {
  /** Both checks passed on the copy. */
  ok: boolean
  source: string
  target: string
  tables: TableCopy[]
  ledger: LedgerReport
  securityLog: SecurityLogReport
}

/**
 * Copies the data dir of `config` into the PostgreSQL database at `to` and
 * checks the copy. Throws TargetNotEmptyError (nothing written) when the
 * target already holds arena data.
 */
export async function copyDataDir(config: Readonly<Config>, to: string, options: { batchRows?: number } = {}): Promise<DbCopyReport> {
  // Read first: a data dir whose secrets cannot be read stops here, before anything is written.
  const { chainKey } = resolveSecrets(config)
  const copied = await copySqliteToPostgres({ dataDir: config.dataDir, url: to, ...options })
  // The checks read the copy through the PostgreSQL engine, as an instance will.
  const storage = await openStorage({ dataDir: config.dataDir, databaseUrl: to, databasePool: 2 }, { logger: createLogger('silent'), wakeups: inProcessWakeups() })
  try {
    const ledger = await checkLedger(storage.read.wallet)
    const securityLog = await verifySecurityLog(storage.read.security, chainKey)
    return { ok: ledger.ok && securityLog.ok, ...copied, ledger, securityLog }
  } finally {
    await storage.close()
  }
}

function reportText(report: DbCopyReport): string {
  const width = Math.max(...report.tables.map((t) => t.table.length))
  const total = report.tables.reduce((sum, t) => sum + t.rows, 0)
  const { ledger, securityLog } = report
  return [
    `copied ${total} rows from ${report.source} to ${report.target}`,
    ...report.tables.map((t) => `  ${t.table.padEnd(width)}  ${String(t.rows).padStart(9)}`),
    `ledger: ${ledger.ok ? 'ok' : 'BREACH'}: ${ledger.accounts} accounts, ${ledger.transactions} transactions, ${ledger.postings} postings`,
    ...ledger.problems.map((p) => `  ${p}`),
    securityLog.ok ? `security log: ok: ${securityLog.rows} events, chain intact` : `security log: BROKEN at event ${securityLog.brokenAt}: ${securityLog.reason}`,
  ].join('\n')
}

export const dbCommand: Command = {
  summary: 'Copy the data dir\'s SQLite database into an empty PostgreSQL database, then check the copy',
  usage: DB_USAGE,
  options: { to: { type: 'string' }, json: { type: 'boolean' } },
  positionals: true,
  async run({ values, positionals }, io: Io) {
    if (positionals[0] !== 'copy' || positionals.length > 1) throw new UsageError(`unknown action "${positionals.join(' ')}"`)
    const config = loadConfig()
    const to = (values.to as string | undefined) ?? config.databaseUrl
    if (to === undefined) throw new UsageError('name the target with --to postgres://... (or ARENA_DATABASE_URL)')
    if (!/^postgres(ql)?:\/\/\S*$/.test(to)) throw new UsageError('--to must be a postgres:// or postgresql:// URL')
    let report: DbCopyReport
    try {
      report = await copyDataDir(config, to)
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
