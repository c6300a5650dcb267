// Contract §7, secrets rotate. Invariants:
// - every access token names the key that signed it (`kid`);
// - a new key can be made current while tokens signed by the previous one keep
//   verifying until they expire (and, expired, still rotate through
//   /auth/validate within the refresh lifetime);
// - a key dropped on purpose (a leak) stops verifying at once;
// - the security-event chain has its own key: no signing-key change, by
//   `arena keys rotate` or by a new ARENA_JWT_SECRET, makes verify-log report
//   tampering, and chains written before keys had ids keep verifying.
// With PostgreSQL the keys live in the database (src/vault/secrets.ts) and a
// rotated key starts signing only once every instance had the time to learn
// it; the same invariants hold.
import { afterEach, describe, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { SignJWT } from 'jose'
import { verifySecurityLog } from '../../src/modules/security/event-log'
import { legacyChainKey, resolveSecrets, rotateSigningKey, SECRETS_FILE, type SigningKey } from '../../src/secrets'
import { loadConfig } from '../../src/config'
import { loadSecrets, vaultFor } from '../../src/services'
import { KEY_ACTIVATION_DELAY_MS, rotateVaultSigningKey } from '../../src/vault/secrets'
import { createTestApp, onEngine, postJson, tempDir, type TestApp } from '../helpers/app'
import { describeOnEngine } from '../helpers/engine'
import { bearer, login, me, registerUser, rotate, type Tokens } from '../helpers/auth'
import { run, SOURCE_COMMAND } from '../helpers/process'

const apps: TestApp[] = []
afterEach(() => {
  for (const app of apps.splice(0)) app.close()
})
async function app(dataDir: string, env: Record<string, string> = {}): Promise<TestApp> {
  const created = await createTestApp({ dataDir, env })
  apps.push(created)
  return created
}

const kidOf = (token: string) => (JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as { kid?: string }).kid
/** The app's database for a subcommand: its data dir, and on PostgreSQL its ARENA_DATABASE_URL and ARENA_MASTER_KEY. */
const databaseEnv = (ctx: TestApp): Record<string, string> => ({ ARENA_DATA_DIR: ctx.config.dataDir, ...ctx.databaseEnv })
const arena = (ctx: TestApp, ...args: string[]) => run([...SOURCE_COMMAND, ...args], databaseEnv(ctx))
/** The keyring is re-read from the data dir (or the database) at most once a second. */
const keyringNoticed = () => Bun.sleep(1100)
/** Where `arena keys` says the keys are. */
const KEYS_FROM = onEngine('sqlite') ? 'data dir' : 'database'

interface RotationReport {
  current: string
  verifying: string[]
  /** PostgreSQL: the new key, and when it starts signing. */
  next?: { kid: string; signsFrom: string }
}
/** Until the app signs with a rotated key: the next re-read of the file; in the database, the key's activation too. */
async function newKeySigns(report: RotationReport): Promise<void> {
  if (report.next) await Bun.sleep(Math.max(0, Date.parse(report.next.signsFrom) - Date.now()))
  await keyringNoticed()
}
/** The keys as stored now: the data dir's file, or the app's database. */
async function storedKeys(ctx: TestApp): Promise<readonly SigningKey[]> {
  return (await loadSecrets(ctx.config, ctx.storage)).signingKeys
}

async function reportEvents(ctx: TestApp, tokens: Tokens, n: number) {
  for (let i = 0; i < n; i++) {
    const res = await ctx.handle(postJson('/api/v1/security/events', { kind: 'KEY_ROTATION_PROBE', details: { i } }, bearer(tokens.accessToken)))
    expect(res.status).toBe(202)
  }
  await ctx.services.securityLog.flush()
}

describe('keys from the data dir: arena keys rotate', () => {
  test('a running server signs with the new key within a second; tokens of the old key verify until they expire', async () => {
    const dataDir = tempDir('arena-keys-')
    const ctx = await app(dataDir)
    const before = await login(ctx, (await registerUser(ctx)).username)
    const oldKid = kidOf(before.accessToken)!
    expect(oldKid).toBe(ctx.secrets.signingKeys[0]!.kid)

    const rotated = await arena(ctx, 'keys', 'rotate', '--json')
    expect(rotated.code).toBe(0)
    const report = JSON.parse(rotated.stdout) as RotationReport
    // The data dir's new key signs at once; the database's verifies first and signs from `next.signsFrom`.
    expect(report.next === undefined).toBe(onEngine('sqlite'))
    const newKid = report.next?.kid ?? report.current
    expect(report.verifying).toEqual(report.next ? [newKid, oldKid] : [oldKid, newKid])
    await newKeySigns(report)

    const after = await login(ctx, (await registerUser(ctx)).username)
    expect(kidOf(after.accessToken)).toBe(newKid)
    expect((await me(ctx, before.accessToken)).status).toBe(200)
    expect((await me(ctx, after.accessToken)).status).toBe(200)

    // Expired, the old key's token is refused as any expired token is, but
    // still rotates into a pair signed by the new key.
    ctx.clock.advance(ctx.config.accessTtlS * 1000)
    expect((await me(ctx, before.accessToken)).status).toBe(401)
    const refreshed = await rotate(ctx, before)
    expect(refreshed.status).toBe(200)
    expect(kidOf(((await refreshed.json()) as Tokens).accessToken)).toBe(newKid)

    const listed = await arena(ctx, 'keys', 'list', '--json')
    expect(JSON.parse(listed.stdout)).toEqual({ current: newKid, verifying: [oldKid, newKid], from: KEYS_FROM })
  }, 30_000)

  test('--drop-previous (a leaked key): tokens of every other key are refused at once', async () => {
    const dataDir = tempDir('arena-keys-')
    const ctx = await app(dataDir)
    const before = await login(ctx, (await registerUser(ctx)).username)
    expect((await me(ctx, before.accessToken)).status).toBe(200)
    const dropped = await arena(ctx, 'keys', 'rotate', '--drop-previous', '--json')
    expect(JSON.parse(dropped.stdout).verifying).toHaveLength(1)
    await keyringNoticed()
    // The token was verified (and remembered) before: remembering must not outlive its key.
    expect((await me(ctx, before.accessToken)).status).toBe(401)
    expect((await rotate(ctx, before)).status).toBe(401)
  }, 30_000)

  test('a replaced key stops verifying once the refresh lifetime has passed since it was replaced, where it is stored and in a running server', async () => {
    const dataDir = tempDir('arena-keys-')
    const env = { ARENA_REFRESH_TTL_S: '3600' }
    const ctx = await app(dataDir, env)
    const before = await login(ctx, (await registerUser(ctx)).username)
    // Replaced (in the database: the new key took over) 3598 s ago.
    if (onEngine('sqlite')) rotateSigningKey(ctx.config, { dropOthers: false, now: new Date(Date.now() - 3_598_000) })
    else await rotateVaultSigningKey(ctx.config, vaultFor(ctx.config, ctx.storage), { dropOthers: false, now: new Date(Date.now() - 3_598_000 - KEY_ACTIVATION_DELAY_MS) })
    // Two seconds before the end of its refresh lifetime, the replaced key still verifies...
    expect(await storedKeys(ctx)).toHaveLength(2)
    expect((await me(ctx, before.accessToken)).status).toBe(200)
    // ...and once they have passed, the running server drops it without any write to where the keys are.
    await Bun.sleep(2100)
    await keyringNoticed()
    expect(await storedKeys(ctx)).toHaveLength(1)
    expect((await me(ctx, before.accessToken)).status).toBe(401)
  }, 30_000)

  test('rotating never breaks the security-event chain', async () => {
    const dataDir = tempDir('arena-keys-')
    const ctx = await app(dataDir)
    const tokens = await login(ctx, (await registerUser(ctx)).username)
    await reportEvents(ctx, tokens, 3)
    expect((await arena(ctx, 'keys', 'rotate')).code).toBe(0)
    await keyringNoticed()
    const fresh = await login(ctx, (await registerUser(ctx)).username)
    await reportEvents(ctx, fresh, 3)
    const verified = await arena(ctx, 'security', 'verify-log', '--json')
    expect(verified.code).toBe(0)
    expect(JSON.parse(verified.stdout)).toEqual({ ok: true, rows: 6 })
  }, 30_000)
})

describe('keys from the environment', () => {
  const first = 'a'.repeat(40)
  const second = 'b'.repeat(40)

  test('ARENA_JWT_PREVIOUS_SECRET keeps the replaced key verifying; without it its tokens are refused', async () => {
    const dataDir = tempDir('arena-keys-')
    const old = await app(dataDir, { ARENA_JWT_SECRET: first })
    const user = await registerUser(old)
    const before = await login(old, user.username)
    old.close()
    apps.splice(apps.indexOf(old), 1)

    const rolled = await app(dataDir, { ARENA_JWT_SECRET: second, ARENA_JWT_PREVIOUS_SECRET: first })
    expect((await me(rolled, before.accessToken)).status).toBe(200)
    const after = await login(rolled, user.username)
    expect(kidOf(after.accessToken)).not.toBe(kidOf(before.accessToken))
    expect(kidOf(after.accessToken)).toBe(rolled.secrets.signingKeys.at(-1)!.kid)

    const only = await app(dataDir, { ARENA_JWT_SECRET: second })
    expect((await me(only, before.accessToken)).status).toBe(401)
    expect((await me(only, after.accessToken)).status).toBe(200)
  })

  test('a new ARENA_JWT_SECRET never breaks the security-event chain', async () => {
    const dataDir = tempDir('arena-keys-')
    const old = await app(dataDir, { ARENA_JWT_SECRET: first })
    await reportEvents(old, await login(old, (await registerUser(old)).username), 3)
    const next = await app(dataDir, { ARENA_JWT_SECRET: second })
    await reportEvents(next, await login(next, (await registerUser(next)).username), 2)
    const verified = await run([...SOURCE_COMMAND, 'security', 'verify-log', '--json'], { ...databaseEnv(next), ARENA_JWT_SECRET: second })
    expect(verified.code).toBe(0)
    expect(JSON.parse(verified.stdout)).toEqual({ ok: true, rows: 5 })
  })

  test('a fresh data dir gets a random chain key, not one derived from ARENA_JWT_SECRET; a data dir the first edition wrote keeps its derived one', () => {
    const fresh = tempDir('arena-keys-')
    expect(resolveSecrets(loadConfig({ ARENA_DATA_DIR: fresh, ARENA_JWT_SECRET: first })).chainKey).not.toBe(legacyChainKey(first))
    // A first-edition data dir with an environment secret: a database, no secrets.json.
    const upgraded = tempDir('arena-keys-')
    writeFileSync(join(upgraded, 'arena.sqlite'), '')
    expect(resolveSecrets(loadConfig({ ARENA_DATA_DIR: upgraded, ARENA_JWT_SECRET: first })).chainKey).toBe(legacyChainKey(first))
  })

  test('a token whose kid names one key of the keyring but was signed by another is refused', async () => {
    const dataDir = tempDir('arena-keys-')
    const rolled = await app(dataDir, { ARENA_JWT_SECRET: second, ARENA_JWT_PREVIOUS_SECRET: first })
    const token = await login(rolled, (await registerUser(rolled)).username)
    const [, payload] = token.accessToken.split('.')
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString()) as Record<string, unknown>
    const kids = rolled.secrets.signingKeys.map((key) => key.kid)
    const swapped = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid: kids[1]!, typ: 'at+jwt' }).sign(new TextEncoder().encode(first))
    expect((await me(rolled, swapped)).status).toBe(401)
    const matching = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid: kids[0]!, typ: 'at+jwt' }).sign(new TextEncoder().encode(first))
    expect((await me(rolled, matching)).status).toBe(200)
  })

  test('arena keys rotate explains how to rotate a key that comes from the environment, and changes nothing', async () => {
    const dataDir = tempDir('arena-keys-')
    const result = await run([...SOURCE_COMMAND, 'keys', 'rotate'], { ARENA_DATA_DIR: dataDir, ARENA_JWT_SECRET: first })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('ARENA_JWT_PREVIOUS_SECRET')
  })
})

// The first edition wrote data dirs only: PostgreSQL has no such past.
describeOnEngine('sqlite', 'a data dir written before keys had ids', () => {
  test('its tokens (no kid) keep verifying and its security-event chain keeps verifying', async () => {
    const dataDir = tempDir('arena-keys-')
    const legacySecret = 'l'.repeat(48)
    writeFileSync(join(dataDir, SECRETS_FILE), JSON.stringify({ jwtSecret: legacySecret }), { mode: 0o600 })
    const ctx = await app(dataDir)
    // The upgrade kept the old secret as the first key and derived the chain key as the first edition did.
    const secrets = resolveSecrets(ctx.config)
    expect(secrets.signingKeys.map((key) => key.secret)).toEqual([legacySecret])
    // The first edition's derivation, pinned: HMAC-SHA256(secret, 'arena security-event chain v1').
    expect(secrets.chainKey).toBe('6bde101b23ce92f4da0526c1e93c76e893b5655fa6cc318c048f0f7b2e672140')
    expect(legacyChainKey(legacySecret)).toBe(secrets.chainKey)

    const tokens = await login(ctx, (await registerUser(ctx)).username)
    const claims = JSON.parse(Buffer.from(tokens.accessToken.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>
    const kidless = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' }).sign(new TextEncoder().encode(legacySecret))
    expect((await me(ctx, kidless)).status).toBe(200)
    const forged = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' }).sign(new TextEncoder().encode('x'.repeat(48)))
    expect((await me(ctx, forged)).status).toBe(401)

    await reportEvents(ctx, tokens, 2)
    expect(await verifySecurityLog(ctx.services.storage.read.security, legacyChainKey(legacySecret))).toEqual({ ok: true, rows: 2 })
    expect((await arena(ctx, 'keys', 'rotate')).code).toBe(0)
    expect((await arena(ctx, 'security', 'verify-log')).code).toBe(0)
  }, 30_000)
})
