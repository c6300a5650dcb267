// Contract §12, custody with PostgreSQL. Invariants:
// - the key shares the server holds are kept in the database, one sealed row
//   per share, so a wallet made through one instance signs through any other;
// - the database holds no share in the clear: its dump contains none of a
//   share's secret, in any spelling;
// - custody mode `cosigner` keeps working: the co-signer process keeps its
//   share in its own data dir as before, the server's shares are in the
//   database, and the recovery share is exported from there once.
import { afterAll, describe, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { ed25519 } from '@noble/curves/ed25519.js'
import { base58 } from '@scure/base'
import { eq } from 'drizzle-orm'
import { withdrawalMessage, type KeyShare } from '../../src/modules/wallet/frost'
import { shareName } from '../../src/modules/wallet/key-shares'
import { createTestApp, req, tempDir, testDatabaseEnv, type TestApp } from '../helpers/app'
import { describeOnEngine } from '../helpers/engine'
import { ADMIN_TOKEN, type Player } from '../helpers/arena'
import { run, SOURCE_COMMAND, startServe, type ServerProcess } from '../helpers/process'
import { funded, mint, PIN, someAddress, verify } from '../helpers/purchases'

const apps: TestApp[] = []
const processes: ServerProcess[] = []
afterAll(async () => {
  processes.forEach((p) => p.proc.kill('SIGKILL'))
  for (const app of apps.splice(0)) await app.close()
})

/** Two instances on one fresh database, as behind a load balancer. */
async function twoInstances(extra: Record<string, string> = {}) {
  const env = { ...(await testDatabaseEnv()), ARENA_ADMIN_TOKEN: ADMIN_TOKEN, ...extra }
  const a = await createTestApp({ env })
  const b = await createTestApp({ env })
  apps.push(a, b)
  return { env, a, b }
}

const authz = (p: Player) => ({ authorization: `Bearer ${p.tokens.accessToken}` })

/** The player's wallet address, the wallet made on first use through `ctx`. */
async function walletOn(ctx: TestApp, p: Player): Promise<{ address: string; keyRef: string }> {
  const { address } = (await (await ctx.handle(req('/api/v1/wallet', { headers: authz(p) }))).json()) as { address: string }
  const keyRef = (await ctx.services.wallet.keyRefOf(p.userId))!
  return { address, keyRef }
}

/** A withdrawal asked for through `ctx`; its signature checked against the wallet's address. */
async function withdrawOn(ctx: TestApp, p: Player, address: string, idempotencyKey: string) {
  const res = await verify(ctx, p, await mint(ctx, p), { pin: PIN, amount: '10', destinationAddress: someAddress(), idempotencyKey })
  expect(res.status).toBe(200)
  const { withdrawal } = (await res.json()) as { withdrawal: { id: string; status: string; signature?: string } }
  expect(withdrawal.status).toBe('signed')
  const { withdrawals } = ctx.peek.tables
  const [row] = await ctx.peek.db.select().from(withdrawals).where(eq(withdrawals.id, withdrawal.id))
  const message = withdrawalMessage({ id: row!.id, asset: row!.asset, amount: row!.amount, destinationAddress: row!.destinationAddress })
  return { withdrawal, verifies: ed25519.verify(base58.decode(withdrawal.signature!), message, base58.decode(address)) }
}

/** Every spelling of a share's secret a careless store could have written. */
function spellings(share: KeyShare): string[] {
  const secret = share.secret.signingShare
  return [JSON.stringify(share), JSON.stringify(share.secret), secret, Buffer.from(secret, 'hex').toString('base64'), Buffer.from(secret, 'hex').toString('base64url')]
}

async function shareIn(ctx: TestApp, keyRef: string, participant: string): Promise<KeyShare> {
  const [row] = await ctx.postgres.sql<{ sealed: string }[]>`SELECT sealed FROM server_secrets WHERE name = ${`custody/${keyRef}/${participant}`}`
  return JSON.parse(await ctx.config.masterKey!.open(row!.sealed, `custody/${keyRef}/${participant}`)) as KeyShare
}

describeOnEngine('postgres', 'custody local, with PostgreSQL', () => {
  test('a wallet made through one instance signs through the other', async () => {
    const { a, b } = await twoInstances()
    const p = await funded(a, '100')
    const { address, keyRef } = await walletOn(a, p)
    const names = (await a.postgres.sql<{ name: string }[]>`SELECT name FROM server_secrets WHERE name LIKE 'custody/%' ORDER BY name`).map((r) => r.name)
    expect(names).toEqual(['cosigner', 'recovery', 'server'].map((participant) => shareName(keyRef, participant as 'server')))
    // Nothing of it in the data dirs.
    for (const ctx of [a, b]) expect(existsSync(join(ctx.config.dataDir, 'custody'))).toBe(false)

    const signed = await withdrawOn(b, p, address, 'across-1')
    expect(signed.verifies).toBe(true)
    expect(await a.services.wallet.keyRefOf(p.userId)).toBe(keyRef)
  }, 30_000)

  test('the database holds no share in the clear', async () => {
    const { a } = await twoInstances()
    const p = await funded(a, '1')
    const { keyRef } = await walletOn(a, p)
    const dump = JSON.stringify(await a.postgres.sql`SELECT * FROM server_secrets`)
    for (const participant of ['server', 'cosigner', 'recovery']) {
      const share = await shareIn(a, keyRef, participant)
      expect(share.secret.signingShare).toMatch(/^[0-9a-f]{64}$/)
      for (const spelling of spellings(share)) expect(dump).not.toContain(spelling)
    }
  }, 30_000)

  test('a share moved to another row does not open there: nothing is signed, the withdrawal waits', async () => {
    const { a, b } = await twoInstances()
    const p = await funded(a, '100')
    const q = await funded(a, '100')
    const mine = await walletOn(a, p)
    const theirs = await walletOn(a, q)
    // Someone with write access to the database copies q's server share over p's.
    await a.postgres.sql`UPDATE server_secrets SET sealed = (SELECT sealed FROM server_secrets WHERE name = ${shareName(theirs.keyRef, 'server')}) WHERE name = ${shareName(mine.keyRef, 'server')}`
    const res = await verify(b, p, await mint(b, p), { pin: PIN, amount: '10', destinationAddress: someAddress(), idempotencyKey: 'moved-1' })
    const body = (await res.json()) as { withdrawal?: { status: string; signature?: string } }
    expect(body.withdrawal?.signature).toBeUndefined()
    // Not a refusal (the row may be put right): the withdrawal waits, debited, as when custody is away.
    expect(body.withdrawal?.status).toBe('pending_signature')
  }, 30_000)
})

const SECRET = 'cosigner-pair-secret-0123456789abcdefghij'

describeOnEngine('postgres', 'custody cosigner, with PostgreSQL', () => {
  test('the server shares live in the database, the co-signer keeps its own; either instance signs; the recovery share is exported once', async () => {
    const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
    const port = probe.port!
    probe.stop(true)
    const cosignerDir = tempDir('arena-cosigner-')
    const cosigner = await startServe([...SOURCE_COMMAND, 'cosigner'], { ARENA_DATA_DIR: cosignerDir, ARENA_PORT: String(port), ARENA_COSIGNER_SECRET: SECRET })
    processes.push(cosigner)
    const { env, a, b } = await twoInstances({ ARENA_CUSTODY: 'cosigner', ARENA_COSIGNER_URL: `http://127.0.0.1:${port}`, ARENA_COSIGNER_SECRET: SECRET })

    const p = await funded(a, '100')
    const { address, keyRef } = await walletOn(a, p)
    const names = (await a.postgres.sql<{ name: string }[]>`SELECT name FROM server_secrets WHERE name LIKE 'custody/%' ORDER BY name`).map((r) => r.name)
    expect(names).toEqual([shareName(keyRef, 'recovery'), shareName(keyRef, 'server')])
    expect(existsSync(join(cosignerDir, 'cosigner-keys', keyRef, 'share.json'))).toBe(true)
    const dump = JSON.stringify(await a.postgres.sql`SELECT * FROM server_secrets`)
    for (const participant of ['server', 'recovery']) for (const spelling of spellings(await shareIn(a, keyRef, participant))) expect(dump).not.toContain(spelling)

    expect((await withdrawOn(b, p, address, 'cos-b')).verifies).toBe(true)
    expect((await withdrawOn(a, p, address, 'cos-a')).verifies).toBe(true)

    const recovery = await shareIn(a, keyRef, 'recovery')
    const printed = await run([...SOURCE_COMMAND, 'custody', 'export-recovery-share', p.username], env)
    expect(printed.code).toBe(0)
    expect(JSON.parse(printed.stdout)).toEqual(recovery)
    expect((await a.postgres.sql`SELECT 1 FROM server_secrets WHERE name = ${shareName(keyRef, 'recovery')}`).length).toBe(1)
    const exported = await run([...SOURCE_COMMAND, 'custody', 'export-recovery-share', p.username, '--remove'], env)
    expect(JSON.parse(exported.stdout)).toEqual(recovery)
    expect((await a.postgres.sql`SELECT 1 FROM server_secrets WHERE name = ${shareName(keyRef, 'recovery')}`).length).toBe(0)
    const again = await run([...SOURCE_COMMAND, 'custody', 'export-recovery-share', p.username], env)
    expect(again.code).toBe(1)
    // The server's share and the co-signer's still sign.
    expect((await withdrawOn(b, p, address, 'cos-after-export')).verifies).toBe(true)
  }, 60_000)
})
