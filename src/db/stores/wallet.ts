// Wallets, the ledger and withdrawals, on either engine. Amounts are decimal
// TEXT on SQLite and NUMERIC on PostgreSQL, strings through Drizzle on both
// (src/db/schema/wallet.ts), bigint on this side of the store.
//
// What stays per engine, in its subclass: on SQLite the statements of a PIN
// purchase, compiled once per connection (src/db/sqlite/stores/wallet.ts),
// and the ledger snapshot read in one read transaction; on PostgreSQL the
// row locks a credit, a deletion and a READ COMMITTED movement take, a
// concurrently opened account reported as a serialization failure, the
// snapshot's REPEATABLE READ transaction and sums in NUMERIC
// (src/db/postgres/stores/wallet.ts).
import { and, asc, count, eq, gt, inArray, isNull, lt, or } from 'drizzle-orm'
import type {
  LedgerAccount,
  LedgerPosting,
  LedgerSnapshot,
  LedgerTransaction,
  RecordedMovement,
  Wallet,
  WalletStore,
  UserPosting,
  Withdrawal,
  WithdrawalStatus,
} from '../../modules/wallet/store'
import { mapEngineError } from '../errors'
import { toAccount, toPosting, toTransaction, toWallet, toWithdrawal } from '../rows'
import { Queries } from './scope'

export abstract class WalletQueries extends Queries implements WalletStore {
  /**
   * Runs an insert, a unique violation arriving as UniqueViolationError (the
   * caller's write rolls back), as the interface says of a reference or an
   * idempotency key already used.
   */
  protected async insert(run: () => Promise<unknown>): Promise<void> {
    try {
      await run()
    } catch (error) {
      throw mapEngineError(error)
    }
  }

  /** Every table as of one moment: how depends on the engine's transactions. */
  abstract ledgerSnapshot(): Promise<LedgerSnapshot>

  // ---- wallets ----

  async wallet(userId: string): Promise<Wallet | null> {
    const [row] = await this.db.select().from(this.t.wallets).where(eq(this.t.wallets.userId, userId))
    return row ? toWallet(row) : null
  }

  async addWalletUnlessExists(wallet: Wallet): Promise<void> {
    // On PostgreSQL a wallet another instance inserted and committed after
    // this snapshot began is a serialization failure under SERIALIZABLE, not
    // a silent no-op: the rerun sees it and keeps it.
    await this.db.insert(this.t.wallets).values(wallet).onConflictDoNothing()
  }

  async userExists(userId: string): Promise<boolean> {
    const { users } = this.t
    const [row] = await this.db.select({ id: users.id }).from(users).where(and(eq(users.id, userId), isNull(users.deletedAt)))
    return row !== undefined
  }

  // One writer at a time (SQLite): inside a write no deletion or credit runs
  // meanwhile, so a read is the lock. An engine with concurrent writers locks
  // the user's row instead (PostgreSQL's subclass).
  lockUserForCredit(userId: string): Promise<boolean> {
    return this.userExists(userId)
  }

  async lockUserForDeletion(_userId: string): Promise<void> {}

  // ---- ledger ----

  async balance(accountId: string): Promise<bigint> {
    const { ledgerAccounts } = this.t
    const [account] = await this.db.select({ balance: ledgerAccounts.balance }).from(ledgerAccounts).where(eq(ledgerAccounts.id, accountId))
    return account ? BigInt(account.balance) : 0n
  }

  async account(accountId: string): Promise<LedgerAccount | null> {
    const [row] = await this.db.select().from(this.t.ledgerAccounts).where(eq(this.t.ledgerAccounts.id, accountId))
    return row ? toAccount(row) : null
  }

  async openAccount(account: Omit<LedgerAccount, 'balance'>, now: Date): Promise<LedgerAccount> {
    const [row] = await this.db
      .insert(this.t.ledgerAccounts)
      .values({ ...account, balance: '0', createdAt: now })
      .returning()
    return toAccount(row!)
  }

  async setBalance(accountId: string, balance: bigint): Promise<void> {
    await this.db.update(this.t.ledgerAccounts).set({ balance: balance.toString() }).where(eq(this.t.ledgerAccounts.id, accountId))
  }

  async addTransaction(transaction: Omit<LedgerTransaction, 'createdAt'>, now: Date): Promise<void> {
    // A reference already used: UniqueViolationError, as the interface says.
    await this.insert(() => this.db.insert(this.t.ledgerTransactions).values({ ...transaction, createdAt: now }))
  }

  async addPosting(posting: Omit<LedgerPosting, 'id'>): Promise<void> {
    await this.db.insert(this.t.ledgerPostings).values({ ...posting, amount: posting.amount.toString(), balanceAfter: posting.balanceAfter === null ? null : posting.balanceAfter.toString() })
  }

  async transactionByReference(reference: string): Promise<LedgerTransaction | null> {
    const [row] = await this.db.select().from(this.t.ledgerTransactions).where(eq(this.t.ledgerTransactions.reference, reference))
    return row ? toTransaction(row) : null
  }

  async movement(transactionId: string): Promise<RecordedMovement | null> {
    const { ledgerAccounts, ledgerPostings, ledgerTransactions } = this.t
    const [transaction] = await this.db.select().from(ledgerTransactions).where(eq(ledgerTransactions.id, transactionId))
    if (!transaction) return null
    const rows = await this.db
      .select({ posting: ledgerPostings, userId: ledgerAccounts.userId })
      .from(ledgerPostings)
      .innerJoin(ledgerAccounts, eq(ledgerAccounts.id, ledgerPostings.accountId))
      .where(eq(ledgerPostings.transactionId, transactionId))
      .orderBy(asc(ledgerPostings.id))
    return { transaction: toTransaction(transaction), postings: rows.map((row) => ({ posting: toPosting(row.posting), userId: row.userId })) }
  }

  // ---- withdrawals ----

  async withdrawal(id: string): Promise<Withdrawal | null> {
    const [row] = await this.db.select().from(this.t.withdrawals).where(eq(this.t.withdrawals.id, id))
    return row ? toWithdrawal(row) : null
  }

  async withdrawalByKey(userId: string, idempotencyKey: string): Promise<Withdrawal | null> {
    const { withdrawals } = this.t
    const [row] = await this.db
      .select()
      .from(withdrawals)
      .where(and(eq(withdrawals.userId, userId), eq(withdrawals.idempotencyKey, idempotencyKey)))
    return row ? toWithdrawal(row) : null
  }

  async addWithdrawal(withdrawal: Withdrawal): Promise<void> {
    // The (user, idempotency key) unique index: the same key never debits twice, whatever raced.
    await this.insert(() => this.db.insert(this.t.withdrawals).values({ ...withdrawal, amount: withdrawal.amount.toString() }))
  }

  async markWithdrawalSigned(id: string, signature: string, now: Date): Promise<Withdrawal> {
    const [row] = await this.db.update(this.t.withdrawals).set({ status: 'signed', signature, updatedAt: now }).where(eq(this.t.withdrawals.id, id)).returning()
    return toWithdrawal(row!)
  }

  async markWithdrawalFailed(id: string, reason: string, now: Date): Promise<Withdrawal> {
    const [row] = await this.db.update(this.t.withdrawals).set({ status: 'failed', failureReason: reason, updatedAt: now }).where(eq(this.t.withdrawals.id, id)).returning()
    return toWithdrawal(row!)
  }

  async moveWithdrawal(id: string, from: WithdrawalStatus, to: WithdrawalStatus, now: Date, extra: { rejectionReason?: string; approvedAt?: Date } = {}): Promise<Withdrawal | null> {
    // One conditional UPDATE: of two units of work moving the same withdrawal
    // out of `from`, the second runs after the first (SQLite's one writer),
    // or waits for the first's row lock and then finds it no longer in `from`
    // (PostgreSQL, READ COMMITTED), or fails to serialize and runs again
    // (SERIALIZABLE): either way only one of them moves it.
    const { withdrawals } = this.t
    const [row] = await this.db
      .update(withdrawals)
      .set({ status: to, updatedAt: now, ...extra })
      .where(and(eq(withdrawals.id, id), eq(withdrawals.status, from)))
      .returning()
    return row ? toWithdrawal(row) : null
  }

  async hasSignedWithdrawalTo(userId: string, destinationAddress: string): Promise<boolean> {
    const { withdrawals } = this.t
    const [row] = await this.db
      .select({ id: withdrawals.id })
      .from(withdrawals)
      .where(and(eq(withdrawals.userId, userId), eq(withdrawals.destinationAddress, destinationAddress), eq(withdrawals.status, 'signed')))
      .limit(1)
    return row !== undefined
  }

  async pendingWithdrawals(): Promise<Withdrawal[]> {
    const { withdrawals } = this.t
    const rows = await this.db.select().from(withdrawals).where(eq(withdrawals.status, 'pending_signature')).orderBy(asc(withdrawals.createdAt))
    return rows.map(toWithdrawal)
  }

  async withdrawalCounts(): Promise<{ status: WithdrawalStatus; count: number }[]> {
    const { withdrawals } = this.t
    const rows = await this.db.select({ status: withdrawals.status, count: count() }).from(withdrawals).where(inArray(withdrawals.status, ['awaiting_approval', 'held', 'pending_signature'])).groupBy(withdrawals.status)
    return rows.map((r) => ({ status: r.status as WithdrawalStatus, count: Number(r.count) }))
  }

  async withdrawalsSince(userId: string, since: Date): Promise<Withdrawal[]> {
    // In a verify's unit of work this read is part of the transaction that
    // then debits the user's account. On PostgreSQL (SERIALIZABLE) a
    // withdrawal another instance commits meanwhile updates that same account
    // row, so one of the two fails with 40001 and runs again, and the rerun
    // sees the other's row.
    const { withdrawals } = this.t
    const rows = await this.db
      .select()
      .from(withdrawals)
      .where(and(eq(withdrawals.userId, userId), gt(withdrawals.createdAt, since)))
      .orderBy(asc(withdrawals.createdAt), asc(withdrawals.id))
    return rows.map(toWithdrawal)
  }

  // ---- one user's money ----

  async accountsOf(userId: string): Promise<LedgerAccount[]> {
    const { ledgerAccounts } = this.t
    const rows = await this.db.select().from(ledgerAccounts).where(eq(ledgerAccounts.userId, userId)).orderBy(asc(ledgerAccounts.asset))
    return rows.map(toAccount)
  }

  async postingsOf(userId: string): Promise<UserPosting[]> {
    const { ledgerAccounts, ledgerPostings, ledgerTransactions } = this.t
    const rows = await this.db
      .select({ posting: ledgerPostings, transaction: ledgerTransactions })
      .from(ledgerPostings)
      .innerJoin(ledgerAccounts, eq(ledgerAccounts.id, ledgerPostings.accountId))
      .innerJoin(ledgerTransactions, eq(ledgerTransactions.id, ledgerPostings.transactionId))
      .where(eq(ledgerAccounts.userId, userId))
      .orderBy(asc(ledgerPostings.id))
    return rows.map((row) => ({ posting: toPosting(row.posting), transaction: toTransaction(row.transaction) }))
  }

  async withdrawalsOf(userId: string): Promise<Withdrawal[]> {
    const { withdrawals } = this.t
    const rows = await this.db.select().from(withdrawals).where(eq(withdrawals.userId, userId)).orderBy(asc(withdrawals.createdAt), asc(withdrawals.id))
    return rows.map(toWithdrawal)
  }

  // ---- the player's history ----

  async accountPostings(accountId: string, after: number, limit: number): Promise<UserPosting[]> {
    const { ledgerPostings, ledgerTransactions } = this.t
    const rows = await this.db
      .select({ posting: ledgerPostings, transaction: ledgerTransactions })
      .from(ledgerPostings)
      .innerJoin(ledgerTransactions, eq(ledgerTransactions.id, ledgerPostings.transactionId))
      .where(and(eq(ledgerPostings.accountId, accountId), gt(ledgerPostings.id, after)))
      .orderBy(asc(ledgerPostings.id))
      .limit(limit)
    return rows.map((row) => ({ posting: toPosting(row.posting), transaction: toTransaction(row.transaction) }))
  }

  async postingOnAccount(accountId: string, id: number): Promise<boolean> {
    const { ledgerPostings } = this.t
    const [row] = await this.db.select({ id: ledgerPostings.id }).from(ledgerPostings).where(and(eq(ledgerPostings.id, id), eq(ledgerPostings.accountId, accountId)))
    return row !== undefined
  }

  // Sums in BigInt: SQLite's SUM over decimal TEXT would pass through 64-bit
  // integers or floats. PostgreSQL's subclass sums in NUMERIC, exactly, and
  // reads one row instead of every posting.

  async postingsTotal(accountId: string): Promise<bigint> {
    const { ledgerPostings } = this.t
    const rows = await this.db.select({ amount: ledgerPostings.amount }).from(ledgerPostings).where(eq(ledgerPostings.accountId, accountId))
    return rows.reduce((sum, row) => sum + BigInt(row.amount), 0n)
  }

  async balanceBefore(accountId: string, id: number): Promise<bigint> {
    const { ledgerPostings } = this.t
    const rows = await this.db
      .select({ amount: ledgerPostings.amount })
      .from(ledgerPostings)
      .where(and(eq(ledgerPostings.accountId, accountId), lt(ledgerPostings.id, id)))
    return rows.reduce((sum, row) => sum + BigInt(row.amount), 0n)
  }

  async withdrawalsPage(userId: string, after: Withdrawal | null, limit: number): Promise<Withdrawal[]> {
    const { withdrawals } = this.t
    const past = after === null ? undefined : or(gt(withdrawals.createdAt, after.createdAt), and(eq(withdrawals.createdAt, after.createdAt), gt(withdrawals.id, after.id)))
    const rows = await this.db
      .select()
      .from(withdrawals)
      .where(and(eq(withdrawals.userId, userId), past))
      .orderBy(asc(withdrawals.createdAt), asc(withdrawals.id))
      .limit(limit)
    return rows.map(toWithdrawal)
  }
}
