// The double-entry ledger. Every movement is one ledger transaction whose
// postings sum to zero per asset; a user account's balance is the running sum
// of its postings, kept in its row, and never goes below zero. A system
// account (funding, withdrawals) keeps no running balance: its balance is the
// sum of its postings, read when wanted. Every credit and every withdrawal
// posts to one of them; a running balance there would make every movement
// write the same row, and on PostgreSQL concurrent movements of different
// users would abort each other (one row, SERIALIZABLE) instead of committing
// side by side. docs/decisions.md, "PostgreSQL". Callers pass the wallet store of
// their own unit of work (`tx.wallet`), so a movement commits or rolls back
// with the change it pays for.
import { AppError } from '../../shared/errors'
import { newId } from '../../shared/ids'
import { maxAmount } from '../../shared/money'
import type { LedgerSnapshot, LedgerTransactionKind, WalletStore } from './store'

/** The largest balance a wallet may hold: the contract's amount grammar cannot express more. */
const MAX_BALANCE = maxAmount()

/**
 * System accounts: where credited money comes from, where withdrawn money
 * goes, the other side of every operator adjustment (what operators added
 * to wallets, less what they took back), and the house: what tournaments'
 * escrows kept once their prizes were paid (src/modules/games/prizes.ts).
 */
export const SYSTEM_ACCOUNTS = ['funding', 'withdrawals', 'adjustments', 'house'] as const
export type SystemAccount = (typeof SYSTEM_ACCOUNTS)[number]

export function userAccountId(userId: string, asset: string): string {
  return `user:${userId}:${asset}`
}

export function systemAccountId(name: SystemAccount, asset: string): string {
  return `system:${name}:${asset}`
}

const ESCROW_PREFIX = 'escrow:'

/**
 * A tournament's escrow: its entry fees and the operators' funding, until
 * prizes, refunds and the house's remainder empty it. A system account (no
 * running balance: its balance is the sum of its postings), one per
 * tournament and asset.
 */
export function escrowAccountId(tournamentId: string, asset: string): string {
  return `${ESCROW_PREFIX}${tournamentId}:${asset}`
}

export interface Posting {
  accountId: string
  /** Set for user accounts: they may not go below zero. */
  userId: string | null
  /** Signed minor units. */
  amount: bigint
}

export interface Movement {
  kind: LedgerTransactionKind
  asset: string
  postings: Posting[]
  reference?: string
  memo?: Record<string, unknown>
}

/**
 * Records a movement and updates balances, inside the caller's write. Throws
 * (and so rolls back the caller's unit of work) on any breach.
 *
 * A deleted account holds no money: every user a movement credits is locked
 * against deletion first (WalletStore.lockUserForCredit), and a credit to a
 * user who is gone is refused, 404 not_found. Every credit to a wallet comes
 * through here, so none can land in an account erased at the same moment,
 * whichever engine, instance or isolation runs it. A caller owed to pay
 * someone who may be gone (a prize, a refund) asks `mayCredit` first and
 * sends the money elsewhere (src/modules/games/prizes.ts: to the house).
 */
export async function postMovement(ledger: WalletStore, movement: Movement, now: Date): Promise<string> {
  const total = movement.postings.reduce((sum, p) => sum + p.amount, 0n)
  if (total !== 0n) throw new Error(`ledger movement does not balance: ${total}`)
  // Sorted, so two movements crediting the same users lock them in one order.
  const credited = [...new Set(movement.postings.filter((p) => p.userId !== null && p.amount > 0n).map((p) => p.userId!))].sort()
  for (const userId of credited) {
    if (!(await ledger.lockUserForCredit(userId))) throw new AppError('not_found', 'No such user: the account was deleted')
  }
  const id = newId('ledgerTransaction')
  await ledger.addTransaction({ id, kind: movement.kind, reference: movement.reference ?? null, memo: movement.memo ?? null }, now)
  for (const posting of movement.postings) {
    const account =
      (await ledger.account(posting.accountId)) ?? (await ledger.openAccount({ id: posting.accountId, userId: posting.userId, asset: movement.asset }, now))
    if (account.userId === null) {
      // A system account: the posting is its balance (see the top of this file).
      await ledger.addPosting({ transactionId: id, accountId: account.id, asset: movement.asset, amount: posting.amount, balanceAfter: null })
      continue
    }
    const balance = account.balance + posting.amount
    if (account.userId !== null && balance < 0n) {
      throw new AppError('insufficient_funds', 'The balance is lower than the amount')
    }
    if (account.userId !== null && balance > MAX_BALANCE) {
      throw new AppError('validation_failed', 'The balance would exceed the largest amount arena can express', {
        details: [{ path: 'body/amount', message: 'Too large for this balance' }],
      })
    }
    await ledger.setBalance(account.id, balance)
    // The balance it leaves, kept with the posting: the player's history shows it (history.ts).
    await ledger.addPosting({ transactionId: id, accountId: account.id, asset: movement.asset, amount: posting.amount, balanceAfter: balance })
  }
  return id
}

/**
 * Whether the user may be credited in this unit of work: exists and is not
 * deleted, and cannot be deleted before it ends (the lock postMovement takes
 * again, for nothing, when the credit follows). False: pay nobody.
 */
export function mayCredit(ledger: WalletStore, userId: string): Promise<boolean> {
  return ledger.lockUserForCredit(userId)
}

export function balanceOf(ledger: WalletStore, userId: string, asset: string): Promise<bigint> {
  return ledger.balance(userAccountId(userId, asset))
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
 * asset and has postings; each posting is in its account's asset; each user
 * account's balance equals the sum of its postings and is not negative (a
 * system account's balance is that sum: there is nothing to compare), and is
 * zero when its user is deleted; each
 * balance a user posting recorded as the one it left is the running sum of
 * its account's postings up to it.
 * Reads one snapshot (`storage.read.wallet`), so a server writing meanwhile
 * is never caught half-way through a movement.
 */
export async function checkLedger(ledger: WalletStore): Promise<LedgerReport> {
  const problems: string[] = []
  const snapshot = await ledger.ledgerSnapshot()
  const { accounts, transactions, postings } = snapshot
  const byAccount = new Map<string, bigint>()
  const byTransaction = new Map<string, Map<string, bigint>>()
  const accountAsset = new Map(accounts.map((a) => [a.id, a.asset]))
  for (const p of postings) {
    byAccount.set(p.accountId, (byAccount.get(p.accountId) ?? 0n) + p.amount)
    const perAsset = byTransaction.get(p.transactionId) ?? new Map<string, bigint>()
    perAsset.set(p.asset, (perAsset.get(p.asset) ?? 0n) + p.amount)
    byTransaction.set(p.transactionId, perAsset)
    if (accountAsset.get(p.accountId) !== p.asset) problems.push(`posting ${p.id} is in ${p.asset} but account ${p.accountId} is not`)
  }
  for (const t of transactions) {
    const perAsset = byTransaction.get(t.id)
    if (!perAsset) problems.push(`transaction ${t.id} has no postings`)
    for (const [asset, sum] of perAsset ?? []) if (sum !== 0n) problems.push(`transaction ${t.id} does not balance in ${asset}: ${sum}`)
  }
  for (const a of accounts.filter((account) => account.userId !== null)) {
    const sum = byAccount.get(a.id) ?? 0n
    if (a.balance !== sum) problems.push(`account ${a.id} balance ${a.balance} but postings sum to ${sum}`)
    if (a.userId !== null && a.balance < 0n) problems.push(`user account ${a.id} is negative: ${a.balance}`)
  }
  problems.push(...checkDeletedAccounts(snapshot, byAccount))
  problems.push(...checkBalancesAfter(snapshot))
  problems.push(...checkWithdrawalsAgainstLedger(snapshot))
  problems.push(...checkEscrows(snapshot, byAccount))
  return { ok: problems.length === 0, accounts: accounts.length, transactions: transactions.length, postings: postings.length, problems }
}

/**
 * The balance after each user posting, where one was recorded (postings
 * written before arena recorded it have none), is the running sum of its
 * account's postings in posting order.
 */
function checkBalancesAfter({ accounts, postings }: Pick<LedgerSnapshot, 'accounts' | 'postings'>): string[] {
  const problems: string[] = []
  const userAccounts = new Set(accounts.filter((a) => a.userId !== null).map((a) => a.id))
  const running = new Map<string, bigint>()
  for (const p of [...postings].sort((a, b) => a.id - b.id)) {
    const sum = (running.get(p.accountId) ?? 0n) + p.amount
    running.set(p.accountId, sum)
    if (p.balanceAfter === null) continue
    if (!userAccounts.has(p.accountId)) problems.push(`posting ${p.id} on system account ${p.accountId} records a balance`)
    else if (p.balanceAfter !== sum) problems.push(`posting ${p.id} records balance ${p.balanceAfter} after it but its account's postings sum to ${sum}`)
  }
  return problems
}

/**
 * A deleted user's accounts hold nothing (deletion refuses a wallet with
 * money, and no credit lands after it): money there is money no one can
 * reach, by balance or by postings.
 */
function checkDeletedAccounts({ accounts, deletedAccountHolders }: Pick<LedgerSnapshot, 'accounts' | 'deletedAccountHolders'>, byAccount: Map<string, bigint>): string[] {
  const problems: string[] = []
  const deleted = new Set(deletedAccountHolders)
  for (const a of accounts) {
    if (a.userId === null || !deleted.has(a.userId)) continue
    const held = a.balance !== 0n ? a.balance : (byAccount.get(a.id) ?? 0n)
    if (held !== 0n) problems.push(`account ${a.id} of deleted user ${a.userId} holds ${held}: money no one can reach`)
  }
  return problems
}

/**
 * A tournament's escrow never holds less than nothing, and holds nothing once
 * the tournament is over (completed: prizes and the house's remainder paid;
 * cancelled: every fee refunded, the funding returned).
 */
function checkEscrows({ accounts, settledTournaments }: Pick<LedgerSnapshot, 'accounts' | 'settledTournaments'>, byAccount: Map<string, bigint>): string[] {
  const problems: string[] = []
  const settled = new Set(settledTournaments)
  for (const a of accounts) {
    if (!a.id.startsWith(ESCROW_PREFIX)) continue
    const sum = byAccount.get(a.id) ?? 0n
    const tournamentId = a.id.slice(ESCROW_PREFIX.length, a.id.lastIndexOf(':'))
    if (sum < 0n) problems.push(`escrow ${a.id} is negative: ${sum}`)
    else if (sum !== 0n && settled.has(tournamentId)) problems.push(`escrow ${a.id} of finished tournament ${tournamentId} still holds ${sum}`)
  }
  return problems
}

/**
 * Every withdrawal has exactly one debit; a failed or rejected one exactly
 * one reversal, any other none; and no debit or reversal exists without its withdrawal.
 */
function checkWithdrawalsAgainstLedger({ transactions, withdrawals }: Pick<LedgerSnapshot, 'transactions' | 'withdrawals'>): string[] {
  const problems: string[] = []
  const movements = transactions.filter((t) => t.kind === 'withdrawal' || t.kind === 'reversal')
  const count = new Map<string, { withdrawal: number; reversal: number }>()
  for (const m of movements) {
    const id = String((m.memo as { withdrawalId?: unknown } | null)?.withdrawalId ?? '')
    const entry = count.get(id) ?? { withdrawal: 0, reversal: 0 }
    entry[m.kind as 'withdrawal' | 'reversal']++
    count.set(id, entry)
  }
  const known = new Set(withdrawals.map((r) => r.id))
  for (const id of count.keys()) if (!known.has(id)) problems.push(`ledger movement for unknown withdrawal ${id || '(none)'}`)
  for (const row of withdrawals) {
    const entry = count.get(row.id) ?? { withdrawal: 0, reversal: 0 }
    if (entry.withdrawal !== 1) problems.push(`withdrawal ${row.id} has ${entry.withdrawal} debits`)
    const reversals = row.status === 'failed' || row.status === 'rejected' ? 1 : 0
    if (entry.reversal !== reversals) problems.push(`withdrawal ${row.id} (${row.status}) has ${entry.reversal} reversals`)
  }
  return problems
}
