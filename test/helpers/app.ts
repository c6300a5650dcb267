// A real app over a real database, migrated by the same function production
// uses: a SQLite file in a fresh temp dir, or with ARENA_TEST_ENGINE=postgres
// (`npm run test:pg`) a fresh database on the run's throwaway PostgreSQL
// (test/helpers/postgres.ts). Log lines are captured so tests can read them.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AnyElysia } from 'elysia'
import { createApp } from '../../src/app'
import { createServices, loadSecrets, type Services } from '../../src/services'
import type { CustodyClient } from '../../src/modules/wallet/custody'
import type { SecurityLogOptions } from '../../src/modules/security/event-log'
import { HashGate, type HashGateOptions } from '../../src/modules/auth/hash-gate'
import { loadConfig, type Config } from '../../src/config'
import type { Db, DbHandle } from '../../src/db/sqlite/connection'
import * as sqliteTables from '../../src/db/schema'
import * as postgresTables from '../../src/db/postgres/schema'
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js'
import type { SqliteStorage } from '../../src/db/sqlite/storage'
import type { PostgresStorage } from '../../src/db/postgres/storage'
import { openPool } from '../../src/db/postgres/connection'
import { runMigrations } from '../../src/db/postgres/migrate'
import { openStorage, type OpenedStorage } from '../../src/db/open'
import { copyDatabaseUrl, databaseNameOf, freshDatabaseUrl, prepareTemplate, startPostgres } from './postgres'
import { inProcessWakeups } from '../../src/modules/events/wakeups'
import type { Lifecycle } from '../../src/modules/health/service'
import { jobHandlers } from '../../src/jobs/handlers'
import { createJobWorker } from '../../src/jobs/worker'
import type { Secrets } from '../../src/secrets'
import { MasterKey } from '../../src/shared/sealed'
import { startKeyringRefresh } from '../../src/vault/secrets'
import { ManualClock } from '../../src/shared/clock'
import { TEST_RATE_LIMITS } from './process'
import { createLogger } from '../../src/shared/logger'

export function tempDir(prefix = 'arena-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix))
}

/** The engine the suite runs on: `npm test` SQLite, `npm run test:pg` PostgreSQL. */
export const TEST_ENGINE: 'sqlite' | 'postgres' = process.env.ARENA_TEST_ENGINE === 'postgres' ? 'postgres' : 'sqlite'

/** Which engine the run is on. A suite or test that only means something on one engine: describeOnEngine / testOnEngine (./engine.ts), which say so when they skip. */
export function onEngine(engine: 'sqlite' | 'postgres'): boolean {
  return TEST_ENGINE === engine
}

/**
 * The environment pointing arena at a fresh database of the test engine:
 * nothing for SQLite (the data dir holds it), ARENA_DATABASE_URL of a new
 * database, copied from the migrated template, for PostgreSQL, with a master
 * key of its own (ARENA_MASTER_KEY) for the secrets kept there.
 */
export async function testDatabaseEnv(engine: 'sqlite' | 'postgres' = TEST_ENGINE): Promise<Record<string, string>> {
  if (engine === 'sqlite') return {}
  await prepareTestTemplate()
  return { ARENA_DATABASE_URL: await freshDatabaseUrl(), ARENA_MASTER_KEY: MasterKey.generateHex() }
}

/** Migrates the run's template database with arena's own migrations, once: every fresh test database is a copy of it. */
export function prepareTestTemplate(): Promise<void> {
  return prepareTemplate(async (url) => {
    const pool = openPool(url, { max: 1 })
    try {
      await runMigrations(pool.sql)
    } finally {
      await pool.sql.end()
    }
  })
}

/**
 * Like testDatabaseEnv, but the database is empty, not yet migrated: a fresh
 * data dir is that already on SQLite; a new database with no tables on
 * PostgreSQL. For tests of the migrations themselves.
 */
export async function emptyDatabaseEnv(): Promise<Record<string, string>> {
  if (TEST_ENGINE === 'sqlite') return {}
  return { ARENA_DATABASE_URL: await freshDatabaseUrl({ empty: true }), ARENA_MASTER_KEY: MasterKey.generateHex() }
}

/**
 * The environment pointing at a copy of the database `env` points at (an
 * app's databaseEnv, once that app is closed): nothing on SQLite, where
 * copying the data dir copies its database; on PostgreSQL a new database made
 * from it, under the same master key (its sealed secrets are copied too).
 */
export async function copyDatabaseEnv(env: Record<string, string>): Promise<Record<string, string>> {
  if (env.ARENA_DATABASE_URL === undefined) return {}
  return { ...env, ARENA_DATABASE_URL: await copyDatabaseUrl(env.ARENA_DATABASE_URL) }
}

/** The database of each data dir a test app ran on, so a "restart" on the same data dir finds it (PostgreSQL keeps it elsewhere). */
const databaseOf = new Map<string, Record<string, string>>()

export interface TestApp {
  app: ReturnType<typeof createApp>
  handle: (request: Request) => Promise<Response>
  /** The SQLite write connection (SQLite runs only: a test that reads the file directly). */
  db: DbHandle
  /** The engine behind the services. */
  storage: OpenedStorage
  /** The SQLite engine (its committer's statistics, its connections); SQLite runs only. */
  sqlite: SqliteStorage
  /** The PostgreSQL engine (its pool, its retries); PostgreSQL runs only. */
  postgres: PostgresStorage
  /**
   * Drizzle on the test's database whichever the engine, for tests that check
   * rows: `await ctx.peek.db.select().from(ctx.peek.tables.users).where(...)`.
   * Await the query (never .get(), .all() or .run(): only SQLite has them).
   * Typed as SQLite's: the PostgreSQL tables have the same names and rows.
   */
  peek: { db: Db; tables: typeof sqliteTables }
  config: Readonly<Config>
  /** The secrets the app runs with (the data dir's, or on PostgreSQL the database's). */
  secrets: Secrets
  /**
   * What a child process (the CLI, a second server) needs besides ARENA_DATA_DIR
   * to open this app's database: nothing on SQLite (the data dir holds it),
   * its ARENA_DATABASE_URL and ARENA_MASTER_KEY on PostgreSQL.
   */
  databaseEnv: Record<string, string>
  clock: ManualClock
  lifecycle: Lifecycle
  /** Every log line written so far, parsed. */
  logs: Record<string, unknown>[]
  /** Raw log text, for "this secret never appears" checks. */
  logText(): string
  /**
   * The raw log lines from index `from` on: what a test that checks the log
   * after every request reads (joining the whole text each time grows with
   * the log, thousands of requests make it quadratic).
   */
  logLinesFrom(from: number): string[]
  /** Runs the background jobs that are due, as the server's worker would; returns how many succeeded. */
  runJobs(): Promise<number>
  services: Services
  /** Writes the buffered security events, then closes the storage (and removes a temp data dir). */
  close(): Promise<void>
}

export interface TestAppOptions {
  env?: Record<string, string>
  /** Reuse a data dir (a "restart"); it is then left in place by close(). */
  dataDir?: string
  /** The event sockets' ping and re-check intervals (test/helpers/sockets.ts). */
  socketTimings?: { pingMs?: number; recheckMs?: number }
  /** A custody client standing in for a remote provider. */
  custody?: CustodyClient
  securityLogOptions?: SecurityLogOptions
  /** Extra routes mounted after the real modules (probes for the cross-cutting plugins). */
  probes?: AnyElysia
  /** The engine whatever the run's (`arena db copy` reads a SQLite data dir in the PostgreSQL run too). */
  engine?: 'sqlite' | 'postgres'
  /**
   * Sizes of this app's own argon2id gate (default sizes otherwise; never the
   * process-wide gate, so apps stay independent). Without it the app hashes
   * passwords and PINs at TEST_HASH_COST; with it (`{}` for the default
   * sizes) at the real cost: what the tests of the hashing itself, of the
   * gate and of timing pass.
   */
  hashGate?: HashGateOptions
  /**
   * 'defaults': the rate limits a server runs with (the rate-limit tests).
   * Otherwise every limit is raised far out of reach (TEST_RATE_LIMITS):
   * tests send hundreds of requests through app.handle, all from one
   * address; the limiter still runs and writes its headers. An
   * ARENA_RATE_LIMITS in `env` wins over both. Child servers get the same
   * (childEnv in ./process).
   */
  rateLimits?: 'defaults' | 'raised'
}


/**
 * The argon2id cost of an app's hashes unless the test passes `hashGate`:
 * the same code path (argon2id through the gate, verified from the stored
 * hash) at a token cost. At the real cost (19 MiB, 2 passes: 30-140 ms a hash
 * here) the suite's thousands of sign-ups, logins and PINs were minutes of
 * each run; the hashing itself is tested at the real cost (test/auth/register,
 * test/auth/hash-gate, test/security/hash-gate, the enumeration timing tests,
 * and every child server and binary, which run the production defaults), and
 * so are the races whose window is a hash (parallel guesses, concurrent PIN
 * verifies, two password changes at once): those pass `hashGate: {}`.
 */
export const TEST_HASH_COST = { memoryCost: 256, timeCost: 1 } as const

export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const dataDir = options.dataDir ?? tempDir()
  // A restart (a data dir given back) finds its database again, on either engine.
  const database = options.env?.ARENA_DATABASE_URL !== undefined ? {} : (databaseOf.get(dataDir) ?? (await testDatabaseEnv(options.engine)))
  databaseOf.set(dataDir, database)
  const rateLimits = options.rateLimits === 'defaults' ? {} : { ARENA_RATE_LIMITS: TEST_RATE_LIMITS }
  const config = loadConfig({ ARENA_DATA_DIR: dataDir, ARENA_LOG_LEVEL: 'debug', ...rateLimits, ...database, ...options.env })
  const { ARENA_DATABASE_URL, ARENA_MASTER_KEY } = { ...database, ...options.env }
  const databaseEnv: Record<string, string> = ARENA_DATABASE_URL === undefined ? {} : { ARENA_DATABASE_URL, ...(ARENA_MASTER_KEY ? { ARENA_MASTER_KEY } : {}) }
  const lines: string[] = []
  const logger = createLogger(config.logLevel, (line) => lines.push(line))
  const wakeups = inProcessWakeups()
  const storage = await openStorage(config, { logger, wakeups })
  const engineOnly = <T,>(engine: 'sqlite' | 'postgres', get: () => T): T => {
    if (storage.engine !== engine) throw new Error(`this test reaches into ${engine} directly; it runs on ${engine} only (onEngine('${engine}'))`)
    return get()
  }
  const clock = new ManualClock('2026-11-22T10:00:00.000Z')
  const lifecycle: Lifecycle = { draining: false }
  const secrets = await loadSecrets(config, storage, { generateOperatorToken: true })
  const deps = { config, storage, wakeups, secrets, logger, clock, lifecycle, ...(options.custody ? { custody: options.custody } : {}), ...(options.securityLogOptions ? { securityLogOptions: options.securityLogOptions } : {}), hashGate: new HashGate(options.hashGate ?? { hashCost: TEST_HASH_COST }), ...(options.socketTimings ? { socketTimings: options.socketTimings } : {}) }
  const services = createServices(deps)
  // As the server does: keys rotated in the database reach this app within a second.
  const keyringRefresh = secrets.signingKeysFrom === 'database' ? startKeyringRefresh(services.signingKeys, logger) : undefined
  const base = createApp(deps, services)
  // Probe routes change the app's route types; tests only call handle(), so keep the base type.
  const app = options.probes ? (base.use(options.probes) as unknown as typeof base) : base
  return {
    app,
    handle: (request) => app.handle(request),
    // The write connection: tests read and fault-inject the file through it.
    get db() {
      return engineOnly('sqlite', () => (storage as SqliteStorage).writer)
    },
    storage,
    get sqlite() {
      return engineOnly('sqlite', () => storage as SqliteStorage)
    },
    get postgres() {
      return engineOnly('postgres', () => storage as PostgresStorage)
    },
    peek:
      storage.engine === 'sqlite'
        ? { db: (storage as SqliteStorage).writer.db, tables: sqliteTables }
        : { db: drizzlePostgres({ client: (storage as PostgresStorage).sql }) as unknown as Db, tables: postgresTables as unknown as typeof sqliteTables },
    config,
    secrets,
    databaseEnv,
    clock,
    lifecycle,
    get logs() {
      return lines.map((line) => JSON.parse(line) as Record<string, unknown>)
    },
    logText: () => lines.join('\n'),
    logLinesFrom: (from) => lines.slice(from),
    services,
    runJobs: () => createJobWorker({ storage, clock, logger, handlers: jobHandlers(clock, services) }).runDue(),
    async close() {
      // Open event sockets (and their timers) end with the app.
      services.sockets.closeAll()
      await keyringRefresh?.stop()
      await services.securityLog.close()
      await storage.close()
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

/**
 * Takes the app's database away from under it, as a lost disk or server
 * would: SQLite's write connection closed, or the PostgreSQL database dropped
 * (its connections cut, new ones refused). The app itself stays up.
 */
export async function loseDatabase(app: TestApp): Promise<void> {
  if (app.storage.engine === 'sqlite') {
    app.db.sqlite.close()
    return
  }
  await (await startPostgres()).dropDatabase(databaseNameOf(app.config.databaseUrl!))
}

/** What the request helpers need: an in-process app, or a server on a real port (`remote`). */
export type Handler = Pick<TestApp, 'handle'>

/**
 * The helpers' requests sent over HTTP to a running server. `base` is read at
 * each request, so a test that restarts the server on another port keeps
 * using the same handler.
 */
export function remote(base: () => string, timeoutMs = 15_000): Handler {
  return {
    handle(request) {
      const { pathname, search } = new URL(request.url)
      return fetch(new Request(base() + pathname + search, request), { signal: AbortSignal.timeout(timeoutMs) })
    },
  }
}

const BASE = 'http://localhost'

export function req(path: string, init: RequestInit = {}): Request {
  return new Request(BASE + path, init)
}

export function postJson(path: string, body: unknown, headers: Record<string, string> = {}): Request {
  return new Request(BASE + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
}

/** afterResponse hooks run after the response is returned; let them finish. */
export async function settle(): Promise<void> {
  await Bun.sleep(5)
}
