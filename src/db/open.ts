// Which engine holds the data: SQLite in the data dir (the zero-config default).
// The next edition adds PostgreSQL here, chosen by ARENA_DATABASE_URL.
import type { Config } from '../config'
import { existsSync } from 'node:fs'
import { ensureDataDir } from '../shared/data-dir'
import type { EventWakeups } from '../modules/events/wakeups'
import type { Logger } from '../shared/logger'
import { databasePath } from './sqlite/connection'
import { SqliteStorage } from './sqlite/storage'

/** Whether the data dir holds a database already (one the first edition wrote, or an earlier start). */
export function holdsDatabase(dataDir: string): boolean {
  return existsSync(databasePath(dataDir))
}

/** Opens (creating if needed) the configured database and applies pending migrations. */
export function openStorage(config: Pick<Config, 'dataDir'>, deps: { logger: Logger; wakeups: EventWakeups }): SqliteStorage {
  ensureDataDir(config.dataDir)
  const storage = new SqliteStorage({ path: databasePath(config.dataDir), wakeups: deps.wakeups })
  deps.logger.info('migrations', { applied: storage.migrations.applied.length, known: storage.migrations.known, database: storage.writer.path })
  return storage
}
