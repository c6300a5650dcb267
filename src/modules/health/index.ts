// Liveness and readiness probes, outside /api/v1 as orchestrators expect.
import type { Storage } from '../../db/storage'
import { Elysia } from 'elysia'
import { errors, STORAGE } from '../../plugins/openapi'
import { HealthResponse, ReadyResponse } from './model'
import { checkReady, type Lifecycle } from './service'

export function healthModule(storage: Storage, lifecycle: Lifecycle, securityEvents: () => { buffered: number; shed: number; capacity: number }) {
  return new Elysia({ name: 'arena/health' })
    .get('/healthz', () => ({ status: 'ok' as const }), {
      response: { 200: HealthResponse, ...errors() },
      detail: { tags: ['health'], summary: 'Liveness: the process answers' },
    })
    .get('/readyz', async () => ({ ...(await checkReady(storage, lifecycle)), securityEvents: securityEvents() }), {
      response: { 200: ReadyResponse, ...errors(STORAGE) },
      detail: { tags: ['health'], summary: 'Readiness: the database answers and the server is not draining' },
    })
}
