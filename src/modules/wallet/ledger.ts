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
//
// Money moves by name: `ledger(tx.wallet, now).transfer({ kind, from, to,
// amount, memo })` moves a positive amount from one account to another (one
// movement, its two postings), and `.reverse(transactionId)` writes the exact
// opposite of a recorded movement. Nothing outside this file builds postings
// (test/wallet/transfer.test.ts checks it); both go through postMovement,
// the one place balances change. The models: Formance's postings (source,
// destination, amount) and Reverse(), TigerBeetle's named results (every
// refusal below is an AppError with its code).
import { AppError } from '../../shared/errors'
import { newId } from '../../shared/ids'
import { maxAmount } from '../../shared/money'
import type { LedgerSnapshot, LedgerTransaction, LedgerTransactionKind, WalletStore } from './store'

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
 * An escrow: a tournament's (its entry fees and the operators' funding, until
 * prizes, refunds and the house's remainder empty it) or a staked match's
 * (both stakes, until the pot is paid or the stakes refunded). A system
 * account (no running balance: its balance is the sum of its postings), one
 * per tournament or match and asset; `ownerId` is the tournament's or the
 * match's id.
 */
export function escrowAccountId(ownerId: string, asset: string): string {
  return `${ESCROW_PREFIX}${ownerId}:${asset}`
}

/** An account money moves from or to: its id, its user (null: a system account), its asset. */
export interface AccountRef {
  id: string
  /** Set for user accounts: they may not go below zero, and a credit to one locks its user against deletion. */
  userId: string | null
  asset: string
}

/** The accounts by name: a user's wallet, a system account, a tournament's escrow. */
export const accounts = {
  user: (userId: string, asset: string): AccountRef => ({ id: userAccountId(userId, asset), userId, asset }),
  system: (name: SystemAccount, asset: string): AccountRef => ({ id: systemAccountId(name, asset), userId: null, asset }),
  escrow: (ownerId: string, asset: string): AccountRef => ({ id: escrowAccountId(ownerId, asset), userId: null, asset }),
}

/** One movement of `amount` (minor units, positive) from `from` to `to`, in their one asset. */
export interface Transfer {
  kind: LedgerTransactionKind
  from: AccountRef
  to: AccountRef
  amount: bigint
  /** Unique when set: the same reference never moves twice (the store's unique index). */
  reference?: string
  memo?: Record<string, unknown>
}

/** The reference a reversal is recorded under: one per reversed movement. */
export const reversalReference = (transactionId: string) => `reversal:${transactionId}`

/**
 * The ledger as a unit of work moves money in it: `wallet` is that unit of
 * work's store (`tx.wallet`), `now` its time.
 */
export interface Ledger {
  /**
   * Records the transfer: `from` debited, `to` credited, in that order, one
   * movement. Returns its id. Refusals (the caller's unit of work rolls
   * back): 422 insufficient_funds (a user account would go below zero), 422
   * validation_failed (a user balance past the largest amount), 404
   * not_found (a credited user is deleted). A reference used already throws
   * the store's unique violation. A zero or negative amount, one account on
   * both sides or two assets is a programming error (Error).
   */
  transfer(transfer: Transfer): Promise<string>
  /**
   * Writes the exact opposite of movement `transactionId`: each of its
   * postings negated, on the same accounts, in the same order, as a
   * `reversal` recorded under `reversal:<transactionId>` with memo
   * `{ ...memo, reverses: transactionId }`. Returns the reversal's id.
   * Refusals: 404 not_found (no such movement, or a credited user is
   * deleted), 409 conflict (reversed already: a movement is reversed at most
   * once, docs/decisions.md "Money moves by name"), 422 insufficient_funds
   * (the money it moved is spent), 422 validation_failed. A withdrawal's
   * debit and a reversal are not reversed (Error): a withdrawal gives its
   * money back by failing or being rejected, which its status records.
   */
  reverse(transactionId: string, options?: { memo?: Record<string, unknown> }): Promise<string>
}

export function ledger(wallet: WalletStore, now: Date): Ledger {
  return {
    transfer: (transfer) => postTransfer(wallet, transfer, now),
    reverse: (transactionId, options) => postReversal(wallet, transactionId, options?.memo ?? {}, now),
  }
}

async function postTransfer(wallet: WalletStore, { kind, from, to, amount, reference, memo }: Transfer, now: Date): Promise<string> {
  if (amount <= 0n) throw new Error(`ledger transfer of ${amount}: the amount must be positive`)
  if (from.id === to.id) throw new Error(`ledger transfer from ${from.id} to itself`)
  if (from.asset !== to.asset) throw new Error(`ledger transfer from ${from.asset} to ${to.asset}: one asset per transfer`)
  return postMovement(
    wallet,
    {
      kind,
      asset: from.asset,
      ...(reference !== undefined ? { reference } : {}),
      ...(memo !== undefined ? { memo } : {}),
      postings: [
        { accountId: from.id, userId: from.userId, amount: -amount },
        { accountId: to.id, userId: to.userId, amount },
      ],
    },
    now,
  )
}

/** Kinds `reverse` refuses: a withdrawal's debit (its failure or rejection gives it back) and a reversal. */
const IRREVERSIBLE: readonly LedgerTransactionKind[] = ['withdrawal', 'reversal']

async function postReversal(wallet: WalletStore, transactionId: string, memo: Record<string, unknown>, now: Date): Promise<string> {
  const recorded = await wallet.movement(transactionId)
  if (!recorded) throw new AppError('not_found', `No such ledger transaction: ${transactionId}`)
  const { transaction, postings } = recorded
  if (IRREVERSIBLE.includes(transaction.kind)) throw new Error(`ledger transaction ${transactionId} is a ${transaction.kind}: not reversed`)
  const reference = reversalReference(transactionId)
  // The unique index on references is the backstop (two reversals racing); this answers the plain repeat.
  if (await wallet.transactionByReference(reference)) throw new AppError('conflict', `Ledger transaction ${transactionId} was reversed already`)
  const assets = new Set(postings.map((p) => p.posting.asset))
  if (assets.size !== 1) throw new Error(`ledger transaction ${transactionId} has postings in ${assets.size} assets`)
  return postMovement(
    wallet,
    {
      kind: 'reversal',
      asset: [...assets][0]!,
      reference,
      memo: { ...memo, reverses: transactionId },
      postings: postings.map(({ posting, userId }) => ({ accountId: posting.accountId, userId, amount: -posting.amount })),
    },
    now,
  )
}

/** Whether a movement is a reversal written by `reverse` (rather than a withdrawal's). */
function reversed(t: Pick<LedgerTransaction, 'kind' | 'reference'>): string | null {
  return t.kind === 'reversal' && t.reference?.startsWith('reversal:') ? t.reference.slice('reversal:'.length) : null
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
 * Records a movement and updates balances, inside the caller's write: the
 * one primitive under `transfer` and `reverse`, which callers use instead. Throws
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
export async function postMovement(wallet: WalletStore, movement: Movement, now: Date): Promise<string> {
  const total = movement.postings.reduce((sum, p) => sum + p.amount, 0n)
  if (total !== 0n) throw new Error(`ledger movement does not balance: ${total}`)
  // Sorted, so two movements crediting the same users lock them in one order.
  const credited = [...new Set(movement.postings.filter((p) => p.userId !== null && p.amount > 0n).map((p) => p.userId!))].sort()
  for (const userId of credited) {
    if (!(await wallet.lockUserForCredit(userId))) throw new AppError('not_found', 'No such user: the account was deleted')
  }
  const id = newId('ledgerTransaction')
  await wallet.addTransaction({ id, kind: movement.kind, reference: movement.reference ?? null, memo: movement.memo ?? null }, now)
  for (const posting of movement.postings) {
    const account =
      (await wallet.account(posting.accountId)) ?? (await wallet.openAccount({ id: posting.accountId, userId: posting.userId, asset: movement.asset }, now))
    if (account.userId === null) {
      // A system account: the posting is its balance (see the top of this file).
      await wallet.addPosting({ transactionId: id, accountId: account.id, asset: movement.asset, amount: posting.amount, balanceAfter: null })
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
    await wallet.setBalance(account.id, balance)
    // The balance it leaves, kept with the posting: the player's history shows it (history.ts).
    await wallet.addPosting({ transactionId: id, accountId: account.id, asset: movement.asset, amount: posting.amount, balanceAfter: balance })
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
 * its account's postings up to it; each reversal `reverse` wrote is the exact
 * opposite of the movement it names.
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
  problems.push(...checkReversals(snapshot))
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
 * An escrow never holds less than nothing, and holds nothing once what it
 * was for is over: a tournament (completed: prizes and the house's remainder
 * paid; cancelled: every fee refunded, the funding returned) or a staked
 * match (decided: the pot paid, or both stakes refunded after a draw;
 * cancelled: both refunded), except what payouts held for review keep there
 * until an operator decides them: exactly that.
 */
function checkEscrows(
  { accounts, settledTournaments, settledMatches, heldPayouts }: Pick<LedgerSnapshot, 'accounts' | 'settledTournaments' | 'settledMatches' | 'heldPayouts'>,
  byAccount: Map<string, bigint>,
): string[] {
  const problems: string[] = []
  const tournaments = new Set(settledTournaments)
  const matches = new Set(settledMatches)
  // What a payout held for review keeps in escrow until an operator decides it (docs/integrity.md):
  // a staked match's whole pot (nothing settled), a tournament's held prizes.
  const held = new Map<string, bigint>()
  for (const h of heldPayouts) {
    if (h.kind === 'stake') held.set(h.matchId, (h.stake ?? 0n) * 2n)
    else held.set(h.tournamentId!, (held.get(h.tournamentId!) ?? 0n) + h.amount)
  }
  for (const a of accounts) {
    if (!a.id.startsWith(ESCROW_PREFIX)) continue
    const sum = byAccount.get(a.id) ?? 0n
    const owner = a.id.slice(ESCROW_PREFIX.length, a.id.lastIndexOf(':'))
    const keeps = held.get(owner) ?? 0n
    const what = tournaments.has(owner) ? 'finished tournament' : matches.has(owner) ? 'settled match' : null
    if (sum < 0n) problems.push(`escrow ${a.id} is negative: ${sum}`)
    else if (what !== null && sum !== keeps) problems.push(`escrow ${a.id} of ${what} ${owner} ${keeps === 0n ? `still holds ${sum}` : `holds ${sum}, not the ${keeps} held for review`}`)
  }
  // A held payout whose escrow account was never opened holds nothing: its money is missing.
  const opened = new Set(accounts.filter((a) => a.id.startsWith(ESCROW_PREFIX)).map((a) => a.id.slice(ESCROW_PREFIX.length, a.id.lastIndexOf(':'))))
  for (const [owner, keeps] of held) if (!opened.has(owner) && keeps !== 0n) problems.push(`escrow of ${owner} holds nothing, not the ${keeps} held for review`)
  return problems
}

/**
 * A reversal `reverse` wrote reverses a movement that exists, one `reverse`
 * may reverse, and its postings are that movement's negated, in order.
 */
function checkReversals({ transactions, postings }: Pick<LedgerSnapshot, 'transactions' | 'postings'>): string[] {
  const problems: string[] = []
  const kinds = new Map(transactions.map((t) => [t.id, t.kind]))
  const byTransaction = new Map<string, { accountId: string; amount: bigint }[]>()
  for (const p of [...postings].sort((a, b) => a.id - b.id)) {
    const list = byTransaction.get(p.transactionId) ?? []
    list.push({ accountId: p.accountId, amount: p.amount })
    byTransaction.set(p.transactionId, list)
  }
  const shape = (list: { accountId: string; amount: bigint }[]) => list.map((p) => `${p.accountId} ${p.amount}`).join(', ')
  for (const t of transactions) {
    const of = reversed(t)
    if (of === null) continue
    const kind = kinds.get(of)
    if (kind === undefined) {
      problems.push(`reversal ${t.id} reverses unknown transaction ${of}`)
      continue
    }
    if (IRREVERSIBLE.includes(kind)) problems.push(`reversal ${t.id} reverses ${kind} ${of}`)
    const expected = (byTransaction.get(of) ?? []).map((p) => ({ accountId: p.accountId, amount: -p.amount }))
    if (shape(byTransaction.get(t.id) ?? []) !== shape(expected)) problems.push(`reversal ${t.id} is not the exact opposite of ${of}`)
  }
  return problems
}

/**
 * Every withdrawal has exactly one debit; a failed or rejected one exactly
 * one reversal, any other none; and no debit or reversal exists without its withdrawal.
 */
function checkWithdrawalsAgainstLedger({ transactions, withdrawals }: Pick<LedgerSnapshot, 'transactions' | 'withdrawals'>): string[] {
  const problems: string[] = []
  // A reversal `reverse` wrote is checked with the movement it reverses (checkReversals), not here.
  const movements = transactions.filter((t) => t.kind === 'withdrawal' || (t.kind === 'reversal' && reversed(t) === null))
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
