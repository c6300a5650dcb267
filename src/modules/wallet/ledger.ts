// The double-entry ledger. Every movement is one ledger transaction whose
// postings sum to zero per asset; balances are the running sums of postings;
// a user's account never goes below zero. Callers pass their own database
// transaction, so a movement commits or rolls back with the change it pays for.
import { eq } from 'drizzle-orm'
import type { Executor } from '../../db/sqlite/connection'
import { ledgerAccounts, ledgerPostings, ledgerTransactions, withdrawals } from '../../db/schema'
import type { Clock } from '../../shared/clock'
import { AppError } from '../../shared/errors'
import { newId } from '../../shared/ids'
import { maxAmount } from '../../shared/money'

/** The largest balance a wallet may hold: the contract's amount grammar cannot express more. */
const MAX_BALANCE = maxAmount()

/** System accounts: where credited money comes from, where withdrawn money goes. */
export const SYSTEM_ACCOUNTS = ['funding', 'withdrawals'] as const
export type SystemAccount = (typeof SYSTEM_ACCOUNTS)[number]

export function userAccountId(userId: string, asset: string): string {
  return `user:${userId}:${asset}`
}

export function systemAccountId(name: SystemAccount, asset: string): string {
  return `system:${name}:${asset}`
}

export interface Posting {
  accountId: string
  /** Set for user accounts: they may not go below zero. */
  userId: string | null
  /** Signed minor units. */
  amount: bigint
}

export interface Movement {
  kind: 'credit' | 'withdrawal' | 'reversal'
  asset: string
  postings: Posting[]
  reference?: string
  memo?: Record<string, unknown>
}

/** Records a movement and updates balances. Throws (and so rolls back the caller's transaction) on any breach. */
export function postMovement(tx: Executor, clock: Clock, movement: Movement): string {
  const total = movement.postings.reduce((sum, p) => sum + p.amount, 0n)
  if (total !== 0n) throw new Error(`ledger movement does not balance: ${total}`)
  const now = clock.now()
  const id = newId('ledgerTransaction')
  tx.insert(ledgerTransactions)
    .values({ id, kind: movement.kind, reference: movement.reference ?? null, memo: movement.memo ?? null, createdAt: now })
    .run()
  for (const posting of movement.postings) {
    const account =
      tx.select().from(ledgerAccounts).where(eq(ledgerAccounts.id, posting.accountId)).get() ??
      (tx.insert(ledgerAccounts)
        .values({ id: posting.accountId, userId: posting.userId, asset: movement.asset, balance: '0', createdAt: now })
        .returning()
        .get())
    const balance = BigInt(account.balance) + posting.amount
    if (account.userId !== null && balance < 0n) {
      throw new AppError('insufficient_funds', 'The balance is lower than the amount')
    }
    if (account.userId !== null && balance > MAX_BALANCE) {
      throw new AppError('validation_failed', 'The balance would exceed the largest amount arena can express', {
        details: [{ path: 'body/amount', message: 'Too large for this balance' }],
      })
    }
    tx.update(ledgerAccounts).set({ balance: balance.toString() }).where(eq(ledgerAccounts.id, account.id)).run()
    tx.insert(ledgerPostings).values({ transactionId: id, accountId: account.id, asset: movement.asset, amount: posting.amount.toString() }).run()
  }
  return id
}

export function balanceOf(db: Executor, userId: string, asset: string): bigint {
  const account = db.select({ balance: ledgerAccounts.balance }).from(ledgerAccounts).where(eq(ledgerAccounts.id, userAccountId(userId, asset))).get()
  return account ? BigInt(account.balance) : 0n
}

export interface LedgerReport {
  ok: boolean
  accounts: number
  transactions: number
  postings: number
  problems: string[]
}

/**
 * Verifies every invariant from the raw rows: each transaction balances per
 * asset and has postings; each account's balance equals the sum of its
 * postings and is in the account's asset; no user account is negative.
 */
export function checkLedger(db: Executor): LedgerReport {
  const problems: string[] = []
  const accounts = db.select().from(ledgerAccounts).all()
  const transactions = db.select({ id: ledgerTransactions.id }).from(ledgerTransactions).all()
  const postings = db.select().from(ledgerPostings).all()
  const byAccount = new Map<string, bigint>()
  const byTransaction = new Map<string, Map<string, bigint>>()
  const accountAsset = new Map(accounts.map((a) => [a.id, a.asset]))
  for (const p of postings) {
    const amount = BigInt(p.amount)
    byAccount.set(p.accountId, (byAccount.get(p.accountId) ?? 0n) + amount)
    const perAsset = byTransaction.get(p.transactionId) ?? new Map<string, bigint>()
    perAsset.set(p.asset, (perAsset.get(p.asset) ?? 0n) + amount)
    byTransaction.set(p.transactionId, perAsset)
    if (accountAsset.get(p.accountId) !== p.asset) problems.push(`posting ${p.id} is in ${p.asset} but account ${p.accountId} is not`)
  }
  for (const t of transactions) {
    const perAsset = byTransaction.get(t.id)
    if (!perAsset) problems.push(`transaction ${t.id} has no postings`)
    for (const [asset, sum] of perAsset ?? []) if (sum !== 0n) problems.push(`transaction ${t.id} does not balance in ${asset}: ${sum}`)
  }
  for (const a of accounts) {
    const sum = byAccount.get(a.id) ?? 0n
    if (BigInt(a.balance) !== sum) problems.push(`account ${a.id} balance ${a.balance} but postings sum to ${sum}`)
    if (a.userId !== null && BigInt(a.balance) < 0n) problems.push(`user account ${a.id} is negative: ${a.balance}`)
  }
  problems.push(...checkWithdrawalsAgainstLedger(db))
  return { ok: problems.length === 0, accounts: accounts.length, transactions: transactions.length, postings: postings.length, problems }
}

/**
 * Every withdrawal has exactly one debit; a failed one exactly one reversal,
 * any other none; and no debit or reversal exists without its withdrawal.
 */
function checkWithdrawalsAgainstLedger(db: Executor): string[] {
  const problems: string[] = []
  const rows = db.select({ id: withdrawals.id, status: withdrawals.status }).from(withdrawals).all()
  const movements = db
    .select({ id: ledgerTransactions.id, kind: ledgerTransactions.kind, memo: ledgerTransactions.memo })
    .from(ledgerTransactions)
    .all()
    .filter((t) => t.kind === 'withdrawal' || t.kind === 'reversal')
  const count = new Map<string, { withdrawal: number; reversal: number }>()
  for (const m of movements) {
    const id = String((m.memo as { withdrawalId?: unknown } | null)?.withdrawalId ?? '')
    const entry = count.get(id) ?? { withdrawal: 0, reversal: 0 }
    entry[m.kind as 'withdrawal' | 'reversal']++
    count.set(id, entry)
  }
  const known = new Set(rows.map((r) => r.id))
  for (const id of count.keys()) if (!known.has(id)) problems.push(`ledger movement for unknown withdrawal ${id || '(none)'}`)
  for (const row of rows) {
    const entry = count.get(row.id) ?? { withdrawal: 0, reversal: 0 }
    if (entry.withdrawal !== 1) problems.push(`withdrawal ${row.id} has ${entry.withdrawal} debits`)
    const reversals = row.status === 'failed' ? 1 : 0
    if (entry.reversal !== reversals) problems.push(`withdrawal ${row.id} (${row.status}) has ${entry.reversal} reversals`)
  }
  return problems
}
