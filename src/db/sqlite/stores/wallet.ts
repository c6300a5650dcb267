// Wallets, the ledger and withdrawals on SQLite. Amounts are decimal TEXT
// (see src/db/schema/wallet.ts), bigint on this side of the store. Writes run
// in the committer's one transaction at a time, so the balance an account
// read returns is still the balance when the movement updates it.
// The statements of a PIN purchase (a withdrawal: its reads, the debit, the
// record, the signature) are compiled once per connection and run with
// parameters, as matches.ts does for claims: building them with Drizzle's
// query builder on every call was ~1.5 ms of a purchase's CPU
// (bench/purchase-profile.ts). Columns are written as Drizzle writes them:
// timestamp_ms as epoch-ms integers, JSON as JSON text.
import { and, asc, count, eq, getTableColumns, gt, inArray, isNotNull, isNull, lt, or } from 'drizzle-orm'
import { ledgerAccounts, ledgerPostings, ledgerTransactions, tournaments, users, wallets, withdrawals } from '../../schema'
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
import type { SqliteScope } from '../storage'
import { insertInto, perConnection, selectList } from '../connection'
import { toAccount, toTransaction, toPosting, toWithdrawal } from '../../rows'

const WITHDRAWAL_FIELDS = [
  'id',
  'userId',
  'asset',
  'amount',
  'destinationAddress',
  'idempotencyKey',
  'status',
  'signature',
  'failureReason',
  'rejectionReason',
  'approvedAt',
  'holdUntil',
  'pinSessionId',
  'createdAt',
  'updatedAt',
] as const satisfies readonly (keyof Withdrawal)[]
type DateFields = 'approvedAt' | 'holdUntil' | 'createdAt' | 'updatedAt'
type RawWithdrawal = Omit<Withdrawal, 'amount' | DateFields> & { amount: string; approvedAt: number | null; holdUntil: number | null; createdAt: number; updatedAt: number }

function fromRawWithdrawal(raw: RawWithdrawal): Withdrawal {
  return {
    ...raw,
    amount: BigInt(raw.amount),
    approvedAt: raw.approvedAt === null ? null : new Date(raw.approvedAt),
    holdUntil: raw.holdUntil === null ? null : new Date(raw.holdUntil),
    createdAt: new Date(raw.createdAt),
    updatedAt: new Date(raw.updatedAt),
  }
}

type RawWallet = Omit<Wallet, 'createdAt'> & { createdAt: number }
type RawAccount = Omit<LedgerAccount, 'balance'> & { balance: string }

const withdrawalColumns = selectList(getTableColumns(withdrawals), WITHDRAWAL_FIELDS)
const statements = perConnection((sqlite) => ({
  wallet: sqlite.prepare<RawWallet, [string]>(`SELECT ${selectList(getTableColumns(wallets), ['userId', 'asset', 'address', 'keyRef', 'createdAt'])} FROM wallets WHERE user_id = ?`),
  balance: sqlite.prepare<{ balance: string }, [string]>('SELECT balance FROM ledger_accounts WHERE id = ?'),
  account: sqlite.prepare<RawAccount, [string]>(`SELECT ${selectList(getTableColumns(ledgerAccounts), ['id', 'userId', 'asset', 'balance'])} FROM ledger_accounts WHERE id = ?`),
  setBalance: sqlite.prepare<unknown, { id: string; balance: string }>('UPDATE ledger_accounts SET balance = $balance WHERE id = $id'),
  addTransaction: sqlite.prepare<unknown, { id: string; kind: string; reference: string | null; memo: string | null; createdAt: number }>(
    insertInto(ledgerTransactions, ['id', 'kind', 'reference', 'memo', 'createdAt']),
  ),
  addPosting: sqlite.prepare<unknown, { transactionId: string; accountId: string; asset: string; amount: string; balanceAfter: string | null }>(
    insertInto(ledgerPostings, ['transactionId', 'accountId', 'asset', 'amount', 'balanceAfter']),
  ),
  withdrawal: sqlite.prepare<RawWithdrawal, [string]>(`SELECT ${withdrawalColumns} FROM withdrawals WHERE id = ?`),
  withdrawalByKey: sqlite.prepare<RawWithdrawal, [string, string]>(`SELECT ${withdrawalColumns} FROM withdrawals WHERE user_id = ? AND idempotency_key = ?`),
  addWithdrawal: sqlite.prepare<unknown, RawWithdrawal>(insertInto(withdrawals, WITHDRAWAL_FIELDS)),
  markSigned: sqlite.prepare<RawWithdrawal, { id: string; signature: string; now: number }>(
    `UPDATE withdrawals SET status = 'signed', signature = $signature, updated_at = $now WHERE id = $id RETURNING ${withdrawalColumns}`,
  ),
}))

function optionalMs(date: Date | null): number | null {
  return date === null ? null : date.getTime()
}

export class SqliteWalletStore implements WalletStore {
  constructor(private readonly scope: SqliteScope) {}

  private get db() {
    return this.scope.handle.db
  }

  // ---- wallets ----

  private get statements() {
    return statements(this.scope.handle.sqlite)
  }

  async wallet(userId: string): Promise<Wallet | null> {
    const row = this.statements.wallet.get(userId)
    return row ? { ...row, createdAt: new Date(row.createdAt) } : null
  }

  async addWalletUnlessExists(wallet: Wallet): Promise<void> {
    this.db.insert(wallets).values(wallet).onConflictDoNothing().run()
  }

  async userExists(userId: string): Promise<boolean> {
    return this.db.select({ id: users.id }).from(users).where(and(eq(users.id, userId), isNull(users.deletedAt))).get() !== undefined
  }

  // One writer: inside a write no deletion or credit runs meanwhile, so a read is the lock.
  lockUserForCredit(userId: string): Promise<boolean> {
    return this.userExists(userId)
  }

  async lockUserForDeletion(_userId: string): Promise<void> {}

  // ---- ledger ----

  async balance(accountId: string): Promise<bigint> {
    const account = this.statements.balance.get(accountId)
    return account ? BigInt(account.balance) : 0n
  }

  async account(accountId: string): Promise<LedgerAccount | null> {
    const row = this.statements.account.get(accountId)
    return row ? { ...row, balance: BigInt(row.balance) } : null
  }

  async openAccount(account: Omit<LedgerAccount, 'balance'>, now: Date): Promise<LedgerAccount> {
    return toAccount(this.db.insert(ledgerAccounts).values({ ...account, balance: '0', createdAt: now }).returning().get())
  }

  async setBalance(accountId: string, balance: bigint): Promise<void> {
    this.statements.setBalance.run({ id: accountId, balance: balance.toString() })
  }

  async addTransaction(transaction: Omit<LedgerTransaction, 'createdAt'>, now: Date): Promise<void> {
    this.statements.addTransaction.run({
      id: transaction.id,
      kind: transaction.kind,
      reference: transaction.reference ?? null,
      memo: transaction.memo === null ? null : JSON.stringify(transaction.memo),
      createdAt: now.getTime(),
    })
  }

  async addPosting(posting: Omit<LedgerPosting, 'id'>): Promise<void> {
    this.statements.addPosting.run({
      transactionId: posting.transactionId,
      accountId: posting.accountId,
      asset: posting.asset,
      amount: posting.amount.toString(),
      balanceAfter: posting.balanceAfter === null ? null : posting.balanceAfter.toString(),
    })
  }

  async transactionByReference(reference: string): Promise<LedgerTransaction | null> {
    const row = this.db.select().from(ledgerTransactions).where(eq(ledgerTransactions.reference, reference)).get()
    return row ? toTransaction(row) : null
  }

  async movement(transactionId: string): Promise<RecordedMovement | null> {
    const transaction = this.db.select().from(ledgerTransactions).where(eq(ledgerTransactions.id, transactionId)).get()
    if (!transaction) return null
    const rows = this.db
      .select({ posting: ledgerPostings, userId: ledgerAccounts.userId })
      .from(ledgerPostings)
      .innerJoin(ledgerAccounts, eq(ledgerAccounts.id, ledgerPostings.accountId))
      .where(eq(ledgerPostings.transactionId, transactionId))
      .orderBy(asc(ledgerPostings.id))
      .all()
    return { transaction: toTransaction(transaction), postings: rows.map((row) => ({ posting: toPosting(row.posting), userId: row.userId })) }
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
        deletedAccountHolders: db
          .selectDistinct({ id: users.id })
          .from(users)
          .innerJoin(ledgerAccounts, eq(ledgerAccounts.userId, users.id))
          .where(isNotNull(users.deletedAt))
          .all()
          .map((row) => row.id),
      }))
      .deferred()
  }

  // ---- withdrawals ----

  async withdrawal(id: string): Promise<Withdrawal | null> {
    const row = this.statements.withdrawal.get(id)
    return row ? fromRawWithdrawal(row) : null
  }

  async withdrawalByKey(userId: string, idempotencyKey: string): Promise<Withdrawal | null> {
    const row = this.statements.withdrawalByKey.get(userId, idempotencyKey)
    return row ? fromRawWithdrawal(row) : null
  }

  async addWithdrawal(withdrawal: Withdrawal): Promise<void> {
    this.statements.addWithdrawal.run({
      ...withdrawal,
      amount: withdrawal.amount.toString(),
      approvedAt: optionalMs(withdrawal.approvedAt),
      holdUntil: optionalMs(withdrawal.holdUntil),
      createdAt: withdrawal.createdAt.getTime(),
      updatedAt: withdrawal.updatedAt.getTime(),
    })
  }

  async markWithdrawalSigned(id: string, signature: string, now: Date): Promise<Withdrawal> {
    return fromRawWithdrawal(this.statements.markSigned.get({ id, signature, now: now.getTime() })!)
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
