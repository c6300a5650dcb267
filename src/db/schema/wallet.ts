import { index, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import { amount, instant, json, serial } from './columns'
import { users } from './auth'

// Amounts are integer minor units written as decimal TEXT: SQLite's 64-bit
// integers and JavaScript numbers both fall short of the contract's range,
// and no float may ever hold money. Arithmetic happens in BigInt.

/** One balance per (owner, asset): users' wallets and the system's own accounts. */
export const ledgerAccounts = sqliteTable(
  'ledger_accounts',
  {
    /** `user:<userId>:<asset>` or `system:<name>:<asset>`. */
    id: text('id').primaryKey(),
    userId: text('user_id').references(() => users.id),
    asset: text('asset').notNull(),
    /** A user account's running sum of its postings, never below zero. System accounts keep none (their balance is the sum of their postings; src/modules/wallet/ledger.ts). */
    balance: amount('balance').notNull(),
    createdAt: instant('created_at').notNull(),
  },
  (table) => [index('ledger_accounts_user').on(table.userId)],
)

/** A movement of money: its postings sum to zero per asset. */
export const ledgerTransactions = sqliteTable('ledger_transactions', {
  id: text('id').primaryKey(),
  kind: text('kind', { enum: ['credit', 'withdrawal', 'reversal', 'adjustment', 'entry_fee', 'entry_fee_refund', 'prize', 'prize_funding', 'escrow_release', 'stake', 'stake_payout', 'stake_refund', 'rake'] }).notNull(),
  /** Idempotency of operator credits (`credit:<reference>`), adjustments (`adjustment:<reference>`) and tournament money (src/modules/games/prizes.ts); unique when set. */
  reference: text('reference').unique(),
  memo: json<Record<string, unknown>>('memo'),
  createdAt: instant('created_at').notNull(),
})

export const ledgerPostings = sqliteTable(
  'ledger_postings',
  {
    id: serial('id'),
    transactionId: text('transaction_id')
      .notNull()
      .references(() => ledgerTransactions.id),
    accountId: text('account_id')
      .notNull()
      .references(() => ledgerAccounts.id),
    asset: text('asset').notNull(),
    /** Signed minor units: positive credits the account, negative debits it. */
    amount: amount('amount').notNull(),
    /**
     * A user account's balance right after this posting (the player's history
     * shows it), written by the movement that posts it. Null on system
     * accounts, and on postings written before the column existed: their
     * balance is the sum of the account's postings up to them.
     */
    balanceAfter: amount('balance_after'),
  },
  // By account, then id: one account's postings in order (a player's history page) without reading the others'.
  (table) => [index('ledger_postings_transaction').on(table.transactionId), index('ledger_postings_account').on(table.accountId, table.id)],
)

/** A user's custody wallet: created on first use, its address is the group public key. */
export const wallets = sqliteTable('wallets', {
  userId: text('user_id')
    .primaryKey()
    .references(() => users.id),
  asset: text('asset').notNull(),
  /** Base58 of the 2-of-3 FROST group public key (Solana-style). */
  address: text('address').notNull(),
  /** Which key the custody client signs with; never a share or secret. */
  keyRef: text('key_ref').notNull(),
  createdAt: instant('created_at').notNull(),
})
