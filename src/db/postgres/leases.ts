// Background loops on PostgreSQL: one instance at a time runs each, whichever
// gets the loop's session-level advisory lock. The lock lives as long as the
// connection holding it, so an instance that dies (SIGKILL, a lost network)
// drops it with its connection and another instance takes the loop over at
// its next tick. The locks have their own small client, apart from the pool
// requests use: a loop holds its connection while it runs, and must never
// wait for (or starve) a request's.
import postgres from 'postgres'
import type { LoopLeases } from '../../background/loops'
import { connectOptions } from './connection'

/** The advisory-lock key of loop `name` (a stable 63-bit hash: every instance computes the same). */
export function loopLockKey(name: string): bigint {
  const digest = new Bun.CryptoHasher('sha256').update(`arena loop ${name}`).digest()
  return digest.readBigInt64BE(0)
}

export interface PostgresLeases extends LoopLeases {
  close(): Promise<void>
}

export function postgresLeases(url: string, options: { loops?: number } = {}): PostgresLeases {
  // One connection per loop that may run at once (withdrawal resume, housekeeping, jobs, and one to spare).
  const target = connectOptions(url)
  const sql = postgres(target.url, { ...(target.path ? { path: target.path } : {}), max: options.loops ?? 4, idle_timeout: 60, connect_timeout: 5, onnotice: () => {}, connection: { application_name: 'arena loops' } })
  return {
    async runExclusive(name, work) {
      const key = loopLockKey(name).toString()
      const connection = await sql.reserve()
      try {
        const [row] = await connection<{ held: boolean }[]>`SELECT pg_try_advisory_lock(${key}::bigint) AS held`
        if (!row?.held) return false
        try {
          await work()
          return true
        } finally {
          await connection`SELECT pg_advisory_unlock(${key}::bigint)`.catch(() => {
            // The connection is gone, and the lock with it.
          })
        }
      } finally {
        connection.release()
      }
    },
    close: () => sql.end({ timeout: 5 }),
  }
}
