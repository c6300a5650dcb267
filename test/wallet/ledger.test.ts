// Invariant: money moves only as balanced double-entry transactions; a user's
// balance is the exact sum of its postings and never negative; operator
// credits are idempotent by reference; `arena ledger check` catches any breach.
import { afterAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { checkLedger, postMovement, systemAccountId, userAccountId } from '../../src/modules/wallet/ledger'
import { createTestApp, postJson, tempDir, testDatabaseEnv } from '../helpers/app'
import { admin, createArenaApp, players } from '../helpers/arena'
import { run, SOURCE_COMMAND } from '../helpers/process'

const ctx = await createArenaApp()
afterAll(() => ctx.close())
const { outboxEvents } = ctx.peek.tables

const credit = (userId: string, amount: unknown, reference: string) =>
  ctx.handle(postJson(`/api/v1/admin/wallets/${userId}/credit`, { amount, reference }, admin))

describe('operator credit', () => {
  test('credits and answers the new balance; the same reference credits once', async () => {
    const [p] = await players(ctx, 1)
    const first = await credit(p!.userId, '100.00', 'deposit-1')
    expect(first.status).toBe(200)
    expect(await first.json()).toEqual({ balance: '100' })
    const again = await credit(p!.userId, '100.00', 'deposit-1')
    expect(await again.json()).toEqual({ balance: '100' })
    expect(await (await credit(p!.userId, '0.5', 'deposit-2')).json()).toEqual({ balance: '100.5' })
    const events = (await ctx.peek.db.select().from(outboxEvents).where(eq(outboxEvents.userId, p!.userId)).orderBy(outboxEvents.seq)).filter((e) => e.topic === 'wallet')
    expect(events.map((e) => e.data)).toEqual([
      { asset: 'USDC', amount: '100', reference: 'deposit-1', balance: '100' },
      { asset: 'USDC', amount: '0.5', reference: 'deposit-2', balance: '100.5' },
    ])
  })

  test('a reference reused for another amount or user is 409 and moves nothing', async () => {
    const [a, b] = await players(ctx, 2)
    await credit(a!.userId, '10', 'ref-shared')
    expect((await credit(a!.userId, '11', 'ref-shared')).status).toBe(409)
    expect((await credit(b!.userId, '10', 'ref-shared')).status).toBe(409)
    expect(await (await credit(a!.userId, '10', 'ref-shared')).json()).toEqual({ balance: '10' })
  })

  test.each(['-1', '1e2', '0.1234567', '00.10', '0', '0.000000', '', 'abc', 10, 0.1, null])('amount %p is 422', async (amount) => {
    const [p] = await players(ctx, 1)
    const res = await credit(p!.userId, amount, `bad-${String(amount)}`)
    expect(res.status).toBe(422)
  })

  test('a credit that would take a balance past the largest expressible amount is 422, and moves nothing', async () => {
    const [p] = await players(ctx, 1)
    await credit(p!.userId, '100', 'near-max-1')
    const res = await credit(p!.userId, '999999999999999999', 'near-max-2')
    expect(res.status).toBe(422)
    expect(await (await credit(p!.userId, '100', 'near-max-1')).json()).toEqual({ balance: '100' })
    expect((await checkLedger(ctx.services.storage.read.wallet)).ok).toBe(true)
  })

  test('unknown user is 404', async () => {
    expect((await credit('usr_nope', '1', 'nobody')).status).toBe(404)
  })

  test('ten credits of 0.1 make exactly 1', async () => {
    const [p] = await players(ctx, 1)
    let last: unknown
    for (let i = 0; i < 10; i++) last = await (await credit(p!.userId, '0.1', `dime-${i}`)).json()
    expect(last).toEqual({ balance: '1' })
  })
})

describe('ledger invariants', () => {
  test('an unbalanced movement is refused outright', async () => {
    await expect(
      ctx.services.storage.write((tx) =>
        postMovement(tx.wallet, { kind: 'credit', asset: 'USDC', postings: [{ accountId: systemAccountId('funding', 'USDC'), userId: null, amount: 5n }] }, ctx.clock.now()),
      ),
    ).rejects.toThrow('does not balance')
  })

  test('a movement that would take a user below zero is refused and leaves nothing behind', async () => {
    const [p] = await players(ctx, 1)
    await credit(p!.userId, '1', 'small')
    const before = await checkLedger(ctx.services.storage.read.wallet)
    await expect(
      ctx.services.storage.write((tx) =>
        postMovement(
          tx.wallet,
          {
            kind: 'withdrawal',
            asset: 'USDC',
            postings: [
              { accountId: userAccountId(p!.userId, 'USDC'), userId: p!.userId, amount: -2_000_000n },
              { accountId: systemAccountId('withdrawals', 'USDC'), userId: null, amount: 2_000_000n },
            ],
          },
          ctx.clock.now(),
        ),
      ),
    ).rejects.toThrow('balance is lower')
    const after = await checkLedger(ctx.services.storage.read.wallet)
    expect(after).toEqual(before)
    expect(after.ok).toBe(true)
  })

  test('checkLedger finds a withdrawal without its debit, and a debit without its withdrawal', async () => {
    const local = await createArenaApp()
    try {
      const [p] = await players(local, 1)
      const now = local.clock.now()
      const { withdrawals } = local.peek.tables
      await local.peek.db.insert(withdrawals).values({ id: 'wdr_orphan', userId: p!.userId, asset: 'USDC', amount: '1', destinationAddress: 'x', idempotencyKey: 'k', status: 'signed', pinSessionId: 'pns_x', createdAt: now, updatedAt: now })
      expect((await checkLedger(local.services.storage.read.wallet)).problems).toContain('withdrawal wdr_orphan has 0 debits')
      await local.services.storage.write((tx) =>
        postMovement(
          tx.wallet,
          {
            kind: 'withdrawal',
            asset: 'USDC',
            memo: { withdrawalId: 'wdr_ghost' },
            postings: [
              { accountId: systemAccountId('funding', 'USDC'), userId: null, amount: -1n },
              { accountId: systemAccountId('withdrawals', 'USDC'), userId: null, amount: 1n },
            ],
          },
          local.clock.now(),
        ),
      )
      expect((await checkLedger(local.services.storage.read.wallet)).problems).toContain('ledger movement for unknown withdrawal wdr_ghost')
    } finally {
      await local.close()
    }
  })

  test('checkLedger finds a tampered balance', async () => {
    const local = await createArenaApp()
    try {
      const [p] = await players(local, 1)
      await local.handle(postJson(`/api/v1/admin/wallets/${p!.userId}/credit`, { amount: '5', reference: 'r' }, admin))
      expect((await checkLedger(local.services.storage.read.wallet)).ok).toBe(true)
      const { ledgerAccounts } = local.peek.tables
      await local.peek.db.update(ledgerAccounts).set({ balance: '6000000' }).where(eq(ledgerAccounts.id, userAccountId(p!.userId, 'USDC')))
      const report = await checkLedger(local.services.storage.read.wallet)
      expect(report.ok).toBe(false)
      expect(report.problems.join('\n')).toContain('postings sum to 5000000')
    } finally {
      await local.close()
    }
  })
})

describe('command line', () => {
  test('arena wallet credit and arena ledger check (exit 1 on a breach)', async () => {
    const database = await testDatabaseEnv()
    const env = { ARENA_DATA_DIR: tempDir('arena-ledger-'), ...database }
    // Register through an app on the same database the CLI will use.
    const shared = await createTestApp({ dataDir: env.ARENA_DATA_DIR, env: database })
    const [p] = await players(shared, 1)
    await shared.close()
    {
      const credited = await run([...SOURCE_COMMAND, 'wallet', 'credit', p!.username, '--amount', '2.50', '--reference', 'cli-1', '--json'], env)
      expect(credited.code).toBe(0)
      expect(JSON.parse(credited.stdout)).toEqual({ balance: '2.5' })
      const clean = await run([...SOURCE_COMMAND, 'ledger', 'check', '--json'], env)
      expect(clean.code).toBe(0)
      expect(JSON.parse(clean.stdout)).toMatchObject({ ok: true, transactions: 1, postings: 2 })
      // A posting edited behind arena's back, through an app on the same database.
      const tamper = await createTestApp({ dataDir: env.ARENA_DATA_DIR, env: database })
      const { ledgerPostings } = tamper.peek.tables
      await tamper.peek.db.update(ledgerPostings).set({ amount: '1' }).where(eq(ledgerPostings.id, 1))
      await tamper.close()
      const broken = await run([...SOURCE_COMMAND, 'ledger', 'check'], env)
      expect(broken.code).toBe(1)
      expect(broken.stdout).toContain('BREACH')
    }
  }, 30_000)
})
