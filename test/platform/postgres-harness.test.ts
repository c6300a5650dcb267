// The test harness's throwaway PostgreSQL: a real server of at least version
// 15, databases that do not see each other, a template whose copies carry
// its schema, a restart that cuts connections but keeps the data, and no
// server or directory left behind once the test process is gone.
// Without PostgreSQL binaries it skips and says why, unless the run asked for
// PostgreSQL (ARENA_TEST_ENGINE=postgres, as CI does): then it fails.
import { afterAll, expect, test } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import postgres from 'postgres'
import { findPostgresBinaries, freshDatabaseUrl, postgresConnectOptions, startPostgres, TEMPLATE_DATABASE } from '../helpers/postgres'
import { prepareTestTemplate } from '../helpers/app'

const required = process.env.ARENA_TEST_ENGINE === 'postgres'
const skip = !required && findPostgresBinaries() === null
if (skip) console.log('PostgreSQL harness test skipped: no PostgreSQL >= 15 under /usr/lib/postgresql (Debian package postgresql)')

const clients: postgres.Sql[] = []
afterAll(() => Promise.all(clients.map((sql) => sql.end({ timeout: 1 }))))

/** Opens a URL the way the app will: the URL plus the socket path postgres.js cannot read from it. */
function open(url: string): postgres.Sql {
  const { url: plain, path } = postgresConnectOptions(url)
  const sql = postgres(plain, { path, max: 2, onnotice: () => {} })
  clients.push(sql)
  return sql
}

test.skipIf(skip)('the server is PostgreSQL 15 or newer, reached over its unix socket only', async () => {
  const cluster = await startPostgres()
  const sql = open(cluster.url('postgres'))
  const [version] = await sql<{ server_version_num: string }[]>`SHOW server_version_num`
  expect(Number(version?.server_version_num)).toBeGreaterThanOrEqual(150000)
  const [settings] = await sql<{ listen: string; max: number; fsync: string }[]>`SELECT current_setting('listen_addresses') AS listen, current_setting('max_connections')::int AS max, current_setting('fsync') AS fsync`
  expect(settings).toEqual({ listen: '', max: 500, fsync: 'off' })
  expect(await startPostgres()).toBe(cluster)
})

test.skipIf(skip)('two databases do not see each other', async () => {
  const cluster = await startPostgres()
  await cluster.createDatabase('harness_a')
  await cluster.createDatabase('harness_b')
  const a = open(cluster.url('harness_a'))
  const b = open(cluster.url('harness_b'))
  await a`CREATE TABLE notes (body text NOT NULL)`
  await a`INSERT INTO notes VALUES ('only in a')`
  const [current] = await b<{ name: string }[]>`SELECT current_database() AS name`
  expect(current?.name).toBe('harness_b')
  const [table] = await b<{ found: string | null }[]>`SELECT to_regclass('public.notes')::text AS found`
  expect(table?.found).toBeNull()
  expect([...(await a`SELECT body FROM notes`)]).toEqual([{ body: 'only in a' }])
})

test.skipIf(skip)('a restart cuts connections and keeps committed data', async () => {
  const cluster = await startPostgres()
  await cluster.createDatabase('harness_restart')
  const sql = open(cluster.url('harness_restart'))
  await sql`CREATE TABLE kept (n int NOT NULL)`
  await sql`INSERT INTO kept VALUES (1)`
  const [before] = await sql<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`
  await cluster.restart()
  await sql`INSERT INTO kept VALUES (2)`
  const [after] = await sql<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`
  expect(after?.pid).not.toBe(before?.pid)
  // Like a crash of the server: no shutdown checkpoint, recovery from the WAL on restart.
  await cluster.restart({ immediate: true })
  expect([...(await sql`SELECT n FROM kept ORDER BY n`)]).toEqual([{ n: 1 }, { n: 2 }])
})

test.skipIf(skip)('fresh databases are copies of the migrated template, each its own', async () => {
  const cluster = await startPostgres()
  // The template is the one every test app copies: migrated by arena's own migrations, never by a test's.
  await prepareTestTemplate()
  const started = performance.now()
  const urls = [await freshDatabaseUrl(), await freshDatabaseUrl()]
  const perDatabaseMs = (performance.now() - started) / urls.length
  console.log(`one database from the template: ${perDatabaseMs.toFixed(0)} ms`)
  expect(new Set(urls).size).toBe(2)

  const [first, second] = urls.map(open)
  for (const copy of [first!, second!]) expect([...(await copy`SELECT to_regclass('public.users') IS NOT NULL AS migrated`)]).toEqual([{ migrated: true }])
  await first!`CREATE TABLE players (name text PRIMARY KEY)`
  await first!`INSERT INTO players VALUES ('ada')`
  expect([...(await first!`SELECT name FROM players`)]).toEqual([{ name: 'ada' }])
  expect([...(await second!`SELECT to_regclass('public.players') IS NULL AS absent`)]).toEqual([{ absent: true }])
  const [template] = await cluster.admin<{ template: boolean }[]>`SELECT datistemplate AS template FROM pg_database WHERE datname = ${TEMPLATE_DATABASE}`
  expect(template?.template).toBe(true)
  // An empty database, for tests of the migrations themselves, carries nothing.
  const empty = open(await freshDatabaseUrl({ empty: true }))
  expect([...(await empty`SELECT count(*)::int AS tables FROM pg_tables WHERE schemaname = 'public'`)]).toEqual([{ tables: 0 }])

  // Many test files ask for databases at once: concurrent copies of one template must all succeed.
  const concurrent = await Promise.all(Array.from({ length: 6 }, () => freshDatabaseUrl()))
  expect(new Set(concurrent).size).toBe(6)
  const names = concurrent.map((url) => new URL(url).pathname.slice(1))
  await Promise.all(names.map((name) => cluster.dropDatabase(name)))
  const [remaining] = await cluster.admin<{ count: number }[]>`SELECT count(*)::int AS count FROM pg_database WHERE datname = ANY(${names})`
  expect(remaining?.count).toBe(0)
}, 30_000)

test.skipIf(skip)('a killed test process leaves no server and no directory behind', async () => {
  const helper = join(import.meta.dir, '..', 'helpers', 'postgres.ts')
  const child = Bun.spawn([process.execPath, '-e', `const { startPostgres } = await import(${JSON.stringify(helper)}); console.log((await startPostgres()).socketDir); await new Promise(() => {})`], { stdout: 'pipe', stderr: 'inherit' })
  const reader = child.stdout.getReader()
  let output = ''
  while (!output.includes('\n')) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`the child exited before starting its cluster: ${output}`)
    output += new TextDecoder().decode(value)
  }
  const dir = output.trim()
  const postmaster = Number(readFileSync(join(dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0])
  expect(existsSync(`/proc/${postmaster}`)).toBe(true)
  child.kill('SIGKILL')
  await child.exited
  const deadline = Date.now() + 15_000
  while ((existsSync(dir) || existsSync(`/proc/${postmaster}`)) && Date.now() < deadline) await Bun.sleep(100)
  expect(existsSync(`/proc/${postmaster}`)).toBe(false)
  expect(existsSync(dir)).toBe(false)
}, 30_000)
