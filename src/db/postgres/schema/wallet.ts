import { bigint, index, json, numeric, pgTable, text } from 'drizzle-orm/pg-core'
import { timestampMs } from './columns'
import { users } from './auth'

// Amounts are integer minor units in NUMERIC (exact, any size; SQLite keeps
// them as decimal TEXT): JavaScript numbers fall short of the contract's
// range and no float may ever hold money. postgres.js reads NUMERIC as a
// string; arithmetic happens in BigInt.

/** One balance per (owner, asset): users' wallets and the system's own accounts. */
export const ledgerAccounts = pgTable(
  'ledger_accounts',
  {
    /** `user:<userId>:<asset>` or `system:<name>:<asset>`. */
    id: text('id').primaryKey(),
    userId: text('user_id').references(() => users.id),
    asset: text('asset').notNull(),
    /** A user account's running sum of its postings, never below zero. System accounts keep none (their balance is the sum of their postings; src/modules/wallet/ledger.ts). */
    balance: numeric('balance', { mode: 'string' }).notNull(),
    createdAt: timestampMs('created_at').notNull(),
  },
  (table) => [index('ledger_accounts_user').on(table.userId)],
)

/** A movement of money: its postings sum to zero per asset. */
export const ledgerTransactions = pgTable('ledger_transactions', {
  id: text('id').primaryKey(),
  kind: text('kind', { enum: ['credit', 'withdrawal', 'reversal', 'adjustment', 'entry_fee', 'entry_fee_refund', 'prize', 'prize_funding', 'escrow_release'] }).notNull(),
  /** Idempotency of operator credits (`credit:<reference>`), adjustments (`adjustment:<reference>`) and tournament money (src/modules/games/prizes.ts); unique when set. */
  reference: text('reference').unique(),
  memo: json('memo').$type<Record<string, unknown>>(),
  createdAt: timestampMs('created_at').notNull(),
})

export const ledgerPostings = pgTable(
  'ledger_postings',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedByDefaultAsIdentity(),
    transactionId: text('transaction_id')
      .notNull()
      .references(() => ledgerTransactions.id),
    accountId: text('account_id')
      .notNull()
      .references(() => ledgerAccounts.id),
    asset: text('asset').notNull(),
    /** Signed minor units: positive credits the account, negative debits it. */
    amount: numeric('amount', { mode: 'string' }).notNull(),
    /**
     * A user account's balance right after this posting (the player's history
     * shows it), written by the movement that posts it. Null on system
     * accounts, and on postings written before the column existed: their
     * balance is the sum of the account's postings up to them.
     */
    balanceAfter: numeric('balance_after', { mode: 'string' }),
  },
  // By account, then id: one account's postings in order (a player's history page) without reading the others'.
  (table) => [index('ledger_postings_transaction').on(table.transactionId), index('ledger_postings_account').on(table.accountId, table.id)],
)

/** A user's custody wallet: created on first use, its address is the group public key. */
export const wallets = pgTable('wallets', {
  userId: text('user_id')
    .primaryKey()
    .references(() => users.id),
  asset: text('asset').notNull(),
  /** Base58 of the 2-of-3 FROST group public key (Solana-style). */
  address: text('address').notNull(),
  /** Which key the custody client signs with; never a share or secret. */
  keyRef: text('key_ref').notNull(),
  createdAt: timestampMs('created_at').notNull(),
})
