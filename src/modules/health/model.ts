import { t } from 'elysia'

export const HealthResponse = t.Object({ status: t.Literal('ok') }, { $id: 'Health' })

/** GET /: where to go from the server's root. */
export const RootResponse = t.Object(
  {
    name: t.Literal('arena'),
    docs: t.Literal('/openapi', { description: 'the API docs page' }),
    openapi: t.Literal('/openapi/json', { description: 'the OpenAPI document' }),
    console: t.Literal('/console', { description: 'the operator console' }),
    health: t.Literal('/healthz'),
  },
  { $id: 'Root' },
)

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
