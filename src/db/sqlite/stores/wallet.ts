// Wallets, the ledger and withdrawals on SQLite. Amounts are decimal TEXT
// (see src/db/schema/wallet.ts), bigint on this side of the store. Writes run
// in the committer's one transaction at a time, so the balance an account
// read returns is still the balance when the movement updates it.
import { and, asc, count, eq, gt, inArray, isNull, lt, or } from 'drizzle-orm'
import { ledgerAccounts, ledgerPostings, ledgerTransactions, tournaments, users, wallets, withdrawals } from '../../schema'
import type {
  LedgerAccount,
  LedgerPosting,
  LedgerSnapshot,
  LedgerTransaction,
  Wallet,
  WalletStore,
  UserPosting,
  Withdrawal,
  WithdrawalStatus,
} from '../../../modules/wallet/store'
import type { SqliteScope } from '../storage'
import { toWallet, toAccount, toTransaction, toPosting, toWithdrawal } from '../../rows'

export class SqliteWalletStore implements WalletStore {
  constructor(private readonly scope: SqliteScope) {}

  private get db() {
    return this.scope.handle.db
  }

  // ---- wallets ----

  async wallet(userId: string): Promise<Wallet | null> {
    const row = this.db.select().from(wallets).where(eq(wallets.userId, userId)).get()
    return row ? toWallet(row) : null
  }

  async addWalletUnlessExists(wallet: Wallet): Promise<void> {
    this.db.insert(wallets).values(wallet).onConflictDoNothing().run()
  }

  async userExists(userId: string): Promise<boolean> {
    return this.db.select({ id: users.id }).from(users).where(and(eq(users.id, userId), isNull(users.deletedAt))).get() !== undefined
  }

  // ---- ledger ----

  async balance(accountId: string): Promise<bigint> {
    const account = this.db.select({ balance: ledgerAccounts.balance }).from(ledgerAccounts).where(eq(ledgerAccounts.id, accountId)).get()
    return account ? BigInt(account.balance) : 0n
  }

  async account(accountId: string): Promise<LedgerAccount | null> {
    const row = this.db.select().from(ledgerAccounts).where(eq(ledgerAccounts.id, accountId)).get()
    return row ? toAccount(row) : null
  }

  async openAccount(account: Omit<LedgerAccount, 'balance'>, now: Date): Promise<LedgerAccount> {
    return toAccount(this.db.insert(ledgerAccounts).values({ ...account, balance: '0', createdAt: now }).returning().get())
  }

  async setBalance(accountId: string, balance: bigint): Promise<void> {
    this.db.update(ledgerAccounts).set({ balance: balance.toString() }).where(eq(ledgerAccounts.id, accountId)).run()
  }

  async addTransaction(transaction: Omit<LedgerTransaction, 'createdAt'>, now: Date): Promise<void> {
    this.db.insert(ledgerTransactions).values({ ...transaction, createdAt: now }).run()
  }

  async addPosting(posting: Omit<LedgerPosting, 'id'>): Promise<void> {
    this.db.insert(ledgerPostings).values({ ...posting, amount: posting.amount.toString(), balanceAfter: posting.balanceAfter === null ? null : posting.balanceAfter.toString() }).run()
  }

  async transactionByReference(reference: string): Promise<LedgerTransaction | null> {
    const row = this.db.select().from(ledgerTransactions).where(eq(ledgerTransactions.reference, reference)).get()
    return row ? toTransaction(row) : null
  }

  async ledgerSnapshot(): Promise<LedgerSnapshot> {
    const { db } = this
    // One read transaction (a savepoint inside a write): every table as of the same commit.
    return this.scope.handle.sqlite
      .transaction(() => ({
        accounts: db.select().from(ledgerAccounts).all().map(toAccount),
        transactions: db.select().from(ledgerTransactions).all().map(toTransaction),
        postings: db.select().from(ledgerPostings).all().map(toPosting),
        withdrawals: db.select().from(withdrawals).all().map(toWithdrawal),
        settledTournaments: db
          .select({ id: tournaments.id })
          .from(tournaments)
          .where(inArray(tournaments.status, ['completed', 'cancelled']))
          .all()
          .map((row) => row.id),
      }))
      .deferred()
  }

  // ---- withdrawals ----

  async withdrawal(id: string): Promise<Withdrawal | null> {
    const row = this.db.select().from(withdrawals).where(eq(withdrawals.id, id)).get()
    return row ? toWithdrawal(row) : null
  }

  async withdrawalByKey(userId: string, idempotencyKey: string): Promise<Withdrawal | null> {
    const row = this.db
      .select()
      .from(withdrawals)
      .where(and(eq(withdrawals.userId, userId), eq(withdrawals.idempotencyKey, idempotencyKey)))
      .get()
    return row ? toWithdrawal(row) : null
  }

  async addWithdrawal(withdrawal: Withdrawal): Promise<void> {
    this.db.insert(withdrawals).values({ ...withdrawal, amount: withdrawal.amount.toString() }).run()
  }

  async markWithdrawalSigned(id: string, signature: string, now: Date): Promise<Withdrawal> {
    return toWithdrawal(this.db.update(withdrawals).set({ status: 'signed', signature, updatedAt: now }).where(eq(withdrawals.id, id)).returning().get()!)
  }

  async markWithdrawalFailed(id: string, reason: string, now: Date): Promise<Withdrawal> {
    return toWithdrawal(this.db.update(withdrawals).set({ status: 'failed', failureReason: reason, updatedAt: now }).where(eq(withdrawals.id, id)).returning().get()!)
  }

  async moveWithdrawal(id: string, from: WithdrawalStatus, to: WithdrawalStatus, now: Date, extra: { rejectionReason?: string; approvedAt?: Date } = {}): Promise<Withdrawal | null> {
    const row = this.db
      .update(withdrawals)
      .set({ status: to, updatedAt: now, ...extra })
      .where(and(eq(withdrawals.id, id), eq(withdrawals.status, from)))
      .returning()
      .get()
    return row ? toWithdrawal(row) : null
  }

  async hasSignedWithdrawalTo(userId: string, destinationAddress: string): Promise<boolean> {
    const row = this.db
      .select({ id: withdrawals.id })
      .from(withdrawals)
      .where(and(eq(withdrawals.userId, userId), eq(withdrawals.destinationAddress, destinationAddress), eq(withdrawals.status, 'signed')))
      .limit(1)
      .get()
    return row !== undefined
  }

  async pendingWithdrawals(): Promise<Withdrawal[]> {
    return this.db.select().from(withdrawals).where(eq(withdrawals.status, 'pending_signature')).orderBy(asc(withdrawals.createdAt)).all().map(toWithdrawal)
  }

  async withdrawalCounts(): Promise<{ status: WithdrawalStatus; count: number }[]> {
    const rows = this.db.select({ status: withdrawals.status, count: count() }).from(withdrawals).where(inArray(withdrawals.status, ['awaiting_approval', 'held', 'pending_signature'])).groupBy(withdrawals.status).all()
    return rows.map((r) => ({ status: r.status as WithdrawalStatus, count: Number(r.count) }))
  }

  // ---- one user's money ----

  async accountsOf(userId: string): Promise<LedgerAccount[]> {
    return this.db.select().from(ledgerAccounts).where(eq(ledgerAccounts.userId, userId)).orderBy(asc(ledgerAccounts.asset)).all().map(toAccount)
  }

  async postingsOf(userId: string): Promise<UserPosting[]> {
    return this.db
      .select({ posting: ledgerPostings, transaction: ledgerTransactions })
      .from(ledgerPostings)
      .innerJoin(ledgerAccounts, eq(ledgerAccounts.id, ledgerPostings.accountId))
      .innerJoin(ledgerTransactions, eq(ledgerTransactions.id, ledgerPostings.transactionId))
      .where(eq(ledgerAccounts.userId, userId))
      .orderBy(asc(ledgerPostings.id))
      .all()
      .map((row) => ({ posting: toPosting(row.posting), transaction: toTransaction(row.transaction) }))
  }

  async withdrawalsSince(userId: string, since: Date): Promise<Withdrawal[]> {
    return this.db
      .select()
      .from(withdrawals)
      .where(and(eq(withdrawals.userId, userId), gt(withdrawals.createdAt, since)))
      .orderBy(asc(withdrawals.createdAt), asc(withdrawals.id))
      .all()
      .map(toWithdrawal)
  }

  async withdrawalsOf(userId: string): Promise<Withdrawal[]> {
    return this.db.select().from(withdrawals).where(eq(withdrawals.userId, userId)).orderBy(asc(withdrawals.createdAt), asc(withdrawals.id)).all().map(toWithdrawal)
  }

  // ---- the player's history ----

  async accountPostings(accountId: string, after: number, limit: number): Promise<UserPosting[]> {
    return this.db
      .select({ posting: ledgerPostings, transaction: ledgerTransactions })
      .from(ledgerPostings)
      .innerJoin(ledgerTransactions, eq(ledgerTransactions.id, ledgerPostings.transactionId))
      .where(and(eq(ledgerPostings.accountId, accountId), gt(ledgerPostings.id, after)))
      .orderBy(asc(ledgerPostings.id))
      .limit(limit)
      .all()
      .map((row) => ({ posting: toPosting(row.posting), transaction: toTransaction(row.transaction) }))
  }

  async postingOnAccount(accountId: string, id: number): Promise<boolean> {
    return this.db.select({ id: ledgerPostings.id }).from(ledgerPostings).where(and(eq(ledgerPostings.id, id), eq(ledgerPostings.accountId, accountId))).get() !== undefined
  }

  async postingsTotal(accountId: string): Promise<bigint> {
    // In BigInt, as balanceBefore.
    const rows = this.db.select({ amount: ledgerPostings.amount }).from(ledgerPostings).where(eq(ledgerPostings.accountId, accountId)).all()
    return rows.reduce((sum, row) => sum + BigInt(row.amount), 0n)
  }

  async balanceBefore(accountId: string, id: number): Promise<bigint> {
    // In BigInt: SQLite's SUM over decimal TEXT would pass through 64-bit integers or floats.
    const rows = this.db
      .select({ amount: ledgerPostings.amount })
      .from(ledgerPostings)
      .where(and(eq(ledgerPostings.accountId, accountId), lt(ledgerPostings.id, id)))
      .all()
    return rows.reduce((sum, row) => sum + BigInt(row.amount), 0n)
  }

  async withdrawalsPage(userId: string, after: Withdrawal | null, limit: number): Promise<Withdrawal[]> {
    const past = after === null ? undefined : or(gt(withdrawals.createdAt, after.createdAt), and(eq(withdrawals.createdAt, after.createdAt), gt(withdrawals.id, after.id)))
    return this.db
      .select()
      .from(withdrawals)
      .where(and(eq(withdrawals.userId, userId), past))
      .orderBy(asc(withdrawals.createdAt), asc(withdrawals.id))
      .limit(limit)
      .all()
      .map(toWithdrawal)
  }
}
