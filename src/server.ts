// Boot order for `arena serve`: data dir → secrets → database + migrations →
// app → listen (with PostgreSQL the secrets come after the database, which
// holds them). Stopping reverses it: drain (readiness fails), stop accepting,
// let in-flight requests finish within the grace period, close the database.
import type { AnyElysia } from 'elysia'
import { createApp } from './app'
import { createServices, openStorageWithSecrets } from './services'
import { inProcessLeases, startLoop, type Loop } from './background/loops'
import { inProcessWakeups } from './modules/events/wakeups'
import { housekeeping } from './modules/events/housekeeping'
import { SWEEP_BATCH } from './modules/ratings/service'
import { jobHandlers } from './jobs/handlers'
import { createJobWorker } from './jobs/worker'
import type { Config } from './config'
import type { Lifecycle } from './modules/health/service'
import { INTERNAL_ERROR_BODY, jsonResponse } from './plugins/errors'
import { REQUEST_ID_HEADER } from './plugins/request-context'
import type { Secrets } from './secrets'
import { systemClock } from './shared/clock'
import { newId } from './shared/ids'
import type { Logger } from './shared/logger'
import { VERSION } from './shared/version'
import { MAX_CLIENT_MESSAGE_BYTES } from './modules/realtime/protocol'
import { startKeyringRefresh } from './vault/secrets'
import { WebhookDelivery } from './modules/webhooks/delivery'
import { startScheduledBackups, type BackupStatus, type ScheduledBackups } from './backup/schedule'
import { ensureDataDir } from './shared/data-dir'
import { lockDataDir, type DataDirLock } from './shared/data-dir-lock'
import { assertCanListen, isListenErrorCode, ListenError } from './shared/port'

/** How often withdrawals left pending (crash, custody away) are signed again. */
export const WITHDRAWAL_RESUME_MS = 2000

/** How often retention and housekeeping run. */
export const HOUSEKEEPING_MS = 3_600_000

/** How often the leaderboards move players whose inactivity period ended (docs/ratings.md). */
export const RATING_BOARD_SWEEP_MS = 60_000
/** How often the matcher pairs the queues' tickets (contract §16), and marks challenges past their expiry. */
export const MATCHMAKER_MS = 1_000

/** How often the job worker looks for due jobs. */
export const JOB_POLL_MS = 200

/** How often queued mail is looked for (a code should arrive while the player still waits for it). */
export const MAIL_DELIVERY_MS = 1000

/** How often the webhook deliveries due are looked for (a tick then serves while there is work). */
export const WEBHOOK_DELIVERY_MS = 1000

export interface RunningServer {
  url: string
  port: number
  /** The secrets it runs with (the generated operator token is announced from here). */
  secrets: Secrets
  /** Graceful stop; resolves once the database is closed. Safe to call twice. */
  stop(reason?: string): Promise<void>
  /** What the scheduled backups (ARENA_BACKUP_DIR) last did; `{}` when there are none. For monitoring. */
  backupStatus(): BackupStatus
}

export async function startServer(config: Readonly<Config>, logger: Logger): Promise<RunningServer> {
  // Before the data dir is created or migrated: a start that cannot listen leaves nothing behind.
  await assertCanListen(config.host, config.port)
  const lock = lockServerDataDir(config)
  try {
    return await startLocked(config, logger, lock)
  } catch (error) {
    lock?.release()
    throw error
  }
}

/**
 * One server per SQLite data dir (src/shared/data-dir-lock.ts), taken before
 * anything is written to it (secrets, migrations). PostgreSQL runs any number
 * of instances on one database: no lock.
 */
function lockServerDataDir(config: Readonly<Config>): DataDirLock | undefined {
  if (config.databaseUrl !== undefined) return undefined
  ensureDataDir(config.dataDir)
  return lockDataDir(
    config.dataDir,
    'serve',
    'one server per data dir (its wake-ups, caches and background loops live in its process); stop it first, or give this one its own ARENA_DATA_DIR (several instances on one database: ARENA_DATABASE_URL, PostgreSQL)',
  )
}

async function startLocked(config: Readonly<Config>, logger: Logger, lock: DataDirLock | undefined): Promise<RunningServer> {
  const wakeups = inProcessWakeups()
  const { storage, secrets } = await openStorageWithSecrets(config, { logger, wakeups }, { generateOperatorToken: true })
  if (config.env === 'production' && config.custody === 'local') {
    // Only reachable with ARENA_ACCEPT_SINGLE_VOLUME_CUSTODY=true (config.ts refuses it otherwise).
    if (storage.engine === 'sqlite') {
      logger.warn('custody is local in production: every wallet key share is on this data volume (ARENA_ACCEPT_SINGLE_VOLUME_CUSTODY=true)', {
        dataDir: config.dataDir,
      })
    } else {
      logger.warn('custody is local in production: every wallet key share is in the database, sealed under ARENA_MASTER_KEY (ARENA_ACCEPT_SINGLE_VOLUME_CUSTODY=true)')
    }
  }
  const lifecycle: Lifecycle = { draining: false }
  const deps = { config, storage, wakeups, secrets, logger, clock: systemClock, lifecycle }
  const services = createServices(deps)
  // Bound late: the scheduled backups start with the other loops, below.
  let backups: ScheduledBackups | undefined
  const app = createApp(deps, services, { backupStatus: () => backups?.status() ?? {} })
  // The background loops, each run at start and then on its timer.
  // Withdrawal resume, housekeeping and mail delivery: one runner among every
  // instance on the database. The job worker runs in every instance: jobs are leased one by one.
  const leases = storage.loopLeases
  const loops: Loop[] = [
    // Withdrawals left pending_signature: a crash between debit and signature, or custody away.
    startLoop({
      name: 'withdrawal resume',
      everyMs: WITHDRAWAL_RESUME_MS,
      leases,
      logger,
      tick: async () => {
        const settled = await services.withdrawals.resumePending()
        if (settled > 0) logger.info('withdrawals resumed', { settled })
      },
    }),
    startLoop({
      name: 'housekeeping',
      everyMs: HOUSEKEEPING_MS,
      leases,
      logger,
      tick: async () => {
        const removed = await housekeeping(storage, systemClock, config.eventRetentionDays, services.securityLog, config.evidenceRetentionDays)
        if (Object.values(removed).some((n) => n > 0)) logger.info('housekeeping', { ...removed })
      },
    }),
    // The matcher: one runner among every instance pairs every queue's tickets (each pair its own unit of work).
    startLoop({
      name: 'matchmaker',
      everyMs: MATCHMAKER_MS,
      leases,
      logger,
      tick: async () => {
        const made = await services.matchmaking.matchTick()
        if (made > 0) logger.info('matches found', { made })
        await services.challenges.expireDue()
      },
    }),
    // Leaderboards: a player idle for another whole inactivity period moves down (their rating view computes it on read anyway).
    // Every instance sweeps, with no lease (and no connection of its own): each move is a compare-and-set on the row's period end, so two sweeps agree.
    startLoop({
      name: 'rating board',
      everyMs: RATING_BOARD_SWEEP_MS,
      leases: inProcessLeases(),
      logger,
      tick: async () => {
        while ((await services.ratings.sweepBoard()) === SWEEP_BATCH) {
          // A full batch: more are due.
        }
      },
    }),
  ]
  if (config.smtpUrl === undefined && config.env !== 'local') {
    logger.warn('no ARENA_SMTP_URL: no mail can be sent; password reset and verification resend answer 503 mail_not_configured')
  }
  if (config.smtpUrl !== undefined) {
    // Mail: one sender among every instance, so a mail is never sent by two at once.
    // Loaded only when mail is sent: nodemailer was the largest library of the bundle.
    const { MailDelivery } = await import('./modules/mail/delivery')
    const delivery = new MailDelivery({ storage, clock: systemClock, logger, config })
    const loop = startLoop({
      name: 'mail delivery',
      everyMs: MAIL_DELIVERY_MS,
      leases,
      logger,
      tick: async () => void (await delivery.deliverDue()),
    })
    loops.push({
      async stop() {
        // A send in progress is abandoned (its mail stays queued), not waited for.
        delivery.stop()
        await loop.stop()
      },
    })
  }
  {
    // Webhooks (contract §18): one runner among every instance, so each endpoint has one sender at a time.
    const delivery = new WebhookDelivery({ storage, clock: systemClock, logger, config, chainKey: secrets.chainKey })
    const loop = startLoop({
      name: 'webhook delivery',
      everyMs: WEBHOOK_DELIVERY_MS,
      leases,
      logger,
      tick: async () => void (await delivery.deliverDue()),
    })
    loops.push({
      async stop() {
        // Attempts in flight are aborted (their deliveries stay pending, sent again with the same webhook-id) and waited for.
        await delivery.stop()
        await loop.stop()
      },
    })
  }
  if (secrets.signingKeysFrom === 'database') {
    // Keys another machine added (`arena keys rotate`) reach this instance
    // within a second even while it serves nothing (src/vault/secrets.ts).
    loops.push(startKeyringRefresh(services.signingKeys, logger))
  }
  // Scheduled backups (SQLite only: config.ts refuses ARENA_BACKUP_DIR with PostgreSQL).
  backups = config.backupDir === undefined ? undefined : startScheduledBackups({ config, leases, logger })
  if (backups !== undefined) loops.push(backups)
  if (config.jobsEnabled) {
    // Work left by a previous run (a finalization interrupted by a crash) runs at once.
    const worker = createJobWorker({ storage, clock: systemClock, logger, handlers: jobHandlers(systemClock, services) })
    loops.push(startLoop({ name: 'job worker', everyMs: JOB_POLL_MS, leases: inProcessLeases(), logger, tick: async () => void (await worker.runDue()) }))
  }
  const running = listen(app, {
    config,
    logger,
    lifecycle,
    wakeAll: () => services.events.wakeAll(),
    closeSockets: () => services.sockets.closeAll(),
    onStopped: async () => {
      await Promise.all(loops.map((loop) => loop.stop()))
      // Buffered security events are written before the database closes.
      await services.securityLog.close()
      await storage.close()
      // Released only once the database is closed: the next server finds it quiet.
      lock?.release()
    },
  })
  return { ...running, secrets, backupStatus: () => backups?.status() ?? {} }
}

/**
 * Serves an app and owns its graceful stop: readiness fails first, the
 * listener closes, in-flight requests get the grace period, then whatever is
 * still open is closed and `onStopped` releases what the app held.
 */
export function listen(
  app: AnyElysia,
  deps: {
    config: Readonly<Config>
    logger: Logger
    lifecycle: Lifecycle
    wakeAll?: () => void
    /** Closes the event sockets (1012: reconnect elsewhere) before the listener stops. */
    closeSockets?: () => void
    /** Releases what the app held; a promise it returns is awaited before `stop` resolves. */
    onStopped: () => unknown
  },
): Omit<RunningServer, 'secrets' | 'backupStatus'> {
  const { config, logger, lifecycle } = deps
  try {
    app.listen({
      hostname: config.host,
      port: config.port,
      // The app answers 413 with the envelope for a body over 64 KiB, from its
      // Content-Length before reading it, or while counting a streamed one, so
      // the transport must never answer first (it would send a bare 413 with no
      // envelope and no x-request-id, as it did for 2 MiB). Nothing is buffered
      // beyond what the app reads: the JSON parser reads at most 64 KiB and never
      // hands a body to Elysia's own (unbounded) parsers; test/build/transport-limits.
      maxRequestBodySize: Number.MAX_SAFE_INTEGER,
      // Elysia turns SO_REUSEPORT on by default; then a second arena on the same
      // port would silently share its traffic. Fail with EADDRINUSE instead.
      reusePort: false,
      development: false,
      // Long-polls wait up to 30 s (contract §4); Elysia's default of 30 s of
      // silence would cut them at the boundary.
      idleTimeout: 45,
      // The event sockets (src/modules/realtime): a client sends only short
      // subscribe messages; sending pauses at the first sign of backpressure
      // (the socket waits for drain), so Bun must never drop a frame on its
      // own: its limit is far above the one frame a socket may have buffered.
      websocket: {
        maxPayloadLength: MAX_CLIENT_MESSAGE_BYTES,
        backpressureLimit: 64 * 1024 * 1024,
        closeOnBackpressureLimit: false,
        perMessageDeflate: false,
        idleTimeout: 120,
        sendPings: true,
      },
      // Backstop for what Elysia's own error handling cannot turn into a
      // response (it fails on `throw null`): still the envelope, never Bun's page.
      error(error: unknown) {
        const requestId = newId('request')
        logger.error('unhandled error outside the app', {
          requestId,
          error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
          stack: error instanceof Error ? error.stack : undefined,
        })
        return jsonResponse(500, INTERNAL_ERROR_BODY, { [REQUEST_ID_HEADER]: requestId })
      },
    })
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    // Taken since assertCanListen looked: the same clear error, only later.
    if (isListenErrorCode(code)) throw new ListenError(config.host, config.port, code)
    throw error
  }
  const server = app.server!
  const port = server.port ?? config.port
  const url = `http://${config.host}:${port}`
  logger.info('listening', { url, port, env: config.env, version: VERSION })

  let stopping: Promise<void> | undefined
  const stop = (reason = 'stop') => {
    stopping ??= (async () => {
      logger.info('stopping', { reason, graceS: config.shutdownGraceS })
      lifecycle.draining = true
      // Long polls answer now (with what they have) instead of holding the stop.
      deps.wakeAll?.()
      deps.closeSockets?.()
      let timer: ReturnType<typeof setTimeout> | undefined
      const graceful = server.stop(false).then(() => 'drained' as const)
      const timeout = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), config.shutdownGraceS * 1000)
      })
      const outcome = await Promise.race([graceful, timeout])
      clearTimeout(timer)
      if (outcome === 'timeout') {
        logger.warn('grace period over, closing open connections')
        await server.stop(true)
      }
      await deps.onStopped()
      logger.info('stopped', { reason, outcome })
    })()
    return stopping
  }

  return { url, port, stop }
}
