// Wallets, the ledger and withdrawals on PostgreSQL. Amounts are NUMERIC
// (strings through Drizzle, see src/db/postgres/schema/wallet.ts), bigint on
// this side of the store.
//
// A movement reads an account's balance and writes the new one in the same
// unit of work (ledger.ts, postMovement). On SQLite one writer keeps the
// balance read the balance updated; here SERIALIZABLE keeps it so across
// instances: of two units of work that read and update one account, the
// second to update fails with 40001 and storage.write runs it again on a
// fresh snapshot, where it reads the new balance (and may find it short).
// Likewise a check-then-insert (an idempotency key, a credit reference, an
// account opened on first use) that races another gets 40001 rather than a
// unique violation, PostgreSQL reporting a conflict the check could have seen
// as a serialization failure; the rerun then finds the row. The unique
// indexes stay the backstop, mapped to UniqueViolationError.
import { and, asc, count, eq, gt, inArray, isNotNull, isNull, lt, or, sql } from 'drizzle-orm'
import { ledgerAccounts, ledgerPostings, ledgerTransactions, tournaments, users, wallets, withdrawals } from '../schema'
import { mapEngineError, UniqueViolationError } from '../../errors'
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
} from '../../../modules/wallet/store'
import type { PgDb } from '../connection'
import type { PostgresScope } from '../scope'
import { toWallet, toAccount, toTransaction, toPosting, toWithdrawal } from '../../rows'

/**
 * Every ledger table through `db`. SQLite returns rows in insertion order;
 * PostgreSQL has none to give, so: creation time, then key (postings by
 * their identity, which is insertion order).
 */
async function readLedger(db: PgDb): Promise<LedgerSnapshot> {
  const [accounts, transactions, postings, rows, settled, deleted] = await Promise.all([
    db.select().from(ledgerAccounts).orderBy(asc(ledgerAccounts.createdAt), asc(ledgerAccounts.id)),
    db.select().from(ledgerTransactions).orderBy(asc(ledgerTransactions.createdAt), asc(ledgerTransactions.id)),
    db.select().from(ledgerPostings).orderBy(asc(ledgerPostings.id)),
    db.select().from(withdrawals).orderBy(asc(withdrawals.createdAt), asc(withdrawals.id)),
    db.select({ id: tournaments.id }).from(tournaments).where(inArray(tournaments.status, ['completed', 'cancelled'])).orderBy(asc(tournaments.id)),
    db
      .selectDistinct({ id: users.id })
      .from(users)
      .innerJoin(ledgerAccounts, eq(ledgerAccounts.userId, users.id))
      .where(isNotNull(users.deletedAt))
      .orderBy(asc(users.id)),
  ])
  return {
    accounts: accounts.map(toAccount),
    transactions: transactions.map(toTransaction),
    postings: postings.map(toPosting),
    withdrawals: rows.map(toWithdrawal),
    settledTournaments: settled.map((row) => row.id),
    deletedAccountHolders: deleted.map((row) => row.id),
  }
}

export class PostgresWalletStore implements WalletStore {
  constructor(private readonly scope: PostgresScope) {}

  private get db() {
    return this.scope.db
  }

  /**
   * Runs an insert, a unique violation arriving as UniqueViolationError (the
   * caller's write rolls back).
   */
  private async insert(run: () => Promise<unknown>): Promise<void> {
    try {
      await run()
    } catch (error) {
      throw mapEngineError(error)
    }
  }

  // ---- wallets ----

  async wallet(userId: string): Promise<Wallet | null> {
    const [row] = await this.db.select().from(wallets).where(eq(wallets.userId, userId))
    return row ? toWallet(row) : null
  }

  async addWalletUnlessExists(wallet: Wallet): Promise<void> {
    // A wallet another instance inserted and committed after this snapshot
    // began is a serialization failure under SERIALIZABLE, not a silent no-op:
    // the rerun sees it and keeps it.
    await this.db.insert(wallets).values(wallet).onConflictDoNothing()
  }

  async userExists(userId: string): Promise<boolean> {
    const [row] = await this.db.select({ id: users.id }).from(users).where(and(eq(users.id, userId), isNull(users.deletedAt)))
    return row !== undefined
  }

  async lockUserForCredit(userId: string): Promise<boolean> {
    // By id alone, deletedAt read from the locked row: READ COMMITTED (a job)
    // waits for a deletion holding the row and then reads the row it left; a
    // SERIALIZABLE unit of work whose snapshot predates that deletion fails
    // with 40001 here and runs again, where it sees it.
    const [row] = await this.db.select({ deletedAt: users.deletedAt }).from(users).where(eq(users.id, userId)).for('share')
    return row !== undefined && row.deletedAt === null
  }

  async lockUserForDeletion(userId: string): Promise<void> {
    await this.db.select({ id: users.id }).from(users).where(eq(users.id, userId)).for('no key update')
  }

  // ---- ledger ----

  async balance(accountId: string): Promise<bigint> {
    const [account] = await this.db.select({ balance: ledgerAccounts.balance }).from(ledgerAccounts).where(eq(ledgerAccounts.id, accountId))
    return account ? BigInt(account.balance) : 0n
  }

  async account(accountId: string): Promise<LedgerAccount | null> {
    // No FOR UPDATE: under SERIALIZABLE the update that follows fails with
    // 40001 if another transaction changed the row since this snapshot, and a
    // lock would not spare that failure (a locked row changed after the
    // snapshot fails the same way), only add a wait before it.
    const [row] = await this.db.select().from(ledgerAccounts).where(eq(ledgerAccounts.id, accountId))
    if (row && row.userId !== null && this.scope.rowLocks) {
      // A READ COMMITTED unit of work (a job paying a prize or refunding a
      // fee: WriteOptions.rowLocks) has no serialization failure to catch a
      // balance changed between this read and the update: it locks the
      // wallet's row and reads its balance again, the one the update follows.
      const [locked] = await this.db.select().from(ledgerAccounts).where(eq(ledgerAccounts.id, accountId)).for('no key update')
      return toAccount(locked!)
    }
    return row ? toAccount(row) : null
  }

  async openAccount(account: Omit<LedgerAccount, 'balance'>, now: Date): Promise<LedgerAccount> {
    if (this.scope.rowLocks) {
      // READ COMMITTED (a job): an account another unit of work opened
      // meanwhile (the house by another job, a wallet by a credit) is found
      // opened, rather than failing on its key; read locked, as account() does.
      await this.db.insert(ledgerAccounts).values({ ...account, balance: '0', createdAt: now }).onConflictDoNothing()
      const query = this.db.select().from(ledgerAccounts).where(eq(ledgerAccounts.id, account.id))
      const [existing] = await (account.userId !== null ? query.for('no key update') : query)
      return toAccount(existing!)
    }
    let row: typeof ledgerAccounts.$inferSelect | undefined
    try {
      ;[row] = await this.db
        .insert(ledgerAccounts)
        .values({ ...account, balance: '0', createdAt: now })
        .returning()
    } catch (error) {
      // Opened meanwhile by a READ COMMITTED unit of work (a job paying a
      // prize), which takes no part in SERIALIZABLE's conflict tracking, so
      // PostgreSQL reports a unique violation where it would otherwise report
      // a serialization failure: run this unit of work again, as it would be
      // (it then finds the account).
      const mapped = mapEngineError(error)
      if (mapped instanceof UniqueViolationError) throw Object.assign(new Error(`ledger account ${account.id} opened concurrently`), { code: '40001', cause: error })
      throw mapped
    }
    return toAccount(row!)
  }

  async setBalance(accountId: string, balance: bigint): Promise<void> {
    await this.db.update(ledgerAccounts).set({ balance: balance.toString() }).where(eq(ledgerAccounts.id, accountId))
  }

  async addTransaction(transaction: Omit<LedgerTransaction, 'createdAt'>, now: Date): Promise<void> {
    // A reference already used: UniqueViolationError, as the interface says.
    await this.insert(() => this.db.insert(ledgerTransactions).values({ ...transaction, createdAt: now }))
  }

  async addPosting(posting: Omit<LedgerPosting, 'id'>): Promise<void> {
    await this.db.insert(ledgerPostings).values({ ...posting, amount: posting.amount.toString(), balanceAfter: posting.balanceAfter === null ? null : posting.balanceAfter.toString() })
  }

  async transactionByReference(reference: string): Promise<LedgerTransaction | null> {
    const [row] = await this.db.select().from(ledgerTransactions).where(eq(ledgerTransactions.reference, reference))
    return row ? toTransaction(row) : null
  }

  async movement(transactionId: string): Promise<RecordedMovement | null> {
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

  async ledgerSnapshot(): Promise<LedgerSnapshot> {
    // Inside a write, the unit of work's own transaction is one snapshot already.
    if (this.scope.afterCommit) return readLedger(this.db)
    // Outside one, each statement on the pool would see its own commit: one
    // read-only REPEATABLE READ transaction reads every table as of one moment
    // (never half of a movement committing meanwhile), and, read-only, it
    // takes no part in the writers' serialization conflicts.
    return this.db.transaction((tx) => readLedger(tx), { isolationLevel: 'repeatable read', accessMode: 'read only' })
  }

  // ---- withdrawals ----

  async withdrawal(id: string): Promise<Withdrawal | null> {
    const [row] = await this.db.select().from(withdrawals).where(eq(withdrawals.id, id))
    return row ? toWithdrawal(row) : null
  }

  async withdrawalByKey(userId: string, idempotencyKey: string): Promise<Withdrawal | null> {
    const [row] = await this.db
      .select()
      .from(withdrawals)
      .where(and(eq(withdrawals.userId, userId), eq(withdrawals.idempotencyKey, idempotencyKey)))
    return row ? toWithdrawal(row) : null
  }

  async addWithdrawal(withdrawal: Withdrawal): Promise<void> {
    // The (user, idempotency key) unique index: the same key never debits twice, whatever raced.
    await this.insert(() => this.db.insert(withdrawals).values({ ...withdrawal, amount: withdrawal.amount.toString() }))
  }

  async markWithdrawalSigned(id: string, signature: string, now: Date): Promise<Withdrawal> {
    const [row] = await this.db.update(withdrawals).set({ status: 'signed', signature, updatedAt: now }).where(eq(withdrawals.id, id)).returning()
    return toWithdrawal(row!)
  }

  async markWithdrawalFailed(id: string, reason: string, now: Date): Promise<Withdrawal> {
    const [row] = await this.db.update(withdrawals).set({ status: 'failed', failureReason: reason, updatedAt: now }).where(eq(withdrawals.id, id)).returning()
    return toWithdrawal(row!)
  }

  async moveWithdrawal(id: string, from: WithdrawalStatus, to: WithdrawalStatus, now: Date, extra: { rejectionReason?: string; approvedAt?: Date } = {}): Promise<Withdrawal | null> {
    // One conditional UPDATE: of two units of work moving the same withdrawal
    // out of `from`, the second waits for the first's row lock and then finds
    // it no longer in `from` (READ COMMITTED), or fails to serialize and runs
    // again (SERIALIZABLE): either way only one of them moves it.
    const [row] = await this.db
      .update(withdrawals)
      .set({ status: to, updatedAt: now, ...extra })
      .where(and(eq(withdrawals.id, id), eq(withdrawals.status, from)))
      .returning()
    return row ? toWithdrawal(row) : null
  }

  async hasSignedWithdrawalTo(userId: string, destinationAddress: string): Promise<boolean> {
    const [row] = await this.db
      .select({ id: withdrawals.id })
      .from(withdrawals)
      .where(and(eq(withdrawals.userId, userId), eq(withdrawals.destinationAddress, destinationAddress), eq(withdrawals.status, 'signed')))
      .limit(1)
    return row !== undefined
  }

  async pendingWithdrawals(): Promise<Withdrawal[]> {
    const rows = await this.db.select().from(withdrawals).where(eq(withdrawals.status, 'pending_signature')).orderBy(asc(withdrawals.createdAt))
    return rows.map(toWithdrawal)
  }

  async withdrawalCounts(): Promise<{ status: WithdrawalStatus; count: number }[]> {
    const rows = await this.db.select({ status: withdrawals.status, count: count() }).from(withdrawals).where(inArray(withdrawals.status, ['awaiting_approval', 'held', 'pending_signature'])).groupBy(withdrawals.status)
    return rows.map((r) => ({ status: r.status as WithdrawalStatus, count: Number(r.count) }))
  }

  // ---- one user's money ----

  async accountsOf(userId: string): Promise<LedgerAccount[]> {
    const rows = await this.db.select().from(ledgerAccounts).where(eq(ledgerAccounts.userId, userId)).orderBy(asc(ledgerAccounts.asset))
    return rows.map(toAccount)
  }

  async postingsOf(userId: string): Promise<UserPosting[]> {
    const rows = await this.db
      .select({ posting: ledgerPostings, transaction: ledgerTransactions })
      .from(ledgerPostings)
      .innerJoin(ledgerAccounts, eq(ledgerAccounts.id, ledgerPostings.accountId))
      .innerJoin(ledgerTransactions, eq(ledgerTransactions.id, ledgerPostings.transactionId))
      .where(eq(ledgerAccounts.userId, userId))
      .orderBy(asc(ledgerPostings.id))
    return rows.map((row) => ({ posting: toPosting(row.posting), transaction: toTransaction(row.transaction) }))
  }

  async withdrawalsSince(userId: string, since: Date): Promise<Withdrawal[]> {
    // In a verify's unit of work this read is part of the SERIALIZABLE
    // transaction that then debits the user's account: a withdrawal another
    // instance commits meanwhile updates that same account row, so one of the
    // two fails with 40001 and runs again, and the rerun sees the other's row.
    const rows = await this.db
      .select()
      .from(withdrawals)
      .where(and(eq(withdrawals.userId, userId), gt(withdrawals.createdAt, since)))
      .orderBy(asc(withdrawals.createdAt), asc(withdrawals.id))
    return rows.map(toWithdrawal)
  }

  async withdrawalsOf(userId: string): Promise<Withdrawal[]> {
    const rows = await this.db.select().from(withdrawals).where(eq(withdrawals.userId, userId)).orderBy(asc(withdrawals.createdAt), asc(withdrawals.id))
    return rows.map(toWithdrawal)
  }

  // ---- the player's history ----

  async accountPostings(accountId: string, after: number, limit: number): Promise<UserPosting[]> {
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
    const [row] = await this.db.select({ id: ledgerPostings.id }).from(ledgerPostings).where(and(eq(ledgerPostings.id, id), eq(ledgerPostings.accountId, accountId)))
    return row !== undefined
  }

  async postingsTotal(accountId: string): Promise<bigint> {
    const [row] = await this.db
      .select({ sum: sql<string | null>`sum(${ledgerPostings.amount})` })
      .from(ledgerPostings)
      .where(eq(ledgerPostings.accountId, accountId))
    return BigInt(row?.sum ?? '0')
  }

  async balanceBefore(accountId: string, id: number): Promise<bigint> {
    // NUMERIC sums exactly; null when there is nothing before.
    const [row] = await this.db
      .select({ sum: sql<string | null>`sum(${ledgerPostings.amount})` })
      .from(ledgerPostings)
      .where(and(eq(ledgerPostings.accountId, accountId), lt(ledgerPostings.id, id)))
    return BigInt(row?.sum ?? '0')
  }

  async withdrawalsPage(userId: string, after: Withdrawal | null, limit: number): Promise<Withdrawal[]> {
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
