// Which engine holds the data: SQLite in the data dir (the zero-config
// default), or PostgreSQL when ARENA_DATABASE_URL is set (several instances
// on one database). The only place, with services.ts, that names an engine.
import type { Config } from '../config'
import { existsSync } from 'node:fs'
import { ensureDataDir } from '../shared/data-dir'
import { refuseBesideServer } from '../shared/data-dir-lock'
import type { EventWakeups } from '../modules/events/wakeups'
import type { Logger } from '../shared/logger'
import { describeError } from '../shared/errors'
import type { Storage } from './storage'
import type { MigrationReport } from './sqlite/migrate'
import { databasePath } from './sqlite/connection'
import { SqliteStorage } from './sqlite/storage'

/** Whether the data dir holds a database already (one the first edition wrote, or an earlier start). */
export function holdsDatabase(dataDir: string): boolean {
  return existsSync(databasePath(dataDir))
}

export type OpenedStorage = Storage & { readonly migrations: MigrationReport }

/** Opens (creating if needed) the configured database and applies pending migrations. */
export async function openStorage(config: Pick<Config, 'dataDir' | 'databaseUrl' | 'databasePool' | 'databasePrepare'>, deps: { logger: Logger; wakeups: EventWakeups }): Promise<OpenedStorage> {
  // The PostgreSQL engine (postgres.js, its schema and stores) is loaded only
  // when it is used: on SQLite it was a few MiB of the idle process's memory.
  const storage: OpenedStorage =
    config.databaseUrl !== undefined
      ? await (await import('./postgres/storage')).PostgresStorage.open({ url: config.databaseUrl, pool: config.databasePool, prepare: config.databasePrepare, wakeups: deps.wakeups, logger: deps.logger })
      : openSqlite(config.dataDir, deps)
  deps.logger.info('migrations', { engine: storage.engine, applied: storage.migrations.applied.length, known: storage.migrations.known, database: storage.location })
  return storage
}

/** How long a process whose WAL fsync failed goes on answering (503) before it exits. */
export const SYNC_FAILURE_EXIT_MS = 200
/** The exit code then (EX_IOERR). */
export const SYNC_FAILURE_EXIT_CODE = 74

function openSqlite(dataDir: string, deps: { logger: Logger; wakeups: EventWakeups }): SqliteStorage {
  ensureDataDir(dataDir)
  return new SqliteStorage({
    path: databasePath(dataDir),
    wakeups: deps.wakeups,
    // After a failed fsync the page cache no longer says what is on disk, so
    // going on could answer writes a restart would not find: every write is
    // refused from now on (503), what is in flight is answered, then the
    // process exits and its supervisor restarts it, and SQLite's recovery
    // reads the WAL from the disk. docs/decisions.md, "The fsync off the event loop".
    onSyncFailure: (error) => {
      deps.logger.error('fsync of the SQLite WAL failed: refusing every write and stopping', { error: describeError(error), exitCode: SYNC_FAILURE_EXIT_CODE })
      setTimeout(() => process.exit(SYNC_FAILURE_EXIT_CODE), SYNC_FAILURE_EXIT_MS)
    },
    // An operator command beside a running server (`game create`, `wallet
    // credit`) works on the server's schema. One from another build, which
    // would change the schema under the running server's prepared statements,
    // stops before it writes. The server itself, `migrate` and `db copy` hold
    // the lock here, so they pass.
    beforeMigrations: (pending) =>
      refuseBesideServer(
        dataDir,
        `this arena build would apply ${pending.length} migration(s) the running server does not know; stop the server and start this build's server (it migrates), or run the server's own build`,
      ),
  })
}
