import type { Database } from 'bun:sqlite'
import { AppError } from '../../shared/errors'

export interface Lifecycle {
  /** True once a graceful stop has begun: readiness fails so balancers drain us. */
  draining: boolean
}

/** Readiness: the database answers a query and we are not shutting down. */
export function checkReady(sqlite: Database, lifecycle: Lifecycle) {
  if (lifecycle.draining) {
    throw new AppError('service_unavailable', 'Server is shutting down', { headers: { 'retry-after': '1' } })
  }
  const started = performance.now()
  try {
    // Reads a page of the database file (SELECT 1 alone would not touch it).
    sqlite.query('SELECT count(*) FROM sqlite_master').get()
  } catch {
    throw new AppError('service_unavailable', 'Database is not reachable', { headers: { 'retry-after': '1' } })
  }
  const latencyMs = Math.round((performance.now() - started) * 1000) / 1000
  return { status: 'ready' as const, checks: { database: { ok: true, latencyMs } } }
}
