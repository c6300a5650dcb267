// TypeBox models of the audit log's route (contract §11): a record as
// GET /api/v1/admin/audit answers it (auditView in ./log.ts).
import { t } from 'elysia'

export const AuditQuery = t.Object({
  after: t.Optional(t.String({ maxLength: 20, description: 'the `cursor` of the previous answer; absent, from the start' })),
  limit: t.Optional(t.Numeric({ minimum: 1, maximum: 500, description: '1 to 500, default 100' })),
})

export const AuditRecordView = t.Object(
  {
    seq: t.String({ description: 'its place in the chain (a whole number; increasing, not necessarily without gaps)' }),
    id: t.String(),
    at: t.String({ description: 'when the action was recorded, inside its unit of work (ISO-8601)' }),
    operator: t.Object({
      id: t.Nullable(t.String({ description: 'null for the admin token and the command line' })),
      name: t.String({ description: '`token` for the admin token, `cli:<OS user>` for the command line' }),
      role: t.Union([t.Literal('viewer'), t.Literal('moderator'), t.Literal('finance'), t.Literal('admin')]),
    }),
    via: t.Union([t.Literal('api'), t.Literal('console'), t.Literal('cli')]),
    action: t.String({ description: '`domain.verb`: `match.resolve`, `withdrawal.approve`, …' }),
    target: t.Nullable(t.String({ description: 'the id acted on' })),
    reason: t.Nullable(t.String()),
    requestId: t.Nullable(t.String({ description: 'the x-request-id of the request that acted (one per command on the command line)' })),
    details: t.Record(t.String(), t.Unknown()),
  },
  { $id: 'AuditRecord' },
)

export const AuditPage = t.Object({
  records: t.Array(AuditRecordView),
  cursor: t.String({ description: 'pass as `after` for the next page; the one sent when nothing is newer' }),
})
