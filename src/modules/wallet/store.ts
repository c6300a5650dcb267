// What the wallet module needs from the database, in its own terms (see
// src/db/storage.ts): custody wallets, the double-entry ledger and withdrawals.
//
// Money is integer minor units in a bigint here; how an engine stores it is
// its own business (SQLite: decimal TEXT, since neither its 64-bit integers
// nor JavaScript numbers cover the contract's range).

/** A user's custody wallet: its address is the group public key. */
export interface Wallet {
  userId: string
  asset: string
  /** Base58 of the 2-of-3 FROST group public key. */
  address: string
  /** Which key the custody client signs with; never a share or secret. */
  keyRef: string
  createdAt: Date
}

/** One balance per (owner, asset): users' wallets and the system's own accounts. */
export interface LedgerAccount {
  /** `user:<userId>:<asset>` or `system:<name>:<asset>`. */
  id: string
  /** Set for user accounts, which may not go below zero; null for system accounts. */
  userId: string | null
  asset: string
  /** A user account's running balance; a system account keeps none (see src/modules/wallet/ledger.ts). */
  balance: bigint
}

export type LedgerTransactionKind =
  | 'credit'
  | 'withdrawal'
  | 'reversal'
  | 'adjustment'
  // Tournament money (src/modules/games/prizes.ts): a fee into a tournament's escrow and back, a prize out of it,
  | 'entry_fee'
  | 'entry_fee_refund'
  | 'prize'
  // and, never on a wallet, an operator's funding of a prize pool and what is left of an escrow leaving it (to the house, or back to funding).
  | 'prize_funding'
  | 'escrow_release'
  // Stakes (src/modules/matchmaking/stakes.ts): a player's stake into a match's escrow, the pot to its winner, the house's rake, a stake back.
  | 'stake'
  | 'stake_payout'
  | 'rake'
  | 'stake_refund'

/** A movement of money: its postings sum to zero per asset. */
export interface LedgerTransaction {
  id: string
  kind: LedgerTransactionKind
  /** Idempotency of operator credits (`credit:<reference>`) and adjustments (`adjustment:<reference>`); unique when set. */
  reference: string | null
  memo: Record<string, unknown> | null
  createdAt: Date
}

export interface LedgerPosting {
  /** Assigned by the store, in the order postings were written. */
  id: number
  transactionId: string
  accountId: string
  asset: string
  /** Signed: positive credits the account, negative debits it. */
  amount: bigint
  /**
   * A user account's balance right after this posting, written with it; null
   * on a system account and on a posting written before arena stored it (its
   * balance after is then the sum of the account's postings up to it).
   */
  balanceAfter: bigint | null
}

/**
 * `awaiting_approval` (above ARENA_WITHDRAWAL_APPROVAL_ABOVE, until an
 * operator approves or rejects it) and `held` (a new destination, until its
 * hold ends) come before `pending_signature`; `signed`, `failed` and
 * `rejected` are final. Funds leave the balance when it is created, whatever
 * its first status; `failed` and `rejected` give them back.
 */
export type WithdrawalStatus = 'awaiting_approval' | 'held' | 'pending_signature' | 'signed' | 'failed' | 'rejected'

export interface Withdrawal {
  id: string
  userId: string
  asset: string
  amount: bigint
  destinationAddress: string
  /** Unique per user: the same key never debits twice. */
  idempotencyKey: string
  status: WithdrawalStatus
  /** base58 Ed25519 signature over the canonical withdrawal message, once signed. */
  signature: string | null
  failureReason: string | null
  /** Why an operator rejected it, once `rejected`. */
  rejectionReason: string | null
  /** When an operator approved it (it was `awaiting_approval`); null unless one did. */
  approvedAt: Date | null
  /** When its new-destination hold ends; null when it has none. */
  holdUntil: Date | null
  /** The PIN session the withdrawal consumed. */
  pinSessionId: string
  createdAt: Date
  updatedAt: Date
}

/** Everything the ledger check reads, as of one moment. */
export interface LedgerSnapshot {
  accounts: LedgerAccount[]
  transactions: LedgerTransaction[]
  postings: LedgerPosting[]
  withdrawals: Withdrawal[]
  /** The ids of the tournaments that are over (`completed` or `cancelled`): their escrow must be empty. */
  settledTournaments: string[]
  /** The ids of the staked matches that are over (`decided` or `cancelled`): their escrow must be empty (contract §16). */
  settledMatches: string[]
  /** The ids of the deleted users that have a ledger account: those accounts must hold nothing. */
  deletedAccountHolders: string[]
  /**
   * The payouts held for review (status held, docs/integrity.md), with the
   * staked match's stake: a settled match's escrow keeps its whole pot, a
   * finished tournament's the sum of its held prizes.
   */
  heldPayouts: { kind: 'stake' | 'prize'; matchId: string; tournamentId: string | null; amount: bigint; stake: bigint | null }[]
}

export interface WalletStore {
  // ---- wallets ----
  /** The user's wallet, or null before its first use. */
  wallet(userId: string): Promise<Wallet | null>
  /** Records a wallet unless the user has one already: then the first one stays and this one is dropped. */
  addWalletUnlessExists(wallet: Wallet): Promise<void>
  /** Whether a user with this id exists and is not deleted (credits are refused for anyone else). */
  userExists(userId: string): Promise<boolean>
  /**
   * Inside a write, before a credit to the user: holds the user against a
   * deletion until this unit of work ends, and answers whether the user
   * exists and is not deleted, as of the lock (a deletion that committed
   * while this waited is seen). Credits to one user do not wait for each
   * other here. On PostgreSQL the user's row `FOR SHARE`, whatever the
   * isolation; on SQLite the one writer holds everyone off already.
   * The one rule with lockUserForDeletion: docs/decisions.md, "A deleted
   * account holds no money".
   */
  lockUserForCredit(userId: string): Promise<boolean>
  /**
   * Inside a write, first in a deletion: holds off every credit to the user
   * (lockUserForCredit) until this unit of work ends, and waits for those
   * under way. On PostgreSQL the user's row `FOR NO KEY UPDATE` (the lock the
   * deletion's own update of the row takes, taken first).
   */
  lockUserForDeletion(userId: string): Promise<void>

  // ---- ledger ----
  /** The account's balance; 0 for an account with no postings yet. */
  balance(accountId: string): Promise<bigint>
  /**
   * The account a movement is about to change, or null when it was never
   * used. Inside a write. (An engine whose writers run concurrently must lock
   * the row here, so that the balance read is the balance updated.)
   */
  account(accountId: string): Promise<LedgerAccount | null>
  /** Opens an account at balance 0. */
  openAccount(account: Omit<LedgerAccount, 'balance'>, now: Date): Promise<LedgerAccount>
  setBalance(accountId: string, balance: bigint): Promise<void>
  /** Records a movement's header; a reference already used throws (the write rolls back). */
  addTransaction(transaction: Omit<LedgerTransaction, 'createdAt'>, now: Date): Promise<void>
  addPosting(posting: Omit<LedgerPosting, 'id'>): Promise<void>
  /** The exact sum of every posting on the account: a system account's balance (a tournament's escrow). */
  postingsTotal(accountId: string): Promise<bigint>
  /** The movement recorded under an idempotency reference, if any. */
  transactionByReference(reference: string): Promise<LedgerTransaction | null>
  /**
   * A movement and its postings in the order they were written, each with
   * its account's user (null: a system account); null when there is no such
   * movement. What a reversal reads (ledger.ts, `reverse`). Locks nothing.
   */
  movement(transactionId: string): Promise<RecordedMovement | null>
  /**
   * Every account, transaction, posting and withdrawal, read as of one moment
   * (never half of a movement that was committing meanwhile).
   */
  ledgerSnapshot(): Promise<LedgerSnapshot>

  // ---- withdrawals ----
  withdrawal(id: string): Promise<Withdrawal | null>
  /** The user's withdrawal made under `idempotencyKey`, if any. */
  withdrawalByKey(userId: string, idempotencyKey: string): Promise<Withdrawal | null>
  addWithdrawal(withdrawal: Withdrawal): Promise<void>
  /** Records the signature: the withdrawal is `signed`. Returns it as it now is. */
  markWithdrawalSigned(id: string, signature: string, now: Date): Promise<Withdrawal>
  /** Records why custody refused it: the withdrawal is `failed`. Returns it as it now is. */
  markWithdrawalFailed(id: string, reason: string, now: Date): Promise<Withdrawal>
  /**
   * Moves the withdrawal from status `from` to `to` (with the rejection
   * reason or the approval time, when given) only if it is in `from` when the update runs,
   * and returns it as it now is; null when it was not in `from` (another
   * unit of work moved it first: nothing changed).
   */
  moveWithdrawal(id: string, from: WithdrawalStatus, to: WithdrawalStatus, now: Date, extra?: { rejectionReason?: string; approvedAt?: Date }): Promise<Withdrawal | null>
  /** Whether the user has a `signed` withdrawal to this address (the new-destination hold). */
  hasSignedWithdrawalTo(userId: string, destinationAddress: string): Promise<boolean>
  /** Withdrawals still waiting for their signature, oldest first. */
  pendingWithdrawals(): Promise<Withdrawal[]>
  /** How many withdrawals wait in each unfinished status (metrics, at scrape time: one grouped count). */
  withdrawalCounts(): Promise<{ status: WithdrawalStatus; count: number }[]>
  /**
   * The user's withdrawals created strictly after `since`, whatever their
   * status, oldest first (the daily withdrawal limit). Inside a write it reads
   * that unit of work's state, so a limit checked there and the debit that
   * follows are one decision.
   */
  withdrawalsSince(userId: string, since: Date): Promise<Withdrawal[]>

  // ---- one user's money (operator view, deletion, export; contract §8) ----
  /** The user's ledger accounts, one per asset it ever held, by asset. */
  accountsOf(userId: string): Promise<LedgerAccount[]>
  /** Every posting on the user's accounts with its movement, oldest first. */
  postingsOf(userId: string): Promise<UserPosting[]>
  /** The user's withdrawals, oldest first. */
  withdrawalsOf(userId: string): Promise<Withdrawal[]>

  // ---- the player's history (contract §10) ----
  /**
   * The account's postings after posting `after` (0: from its first), in
   * posting order, at most `limit`, each with its movement. Posting order is
   * commit order on one account: every movement on it updates its row, so
   * two never commit side by side.
   */
  accountPostings(accountId: string, after: number, limit: number): Promise<UserPosting[]>
  /** Whether posting `id` is one of the account's (a history cursor names one). */
  postingOnAccount(accountId: string, id: number): Promise<boolean>
  /** The exact sum of the account's postings before posting `id`: its balance just before it. */
  balanceBefore(accountId: string, id: number): Promise<bigint>
  /**
   * The user's withdrawals after `after` (one of them), oldest first (by
   * creation time, then id), at most `limit`.
   */
  withdrawalsPage(userId: string, after: Withdrawal | null, limit: number): Promise<Withdrawal[]>
}

/** A posting on a user's account and the movement it belongs to. */
export interface UserPosting {
  posting: LedgerPosting
  transaction: LedgerTransaction
}

/** A recorded movement with its postings, each with its account's user (WalletStore.movement). */
export interface RecordedMovement {
  transaction: LedgerTransaction
  postings: { posting: LedgerPosting; userId: string | null }[]
}
