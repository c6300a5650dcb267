// The signed-in player's wallet and its history:
// `arena.wallet()` is the balance and address; `arena.wallet.transactions()`
// every movement with the balance after it, `arena.wallet.withdrawals()` the
// withdrawals, both oldest first, a page at a time.
import type { Auth } from './auth.js'
import { readJson } from './transport.js'
import type { TransactionsPage, Wallet, WithdrawalsPage } from './types.js'

export interface PageOptions {
  /** The `cursor` of the previous answer; absent, from the start. */
  after?: string
  /** 1 to 100; default 50. */
  limit?: number
}

export interface WalletClient {
  /** Balance and custody address (the wallet is created on first use). */
  (): Promise<Wallet>
  /**
   * One page of the wallet's movements, oldest first, after `after`. The
   * cursor always comes back: keep it and pass it later to read only what
   * moved since. Fewer than `limit` movements: there is nothing more yet.
   */
  transactions(options?: PageOptions): Promise<TransactionsPage>
  /** Every movement after `after` (all of them without it), page after page, and the cursor to read on from later. */
  allTransactions(after?: string): Promise<TransactionsPage>
  /** One page of the player's withdrawals, oldest first; pass its `cursor` as `after` for the next (null at the end). */
  withdrawals(options?: PageOptions): Promise<WithdrawalsPage>
}

const PAGE = 100

export function walletClient(auth: Auth): WalletClient {
  const get = async <T>(path: string, options: PageOptions = {}): Promise<T> => {
    const query = { after: options.after, limit: options.limit === undefined ? undefined : String(options.limit) }
    return readJson<T>(await auth.send({ method: 'GET', path, query }))
  }
  const transactions = (options: PageOptions = {}) => get<TransactionsPage>('/api/v1/wallet/transactions', options)
  return Object.assign(() => get<Wallet>('/api/v1/wallet'), {
    transactions,
    async allTransactions(after?: string): Promise<TransactionsPage> {
      const all: TransactionsPage['transactions'] = []
      let cursor = after
      for (;;) {
        const page = await transactions({ limit: PAGE, ...(cursor !== undefined ? { after: cursor } : {}) })
        all.push(...page.transactions)
        cursor = page.cursor
        if (page.transactions.length < PAGE) return { transactions: all, cursor, held: page.held }
      }
    },
    withdrawals: (options: PageOptions = {}) => get<WithdrawalsPage>('/api/v1/wallet/withdrawals', options),
  })
}
