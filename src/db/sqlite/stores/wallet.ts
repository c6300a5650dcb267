// Wallets, the ledger and withdrawals on SQLite: what differs from the
// queries both engines share (src/db/stores/wallet.ts). Writes run in the
// committer's one transaction at a time, so the balance an account read
// returns is still the balance when the movement updates it.
// The statements of a PIN purchase (a withdrawal: its reads, the debit, the
// record, the signature) are compiled once per connection and run with
// parameters, as matches.ts does for claims: building them with Drizzle's
// query builder on every call was ~1.5 ms of a purchase's CPU
// (bench/purchase-profile.ts). Columns are written as Drizzle writes them:
// timestamp_ms as epoch-ms integers, JSON as JSON text.
import { and, eq, getTableColumns, inArray, isNotNull } from 'drizzle-orm'
import { ledgerAccounts, ledgerPostings, ledgerTransactions, matches, payoutHolds, tournaments, users, wallets, withdrawals } from '../../schema'
import type { LedgerAccount, LedgerPosting, LedgerSnapshot, LedgerTransaction, Wallet, Withdrawal } from '../../../modules/wallet/store'
import type { SqliteScope } from '../storage'
import { insertInto, perConnection, selectList } from '../connection'
import { toAccount, toHeldPayout, toTransaction, toPosting, toWithdrawal } from '../../rows'
import { WalletQueries } from '../../stores/wallet'

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

export class SqliteWalletStore extends WalletQueries {
  constructor(protected override readonly scope: SqliteScope) {
    super(scope)
  }

  private get statements() {
    return statements(this.scope.handle.sqlite)
  }

  // ---- wallets ----

  override async wallet(userId: string): Promise<Wallet | null> {
    const row = this.statements.wallet.get(userId)
    return row ? { ...row, createdAt: new Date(row.createdAt) } : null
  }

  // ---- ledger ----

  override async balance(accountId: string): Promise<bigint> {
    const account = this.statements.balance.get(accountId)
    return account ? BigInt(account.balance) : 0n
  }

  override async account(accountId: string): Promise<LedgerAccount | null> {
    const row = this.statements.account.get(accountId)
    return row ? { ...row, balance: BigInt(row.balance) } : null
  }

  override async setBalance(accountId: string, balance: bigint): Promise<void> {
    this.statements.setBalance.run({ id: accountId, balance: balance.toString() })
  }

  override async addTransaction(transaction: Omit<LedgerTransaction, 'createdAt'>, now: Date): Promise<void> {
    this.statements.addTransaction.run({
      id: transaction.id,
      kind: transaction.kind,
      reference: transaction.reference ?? null,
      memo: transaction.memo === null ? null : JSON.stringify(transaction.memo),
      createdAt: now.getTime(),
    })
  }

  override async addPosting(posting: Omit<LedgerPosting, 'id'>): Promise<void> {
    this.statements.addPosting.run({
      transactionId: posting.transactionId,
      accountId: posting.accountId,
      asset: posting.asset,
      amount: posting.amount.toString(),
      balanceAfter: posting.balanceAfter === null ? null : posting.balanceAfter.toString(),
    })
  }

  async ledgerSnapshot(): Promise<LedgerSnapshot> {
    const db = this.scope.handle.db
    // One read transaction (a savepoint inside a write): every table as of the
    // same commit. bun:sqlite's transaction runs its function synchronously,
    // so its reads are the connection's own, not awaited queries.
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
        settledMatches: db
          .select({ id: matches.id })
          .from(matches)
          .where(and(isNotNull(matches.stake), inArray(matches.status, ['decided', 'cancelled'])))
          .all()
          .map((row) => row.id),
        deletedAccountHolders: db
          .selectDistinct({ id: users.id })
          .from(users)
          .innerJoin(ledgerAccounts, eq(ledgerAccounts.userId, users.id))
          .where(isNotNull(users.deletedAt))
          .all()
          .map((row) => row.id),
        heldPayouts: db
          .select({ kind: payoutHolds.kind, matchId: payoutHolds.matchId, tournamentId: payoutHolds.tournamentId, amount: payoutHolds.amount, stake: matches.stake })
          .from(payoutHolds)
          .innerJoin(matches, eq(matches.id, payoutHolds.matchId))
          .where(eq(payoutHolds.status, 'held'))
          .all()
          .map(toHeldPayout),
      }))
      .deferred()
  }

  // ---- withdrawals ----

  override async withdrawal(id: string): Promise<Withdrawal | null> {
    const row = this.statements.withdrawal.get(id)
    return row ? fromRawWithdrawal(row) : null
  }

  override async withdrawalByKey(userId: string, idempotencyKey: string): Promise<Withdrawal | null> {
    const row = this.statements.withdrawalByKey.get(userId, idempotencyKey)
    return row ? fromRawWithdrawal(row) : null
  }

  override async addWithdrawal(withdrawal: Withdrawal): Promise<void> {
    this.statements.addWithdrawal.run({
      ...withdrawal,
      amount: withdrawal.amount.toString(),
      approvedAt: optionalMs(withdrawal.approvedAt),
      holdUntil: optionalMs(withdrawal.holdUntil),
      createdAt: withdrawal.createdAt.getTime(),
      updatedAt: withdrawal.updatedAt.getTime(),
    })
  }

  override async markWithdrawalSigned(id: string, signature: string, now: Date): Promise<Withdrawal> {
    return fromRawWithdrawal(this.statements.markSigned.get({ id, signature, now: now.getTime() })!)
  }
}
