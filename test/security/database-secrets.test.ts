// Contract §12, secrets with PostgreSQL. Invariants:
// - instances on one database share the signing keys, the chain key and the
//   operator token: generated once, by whichever starts first, even when they
//   start at the same moment;
// - every instance verifies a token any other signed, across a key rotation
//   too: a rotated key verifies everywhere before anyone signs with it;
// - the database holds them only sealed under ARENA_MASTER_KEY: its dump
//   holds none of them, and another master key opens none of them;
// - ARENA_JWT_SECRET still takes the signing keys from the environment;
// - a data dir's secrets and shares carry over into the vault (db copy).
// SQLite keeps its secrets in the data dir; its vault refuses any call.
import { afterAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { ed25519 } from '@noble/curves/ed25519.js'
import { base58 } from '@scure/base'
import { SignJWT } from 'jose'
import { loadConfig } from '../../src/config'
import { openStorage } from '../../src/db/open'
import { inProcessWakeups } from '../../src/modules/events/wakeups'
import { LocalFrostCustody } from '../../src/modules/wallet/custody'
import { resolveSecrets, rotateSigningKey, type Secrets } from '../../src/secrets'
import { custodySharesFor, loadSecrets, openStorageWithSecrets, vaultFor } from '../../src/services'
import { createLogger } from '../../src/shared/logger'
import { MasterKey } from '../../src/shared/sealed'
import { importDataDirSecrets } from '../../src/vault/import'
import { KEY_ACTIVATION_DELAY_MS, keyring, VAULT_SECRETS } from '../../src/vault/secrets'
import { createTestApp, remote, tempDir, testDatabaseEnv, type Handler, type TestApp } from '../helpers/app'
import { describeOnEngine } from '../helpers/engine'
import { bearer, login, me, registerUser } from '../helpers/auth'
import { run, SOURCE_COMMAND, startServe } from '../helpers/process'

const apps: TestApp[] = []
afterAll(async () => {
  for (const app of apps.splice(0)) await app.close()
})
async function instance(env: Record<string, string>): Promise<TestApp> {
  const app = await createTestApp({ env })
  apps.push(app)
  return app
}
/** Two instances on one fresh database: what a load balancer spreads requests over. */
async function twoInstances(extra: Record<string, string> = {}) {
  const env = { ...(await testDatabaseEnv()), ...extra }
  return { env, a: await instance(env), b: await instance(env) }
}

const kidOf = (token: string) => (JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as { kid?: string }).kid
/** The instances re-read the keys every second. */
const keyringNoticed = () => Bun.sleep(1200)
const arena = (env: Record<string, string>, ...args: string[]) => run([...SOURCE_COMMAND, ...args], env)
const dump = async (ctx: TestApp) => JSON.stringify(await ctx.postgres.sql`SELECT * FROM server_secrets`)

/** Every spelling of a secret a careless store could have written. */
function spellings(secret: string): string[] {
  const forms = [secret, Buffer.from(secret).toString('base64'), Buffer.from(secret).toString('base64url'), Buffer.from(secret).toString('hex')]
  if (/^[0-9a-f]+$/.test(secret)) forms.push(Buffer.from(secret, 'hex').toString('base64'), Buffer.from(secret, 'hex').toString('base64url'))
  return forms
}

/** What every instance must agree on: all but whether this one made the operator token. */
const shared = ({ adminTokenCreated: _, ...secrets }: Secrets) => secrets

describeOnEngine('postgres', 'secrets in PostgreSQL', () => {
  test('instances starting at the same moment generate every secret once and agree on it', async () => {
    const env = { ARENA_DATA_DIR: tempDir(), ...(await testDatabaseEnv()) }
    const config = loadConfig(env)
    const storages = await Promise.all(Array.from({ length: 4 }, () => openStorage(config, { logger: createLogger('silent'), wakeups: inProcessWakeups() })))
    try {
      const all = await Promise.all(storages.map((storage) => loadSecrets(config, storage, { generateOperatorToken: true })))
      for (const secrets of all) expect(shared(secrets)).toEqual(shared(all[0]!))
      // Exactly one of them made the operator token, and only it says so at start.
      expect(all.filter((secrets) => secrets.adminTokenCreated)).toHaveLength(1)
      expect(all[0]!).toMatchObject({ signingKeysFrom: 'database', adminTokenGenerated: true })
      expect(all[0]!.signingKeys).toHaveLength(1)
      expect(all[0]!.chainKey).toMatch(/^[0-9a-f]{64}$/)
      const rows = await storages[0]!.read.vault.list('')
      expect(rows.map((row) => row.name)).toEqual([VAULT_SECRETS.adminToken, VAULT_SECRETS.chainKey, VAULT_SECRETS.signingKeys])
    } finally {
      await Promise.all(storages.map((storage) => storage.close()))
    }
  }, 30_000)

  test('a token one instance signs verifies on the other, both ways', async () => {
    const { a, b } = await twoInstances()
    expect(shared(b.secrets)).toEqual(shared(a.secrets))
    const user = await registerUser(a)
    const fromA = await login(a, user.username)
    const fromB = await login(b, user.username)
    expect((await me(b, fromA.accessToken)).status).toBe(200)
    expect((await me(a, fromB.accessToken)).status).toBe(200)
    expect(kidOf(fromA.accessToken)).toBe(kidOf(fromB.accessToken))
  }, 30_000)

  test('arena keys rotate: the new key verifies on every instance at once, signs only once all had the time to learn it, and old tokens keep verifying', async () => {
    const { env, a, b } = await twoInstances()
    const user = await registerUser(a)
    const before = await login(a, user.username)
    const oldKid = kidOf(before.accessToken)!

    const rotated = await arena(env, 'keys', 'rotate', '--json')
    expect(rotated.code).toBe(0)
    const report = JSON.parse(rotated.stdout) as { current: string; verifying: string[]; from: string; next: { kid: string; signsFrom: string } }
    expect(report).toMatchObject({ current: oldKid, verifying: [report.next.kid, oldKid], from: 'database' })
    const signsFrom = Date.parse(report.next.signsFrom)
    expect(signsFrom - Date.now()).toBeGreaterThan(KEY_ACTIVATION_DELAY_MS - 3000)
    const listed = JSON.parse((await arena(env, 'keys', 'list', '--json')).stdout)
    expect(listed).toEqual({ current: oldKid, verifying: [report.next.kid, oldKid], from: 'database' })
    await keyringNoticed()

    // Both know the new key, neither signs with it yet.
    for (const ctx of [a, b]) expect(ctx.services.signingKeys.current().map((key) => key.kid)).toEqual([report.next.kid, oldKid])
    expect(kidOf((await login(b, user.username)).accessToken)).toBe(oldKid)
    // A token under the new key (what the first instance to switch will issue) already verifies on both.
    const stored = JSON.parse(await vaultText(a, VAULT_SECRETS.signingKeys)) as { secret: string }[]
    const newSecret = stored.at(-1)!.secret
    const claims = JSON.parse(Buffer.from(before.accessToken.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>
    const early = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid: report.next.kid, typ: 'at+jwt' }).sign(new TextEncoder().encode(newSecret))
    for (const ctx of [a, b]) expect((await me(ctx, early)).status).toBe(200)

    await Bun.sleep(Math.max(0, signsFrom - Date.now()) + 1200)
    const afterA = await login(a, user.username)
    const afterB = await login(b, user.username)
    expect([kidOf(afterA.accessToken), kidOf(afterB.accessToken)]).toEqual([report.next.kid, report.next.kid])
    for (const ctx of [a, b]) {
      expect((await me(ctx, before.accessToken)).status).toBe(200)
      expect((await me(ctx, afterA.accessToken)).status).toBe(200)
      expect((await me(ctx, afterB.accessToken)).status).toBe(200)
    }
  }, 40_000)

  test('two arena serve processes on one database: each verifies the other\'s tokens and picks up a rotation made elsewhere within a second', async () => {
    const env = { ARENA_DATA_DIR: tempDir(), ...(await testDatabaseEnv()) }
    const servers = await Promise.all([startServe([...SOURCE_COMMAND, 'serve'], env), startServe([...SOURCE_COMMAND, 'serve'], env)])
    try {
      const [one, two] = servers.map((server) => remote(() => server.url)) as [Handler, Handler]
      const user = await registerUser(one)
      const before = await login(one, user.username)
      expect((await me(two, before.accessToken)).status).toBe(200)
      // Neither server handles a request in between: the refresh runs on its own.
      const dropped = JSON.parse((await arena(env, 'keys', 'rotate', '--drop-previous', '--json')).stdout) as { current: string }
      await keyringNoticed()
      for (const ctx of [one, two]) expect((await me(ctx, before.accessToken)).status).toBe(401)
      const after = await login(two, user.username)
      expect(kidOf(after.accessToken)).toBe(dropped.current)
      expect((await me(one, after.accessToken)).status).toBe(200)
    } finally {
      await Promise.all(servers.map((server) => server.signal('SIGTERM')))
    }
    for (const server of servers) expect(server.lines.filter((line) => line.level === 'error')).toEqual([])
  }, 60_000)

  test('arena keys rotate --drop-previous: the new key signs at once and the old tokens are refused everywhere', async () => {
    const { env, a, b } = await twoInstances()
    const user = await registerUser(a)
    const before = await login(a, user.username)
    const dropped = await arena(env, 'keys', 'rotate', '--drop-previous', '--json')
    expect(dropped.code).toBe(0)
    const report = JSON.parse(dropped.stdout) as { current: string; verifying: string[]; next?: unknown }
    expect(report.verifying).toEqual([report.current])
    expect(report.next).toBeUndefined()
    await keyringNoticed()
    for (const ctx of [a, b]) expect((await me(ctx, before.accessToken)).status).toBe(401)
    const after = await login(b, user.username)
    expect(kidOf(after.accessToken)).toBe(report.current)
    expect((await me(a, after.accessToken)).status).toBe(200)
  }, 30_000)

  test('a dump of the database holds no secret; another master key opens none and stops the start', async () => {
    const { env, a } = await twoInstances()
    const text = await dump(a)
    const secrets = [...a.secrets.signingKeys.map((key) => key.secret), a.secrets.chainKey, a.secrets.adminToken!]
    expect(secrets.every((secret) => secret.length >= 32)).toBe(true)
    for (const secret of secrets) for (const spelling of spellings(secret)) expect(text).not.toContain(spelling)

    // An instance started with another key: its start fails, naming the secret that did not open.
    const otherKey = loadConfig({ ARENA_DATA_DIR: tempDir(), ...env, ARENA_MASTER_KEY: MasterKey.generateHex() })
    await expect(openStorageWithSecrets(otherKey, { logger: createLogger('silent'), wakeups: inProcessWakeups() })).rejects.toThrow(
      /the sealed secret "[a-z-]+" does not open: sealed under another master key/,
    )
  }, 30_000)

  test('a data dir\'s secrets and custody shares carried into the vault (arena db copy): the same keys, chain key and operator token, every wallet still signs', async () => {
    // A SQLite data dir with a rotated key, an operator token and two wallets.
    const dataDir = tempDir('arena-import-')
    const sqliteConfig = loadConfig({ ARENA_DATA_DIR: dataDir })
    resolveSecrets(sqliteConfig, { generateOperatorToken: true })
    rotateSigningKey(sqliteConfig, { dropOthers: false })
    const before = resolveSecrets(sqliteConfig)
    const fileCustody = new LocalFrostCustody(join(dataDir, 'custody'))
    const wallets = [await fileCustody.createWallet(), await fileCustody.createWallet()]

    const config = loadConfig({ ARENA_DATA_DIR: tempDir(), ...(await testDatabaseEnv()) })
    const storage = await openStorage(config, { logger: createLogger('silent'), wakeups: inProcessWakeups() })
    try {
      const vault = vaultFor(config, storage)
      expect(await importDataDirSecrets(sqliteConfig, vault)).toEqual({ secrets: [VAULT_SECRETS.signingKeys, VAULT_SECRETS.chainKey, VAULT_SECRETS.adminToken], shares: 6 })
      const after = await loadSecrets(config, storage)
      expect(after).toEqual({ ...before, signingKeysFrom: 'database' })
      const message = new TextEncoder().encode('arena-withdrawal-v1\nwdr_x\nUSDC\n1\naddress')
      const custody = new LocalFrostCustody(custodySharesFor(config, storage))
      for (const wallet of wallets) {
        expect(ed25519.verify(base58.decode(await custody.signWithdrawal(wallet.keyRef, message)), message, base58.decode(wallet.address))).toBe(true)
      }
      // Nothing is overwritten: a second import (or an instance that generated its own first) is refused.
      await expect(importDataDirSecrets(sqliteConfig, vault)).rejects.toThrow(/the secret "signing-keys" exists already/)
    } finally {
      await storage.close()
    }
  }, 30_000)

  test('ARENA_JWT_SECRET still provides the signing keys; arena keys rotate says how to rotate it instead', async () => {
    const jwt = 'j'.repeat(40)
    const { env, a, b } = await twoInstances({ ARENA_JWT_SECRET: jwt })
    expect(a.secrets.signingKeysFrom).toBe('environment')
    expect(a.secrets.signingKeys.map((key) => key.secret)).toEqual([jwt])
    expect((await a.postgres.sql`SELECT name FROM server_secrets WHERE name = ${VAULT_SECRETS.signingKeys}`).length).toBe(0)
    const user = await registerUser(a)
    expect((await me(b, (await login(a, user.username)).accessToken)).status).toBe(200)
    const refused = await arena(env, 'keys', 'rotate')
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('ARENA_JWT_PREVIOUS_SECRET')
    expect(JSON.parse((await arena(env, 'keys', 'list', '--json')).stdout)).toMatchObject({ from: 'environment' })
  }, 30_000)

  test('the operator token: generated into the database in local, the same for every instance and for arena admin-token', async () => {
    const { env, a, b } = await twoInstances()
    expect(a.secrets.adminTokenGenerated).toBe(true)
    expect(b.secrets.adminToken).toBe(a.secrets.adminToken!)
    const printed = await arena(env, 'admin-token')
    expect(printed.code).toBe(0)
    expect(printed.stdout.trim()).toBe(a.secrets.adminToken!)
    const res = await b.handle(new Request('http://localhost/api/v1/admin/games', { method: 'POST', headers: { 'x-admin-token': a.secrets.adminToken!, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Duel' }) }))
    expect(res.status).toBe(201)
  }, 30_000)

  test('security verify-log uses the database\'s chain key', async () => {
    const { env, a } = await twoInstances()
    const user = await registerUser(a)
    const tokens = await login(a, user.username)
    await a.handle(new Request('http://localhost/api/v1/security/events', { method: 'POST', headers: { ...bearer(tokens.accessToken), 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'PROBE', details: {} }) }))
    await a.services.securityLog.flush()
    const verified = await arena(env, 'security', 'verify-log', '--json')
    expect(verified.code).toBe(0)
    expect(JSON.parse(verified.stdout)).toMatchObject({ ok: true })
    expect((JSON.parse(verified.stdout) as { rows: number }).rows).toBeGreaterThan(0)
  }, 30_000)
})

// Pure: how a running instance arranges the vault's keys, on either engine.
test('the keyring of database keys: a pending key verifies from before the signing one, and takes over when due; a replaced key drops out after the refresh lifetime', () => {
  const config = { refreshTtlS: 3600 }
  const t0 = Date.parse('2026-11-22T10:00:00.000Z')
  const at = (ms: number) => new Date(t0 + ms).toISOString()
  const stored = [
    { secret: 'old'.repeat(16), createdAt: at(-100_000), retiredAt: at(5000) },
    { secret: 'new'.repeat(16), createdAt: at(0), activatesAt: at(5000) },
  ]
  const secrets = (now: number) => keyring(stored, config, t0 + now).map((key) => key.secret)
  expect(secrets(0)).toEqual(['new'.repeat(16), 'old'.repeat(16)])
  expect(secrets(4999)).toEqual(['new'.repeat(16), 'old'.repeat(16)])
  expect(secrets(5000)).toEqual(['old'.repeat(16), 'new'.repeat(16)])
  expect(secrets(5000 + 3600_000 - 1)).toEqual(['old'.repeat(16), 'new'.repeat(16)])
  expect(secrets(5000 + 3600_000)).toEqual(['new'.repeat(16)])
})

/** A secret as the vault holds it, opened with the instance's master key. */
async function vaultText(ctx: TestApp, name: string): Promise<string> {
  const [row] = await ctx.postgres.sql<{ sealed: string }[]>`SELECT sealed FROM server_secrets WHERE name = ${name}`
  return ctx.config.masterKey!.open(row!.sealed, name)
}

describeOnEngine('sqlite', 'secrets with SQLite', () => {
  test('stay in the data dir: the vault refuses every call', async () => {
    const ctx = await instance({})
    expect(ctx.secrets.signingKeysFrom).toBe('file')
    await expect(ctx.storage.read.vault.get(VAULT_SECRETS.chainKey)).rejects.toThrow(/PostgreSQL only/)
    await expect(ctx.storage.write((tx) => tx.vault.put(VAULT_SECRETS.chainKey, 'v1.x.y', new Date()))).rejects.toThrow(/PostgreSQL only/)
  })
})
