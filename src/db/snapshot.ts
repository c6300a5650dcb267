// A consistent copy of a data dir's SQLite database while a server writes to
// it (for `arena backup`). VACUUM INTO reads the whole database inside one
// read transaction: under WAL it sees exactly the transactions committed
// before it began, whatever a concurrent writer does meanwhile.
import { Database } from 'bun:sqlite'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { BUSY_TIMEOUT_MS, DB_FILE, databasePath } from './sqlite/connection'

export { DB_FILE as SQLITE_DB_FILE }

/** The database's bytes as of one instant, or null when the data dir holds no database. */
export function sqliteSnapshot(dataDir: string): Uint8Array | null {
  const path = databasePath(dataDir)
  if (!existsSync(path)) return null
  const target = join(dataDir, `.snapshot-${randomBytes(6).toString('hex')}.sqlite`)
  try {
    const db = new Database(path)
    try {
      db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`)
      db.prepare('VACUUM INTO ?').run(target)
    } finally {
      db.close()
    }
    return readFileSync(target)
  } finally {
    rmSync(target, { force: true })
  }
}
