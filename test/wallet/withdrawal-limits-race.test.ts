// Invariant: several sessions of one user withdrawing at once, on two
// instances on one database (two SQLite connections to one file, or two
// PostgreSQL pools to one database), never take the user over
// ARENA_WITHDRAWAL_DAILY_MAX together: the limit's read of the last 24 hours
// and the debit are one unit of work, decided one after another per user. The
// refused ones answer 422 withdrawal_limit and their sessions stay usable.
import { describe, expect, test } from 'bun:test'
import { inArray } from 'drizzle-orm'
import { checkLedger } from '../../src/modules/wallet/ledger'
import { parseAmount, formatAmount } from '../../src/shared/money'
import type { TestApp } from '../helpers/app'
import { twoInstances } from '../helpers/arena'
import { balance, funded, mint, mintRaw, PIN, someAddress, verify } from '../helpers/purchases'

const DAILY_MAX = '100'
const { one, two } = await twoInstances({ ARENA_WITHDRAWAL_DAILY_MAX: DAILY_MAX })
/** The instance the i-th request of a race goes to: they alternate. */
const instance = (i: number): TestApp => (i % 2 === 0 ? one : two)

type Answer = { status: number; body: { valid?: boolean; withdrawal?: { id: string; amount: string; status: string }; error?: { code: string; message: string } } }

async function race(amounts: string[]) {
  const p = await funded(one, '1000')
  const sessions: Awaited<ReturnType<typeof mint>>[] = []
  for (let i = 0; i < amounts.length; i++) sessions.push(await mint(instance(i), p))
  const answers = await Promise.all(
    amounts.map(async (amount, i): Promise<Answer> => {
      const res = await verify(instance(i), p, sessions[i]!, { pin: PIN, amount, destinationAddress: someAddress(), idempotencyKey: `race-${i}` })
      return { status: res.status, body: (await res.json()) as Answer['body'] }
    }),
  )
  const accepted = answers.flatMap((a, i) => (a.status === 200 ? [i] : []))
  const refused = answers.flatMap((a, i) => (a.status === 200 ? [] : [i]))
  const paid = accepted.reduce((sum, i) => sum + parseAmount(amounts[i]!), 0n)
  return { p, sessions, answers, accepted, refused, paid }
}

describe('concurrent withdrawals of one user against the daily limit, on two instances', () => {
  test('equal amounts: exactly as many as fit are paid, the rest refused with their sessions intact', async () => {
    const amounts = Array.from({ length: 8 }, () => '30')
    const { p, sessions, answers, accepted, refused, paid } = await race(amounts)

    expect(accepted.length).toBe(3)
    expect(paid).toBe(parseAmount('90'))
    for (const i of accepted) expect(answers[i]!.body).toMatchObject({ valid: true, withdrawal: { amount: '30', status: 'signed' } })
    for (const i of refused) {
      expect(answers[i]!.status).toBe(422)
      expect(answers[i]!.body.error?.code).toBe('withdrawal_limit')
      expect(answers[i]!.body.error?.message).toStartWith('The amount is over the daily withdrawal limit of 100 USDC (any 24 hours); 10 USDC left')
    }
    expect(await balance(one, p)).toBe('910')
    expect(await balance(two, p)).toBe('910')

    // The refused sessions were not consumed: one of them withdraws what is left, on either instance...
    const { pinSessions } = one.peek.tables
    const rows = await one.peek.db.select().from(pinSessions).where(inArray(pinSessions.id, refused.map((i) => sessions[i]!.sessionId)))
    expect(rows.map((r) => r.consumedAt)).toEqual(refused.map(() => null))
    const last = refused[0]!
    const rest = await verify(instance(last + 1), p, sessions[last]!, { pin: PIN, amount: '10', destinationAddress: someAddress(), idempotencyKey: 'the-rest' })
    expect(rest.status).toBe(200)
    expect(((await rest.json()) as Answer['body']).withdrawal).toMatchObject({ amount: '10', status: 'signed' })
    // ...and the others are still refused by the limit, not as spent sessions; no PIN failure was counted.
    for (const i of refused.slice(1)) {
      const again = await verify(instance(i), p, sessions[i]!, { pin: PIN, amount: '0.000001', destinationAddress: someAddress(), idempotencyKey: `again-${i}` })
      expect(again.status).toBe(422)
      expect(((await again.json()) as Answer['body']).error?.code).toBe('withdrawal_limit')
    }
    const wrong = await verify(two, p, sessions[refused[1]!]!, { pin: '000000', amount: '0.000001', destinationAddress: someAddress(), idempotencyKey: 'wrong-pin' })
    expect(await wrong.json()).toEqual({ error: { code: 'withdrawal_limit', message: expect.stringContaining('0 USDC left') as unknown as string, status: 422 } })
    expect((await mintRaw(one, p)).status).toBe(201)
    expect(await balance(two, p)).toBe('900')
    expect((await checkLedger(two.services.storage.read.wallet)).ok).toBe(true)
  }, 60_000)

  test('mixed amounts: the paid ones sum to at most the limit, and each refused one did not fit', async () => {
    const amounts = ['40', '35', '30', '25', '20', '15', '10', '0.000001', '5', '45']
    const { p, answers, accepted, refused, paid } = await race(amounts)

    expect(paid <= parseAmount(DAILY_MAX)).toBe(true)
    expect(accepted.length).toBeGreaterThan(0)
    const left = parseAmount(DAILY_MAX) - paid
    for (const i of refused) {
      expect(answers[i]!.status).toBe(422)
      expect(answers[i]!.body.error?.code).toBe('withdrawal_limit')
      // Refused only when it did not fit: what was left when it was decided is at least what is left now.
      expect(parseAmount(amounts[i]!) > left).toBe(true)
    }
    expect(await balance(one, p)).toBe(formatAmount(parseAmount('1000') - paid))
    const rows = await two.services.withdrawals.listOf(p.userId)
    expect(rows.map((w) => w.amount).sort()).toEqual(accepted.map((i) => amounts[i]!).sort())
    expect((await checkLedger(one.services.storage.read.wallet)).ok).toBe(true)
  }, 60_000)
})
