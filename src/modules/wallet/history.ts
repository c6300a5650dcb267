// The player's money history (contract §10): every movement on the caller's
// wallet, oldest first, each with the balance it left, a page at a time.
//
// The wallet is one account, the user's account in the wallet's asset (the
// one GET /wallet shows). Its postings are its history: posting order is
// commit order on one account (every movement updates the account's row, so
// two never commit side by side, on either engine), and a posting id is the
// cursor. The balance after a posting is stored with it by postMovement; a
// posting written before arena stored it has none, and its balance after is
// the exact sum of the account's postings up to it (docs/decisions.md, "The
// player's money history").
import { toIso } from '../../shared/clock'
import { AppError } from '../../shared/errors'
import { formatAmount, type Asset } from '../../shared/money'
import { formatSigned, walletMovementKind } from './holdings'
import { userAccountId } from './ledger'
import type { TransactionsPage } from './model'
import type { LedgerTransaction, LedgerTransactionKind, UserPosting, WalletStore } from './store'

/** What a movement was, as the player sees it (contract §10). */
export const HISTORY_KINDS = ['credit', 'adjustment', 'withdrawal', 'withdrawal_reversal', 'entry_fee', 'entry_fee_refund', 'prize', 'stake', 'stake_payout', 'stake_refund'] as const
export type HistoryKind = (typeof HISTORY_KINDS)[number]

export const HISTORY_PAGE_DEFAULT = 50
export const HISTORY_PAGE_MAX = 100

/**
 * The ledger's kinds are the player's, but for a withdrawal's compensating
 * movement. A prize pool's funding and an escrow's release never post to a
 * wallet (they move money between system accounts and escrows).
 */
export function historyKind(kind: LedgerTransactionKind): HistoryKind {
  const walletKind = walletMovementKind(kind)
  return walletKind === 'reversal' ? 'withdrawal_reversal' : walletKind
}

/**
 * What the player can match a movement with: the withdrawal for a withdrawal
 * and its reversal; the tournament for an entry fee, its refund and a prize; the match for a stake, its payout and its refund; otherwise the reference the movement was made under,
 * without the namespace arena keeps references apart with (`credit:`,
 * `adjustment:`), so an operator credit shows the operator's reference.
 */
export function historyReference(transaction: LedgerTransaction): string | null {
  const withdrawalId = (transaction.memo as { withdrawalId?: unknown } | null)?.withdrawalId
  if ((transaction.kind === 'withdrawal' || transaction.kind === 'reversal') && typeof withdrawalId === 'string') return withdrawalId
  // A fee, its refund and a prize: the tournament they were for.
  const tournamentId = (transaction.memo as { tournamentId?: unknown } | null)?.tournamentId
  if ((transaction.kind === 'entry_fee' || transaction.kind === 'entry_fee_refund' || transaction.kind === 'prize') && typeof tournamentId === 'string') return tournamentId
  // A stake, its payout and its refund: the match they were for.
  const matchId = (transaction.memo as { matchId?: unknown } | null)?.matchId
  if ((transaction.kind === 'stake' || transaction.kind === 'stake_payout' || transaction.kind === 'stake_refund') && typeof matchId === 'string') return matchId
  if (transaction.reference === null) return null
  const colon = transaction.reference.indexOf(':')
  return colon === -1 ? transaction.reference : transaction.reference.slice(colon + 1)
}

const CURSOR_PREFIX = 'h1.'

export function encodeHistoryCursor(postingId: number): string {
  return CURSOR_PREFIX + Buffer.from(String(postingId)).toString('base64url')
}

function invalid(path: string, message: string): AppError {
  return new AppError('validation_failed', 'Request failed validation', { details: [{ path, message }] })
}

/** A page size from the query: the schema checked the range; a fraction is refused here. */
export function pageLimit(limit: number | undefined, fallback: number): number {
  if (limit === undefined) return fallback
  if (!Number.isInteger(limit) || limit < 1 || limit > HISTORY_PAGE_MAX) throw invalid('query/limit', `Expected a whole number from 1 to ${HISTORY_PAGE_MAX}`)
  return limit
}

/**
 * The posting a cursor names: 0 for the start (absent or empty, or the
 * cursor of an empty history), else one of this account's postings. Anything
 * else (garbled, another account's, never issued) is 422.
 */
async function decodeCursor(store: WalletStore, accountId: string, cursor: string | undefined): Promise<number> {
  if (cursor === undefined || cursor === '') return 0
  const raw = cursor.startsWith(CURSOR_PREFIX) ? Buffer.from(cursor.slice(CURSOR_PREFIX.length), 'base64url').toString() : ''
  if (!/^(0|[1-9][0-9]{0,14})$/.test(raw)) throw invalid('query/after', 'Not a cursor this server issued')
  const id = Number(raw)
  if (id !== 0 && !(await store.postingOnAccount(accountId, id))) throw invalid('query/after', 'Not a cursor this server issued')
  return id
}

/**
 * The balance after each posting of a contiguous run of one account's
 * postings: the stored one, or (for a posting written before arena stored
 * it) the one before plus its amount, starting from the exact sum of the
 * account's earlier postings, read only when the run needs it.
 */
export async function balancesAfter(store: WalletStore, accountId: string, rows: UserPosting[]): Promise<bigint[]> {
  const out: bigint[] = []
  let running: bigint | null = null
  for (const { posting } of rows) {
    let after = posting.balanceAfter
    if (after === null) {
      running ??= await store.balanceBefore(accountId, posting.id)
      after = running + posting.amount
    }
    out.push(after)
    running = after
  }
  return out
}

/** One page of the user's history in `asset`, oldest first, after `query.after`. */
export async function historyPage(store: WalletStore, userId: string, asset: Asset, query: { after?: string; limit?: number }): Promise<Omit<TransactionsPage, 'held'>> {
  const accountId = userAccountId(userId, asset.code)
  const limit = pageLimit(query.limit, HISTORY_PAGE_DEFAULT)
  const after = await decodeCursor(store, accountId, query.after)
  const rows = await store.accountPostings(accountId, after, limit)
  const balances = await balancesAfter(store, accountId, rows)
  return {
    transactions: rows.map(({ posting, transaction }, i) => ({
      id: transaction.id,
      kind: historyKind(transaction.kind),
      amount: formatSigned(posting.amount, asset),
      balanceAfter: formatAmount(balances[i]!, asset),
      reference: historyReference(transaction),
      createdAt: toIso(transaction.createdAt),
    })),
    cursor: encodeHistoryCursor(rows.at(-1)?.posting.id ?? after),
  }
}
