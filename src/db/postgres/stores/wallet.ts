// Wallets, the ledger and withdrawals on PostgreSQL: what differs from the
// queries both engines share (src/db/stores/wallet.ts). Amounts are NUMERIC
// (strings through Drizzle), bigint on this side of the store.
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
import { and, asc, eq, inArray, isNotNull, lt, sql } from 'drizzle-orm'
import { ledgerAccounts, ledgerPostings, ledgerTransactions, matches, payoutHolds, tournaments, users, withdrawals } from '../schema'
import { mapEngineError, UniqueViolationError } from '../../errors'
import type { LedgerAccount, LedgerSnapshot } from '../../../modules/wallet/store'
import type { PgDb } from '../connection'
import type { PostgresScope } from '../scope'
import { toAccount, toHeldPayout, toTransaction, toPosting, toWithdrawal } from '../../rows'
import { WalletQueries } from '../../stores/wallet'

/**
 * Every ledger table through `db`. SQLite returns rows in insertion order;
 * PostgreSQL has none to give, so: creation time, then key (postings by
 * their identity, which is insertion order).
 */
async function readLedger(db: PgDb): Promise<LedgerSnapshot> {
  const [accounts, transactions, postings, rows, settled, settledMatches, deleted, held] = await Promise.all([
    db.select().from(ledgerAccounts).orderBy(asc(ledgerAccounts.createdAt), asc(ledgerAccounts.id)),
    db.select().from(ledgerTransactions).orderBy(asc(ledgerTransactions.createdAt), asc(ledgerTransactions.id)),
    db.select().from(ledgerPostings).orderBy(asc(ledgerPostings.id)),
    db.select().from(withdrawals).orderBy(asc(withdrawals.createdAt), asc(withdrawals.id)),
    db.select({ id: tournaments.id }).from(tournaments).where(inArray(tournaments.status, ['completed', 'cancelled'])).orderBy(asc(tournaments.id)),
    db.select({ id: matches.id }).from(matches).where(and(isNotNull(matches.stake), inArray(matches.status, ['decided', 'cancelled']))).orderBy(asc(matches.id)),
    db
      .selectDistinct({ id: users.id })
      .from(users)
      .innerJoin(ledgerAccounts, eq(ledgerAccounts.userId, users.id))
      .where(isNotNull(users.deletedAt))
      .orderBy(asc(users.id)),
    db
      .select({ kind: payoutHolds.kind, matchId: payoutHolds.matchId, tournamentId: payoutHolds.tournamentId, amount: payoutHolds.amount, stake: matches.stake })
      .from(payoutHolds)
      .innerJoin(matches, eq(matches.id, payoutHolds.matchId))
      .where(eq(payoutHolds.status, 'held')),
  ])
  return {
    accounts: accounts.map(toAccount),
    transactions: transactions.map(toTransaction),
    postings: postings.map(toPosting),
    withdrawals: rows.map(toWithdrawal),
    settledTournaments: settled.map((row) => row.id),
    settledMatches: settledMatches.map((row) => row.id),
    deletedAccountHolders: deleted.map((row) => row.id),
    heldPayouts: held.map(toHeldPayout),
  }
}

export class PostgresWalletStore extends WalletQueries {
  constructor(protected override readonly scope: PostgresScope) {
    super(scope)
  }

  // ---- wallets ----

  override async lockUserForCredit(userId: string): Promise<boolean> {
    // By id alone, deletedAt read from the locked row: READ COMMITTED (a job)
    // waits for a deletion holding the row and then reads the row it left; a
    // SERIALIZABLE unit of work whose snapshot predates that deletion fails
    // with 40001 here and runs again, where it sees it.
    const [row] = await this.db.select({ deletedAt: users.deletedAt }).from(users).where(eq(users.id, userId)).for('share')
    return row !== undefined && row.deletedAt === null
  }

  override async lockUserForDeletion(userId: string): Promise<void> {
    await this.db.select({ id: users.id }).from(users).where(eq(users.id, userId)).for('no key update')
  }

  // ---- ledger ----

  override async account(accountId: string): Promise<LedgerAccount | null> {
    // No FOR UPDATE: under SERIALIZABLE the update that follows fails with
    // 40001 if another transaction changed the row since this snapshot, and a
    // lock would not spare that failure (a locked row changed after the
    // snapshot fails the same way), only add a wait before it.
    const account = await super.account(accountId)
    if (account && account.userId !== null && this.scope.rowLocks) {
      // A READ COMMITTED unit of work (a job paying a prize or refunding a
      // fee: WriteOptions.rowLocks) has no serialization failure to catch a
      // balance changed between this read and the update: it locks the
      // wallet's row and reads its balance again, the one the update follows.
      const [locked] = await this.db.select().from(ledgerAccounts).where(eq(ledgerAccounts.id, accountId)).for('no key update')
      return toAccount(locked!)
    }
    return account
  }

  override async openAccount(account: Omit<LedgerAccount, 'balance'>, now: Date): Promise<LedgerAccount> {
    if (this.scope.rowLocks) {
      // READ COMMITTED (a job): an account another unit of work opened
      // meanwhile (the house by another job, a wallet by a credit) is found
      // opened, rather than failing on its key; read locked, as account() does.
      await this.db.insert(ledgerAccounts).values({ ...account, balance: '0', createdAt: now }).onConflictDoNothing()
      const query = this.db.select().from(ledgerAccounts).where(eq(ledgerAccounts.id, account.id))
      const [existing] = await (account.userId !== null ? query.for('no key update') : query)
      return toAccount(existing!)
    }
    try {
      return await super.openAccount(account, now)
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

  // ---- sums in NUMERIC: exact, and one row read rather than every posting ----

  override async postingsTotal(accountId: string): Promise<bigint> {
    const [row] = await this.db
      .select({ sum: sql<string | null>`sum(${ledgerPostings.amount})` })
      .from(ledgerPostings)
      .where(eq(ledgerPostings.accountId, accountId))
    return BigInt(row?.sum ?? '0')
  }

  override async balanceBefore(accountId: string, id: number): Promise<bigint> {
    // Null when there is nothing before.
    const [row] = await this.db
      .select({ sum: sql<string | null>`sum(${ledgerPostings.amount})` })
      .from(ledgerPostings)
      .where(and(eq(ledgerPostings.accountId, accountId), lt(ledgerPostings.id, id)))
    return BigInt(row?.sum ?? '0')
  }
}
