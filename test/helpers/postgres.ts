// A throwaway PostgreSQL cluster for the test run: Debian's server binaries,
// a fresh data dir in a temp dir, reachable only over a unix socket in that
// dir (no TCP port to collide with other runs), durability switched off
// because nothing here must survive the machine. One cluster per process
// (bun test runs every file in one process), stopped and deleted when the
// test process is gone. Each test app gets its own database, copied from a
// migrated template so it does not pay for the migrations again.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'

const MIN_MAJOR = 15
const PORT = 5432
const SUPERUSER = 'postgres'
const TEMP_PREFIX = 'arena-pg-'
export const TEMPLATE_DATABASE = 'arena_template'

// Durability against power loss off (a test cluster dies with its run),
// enough connections for many test apps' pools at once, little memory (the
// machine is shared). synchronous_commit stays on: with fsync off a commit
// costs one write(2) (measured: no faster off), and off would let a server
// crash (restart({ immediate: true })) lose commits already acknowledged,
// which fault tests must be able to rely on.
const SETTINGS: Record<string, string> = {
  listen_addresses: "''",
  port: String(PORT),
  max_connections: '500',
  shared_buffers: '64MB',
  fsync: 'off',
  full_page_writes: 'off',
  lc_messages: "'C'",
  log_min_messages: 'warning',
  log_line_prefix: "'%m [%p] %d '",
}

export interface PostgresCluster {
  /** The directory holding the server's unix socket (`.s.PGSQL.5432`). */
  socketDir: string
  /** Where the server writes its log: read it when a test fails for a server-side reason. */
  logFile: string
  /** A URL for `database` on this cluster (see databaseUrl). */
  url(database: string): string
  createDatabase(name: string, options?: { template?: string }): Promise<void>
  /** Drops the database, disconnecting whoever is still connected to it. */
  dropDatabase(name: string): Promise<void>
  /** pg_ctl restart: every connection is cut; the data stays. `immediate` skips the shutdown checkpoint, like a server crash. */
  restart(options?: { immediate?: boolean }): Promise<void>
  /** Stops the server and deletes its directory; the next startPostgres() starts a new cluster. */
  stop(): Promise<void>
  /** A postgres.js client as the superuser, for the harness's own queries. */
  admin: postgres.Sql
}

/**
 * The unix-socket form libpq documents (`?host=<socket dir>`), with an explicit
 * host and port so that `new URL` (which postgres.js parses with) accepts it.
 * postgres.js 3.4.9 does NOT read the `host` query parameter itself: it would
 * connect to localhost:5432 over TCP and send `host` as a startup parameter.
 * Whoever opens it passes postgresConnectOptions(url) alongside the URL.
 */
export function databaseUrl(socketDir: string, database: string): string {
  return `postgres://${SUPERUSER}@localhost:${PORT}/${encodeURIComponent(database)}?host=${encodeURIComponent(socketDir)}`
}

/**
 * What postgres.js needs besides a databaseUrl to reach a unix socket: the
 * socket file's `path` (postgres.js then ignores host and port) and the
 * URL without the `host` parameter, which the server would otherwise receive
 * as an unknown setting.
 */
export function postgresConnectOptions(url: string): { url: string; path?: string } {
  const parsed = new URL(url)
  const host = parsed.searchParams.get('host')
  if (!host?.startsWith('/')) return { url }
  parsed.searchParams.delete('host')
  return { url: parsed.toString(), path: `${host}/.s.PGSQL.${parsed.port || PORT}` }
}

/** The bin dir of the newest installed PostgreSQL >= 15 (Debian layout), or null. */
export function findPostgresBinaries(): string | null {
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return null
  const majors = readdirSync(root)
    .map(Number)
    .filter((major) => Number.isInteger(major) && major >= MIN_MAJOR && existsSync(join(root, String(major), 'bin', 'initdb')))
    .sort((a, b) => b - a)
  return majors.length > 0 ? join(root, String(majors[0]), 'bin') : null
}

const isRoot = process.getuid?.() === 0

/** initdb and postgres refuse to run as root: as root, run them as the postgres user. */
function asServerUser(command: string[]): string[] {
  return isRoot ? ['runuser', '-u', SUPERUSER, '--', ...command] : command
}

function runSync(command: string[]): void {
  const result = Bun.spawnSync(command, { stdout: 'pipe', stderr: 'pipe', stdin: 'ignore' })
  if (result.exitCode !== 0) {
    throw new Error(`${command.join(' ')} failed (${result.exitCode}):\n${result.stdout.toString()}${result.stderr.toString()}`)
  }
}

async function runAsync(command: string[]): Promise<void> {
  const proc = Bun.spawn(command, { stdout: 'pipe', stderr: 'pipe', stdin: 'ignore' })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  if (code !== 0) throw new Error(`${command.join(' ')} failed (${code}):\n${stdout}${stderr}`)
}

/**
 * Stops the cluster and deletes its directory once this process is gone,
 * however it ends: bun test fires neither 'exit' nor 'beforeExit', and a
 * killed run fires nothing. A detached shell in its own session outlives us,
 * polls our pid, then runs pg_ctl stop -m immediate and removes the dir.
 */
function cleanUpAfterExit(dir: string, stopCommand: string[]): () => void {
  const script = 'pid=$1; dir=$2; shift 2; while kill -0 "$pid" 2>/dev/null; do sleep 1; done; "$@" >/dev/null 2>&1; rm -rf "$dir"'
  const watcher = Bun.spawn(['setsid', 'sh', '-c', script, 'sh', String(process.pid), dir, ...stopCommand], { stdio: ['ignore', 'ignore', 'ignore'] })
  watcher.unref()
  return () => watcher.kill()
}

async function start(options: StartOptions): Promise<PostgresCluster> {
  const bin = findPostgresBinaries()
  if (!bin) {
    throw new Error(`no PostgreSQL >= ${MIN_MAJOR} server found under /usr/lib/postgresql/*/bin: install Debian's \`postgresql\` package (apt-get install postgresql)`)
  }
  const dir = mkdtempSync(join(tmpdir(), TEMP_PREFIX))
  const dataDir = join(dir, 'data')
  const logFile = join(dir, 'server.log')
  const pgCtl = join(bin, 'pg_ctl')
  const stopCommand = asServerUser([pgCtl, 'stop', '-D', dataDir, '-m', 'immediate', '-s'])
  const cancelCleanUp = cleanUpAfterExit(dir, stopCommand)
  let running = false

  try {
    if (isRoot) runSync(['chown', `${SUPERUSER}:`, dir])
    // C locale: fast, and error texts and sort order the same on every machine.
    runSync(asServerUser([join(bin, 'initdb'), '-D', dataDir, '-U', SUPERUSER, '--auth=trust', '--encoding=UTF8', '--locale=C', '--no-sync', '--no-instructions']))
    const settings = { ...SETTINGS, ...(options.durable ? DURABLE : {}), unix_socket_directories: `'${dir}'` }
    const conf = Object.entries(settings).map(([key, value]) => `${key} = ${value}`).join('\n')
    // Written as the server user (root-written files in the data dir would be refused).
    runSync(asServerUser(['sh', '-c', `printf '%s\\n' "$1" >> "$2"`, 'sh', conf, join(dataDir, 'postgresql.conf')]))
    running = true
    runSync(asServerUser([pgCtl, 'start', '-D', dataDir, '-l', logFile, '-w', '-s', '-t', '60']))
  } catch (error) {
    const log = existsSync(logFile) ? `\nserver log:\n${readFileSync(logFile, 'utf8')}` : ''
    if (running) Bun.spawnSync(stopCommand, { stdout: 'ignore', stderr: 'ignore' })
    rmSync(dir, { recursive: true, force: true })
    cancelCleanUp()
    throw new Error(`${(error as Error).message}${log}`)
  }

  const cluster: PostgresCluster = {
    ...databaseOps(dir),
    logFile,
    async restart(options = {}) {
      await runAsync(asServerUser([pgCtl, 'restart', '-D', dataDir, '-l', logFile, '-w', '-s', '-t', '60', '-m', options.immediate ? 'immediate' : 'fast']))
    },
    async stop() {
      if (current === cluster) {
        started = undefined
        current = undefined
        template = undefined
      }
      await cluster.admin.end({ timeout: 1 })
      if (running) await runAsync(asServerUser([pgCtl, 'stop', '-D', dataDir, '-m', 'fast', '-w', '-s']))
      running = false
      rmSync(dir, { recursive: true, force: true })
      cancelCleanUp()
    },
  }
  return cluster
}

/** What reaching a running cluster through its socket dir gives: URLs, the superuser's client, creating and dropping databases. */
function databaseOps(dir: string): Pick<PostgresCluster, 'socketDir' | 'url' | 'admin' | 'createDatabase' | 'dropDatabase'> {
  const url = (database: string) => databaseUrl(dir, database)
  const { url: plain, path } = postgresConnectOptions(url('postgres'))
  const admin = postgres(plain, { path, max: 2, onnotice: () => {} })
  return {
    socketDir: dir,
    url,
    admin,
    async createDatabase(name, options = {}) {
      if (options.template) await admin`CREATE DATABASE ${admin(name)} TEMPLATE ${admin(options.template)}`
      else await admin`CREATE DATABASE ${admin(name)}`
    },
    async dropDatabase(name) {
      await admin`DROP DATABASE IF EXISTS ${admin(name)} WITH (FORCE)`
    },
  }
}

/**
 * For a worker thread of the test process (test/fuzz/fuzz-worker.ts): this
 * thread's startPostgres() is then the cluster its main thread started
 * (`socketDir`), not a new one, and the databases it makes are named apart
 * (`arena_test_<prefix>_<n>`), copies of the migrated template the main
 * thread prepared (prepareTemplate) unless asked empty. The cluster is the
 * main thread's to stop: stop() here only closes this thread's client. Call
 * before any startPostgres(), once the main thread's template is ready.
 */
export function attachPostgres(socketDir: string, prefix: string): void {
  if (started !== undefined) throw new Error('attachPostgres: this thread has a cluster already')
  namePrefix = `arena_test_${prefix}_`
  const cluster: PostgresCluster = {
    ...databaseOps(socketDir),
    logFile: join(socketDir, 'server.log'),
    async restart() {
      throw new Error('attachPostgres: the cluster is the main thread\'s to restart')
    },
    async stop() {
      started = undefined
      current = undefined
      await cluster.admin.end({ timeout: 1 })
    },
  }
  current = cluster
  started = Promise.resolve(cluster)
  template = Promise.resolve()
}

let namePrefix = 'arena_test_'
let started: Promise<PostgresCluster> | undefined
let current: PostgresCluster | undefined
let template: Promise<void> | undefined
let databaseCount = 0

export interface StartOptions {
  /** fsync and full-page writes on, as a production server runs (the benchmark); tests leave them off. */
  durable?: boolean
}

const DURABLE: Record<string, string> = { fsync: 'on', full_page_writes: 'on' }

/** The process's cluster, started on first use (with the first call's options). */
export function startPostgres(options: StartOptions = {}): Promise<PostgresCluster> {
  started ??= start(options).then((cluster) => (current = cluster))
  return started
}

/**
 * Creates TEMPLATE_DATABASE once per cluster, lets `migrate` bring it to the
 * current schema, then freezes it as a template that accepts no connections
 * (CREATE DATABASE ... TEMPLATE refuses while anyone is connected to the
 * source). Later calls return the first call's promise, whatever they pass.
 * `migrate` must close its connections before it resolves; any it leaves
 * open are terminated.
 */
export function prepareTemplate(migrate: (url: string) => Promise<void>): Promise<void> {
  template ??= (async () => {
    const cluster = await startPostgres()
    const sql = cluster.admin
    await cluster.createDatabase(TEMPLATE_DATABASE)
    await migrate(cluster.url(TEMPLATE_DATABASE))
    await sql`ALTER DATABASE ${sql(TEMPLATE_DATABASE)} WITH ALLOW_CONNECTIONS false IS_TEMPLATE true`
    await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ${TEMPLATE_DATABASE}`
  })()
  return template
}

/** The database a databaseUrl names. */
export function databaseNameOf(url: string): string {
  return decodeURIComponent(new URL(url).pathname.slice(1))
}

/**
 * A new, uniquely named copy of the database `url` names, and its URL
 * (CREATE DATABASE ... TEMPLATE: nobody may be connected to the source).
 */
export async function copyDatabaseUrl(url: string): Promise<string> {
  const cluster = await startPostgres()
  const name = `${namePrefix}${++databaseCount}`
  await cluster.createDatabase(name, { template: databaseNameOf(url) })
  return cluster.url(name)
}

/**
 * A new, uniquely named database and its URL: a copy of the migrated
 * template once prepareTemplate was called, an empty database otherwise
 * (or always with `empty`: for tests of the migrations themselves).
 */
export async function freshDatabaseUrl(options: { empty?: boolean } = {}): Promise<string> {
  const cluster = await startPostgres()
  const copy = template !== undefined && !options.empty
  if (copy) await template
  const name = `${namePrefix}${++databaseCount}`
  await cluster.createDatabase(name, copy ? { template: TEMPLATE_DATABASE } : {})
  return cluster.url(name)
}
