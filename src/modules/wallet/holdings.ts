// One user's money as the account pages see it (contract §8): what the
// wallet holds and what is still on its way out (the operator's view, the
// deletion check), and every movement on it (the export). Each takes the
// store it reads, so a unit of work passes `tx.wallet` and decides on what
// it read, and a plain read passes `storage.read.wallet`.
import { toIso } from '../../shared/clock'
import { ASSETS, formatAmount, type Asset } from '../../shared/money'
import type { LedgerTransactionKind, WalletStore, Withdrawal } from './store'

export interface Holdings {
  /** The custody wallet's address; null before the wallet's first use. */
  address: string | null
  /** One balance per asset the user ever held, decimal strings. */
  balances: { asset: string; balance: string }[]
  /** Withdrawals debited but not yet signed (`awaiting_approval`, `held`, `pending_signature`). */
  pendingWithdrawals: number
}

/** The kinds of movement that post to a wallet: all but a prize pool's funding, an escrow's release and a match's rake (system accounts only). */
export type WalletMovementKind = Exclude<LedgerTransactionKind, 'prize_funding' | 'escrow_release' | 'rake'>

export function walletMovementKind(kind: LedgerTransactionKind): WalletMovementKind {
  if (kind === 'prize_funding' || kind === 'escrow_release' || kind === 'rake') throw new Error(`a ${kind} movement never posts to a wallet`)
  return kind
}

export interface StatementEntry {
  transactionId: string
  kind: WalletMovementKind
  /** The movement's idempotency reference (`credit:<reference>` for an operator credit, `adjustment:<reference>` for an adjustment), or null. */
  reference: string | null
  asset: string
  /** Signed decimal string: positive credits the wallet, negative debits it. */
  amount: string
  createdAt: string
}

function assetOf(code: string): Asset {
  const asset = ASSETS[code]
  // Every account is opened in a known asset; anything else is a bug, not data to guess at.
  if (asset === undefined) throw new Error(`ledger account in unknown asset ${code}`)
  return asset
}

/** A signed amount of minor units as a decimal string (formatAmount takes no sign). */
export function formatSigned(minor: bigint, asset: Asset): string {
  return minor < 0n ? `-${formatAmount(-minor, asset)}` : formatAmount(minor, asset)
}

/** Debited and not yet signed: awaiting approval, held or being signed. A switch over every status. */
export function isPending(withdrawal: Withdrawal): boolean {
  switch (withdrawal.status) {
    case 'awaiting_approval':
    case 'held':
    case 'pending_signature':
      return true
    case 'signed':
    case 'failed':
    case 'rejected':
      return false
  }
}

export async function holdingsOf(store: WalletStore, userId: string): Promise<Holdings & { empty: boolean }> {
  const [wallet, accounts, withdrawals] = await Promise.all([store.wallet(userId), store.accountsOf(userId), store.withdrawalsOf(userId)])
  const pendingWithdrawals = withdrawals.filter(isPending).length
  return {
    address: wallet?.address ?? null,
    balances: accounts.map((account) => ({ asset: account.asset, balance: formatAmount(account.balance, assetOf(account.asset)) })),
    pendingWithdrawals,
    // Nothing the user could still be owed: no balance above zero, nothing on its way out.
    empty: pendingWithdrawals === 0 && accounts.every((account) => account.balance === 0n),
  }
}

/** Every posting on the user's accounts, oldest first. */
export async function statementOf(store: WalletStore, userId: string): Promise<StatementEntry[]> {
  return (await store.postingsOf(userId)).map(({ posting, transaction }) => ({
    transactionId: transaction.id,
    kind: walletMovementKind(transaction.kind),
    reference: transaction.reference,
    asset: posting.asset,
    amount: formatSigned(posting.amount, assetOf(posting.asset)),
    createdAt: toIso(transaction.createdAt),
  }))
}
