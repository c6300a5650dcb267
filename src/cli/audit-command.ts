// `arena audit list` and `arena audit verify` (contract §11): the operator
// audit log as GET /api/v1/admin/audit pages it, and its HMAC chain walked
// from the first record to the recorded head (exit 1 on a break, like
// `arena security verify-log`).
import type { Command, Io } from './command'
import { UsageError } from './command'
import { withServices } from './operator-commands'
import type { auditView } from '../modules/audit/log'

type AuditView = ReturnType<typeof auditView>

/** One record on one line: when, who (role, via), what, to what, why, then its details. */
function recordText(record: AuditView): string {
  const who = `${record.operator.name} (${record.operator.role}, ${record.via})`
  const reason = record.reason === null ? '' : `  reason ${JSON.stringify(record.reason)}`
  const details = Object.keys(record.details).length === 0 ? '' : `  ${JSON.stringify(record.details)}`
  return `${record.seq.padStart(6)}  ${record.at}  ${who}  ${record.action}  ${record.target ?? '-'}${reason}  request ${record.requestId ?? '-'}${details}`
}

function print(io: Io, json: boolean, value: unknown, text: () => string): void {
  io.out(json ? JSON.stringify(value) : text())
}

export const auditCommand: Command = {
  summary: 'List the operator audit log, or verify its hash chain (exit 1 on a break)',
  usage: 'arena audit list [--after <cursor>] [--limit N] [--json] | arena audit verify [--json]',
  options: { after: { type: 'string' }, limit: { type: 'string' }, json: { type: 'boolean' } },
  positionals: true,
  async run({ values, positionals }, io) {
    const json = values.json === true
    if (positionals[0] === 'list') {
      const after = (values.after as string | undefined) ?? '0'
      const limit = Number((values.limit as string | undefined) ?? '100')
      if (!/^(0|[1-9][0-9]{0,14})$/.test(after) || !Number.isInteger(limit) || limit < 1 || limit > 500) throw new UsageError('--after is a cursor, --limit 1 to 500')
      const page = await withServices(({ audit, storage }) => audit.page(storage.read.audit, Number(after), limit))
      print(io, json, page, () => [...page.records.map(recordText), `cursor ${page.cursor}`].join('\n'))
      return 0
    }
    if (positionals[0] === 'verify') {
      const report = await withServices(({ audit, storage }) => audit.verify(storage.read.audit))
      print(io, json, report, () => (report.ok ? `ok: ${report.rows} records, chain intact` : `BROKEN at record ${report.brokenAt}: ${report.reason}`))
      return report.ok ? 0 : 1
    }
    throw new UsageError(`unknown action "${positionals[0] ?? ''}"`)
  },
}
