import type { Storage } from '../../db/storage'
import { AppError } from '../../shared/errors'

export interface Lifecycle {
  /** True once a graceful stop has begun: readiness fails so balancers drain us. */
  draining: boolean
}

/** Readiness: the database answers a query and we are not shutting down. */
export async function checkReady(storage: Storage, lifecycle: Lifecycle) {
  if (lifecycle.draining) {
    throw new AppError('service_unavailable', 'Server is shutting down', { headers: { 'retry-after': '1' } })
  }
  let ms: number
  try {
    ms = await storage.ping()
  } catch {
    throw new AppError('service_unavailable', 'Database is not reachable', { headers: { 'retry-after': '1' } })
  }
  const latencyMs = Math.round(ms * 1000) / 1000
  return { status: 'ready' as const, checks: { database: { ok: true, latencyMs } } }
}
