// Invariant: a withdrawal is never lost between debit and signature. While
// custody is unreachable it waits as pending_signature (debited, not signed)
// and is signed when custody returns; a refusal fails it and gives the money
// back through a compensating ledger transaction.
import { afterAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { eq } from 'drizzle-orm'
import { CustodyRefusedError, LocalFrostCustody, type CustodyClient } from '../../src/modules/wallet/custody'
import { checkLedger } from '../../src/modules/wallet/ledger'
import { createArenaApp } from '../helpers/arena'
import { balance, funded, mint, PIN, someAddress, verify } from '../helpers/purchases'
import { tempDir } from '../helpers/app'

/** Stands in for a remote provider: the one boundary we do not own. */
class SwitchableCustody implements CustodyClient {
  mode: 'up' | 'down' | 'refusing' | 'lying' | 'no-wallets' = 'up'
  constructor(private readonly real: CustodyClient) {}
  createWallet() {
    if (this.mode === 'no-wallets') return Promise.reject(new Error('ECONNREFUSED custody provider'))
    return this.real.createWallet()
  }
  async signWithdrawal(keyRef: string, message: Uint8Array) {
    if (this.mode === 'down') throw new Error('ECONNREFUSED custody provider')
    if (this.mode === 'refusing') throw new CustodyRefusedError('provider refused: destination blocked')
    // A well-formed signature, but over another message.
    if (this.mode === 'lying') return this.real.signWithdrawal(keyRef, new TextEncoder().encode('something else'))
    return this.real.signWithdrawal(keyRef, message)
  }
  health() {
    return Promise.resolve({ ok: this.mode === 'up' })
  }
}

const custody = new SwitchableCustody(new LocalFrostCustody(join(tempDir('arena-custody-'), 'custody')))
const ctx = await createArenaApp({}, { custody })
const { outboxEvents, withdrawals } = ctx.peek.tables
afterAll(() => ctx.close())

type Body = { valid: boolean; withdrawal: { id: string; status: string; signature?: string } }

describe('custody away', () => {
  test('the withdrawal waits pending (debited, unsigned) and is signed when custody returns', async () => {
    const p = await funded(ctx, '50')
    custody.mode = 'down'
    const res = await verify(ctx, p, await mint(ctx, p), { pin: PIN, amount: '20', destinationAddress: someAddress(), idempotencyKey: 'away-1' })
    expect(res.status).toBe(200)
    const body = (await res.json()) as Body
    expect(body.valid).toBe(true)
    expect(body.withdrawal.status).toBe('pending_signature')
    expect(body.withdrawal.signature).toBeUndefined()
    expect(await balance(ctx, p)).toBe('30')

    expect(await ctx.services.withdrawals.resumePending()).toBe(0)
    expect((await ctx.peek.db.select().from(withdrawals).where(eq(withdrawals.id, body.withdrawal.id)))[0]!.status).toBe('pending_signature')

    custody.mode = 'up'
    expect(await ctx.services.withdrawals.resumePending()).toBe(1)
    const row = (await ctx.peek.db.select().from(withdrawals).where(eq(withdrawals.id, body.withdrawal.id)))[0]!
    expect(row.status).toBe('signed')
    expect(row.signature).toBeTruthy()
    expect(await balance(ctx, p)).toBe('30')
    expect((await checkLedger(ctx.services.storage.read.wallet)).ok).toBe(true)
  })

  test('a refusal fails the withdrawal and a compensating transaction restores the balance', async () => {
    const p = await funded(ctx, '50')
    custody.mode = 'refusing'
    const res = await verify(ctx, p, await mint(ctx, p), { pin: PIN, amount: '20', destinationAddress: someAddress(), idempotencyKey: 'refused-1' })
    const body = (await res.json()) as Body
    expect(body.withdrawal.status).toBe('failed')
    expect(await balance(ctx, p)).toBe('50')
    const types = (await ctx.peek.db.select().from(outboxEvents).where(eq(outboxEvents.userId, p.userId)).orderBy(outboxEvents.seq)).filter((e) => e.topic === 'wallet').map((e) => e.type)
    expect(types).toEqual(['wallet.credited', 'wallet.withdrawal_pending', 'wallet.withdrawal_failed'])
    const report = await checkLedger(ctx.services.storage.read.wallet)
    expect(report.ok).toBe(true)
    custody.mode = 'up'
  })
})

describe('custody misbehaving', () => {
  test('a signature that does not verify against the wallet address is never recorded', async () => {
    const p = await funded(ctx, '50')
    custody.mode = 'lying'
    const body = (await (await verify(ctx, p, await mint(ctx, p), { pin: PIN, amount: '5', destinationAddress: someAddress(), idempotencyKey: 'lying-1' })).json()) as Body
    expect(body.withdrawal.status).toBe('pending_signature')
    expect(await ctx.services.withdrawals.resumePending()).toBe(0)
    custody.mode = 'up'
    expect(await ctx.services.withdrawals.resumePending()).toBe(1)
    expect((await ctx.peek.db.select().from(withdrawals).where(eq(withdrawals.id, body.withdrawal.id)))[0]!.status).toBe('signed')
  })

  test('custody unable to create a wallet is a 503 with Retry-After, and nothing moves', async () => {
    const p = await funded(ctx, '50')
    custody.mode = 'no-wallets'
    try {
      const res = await verify(ctx, p, await mint(ctx, p), { pin: PIN, amount: '5', destinationAddress: someAddress(), idempotencyKey: 'nowallet-1' })
      expect(res.status).toBe(503)
      expect(res.headers.get('retry-after')).toBe('5')
    } finally {
      custody.mode = 'up'
    }
    expect(await balance(ctx, p)).toBe('50')
  })
})
