// The withdrawal history's seeded world, written once for the console's
// history (test/console/withdrawal-history.test.ts) and the admin list
// (test/wallet/admin-withdrawal-list.test.ts): three players and 130
// withdrawals over ten days, written straight into the table (the history
// only reads them), a third sharing their creation instant with the one
// before (ties across a page's edge); times, statuses and owners drawn from
// the caller's seeded random. Each is 1.5 USDC and last changed a minute
// after it was created.
import type { TestApp } from './app'
import { registerUser } from './auth'
import { pickWith } from './seed'
import { someAddress } from './purchases'
import { newId } from '../../src/shared/ids'
import type { WithdrawalStatus } from '../../src/modules/wallet/store'

export const STATUSES: WithdrawalStatus[] = ['awaiting_approval', 'held', 'pending_signature', 'signed', 'failed', 'rejected']
export const DAY = 86_400_000
export const START = Date.UTC(2026, 9, 1)
export const CHANGED_AFTER_MS = 60_000

export interface HistoryRow {
  id: string
  userId: string
  destinationAddress: string
  status: WithdrawalStatus
  createdAt: Date
}

export interface HistoryWorld {
  users: { id: string; username: string }[]
  rows: HistoryRow[]
}

/** The UTC day `offset` days after the first day of the history, as YYYY-MM-DD. */
export const day = (offset: number) => new Date(START + offset * DAY).toISOString().slice(0, 10)

export async function seedWithdrawalHistory(app: TestApp, random: () => number, usernamePrefix: string): Promise<HistoryWorld> {
  const users: HistoryWorld['users'] = []
  for (let i = 0; i < 3; i++) {
    const username = `${usernamePrefix}${i}`
    users.push({ id: (await registerUser(app, { username })).id, username })
  }
  const rows: HistoryRow[] = []
  for (let i = 0; i < 130; i++) {
    const previous = rows.at(-1)
    const createdAt = previous && random() < 0.33 ? previous.createdAt : new Date(START + Math.floor(random() * 10 * DAY))
    rows.push({ id: newId('withdrawal'), userId: pickWith(random, users).id, destinationAddress: someAddress(), status: pickWith(random, STATUSES), createdAt })
  }
  const { withdrawals } = app.peek.tables
  await app.peek.db.insert(withdrawals).values(
    rows.map((r) => ({
      id: r.id,
      userId: r.userId,
      asset: 'USDC',
      amount: '1500000',
      destinationAddress: r.destinationAddress,
      idempotencyKey: r.id,
      status: r.status,
      signature: null,
      failureReason: r.status === 'failed' ? 'custody refused' : null,
      rejectionReason: r.status === 'rejected' ? 'looked wrong' : null,
      approvedAt: null,
      holdUntil: null,
      pinSessionId: newId('pinSession'),
      createdAt: r.createdAt,
      updatedAt: new Date(r.createdAt.getTime() + CHANGED_AFTER_MS),
    })),
  )
  return { users, rows }
}

/** The rows a filter lists, in the history's order: newest first by creation, then by id, descending. */
export function newestFirst(rows: readonly HistoryRow[], match: (row: HistoryRow) => boolean): HistoryRow[] {
  return rows.filter(match).sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
}
