import { t } from 'elysia'

export const HealthResponse = t.Object({ status: t.Literal('ok') }, { $id: 'Health' })

export const ReadyResponse = t.Object(
  {
    status: t.Literal('ready'),
    checks: t.Object({
      database: t.Object({ ok: t.Boolean(), latencyMs: t.Number() }),
    }),
    securityEvents: t.Object(
      { buffered: t.Integer(), shed: t.Integer(), capacity: t.Integer() },
      { description: 'the security-event buffer: waiting to be written, and shed under overload since start' },
    ),
  },
  { $id: 'Ready' },
)
