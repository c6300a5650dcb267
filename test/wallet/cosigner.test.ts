// Invariant (custody mode "cosigner"): the server and a separate co-signer
// process each hold one share; signing needs both. With the co-signer stopped
// a withdrawal waits (debited, neither signed nor failed) and completes when
// the co-signer returns. The co-signer refuses unauthenticated or malformed
// requests. The recovery share can be exported once, leaving this machine.
import { afterAll, describe, expect, test } from 'bun:test'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { ed25519 } from '@noble/curves/ed25519.js'
import { base58 } from '@scure/base'
import { eq } from 'drizzle-orm'
import { COSIGNER_PATHS, signRequest } from '../../src/modules/wallet/cosigner-protocol'
import { PARTICIPANTS, withdrawalMessage } from '../../src/modules/wallet/frost'
import { custodySharesFor } from '../../src/services'
import { tempDir } from '../helpers/app'
import { createArenaApp } from '../helpers/arena'
import { run, SOURCE_COMMAND, startServe, type ServerProcess } from '../helpers/process'
import { balance, funded, mint, PIN, someAddress, verify } from '../helpers/purchases'

const SECRET = 'cosigner-pair-secret-0123456789abcdefghij'
const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
const PORT = probe.port!
probe.stop(true)
const cosignerDir = tempDir('arena-cosigner-')
const cosignerEnv = { ARENA_DATA_DIR: cosignerDir, ARENA_PORT: String(PORT), ARENA_COSIGNER_SECRET: SECRET }
const processes: ServerProcess[] = []
const startCosigner = async () => {
  const p = await startServe([...SOURCE_COMMAND, 'cosigner'], cosignerEnv)
  processes.push(p)
  return p
}

let cosigner = await startCosigner()
const ctx = await createArenaApp({ ARENA_CUSTODY: 'cosigner', ARENA_COSIGNER_URL: `http://127.0.0.1:${PORT}`, ARENA_COSIGNER_SECRET: SECRET })
afterAll(() => {
  processes.forEach((p) => p.proc.kill('SIGKILL'))
  return ctx.close()
})
const { wallets, withdrawals } = ctx.peek.tables
/** The server's key shares where its engine keeps them: files in the data dir (SQLite), sealed rows in the database (PostgreSQL). */
const serverShares = custodySharesFor(ctx.config, ctx.storage)
/** Which shares of a key the server holds. */
const heldShares = async (keyRef: string) => {
  const held = await Promise.all(PARTICIPANTS.map(async (participant) => ((await serverShares.text(keyRef, participant)) === null ? null : participant)))
  return held.filter((participant) => participant !== null).sort()
}

type Verified = { valid: boolean; withdrawal: { id: string; status: string; signature?: string; amount: string } }

describe('cosigner custody', () => {
  test('the wallet key is made by a DKG across both processes; each side keeps only its own shares', async () => {
    const p = await funded(ctx, '100')
    const { address } = (await (await ctx.handle(new Request('http://localhost/api/v1/wallet', { headers: { authorization: `Bearer ${p.tokens.accessToken}` } }))).json()) as { address: string }
    const keyRef = (await ctx.peek.db.select().from(wallets).where(eq(wallets.userId, p.userId)))[0]!.keyRef
    expect(await heldShares(keyRef)).toEqual(['recovery', 'server'])
    expect(readdirSync(join(cosignerDir, 'cosigner-keys', keyRef))).toEqual(['share.json'])

    const res = await verify(ctx, p, await mint(ctx, p), { pin: PIN, amount: '10', destinationAddress: someAddress(), idempotencyKey: 'cos-1' })
    const body = (await res.json()) as Verified
    expect(body.withdrawal.status).toBe('signed')
    const row = (await ctx.peek.db.select().from(withdrawals).where(eq(withdrawals.id, body.withdrawal.id)))[0]!
    const message = withdrawalMessage({ id: row.id, asset: row.asset, amount: row.amount, destinationAddress: row.destinationAddress })
    expect(ed25519.verify(base58.decode(body.withdrawal.signature!), message, base58.decode(address))).toBe(true)
  }, 30_000)

  test('with the co-signer stopped withdrawals wait, and complete when it returns', async () => {
    const p = await funded(ctx, '100')
    await ctx.handle(new Request('http://localhost/api/v1/wallet', { headers: { authorization: `Bearer ${p.tokens.accessToken}` } }))
    expect((await cosigner.signal('SIGTERM')).code).toBe(0)

    const res = await verify(ctx, p, await mint(ctx, p), { pin: PIN, amount: '25', destinationAddress: someAddress(), idempotencyKey: 'cos-wait' })
    const body = (await res.json()) as Verified
    expect(body).toMatchObject({ valid: true, withdrawal: { status: 'pending_signature' } })
    expect(body.withdrawal.signature).toBeUndefined()
    expect(await balance(ctx, p)).toBe('75')
    expect(await ctx.services.withdrawals.resumePending()).toBe(0)
    expect((await ctx.peek.db.select().from(withdrawals).where(eq(withdrawals.id, body.withdrawal.id)))[0]!.status).toBe('pending_signature')

    cosigner = await startCosigner()
    expect(await ctx.services.withdrawals.resumePending()).toBe(1)
    const row = (await ctx.peek.db.select().from(withdrawals).where(eq(withdrawals.id, body.withdrawal.id)))[0]!
    expect(row.status).toBe('signed')
    expect(await balance(ctx, p)).toBe('75')
  }, 30_000)

  test('the co-signer refuses requests without the pair\'s MAC, and requests that are not well-formed withdrawals', async () => {
    const url = `http://127.0.0.1:${PORT}${COSIGNER_PATHS.commit}`
    const keyRef = (await ctx.peek.db.select().from(wallets))[0]!.keyRef
    const good = { keyRef, withdrawal: { id: `wdr_${'0'.repeat(32)}`, asset: 'USDC', amount: '1000000', destinationAddress: someAddress() } }
    const unsigned = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(good) })
    expect(unsigned.status).toBe(401)
    const wrongSecret = JSON.stringify(good)
    const forged = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...signRequest('another-secret-0123456789abcdefghijkl', COSIGNER_PATHS.commit, wrongSecret) }, body: wrongSecret })
    expect(forged.status).toBe(401)
    for (const withdrawal of [
      { ...good.withdrawal, id: 'not-a-withdrawal' },
      { ...good.withdrawal, amount: '1.5' },
      { ...good.withdrawal, destinationAddress: 'nope' },
      { ...good.withdrawal, asset: 'BTC' },
    ]) {
      const text = JSON.stringify({ keyRef, withdrawal })
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...signRequest(SECRET, COSIGNER_PATHS.commit, text) }, body: text })
      expect(res.status).toBe(422)
    }
    const text = JSON.stringify(good)
    const committed = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...signRequest(SECRET, COSIGNER_PATHS.commit, text) }, body: text })
    expect(committed.status).toBe(200)
    const { commitmentId, commitment } = (await committed.json()) as { commitmentId: string; commitment: unknown }
    // A commitment made for one withdrawal signs no other (here: another amount).
    const swapped = JSON.stringify({ keyRef, commitmentId, commitments: [commitment], withdrawal: { ...good.withdrawal, amount: '999000000' } })
    const shareUrl = `http://127.0.0.1:${PORT}${COSIGNER_PATHS.share}`
    const refused = await fetch(shareUrl, { method: 'POST', headers: { 'content-type': 'application/json', ...signRequest(SECRET, COSIGNER_PATHS.share, swapped) }, body: swapped })
    expect(refused.status).toBe(422)
  })

  test('the recovery share is exported once and then gone from this machine', async () => {
    const p = await funded(ctx, '1')
    await ctx.handle(new Request('http://localhost/api/v1/wallet', { headers: { authorization: `Bearer ${p.tokens.accessToken}` } }))
    const keyRef = (await ctx.peek.db.select().from(wallets).where(eq(wallets.userId, p.userId)))[0]!.keyRef
    const env = { ARENA_DATA_DIR: ctx.config.dataDir, ...ctx.databaseEnv }
    const printed = await run([...SOURCE_COMMAND, 'custody', 'export-recovery-share', p.username], env)
    expect(printed.code).toBe(0)
    expect(JSON.parse(printed.stdout)).toMatchObject({ name: 'recovery' })
    expect(await heldShares(keyRef)).toEqual(['recovery', 'server']) // printing alone deletes nothing
    const exported = await run([...SOURCE_COMMAND, 'custody', 'export-recovery-share', p.username, '--remove'], env)
    expect(JSON.parse(exported.stdout)).toEqual(JSON.parse(printed.stdout))
    expect(await heldShares(keyRef)).toEqual(['server'])
    const again = await run([...SOURCE_COMMAND, 'custody', 'export-recovery-share', p.username], env)
    expect(again.code).toBe(1)
  }, 30_000)
})
