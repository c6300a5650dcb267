// Invariant: a player's wallet has one custody address, made on first use by
// a 2-of-3 FROST DKG whose shares live in separate files, and what custody
// signs verifies with plain Ed25519 against that address.
import { afterAll, describe, expect, test } from 'bun:test'
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { ed25519 } from '@noble/curves/ed25519.js'
import { base58 } from '@scure/base'
import { LocalFrostCustody } from '../../src/modules/wallet/custody'
import { isValidAddress, withdrawalMessage } from '../../src/modules/wallet/frost'
import { postJson, req } from '../helpers/app'
import { admin, createArenaApp, players } from '../helpers/arena'

const ctx = await createArenaApp()
afterAll(() => ctx.close())

const wallet = (token: string) => ctx.handle(req('/api/v1/wallet', { headers: { authorization: `Bearer ${token}` } }))

describe('GET /api/v1/wallet', () => {
  test('asset, balance and a valid base58 address that stays the same', async () => {
    const [p] = await players(ctx, 1)
    const first = (await (await wallet(p!.tokens.accessToken)).json()) as { asset: string; balance: string; address: string }
    expect(first.asset).toBe('USDC')
    expect(first.balance).toBe('0')
    expect(isValidAddress(first.address)).toBe(true)
    await ctx.handle(postJson(`/api/v1/admin/wallets/${p!.userId}/credit`, { amount: '12.34', reference: 'w-1' }, admin))
    const second = (await (await wallet(p!.tokens.accessToken)).json()) as { balance: string; address: string }
    expect(second).toMatchObject({ balance: '12.34', address: first.address })
  })

  test('two first requests at once make one wallet', async () => {
    const [p] = await players(ctx, 1)
    const [a, b] = await Promise.all([wallet(p!.tokens.accessToken), wallet(p!.tokens.accessToken)])
    expect(((await a.json()) as { address: string }).address).toBe(((await b.json()) as { address: string }).address)
  })

  test('without a bearer it is 401', async () => {
    expect((await ctx.handle(req('/api/v1/wallet'))).status).toBe(401)
  })
})

describe('local FROST custody', () => {
  test('three share files, owner-only, and a signature that verifies against the address', async () => {
    const dir = join(ctx.config.dataDir, 'custody-test')
    const custody = new LocalFrostCustody(dir)
    const { address, keyRef } = await custody.createWallet()
    const files = readdirSync(join(dir, keyRef)).sort()
    expect(files).toEqual(['cosigner.json', 'recovery.json', 'server.json'])
    for (const f of files) expect(statSync(join(dir, keyRef, f)).mode & 0o777).toBe(0o600)
    const message = withdrawalMessage({ id: 'wdr_1', asset: 'USDC', amount: '30000000', destinationAddress: address })
    const signature = base58.decode(await custody.signWithdrawal(keyRef, message))
    expect(ed25519.verify(signature, message, base58.decode(address))).toBe(true)
    expect(ed25519.verify(signature, withdrawalMessage({ id: 'wdr_2', asset: 'USDC', amount: '30000000', destinationAddress: address }), base58.decode(address))).toBe(false)
    expect(await custody.health()).toEqual({ ok: true })
  })
})
