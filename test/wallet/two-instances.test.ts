// Invariant: two instances on one database (two apps on one data dir: two
// SQLite connections to one file, or two PostgreSQL pools to one database)
// move money as one would. Racing withdrawals never overdraw, one
// idempotency key debits once, one credit reference credits once, whichever
// instance each request reaches; the ledger check passes after the race.
import { describe, expect, test } from 'bun:test'
import { checkLedger } from '../../src/modules/wallet/ledger'
import { postJson, type TestApp } from '../helpers/app'
import { admin, twoInstances, players } from '../helpers/arena'
import { balance, funded, mint, PIN, someAddress, verify } from '../helpers/purchases'

const { one, two } = await twoInstances()
/** The instance the i-th request of a race goes to: they alternate. */
const instance = (i: number): TestApp => (i % 2 === 0 ? one : two)

type Verified = { valid: boolean; withdrawal?: { id: string; status: string } }

describe('two instances on one database', () => {
  test('racing withdrawals spend the balance once: never below zero, the rest refused', async () => {
    const p = await funded(one, '100')
    const sessions = []
    for (let i = 0; i < 8; i++) sessions.push(await mint(instance(i), p))
    const answers = await Promise.all(
      sessions.map(async (session, i) => {
        const res = await verify(instance(i), p, session, { pin: PIN, amount: '30', destinationAddress: someAddress(), idempotencyKey: `race-${i}` })
        return { status: res.status, body: (await res.json()) as Verified }
      }),
    )
    const paid = answers.filter((a) => a.status === 200)
    expect(paid.length).toBe(3)
    expect(paid.every((a) => a.body.valid && a.body.withdrawal!.status === 'signed')).toBe(true)
    expect(answers.filter((a) => a.status === 422).length).toBe(5)
    expect(await balance(one, p)).toBe('10')
    expect(await balance(two, p)).toBe('10')
    expect((await checkLedger(two.services.storage.read.wallet)).ok).toBe(true)
  }, 60_000)

  test('one idempotency key sent to both instances at once debits once', async () => {
    const p = await funded(two, '50')
    const sessions = []
    for (let i = 0; i < 6; i++) sessions.push(await mint(instance(i), p))
    const destinationAddress = someAddress()
    const answers = await Promise.all(
      sessions.map(async (session, i) => {
        const res = await verify(instance(i), p, session, { pin: PIN, amount: '20', destinationAddress, idempotencyKey: 'same-key' })
        return { status: res.status, body: (await res.json()) as Verified }
      }),
    )
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200))
    expect(new Set(answers.map((a) => a.body.withdrawal!.id)).size).toBe(1)
    expect(await balance(one, p)).toBe('30')
    const report = await checkLedger(one.services.storage.read.wallet)
    expect(report.ok).toBe(true)
  }, 60_000)

  test('one credit reference sent to both instances at once credits once', async () => {
    const [p] = await players(one, 1)
    const answers = await Promise.all(
      Array.from({ length: 8 }, async (_, i) => {
        const res = await instance(i).handle(postJson(`/api/v1/admin/wallets/${p!.userId}/credit`, { amount: '5', reference: 'twice-sent' }, admin))
        return { status: res.status, body: await res.json() }
      }),
    )
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200))
    expect(answers.map((a) => a.body)).toEqual(answers.map(() => ({ balance: '5' })))
    expect(await balance(two, p!)).toBe('5')
    expect((await checkLedger(one.services.storage.read.wallet)).ok).toBe(true)
  })
})
