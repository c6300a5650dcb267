// Background loops on PostgreSQL: one instance at a time runs each, whichever
// gets the loop's session-level advisory lock. The lock lives as long as the
// connection holding it, so an instance that dies (SIGKILL, a lost network)
// drops it with its connection and another instance takes the loop over at
// its next tick.
//
// Each loop has a client of its own with one connection, apart from the pool
// requests use (a loop holds its connection while it runs and must never wait
// for, or starve, a request's). Not a connection reserved from a shared
// client: postgres.js 3.4.9 throws an uncaught TypeError when a query is sent
// on a reserved connection the server has closed (porsager/postgres#1066),
// which is exactly the unlock after a lost connection. A client of its own
// reconnects instead; the unlock then reaches a new session that holds
// nothing, which is harmless (the lock went with the old one).
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

export function postgresLeases(url: string): PostgresLeases {
  const target = connectOptions(url)
  const clients = new Map<string, postgres.Sql>()
  // Advisory locks are re-entrant within a session: this process's own second
  // run of a loop must be refused here, not by PostgreSQL.
  const running = new Set<string>()
  const clientOf = (name: string) => {
    let sql = clients.get(name)
    if (!sql) {
      sql = postgres(target.url, {
        ...(target.path ? { path: target.path } : {}),
        max: 1,
        // Never closed for idling or age while it may hold the lock.
        idle_timeout: 0,
        max_lifetime: null,
        connect_timeout: 5,
        onnotice: () => {},
        connection: { application_name: 'arena loops' },
      })
      clients.set(name, sql)
    }
    return sql
  }
  return {
    async runExclusive(name, work) {
      if (running.has(name)) return false
      running.add(name)
      try {
        const sql = clientOf(name)
        const key = loopLockKey(name).toString()
        const [row] = await sql<{ held: boolean }[]>`SELECT pg_try_advisory_lock(${key}::bigint) AS held`
        if (!row?.held) return false
        try {
          await work()
          return true
        } finally {
          await sql`SELECT pg_advisory_unlock(${key}::bigint)`.catch(() => {
            // The connection is gone, and the lock with it.
          })
        }
      } finally {
        running.delete(name)
      }
    },
    // Called once the loops have stopped: nothing is in flight, so the clients
    // are closed at once. (A graceful end waited 5 s on a client whose
    // connection the server had cut and that had since reconnected.)
    async close() {
      await Promise.all([...clients.values()].map((sql) => sql.end({ timeout: 0 })))
    },
  }
}
