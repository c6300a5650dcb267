// Boot order for `arena serve`: data dir → secrets → database + migrations →
// app → listen. Stopping reverses it: drain (readiness fails), stop accepting,
// let in-flight requests finish within the grace period, close the database.
import { createApp } from './app'
import type { Config } from './config'
import { databasePath, openDatabase, type DbHandle } from './db/client'
import { runMigrations, type MigrationReport } from './db/migrate'
import type { Lifecycle } from './modules/health/service'
import { MAX_BODY_BYTES } from './plugins/json-body'
import { ensureDataDir, resolveSecrets } from './secrets'
import { systemClock } from './shared/clock'
import type { Logger } from './shared/logger'
import { VERSION } from './shared/version'

export interface RunningServer {
  url: string
  port: number
  /** Graceful stop; resolves once the database is closed. Safe to call twice. */
  stop(reason?: string): Promise<void>
}

/** Opens (creating if needed) the data dir's database and applies pending migrations. */
export function openMigratedDatabase(
  config: Pick<Config, 'dataDir'>,
  logger: Logger,
): { handle: DbHandle; report: MigrationReport } {
  ensureDataDir(config.dataDir)
  const handle = openDatabase(databasePath(config.dataDir))
  try {
    const report = runMigrations(handle.db)
    logger.info('migrations', { applied: report.applied.length, known: report.known, database: handle.path })
    return { handle, report }
  } catch (error) {
    handle.close()
    throw error
  }
}

export async function startServer(config: Readonly<Config>, logger: Logger): Promise<RunningServer> {
  const secrets = resolveSecrets(config)
  const { handle: db } = openMigratedDatabase(config, logger)
  const lifecycle: Lifecycle = { draining: false }
  const app = createApp({ config, db, secrets, logger, clock: systemClock, lifecycle })

  app.listen({
    hostname: config.host,
    port: config.port,
    // The app answers 413 with an envelope from 64 KiB on; this is only the
    // transport's backstop against a body too large to be worth reading at all.
    maxRequestBodySize: MAX_BODY_BYTES * 16,
    // Elysia turns SO_REUSEPORT on by default; then a second arena on the same
    // port would silently share its traffic. Fail with EADDRINUSE instead.
    reusePort: false,
    development: false,
  })
  const server = app.server!
  const url = `http://${config.host}:${server.port}`
  logger.info('listening', { url, port: server.port, env: config.env, version: VERSION })

  let stopping: Promise<void> | undefined
  const stop = (reason = 'stop') => {
    stopping ??= (async () => {
      logger.info('stopping', { reason, graceS: config.shutdownGraceS })
      lifecycle.draining = true
      const graceful = server.stop(false).then(() => 'drained' as const)
      const timeout = Bun.sleep(config.shutdownGraceS * 1000).then(() => 'timeout' as const)
      if ((await Promise.race([graceful, timeout])) === 'timeout') {
        logger.warn('grace period over, closing open connections')
        await server.stop(true)
      }
      db.close()
      logger.info('stopped', { reason })
    })()
    return stopping
  }

  return { url, port: server.port ?? config.port, stop }
}
