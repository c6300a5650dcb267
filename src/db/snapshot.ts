// A consistent copy of a data dir's SQLite database while a server writes to
// it (for `arena backup`). VACUUM INTO reads the whole database inside one
// read transaction: under WAL it sees exactly the transactions committed
// before it began, whatever a concurrent writer does meanwhile.
//
// The copy is a file (never the database's bytes in memory), so a database
// of any size is backed up in bounded memory: the caller streams it, then
// removes it.
import { Database } from 'bun:sqlite'
import { existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { BUSY_TIMEOUT_MS, DB_FILE, databasePath } from './sqlite/connection'

export { DB_FILE as SQLITE_DB_FILE }

/**
 * Writes the database as of one instant to a temp file in `dataDir`
 * (`.snapshot-<random>.sqlite`) and runs `use` on its path; the file is
 * removed afterwards, whatever `use` does. Resolves null (without calling
 * `use`) when the data dir holds no database.
 */
export async function withSqliteSnapshot<T>(dataDir: string, use: (path: string) => Promise<T>): Promise<T | null> {
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
    return await use(target)
  } finally {
    rmSync(target, { force: true })
  }
}
