// Invariant: operator adjustments racing on two instances of one database
// (two SQLite connections to one file, or two PostgreSQL pools to one
// database) move money as one instance would: one reference moves once
// whichever instance each copy reaches, and concurrent debits never take a
// balance below zero. The ledger check passes after every race.
import { describe, expect, test } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import { checkLedger } from '../../src/modules/wallet/ledger'
import { postJson, type TestApp } from '../helpers/app'
import { admin, players, twoInstances, type Player } from '../helpers/arena'
import { balance } from '../helpers/purchases'

const { one, two } = await twoInstances()
/** The instance the i-th request of a race goes to: they alternate. */
const instance = (i: number): TestApp => (i % 2 === 0 ? one : two)
const { ledgerTransactions, outboxEvents } = one.peek.tables

const adjust = (ctx: TestApp, userId: string, body: { amount: string; reason: string; reference: string }) =>
  ctx.handle(postJson(`/api/v1/admin/wallets/${userId}/adjust`, body, admin))

async function funded(amount: string): Promise<Player> {
  const [p] = await players(one, 1)
  const res = await one.handle(postJson(`/api/v1/admin/wallets/${p!.userId}/credit`, { amount, reference: `fund-${p!.userId}` }, admin))
  expect(res.status).toBe(200)
  return p!
}

async function answers(requests: (() => Promise<Response>)[]) {
  return Promise.all(
    requests.map(async (send) => {
      const res = await send()
      return { status: res.status, body: (await res.json()) as { balance?: string; error?: { code: string } } }
    }),
  )
}

/** The adjustment movements and wallet.adjusted events written for the user. */
async function writtenFor(p: Player) {
  const movements = (await one.peek.db.select().from(ledgerTransactions).where(eq(ledgerTransactions.kind, 'adjustment'))).filter(
    (t) => (t.memo as { userId?: string } | null)?.userId === p.userId,
  )
  const events = await one.peek.db.select().from(outboxEvents).where(and(eq(outboxEvents.userId, p.userId), eq(outboxEvents.type, 'wallet.adjusted')))
  return { movements, events }
}

async function ledgerOk(ctx: TestApp): Promise<void> {
  const report = await checkLedger(ctx.services.storage.read.wallet)
  expect(report.problems).toEqual([])
  expect(report.ok).toBe(true)
}

const ROUNDS = 4
const COPIES = 12

describe('adjustments on two instances', () => {
  test('one reference sent to both instances at once, many times, moves once', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const p = await funded('100')
      // Downwards on even rounds, upwards on odd ones.
      const amount = round % 2 === 0 ? '-40' : '15.5'
      const expected = round % 2 === 0 ? '60' : '115.5'
      const body = { amount, reason: 'sent twice by a script', reference: `race-${round}` }
      const result = await answers(Array.from({ length: COPIES }, (_, i) => () => adjust(instance(i), p.userId, body)))
      expect(result.map((a) => a.status)).toEqual(result.map(() => 200))
      expect(result.map((a) => a.body)).toEqual(result.map(() => ({ balance: expected })))
      expect(await balance(two, p)).toBe(expected)
      const written = await writtenFor(p)
      expect(written.movements).toHaveLength(1)
      expect(written.events).toHaveLength(1)
    }
    await ledgerOk(one)
  }, 60_000)

  test('one reference with two amounts at once: one amount moves, once; the other answers 409', async () => {
    const p = await funded('100')
    const result = await answers(
      Array.from({ length: COPIES }, (_, i) => () => adjust(instance(i), p.userId, { amount: i % 4 < 2 ? '-5' : '-6', reason: 'r', reference: 'split' })),
    )
    const written = await writtenFor(p)
    expect(written.movements).toHaveLength(1)
    const moved = (written.movements[0]!.memo as { amount: string }).amount
    const winner = moved === '-5000000' ? '-5' : '-6'
    result.forEach((answer, i) => {
      const mine = i % 4 < 2 ? '-5' : '-6'
      if (mine === winner) expect(answer).toEqual({ status: 200, body: { balance: winner === '-5' ? '95' : '94' } })
      else expect(answer).toMatchObject({ status: 409, body: { error: { code: 'idempotency_key_reused' } } })
    })
    await ledgerOk(two)
  }, 60_000)

  test('concurrent debits from both instances never take the balance below zero', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const p = await funded('100')
      // 12 debits of 30 against 100: exactly 3 fit, whatever the order.
      const result = await answers(
        Array.from({ length: COPIES }, (_, i) => () => adjust(instance(i), p.userId, { amount: '-30', reason: 'clawback', reference: `debit-${round}-${i}` })),
      )
      const ok = result.filter((a) => a.status === 200)
      expect(ok).toHaveLength(3)
      expect(result.filter((a) => a.status === 422 && a.body.error?.code === 'insufficient_funds')).toHaveLength(COPIES - 3)
      // Each success saw the balance its own debit left: 70, 40 and 10, in some order.
      expect(ok.map((a) => a.body.balance).sort()).toEqual(['10', '40', '70'])
      expect(await balance(one, p)).toBe('10')
      const written = await writtenFor(p)
      expect(written.movements).toHaveLength(3)
      expect(written.events).toHaveLength(3)
    }
    await ledgerOk(one)
  }, 60_000)

  test('debits and credits racing on one balance: every answer is a balance the ledger agrees with, never negative', async () => {
    const p = await funded('10')
    const amounts = ['-7', '5', '-7', '-7', '3', '-7', '-7', '2', '-7', '-7', '4', '-7']
    const result = await answers(amounts.map((amount, i) => () => adjust(instance(i), p.userId, { amount, reason: 'mixed', reference: `mixed-${i}` })))
    expect(result.every((a) => a.status === 200 || (a.status === 422 && a.body.error?.code === 'insufficient_funds'))).toBe(true)
    // Credits never fail here; what moved is exactly what the answers say moved.
    const moved = result.reduce((sum, a, i) => (a.status === 200 ? sum + BigInt(amounts[i]!) : sum), 10n)
    expect(result.filter((a, i) => !amounts[i]!.startsWith('-') && a.status !== 200)).toEqual([])
    expect(moved >= 0n).toBe(true)
    expect(await balance(two, p)).toBe(String(moved))
    expect((await writtenFor(p)).movements).toHaveLength(result.filter((a) => a.status === 200).length)
    await ledgerOk(two)
  }, 60_000)
})
