import { t } from 'elysia'

export const HealthResponse = t.Object({ status: t.Literal('ok') }, { $id: 'Health' })

export const ReadyResponse = t.Object(
  {
    status: t.Literal('ready'),
    checks: t.Object({
      database: t.Object({ ok: t.Boolean(), latencyMs: t.Number() }),
    }),
  },
  { $id: 'Ready' },
)
