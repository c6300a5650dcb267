// `arena db copy`: a SQLite data dir, filled through the app, copied into an
// empty PostgreSQL database must come out row for row the same, its secrets
// and custody shares sealed in the vault (none in the clear), pass the ledger
// check and the security-chain verification, and let an app on PostgreSQL,
// with a data dir of its own, carry on where the SQLite one stopped: the same
// logins, tokens, balances, brackets and event cursors, custody signing, new
// event and chain numbers after the copied ones. A database that already
// holds data, or secrets an instance generated, is refused.
import { afterAll, describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { getTableName, is, max } from 'drizzle-orm'
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js'
import { SQLiteTable, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import { copyDataDir, type DbCopyReport } from '../../src/cli/db-command'
import { loadConfig } from '../../src/config'
import { copyPlan, SchemaMismatchError, TargetNotEmptyError } from '../../src/db/copy'
import * as sqliteSchema from '../../src/db/schema'
import * as postgresSchema from '../../src/db/postgres/schema'
import { databasePath, openDatabase } from '../../src/db/sqlite/connection'
import type { EventsPage } from '../../src/modules/events/model'
import { verifySecurityLog } from '../../src/modules/security/event-log'
import { checkLedger } from '../../src/modules/wallet/ledger'
import { openPool } from '../../src/db/postgres/connection'
import { resolveSecrets } from '../../src/secrets'
import { MasterKey } from '../../src/shared/sealed'
import { postJson, req, tempDir, TEST_ENGINE, type Handler, type TestApp } from '../helpers/app'
import { admin, ADMIN_TOKEN, claim, createArenaApp, createGame, playerOf, players, playOut, startedTournament, tournament, type Player } from '../helpers/arena'
import { bearer, login, me } from '../helpers/auth'
import { findPostgresBinaries, startPostgres } from '../helpers/postgres'
import { run, SOURCE_COMMAND } from '../helpers/process'
import { balance, funded, mint, PIN, someAddress, verify } from '../helpers/purchases'
import { attached, disputedMatch, download, evidenceOf, samples, sha256 } from '../helpers/evidence'

const skip = TEST_ENGINE !== 'postgres' && findPostgresBinaries() === null
if (skip) console.log('db copy skipped: no PostgreSQL >= 15 under /usr/lib/postgresql (Debian package postgresql)')

const cleanUp: (() => Promise<void> | void)[] = []
afterAll(async () => {
  for (const step of cleanUp.reverse()) await step()
})

let databases = 0

/** The master key the copies seal the data dir's secrets under, and the apps on them open them with. */
const MASTER_KEY = MasterKey.generateHex()

/** The data dir's configuration, as `arena db copy` reads it (SQLite: no database URL, no master key). */
const sourceConfig = (dataDir: string) => loadConfig({ ARENA_DATA_DIR: dataDir, ARENA_ADMIN_TOKEN: ADMIN_TOKEN })

/** The target's: the database and the master key its secrets are sealed under. */
const targetConfig = (dataDir: string, url: string) => loadConfig({ ARENA_DATA_DIR: dataDir, ARENA_ADMIN_TOKEN: ADMIN_TOKEN, ARENA_DATABASE_URL: url, ARENA_MASTER_KEY: MASTER_KEY })

/** The custody share files of a data dir: [keyRef/participant, the share's secret part]. */
function shareFiles(dataDir: string): [string, string][] {
  const dir = join(dataDir, 'custody')
  return readdirSync(dir).flatMap((keyRef) =>
    readdirSync(join(dir, keyRef)).map((file): [string, string] => [`${keyRef}/${file}`, (JSON.parse(readFileSync(join(dir, keyRef, file), 'utf8')) as { secret: { signingShare: string } }).secret.signingShare]),
  )
}

/** A new database with nothing in it, not even the schema (the test template is migrated; a copy target is not). */
async function emptyDatabase(): Promise<string> {
  const cluster = await startPostgres()
  const name = `arena_copy_${++databases}`
  await cluster.createDatabase(name)
  return cluster.url(name)
}

type Page = EventsPage

async function poll(ctx: Handler, p: Player, query = ''): Promise<Page> {
  const res = await ctx.handle(req(`/api/v1/events${query}`, { headers: bearer(p.tokens.accessToken) }))
  expect(res.status).toBe(200)
  return (await res.json()) as Page
}

async function walletOf(ctx: Handler, p: Player): Promise<unknown> {
  const res = await ctx.handle(req('/api/v1/wallet', { headers: bearer(p.tokens.accessToken) }))
  expect(res.status).toBe(200)
  return res.json()
}

function reportSecurityEvent(ctx: Handler, p: Player, kind: string) {
  return ctx.handle(postJson('/api/v1/security/events', { kind, level: 'WARN', details: { nested: { b: 1, a: [true, null] } } }, bearer(p.tokens.accessToken)))
}

/** A value with every object's keys sorted (jsonb keeps its own key order) and Dates as ISO text, for comparing rows across engines. */
function canonical(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString()
  // A bytes column (BLOB / bytea): a Buffer on both engines, compared byte for byte.
  if (value instanceof Uint8Array) return `bytes:${Buffer.from(value).toString('base64')}`
  if (Array.isArray(value)) return value.map(canonical)
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => [k, canonical(v)]))
  }
  return value
}

const canonicalRows = (rows: unknown[]) => rows.map((row) => JSON.stringify(canonical(row))).sort()

/** Every row of every table in the data dir's SQLite file, canonical. */
function sqliteContents(dataDir: string): Record<string, string[]> {
  const handle = openDatabase(databasePath(dataDir))
  try {
    return Object.fromEntries(copyPlan().map((pair) => [pair.name, canonicalRows(handle.db.select().from(pair.sqlite).all())]))
  } finally {
    handle.close()
  }
}

/** Every row of every table in a PostgreSQL database reached through an app, canonical. */
async function postgresContents(ctx: TestApp): Promise<Record<string, string[]>> {
  const db = drizzlePostgres({ client: ctx.postgres.sql })
  const out: Record<string, string[]> = {}
  for (const pair of copyPlan()) out[pair.name] = canonicalRows(await db.select().from(pair.postgres))
  return out
}

describe('the copy plan', () => {
  test('every SQLite table once, each after the tables it references', () => {
    const plan = copyPlan()
    const sqliteTables = Object.values(sqliteSchema).flatMap((value) => (is(value, SQLiteTable) ? [getTableName(value)] : []))
    expect(sqliteTables.length).toBeGreaterThan(15)
    expect(plan.map((p) => p.name).sort()).toEqual(sqliteTables.sort())
    const position = new Map(plan.map((p, i) => [p.name, i]))
    expect(position.get('users')!).toBeLessThan(position.get('auth_sessions')!)
    expect(position.get('auth_sessions')!).toBeLessThan(position.get('refresh_tokens')!)
    expect(position.get('matches')!).toBeLessThan(position.get('game_sessions')!)
    expect(position.get('ledger_transactions')!).toBeLessThan(position.get('ledger_postings')!)
    expect(position.get('ledger_accounts')!).toBeLessThan(position.get('ledger_postings')!)
    expect(plan.filter((p) => p.identity).map((p) => `${p.name}.${p.identity}`).sort()).toEqual(['audit_log.seq', 'ledger_postings.id', 'outbox_events.seq', 'rating_history.id', 'security_events.seq'])
  })

  test('a SQLite table or column without its PostgreSQL twin stops the copy before anything is read', () => {
    const sqliteTables = new Map(copyPlan().map((p) => [p.name, p.sqlite]))
    const postgresTables = new Map(copyPlan().map((p) => [p.name, p.postgres]))
    const extraTable = new Map(sqliteTables).set('player_notes', sqliteTable('player_notes', { id: text('id').primaryKey() }))
    expect(() => copyPlan(extraTable, postgresTables)).toThrow(SchemaMismatchError)
    expect(() => copyPlan(extraTable, postgresTables)).toThrow('SQLite table player_notes has no PostgreSQL twin')
    const extraColumn = new Map(sqliteTables).set('users', sqliteTable('users', { id: text('id').primaryKey(), nickname: text('nickname') }) as never)
    expect(() => copyPlan(extraColumn, postgresTables)).toThrow(/table users has columns .*nickname:nickname.* on SQLite but/)
    // The PostgreSQL-only tables (sealed secrets) are no obstacle: the copy fills them itself or leaves them.
    expect(() => copyPlan(sqliteTables, new Map([...postgresTables, ['server_only', postgresSchema.users]]))).not.toThrow()
  })
})

describe.skipIf(skip)('arena db copy', async () => {
  // A SQLite data dir with some of everything, built through the routes, on
  // SQLite whatever engine the run tests.
  const dataDir = tempDir('arena-copy-')
  cleanUp.push(() => rmSync(dataDir, { recursive: true, force: true }))
  const source = await createArenaApp({}, { dataDir, engine: 'sqlite' })
  const people = await players(source, 4)
  const { game, gameKey } = await createGame(source)
  const cup = await startedTournament(source, game.id, people)
  const [decided, pending] = cup.matches.filter((m) => m.round === 1)
  await playOut(source, game.id, gameKey, cup, people, decided!, decided!.slot2ParticipantId!)
  // One claim of two: a match waiting for the other player, a consumed game session.
  const waiting = playerOf(cup, people, pending!.slot2ParticipantId!)
  expect((await claim(source, game.id, gameKey, playerOf(cup, people, pending!.slot1ParticipantId!), pending!.id, { outcome: 'WIN', winnerParticipantId: pending!.slot1ParticipantId })).decision).toBe('pending')
  const payer = await funded(source, '100')
  const session = await mint(source, payer)
  expect(await (await verify(source, payer, session, { pin: '000111', amount: '1', destinationAddress: someAddress(), idempotencyKey: 'copy-wrong' })).json()).toMatchObject({ valid: false })
  const withdrawn = await verify(source, payer, session, { pin: PIN, amount: '30', destinationAddress: someAddress(), idempotencyKey: 'copy-1' })
  expect(((await withdrawn.json()) as { withdrawal: { status: string } }).withdrawal.status).toBe('signed')
  // A PIN failure that stays counted, a failed login that stays throttled.
  const forgetful = await funded(source, '5')
  expect(await (await verify(source, forgetful, await mint(source, forgetful), { pin: '000111', amount: '1', destinationAddress: someAddress(), idempotencyKey: 'copy-x' })).json()).toMatchObject({ valid: false, attempt: 1 })
  expect((await source.handle(postJson('/api/v1/user/login', { identifier: forgetful.username, password: 'not the password' }))).status).toBe(401)
  // A two-player cup played out: finalizing, its job queued for the next instance to run.
  const duo = await players(source, 2)
  const duoCup = await startedTournament(source, game.id, duo)
  expect((await playOut(source, game.id, gameKey, duoCup, duo, duoCup.matches[0]!, duoCup.matches[0]!.slot1ParticipantId!)).decision).toBe('game_advance_pending_finalization')
  expect((await reportSecurityEvent(source, people[0]!, 'ENV_ROOTED')).status).toBe(202)
  await source.services.securityLog.flush()
  // Evidence on a disputed match (contract §17): a file holding every byte value, which must come across unchanged.
  const dispute = await disputedMatch(source)
  const everyByte = new Uint8Array([...samples.png(), ...Array.from({ length: 256 }, (_, i) => i), 0, 0, 0xff])
  const evidence = await attached(source, dispute.matchId, dispute.p1, everyByte, 'image/png')
  const before = {
    tournament: await tournament(source, cup.id),
    finalizing: await tournament(source, duoCup.id),
    wallet: await walletOf(source, payer),
    events: await poll(source, payer),
    secrets: resolveSecrets(source.config),
  }
  await source.close()
  const sqliteRows = sqliteContents(dataDir)
  const shares = shareFiles(dataDir)
  // An app on the copy runs on a data dir of its own: what it needs of the old one must have come through the database.
  const pgDataDir = tempDir('arena-copy-pg-')
  cleanUp.push(() => rmSync(pgDataDir, { recursive: true, force: true }))

  const target = await emptyDatabase()
  let report: DbCopyReport
  let pg: TestApp

  test('copies every row as it is and the secrets sealed, then finds the ledger, the security and audit chains and the vault intact on the copy', async () => {
    // Three rows per INSERT: every table of more than three rows crosses a batch boundary.
    report = await copyDataDir(sourceConfig(dataDir), targetConfig(pgDataDir, target), { batchRows: 3 })
    expect(report.ledger).toMatchObject({ ok: true, problems: [] })
    expect(report.securityLog).toEqual({ ok: true, rows: sqliteRows.security_events!.length })
    // The operator actions that built the source (games, tournaments, credits) came across chained.
    expect(sqliteRows.audit_log!.length).toBeGreaterThan(0)
    expect(report.auditLog).toEqual({ ok: true, rows: sqliteRows.audit_log!.length })
    // Signing keys and chain key (the operator token comes from the environment here), and every share file.
    expect(shares.length).toBe(3 * sqliteRows.wallets!.length)
    expect(report.vault).toEqual({ ok: true, secrets: ['signing-keys', 'chain-key'], shares: shares.length, problems: [] })
    expect(report.tables.map((t) => t.table)).toEqual([...copyPlan().map((p) => p.name), 'server_secrets'])
    expect(Object.fromEntries(report.tables.map((t) => [t.table, t.rows]))).toEqual({
      ...Object.fromEntries(Object.entries(sqliteRows).map(([table, rows]) => [table, rows.length])),
      server_secrets: 2 + shares.length,
    })
    // Something of every kind came across (the scenario above is not silently empty).
    for (const table of ['users', 'auth_sessions', 'refresh_tokens', 'games', 'tournaments', 'participants', 'matches', 'game_sessions', 'match_claims', 'user_pins', 'pin_locks', 'pin_sessions', 'withdrawals', 'ledger_accounts', 'ledger_transactions', 'ledger_postings', 'wallets', 'outbox_events', 'security_events', 'security_log_head', 'login_throttle', 'jobs', 'evidence_blobs', 'match_evidence']) {
      expect(`${table}: ${sqliteRows[table]!.length > 0}`).toBe(`${table}: true`)
    }
    expect(report.target).toBe(target)
    expect(report.ok).toBe(true)

    pg = await createArenaApp({ ARENA_DATABASE_URL: target, ARENA_MASTER_KEY: MASTER_KEY }, { dataDir: pgDataDir })
    cleanUp.push(() => pg.close())
    expect(pg.storage.engine).toBe('postgres')
    expect(await postgresContents(pg)).toEqual(sqliteRows)
    // The vault holds the data dir's keys, and none of them in the clear.
    expect(pg.secrets).toEqual({ ...before.secrets, signingKeysFrom: 'database' })
    const dump = JSON.stringify(await pg.postgres.sql`SELECT * FROM server_secrets`)
    for (const secret of [before.secrets.chainKey, ...before.secrets.signingKeys.map((key) => key.secret), ...shares.map(([, share]) => share)]) {
      expect(dump).not.toContain(secret)
    }
  }, 60_000)

  test('an app on the copy carries on: logins, tokens, balances, the bracket, event cursors, custody, the chain', async () => {
    // What the SQLite app showed, before this app writes anything.
    expect(await walletOf(pg, payer)).toEqual(before.wallet)
    expect(await tournament(pg, cup.id)).toEqual(before.tournament)
    expect(before.finalizing.status).toBe('finalizing')
    expect(await tournament(pg, duoCup.id)).toEqual(before.finalizing)
    expect(await poll(pg, payer)).toEqual(before.events)
    expect((await poll(pg, payer, `?after=${before.events.cursor}`)).events).toEqual([])
    // The evidence file, byte for byte, as an operator downloads it from the copy.
    const downloaded = await download(pg, evidence.id)
    expect(downloaded.status).toBe(200)
    expect(Buffer.from(await downloaded.arrayBuffer()).equals(Buffer.from(everyByte))).toBe(true)
    expect(await evidenceOf(pg, dispute.matchId)).toEqual([expect.objectContaining({ id: evidence.id, sha256: sha256(everyByte), size: everyByte.byteLength })])
    // Tokens issued on SQLite still work (their sessions and signing keys came along), and every password.
    expect((await me(pg, people[0]!.tokens.accessToken)).status).toBe(200)
    for (const p of [...people, payer, ...duo]) await login(pg, p.username)

    // A cursor from SQLite continues: the next event is numbered after every copied one.
    const db = drizzlePostgres({ client: pg.postgres.sql })
    const [copiedMax] = await db.select({ seq: max(postgresSchema.outboxEvents.seq) }).from(postgresSchema.outboxEvents)
    const credited = await pg.handle(postJson(`/api/v1/admin/wallets/${payer.userId}/credit`, { amount: '5', reference: 'after-copy' }, admin))
    expect(await credited.json()).toEqual({ balance: '75' })
    const next = await poll(pg, payer, `?after=${before.events.cursor}`)
    expect(next.events.map((e) => e.type)).toEqual(['session.login', 'wallet.credited'])
    const [afterMax] = await db.select({ seq: max(postgresSchema.outboxEvents.seq) }).from(postgresSchema.outboxEvents)
    expect(afterMax!.seq!).toBeGreaterThan(copiedMax!.seq!)

    // The queued finalization job runs on the copy.
    expect(await pg.runJobs()).toBe(1)
    expect(await tournament(pg, duoCup.id)).toMatchObject({ status: 'completed', winnerParticipantId: duoCup.matches[0]!.slot1ParticipantId })

    // The waiting match takes its second claim; the bracket moves on PostgreSQL.
    const decision = await claim(pg, game.id, gameKey, waiting, pending!.id, { outcome: 'WIN', winnerParticipantId: pending!.slot1ParticipantId })
    expect(decision.decision).toBe('game_advance')
    const cupFinal = (await tournament(pg, cup.id)).matches.find((m) => m.round === 2)!
    expect([cupFinal.slot1ParticipantId, cupFinal.slot2ParticipantId].sort()).toEqual([decided!.slot2ParticipantId!, pending!.slot1ParticipantId!].sort())

    // Custody signs for a wallet created on SQLite; the idempotency key used there is still taken.
    const second = await mint(pg, payer)
    const reused = await verify(pg, payer, second, { pin: PIN, amount: '20', destinationAddress: someAddress(), idempotencyKey: 'copy-1' })
    expect(reused.status).toBe(409)
    const third = await mint(pg, payer)
    const signed = await verify(pg, payer, third, { pin: PIN, amount: '20', destinationAddress: someAddress(), idempotencyKey: 'copy-2' })
    expect(((await signed.json()) as { withdrawal: { status: string } }).withdrawal.status).toBe('signed')
    expect(await balance(pg, payer)).toBe('55')

    // The security chain continues from the copied head.
    expect((await reportSecurityEvent(pg, payer, 'ENV_DEBUGGER')).status).toBe(202)
    await pg.services.securityLog.flush()
    const chain = await verifySecurityLog(pg.storage.read.security, pg.secrets.chainKey)
    expect(chain.ok).toBe(true)
    expect(chain.rows).toBeGreaterThan(report.securityLog.rows)
    expect((await checkLedger(pg.storage.read.wallet)).ok).toBe(true)

    // The operator commands agree, on PostgreSQL.
    const env = { ARENA_DATA_DIR: pgDataDir, ARENA_DATABASE_URL: target, ARENA_MASTER_KEY: MASTER_KEY }
    const ledger = await run([...SOURCE_COMMAND, 'ledger', 'check'], env)
    expect(ledger.stdout).toStartWith('ok: ')
    expect(ledger.code).toBe(0)
    const verifyLog = await run([...SOURCE_COMMAND, 'security', 'verify-log'], env)
    expect(verifyLog.stdout).toStartWith('ok: ')
    expect(verifyLog.code).toBe(0)
  }, 60_000)

  test('a second copy into the same, now filled, database is refused and writes nothing', async () => {
    const counts = async () => (await postgresContents(pg)) as Record<string, string[]>
    const filled = await counts()
    await expect(copyDataDir(sourceConfig(dataDir), targetConfig(pgDataDir, target))).rejects.toBeInstanceOf(TargetNotEmptyError)
    expect(await counts()).toEqual(filled)
    // The CLI takes ARENA_DATABASE_URL as the target when --to is not given.
    const cli = await run([...SOURCE_COMMAND, 'db', 'copy'], { ARENA_DATA_DIR: dataDir, ARENA_DATABASE_URL: target, ARENA_MASTER_KEY: MASTER_KEY })
    expect(cli.code).toBe(1)
    expect(cli.stderr).toContain('the target database is not empty (rows in ')
    expect(cli.stderr).toContain('users')
    expect(cli.stderr).not.toContain('    at ')
    expect(await counts()).toEqual(filled)
  }, 60_000)

  test('a target an instance already started on is refused: it generated secrets of its own', async () => {
    const early = await emptyDatabase()
    const instanceDir = tempDir('arena-copy-early-')
    cleanUp.push(() => rmSync(instanceDir, { recursive: true, force: true }))
    const instance = await createArenaApp({ ARENA_DATABASE_URL: early, ARENA_MASTER_KEY: MASTER_KEY }, { dataDir: instanceDir })
    await instance.close()
    const refused = await copyDataDir(sourceConfig(dataDir), targetConfig(instanceDir, early)).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(TargetNotEmptyError)
    expect((refused as TargetNotEmptyError).tables).toContain('server_secrets')
  }, 30_000)

  test('the CLI prints the rows per table and the checks, or the same as JSON', async () => {
    // Migrated ahead of time (`arena migrate`) is still empty.
    const migrated = await emptyDatabase()
    expect((await run([...SOURCE_COMMAND, 'migrate'], { ARENA_DATA_DIR: pgDataDir, ARENA_DATABASE_URL: migrated, ARENA_MASTER_KEY: MASTER_KEY })).code).toBe(0)
    const text = await run([...SOURCE_COMMAND, 'db', 'copy', '--to', migrated], { ARENA_DATA_DIR: dataDir, ARENA_MASTER_KEY: MASTER_KEY })
    expect(text.stderr).toBe('')
    expect(text.code).toBe(0)
    const lines = text.stdout.trim().split('\n')
    const total = report.tables.reduce((sum, t) => sum + t.rows, 0)
    expect(lines[0]).toStartWith(`copied ${total} rows from ${databasePath(dataDir)} to postgres://`)
    expect(lines).toContain(`  users${' '.repeat(Math.max(...report.tables.map((t) => t.table.length)) - 'users'.length)}  ${String(sqliteRows.users!.length).padStart(9)}`)
    expect(lines.at(-4)).toStartWith('ledger: ok: ')
    expect(lines.at(-3)).toBe(`security log: ok: ${report.securityLog.rows} events, chain intact`)
    expect(lines.at(-2)).toBe(`audit log: ok: ${report.auditLog.rows} records, chain intact`)
    expect(lines.at(-1)).toBe(`vault: ok: signing-keys, chain-key and ${shares.length} custody shares, sealed under ARENA_MASTER_KEY`)

    const json = await run([...SOURCE_COMMAND, 'db', 'copy', '--json', '--to', await emptyDatabase()], { ARENA_DATA_DIR: dataDir, ARENA_MASTER_KEY: MASTER_KEY })
    expect(json.code).toBe(0)
    const parsed = JSON.parse(json.stdout) as DbCopyReport
    expect(parsed).toMatchObject({ ok: true, tables: report.tables, ledger: { ok: true }, securityLog: { ok: true, rows: report.securityLog.rows }, auditLog: { ok: true, rows: report.auditLog.rows }, vault: report.vault })
  }, 60_000)

  test('no target is exit 2; no master key, or a data dir without a database, is exit 1 and leaves the target untouched', async () => {
    const none = await run([...SOURCE_COMMAND, 'db', 'copy'], { ARENA_DATA_DIR: dataDir, ARENA_MASTER_KEY: MASTER_KEY })
    expect(none.code).toBe(2)
    expect(none.stderr).toContain('Usage: npx arena db copy')
    const untouched = await emptyDatabase()
    const keyless = await run([...SOURCE_COMMAND, 'db', 'copy', '--to', untouched], { ARENA_DATA_DIR: dataDir })
    expect(keyless.code).toBe(1)
    expect(keyless.stderr).toContain('ARENA_DATABASE_URL requires ARENA_MASTER_KEY')
    const empty = tempDir('arena-copy-empty-')
    cleanUp.push(() => rmSync(empty, { recursive: true, force: true }))
    const nothing = await run([...SOURCE_COMMAND, 'db', 'copy', '--to', untouched], { ARENA_DATA_DIR: empty, ARENA_MASTER_KEY: MASTER_KEY })
    expect(nothing.code).toBe(1)
    expect(nothing.stderr).toContain('no database in the data dir')
    expect(await Bun.file(databasePath(empty)).exists()).toBe(false)
    // Not even migrated: the target is as it was.
    const pool = openPool(untouched, { max: 1 })
    try {
      expect([...(await pool.sql`SELECT tablename FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')`)]).toEqual([])
    } finally {
      await pool.sql.end()
    }
  }, 30_000)
})

describe.skipIf(skip)('sequences after the copy', () => {
  test('a number SQLite issued for rows deleted since (pruned events) is never issued again', async () => {
    const dataDir = tempDir('arena-copy-pruned-')
    cleanUp.push(() => rmSync(dataDir, { recursive: true, force: true }))
    const source = await createArenaApp({}, { dataDir, engine: 'sqlite' })
    const [p] = await players(source, 1)
    await source.handle(postJson(`/api/v1/admin/wallets/${p!.userId}/credit`, { amount: '1', reference: 'before-prune' }, admin))
    const seen = await poll(source, p!)
    // account.code_sent (register), session.login, wallet.credited.
    expect(seen.events.length).toBe(3)
    source.clock.advance((source.config.eventRetentionDays + 1) * 86_400_000)
    expect(await source.services.events.prune()).toBe(3)
    await source.close()

    const target = await emptyDatabase()
    const report = await copyDataDir(sourceConfig(dataDir), targetConfig(dataDir, target))
    expect(report.tables.find((t) => t.table === 'outbox_events')!.rows).toBe(0)
    const pg = await createArenaApp({ ARENA_DATABASE_URL: target, ARENA_MASTER_KEY: MASTER_KEY }, { dataDir })
    cleanUp.push(() => pg.close())
    await pg.handle(postJson(`/api/v1/admin/wallets/${p!.userId}/credit`, { amount: '1', reference: 'after-copy' }, admin))
    // The cursor the player held before the prune still reads on, and sees only the new event.
    const next = await poll(pg, p!, `?after=${seen.cursor}`)
    expect(next.events.map((e) => e.data.reference)).toEqual(['after-copy'])
  }, 60_000)
})
