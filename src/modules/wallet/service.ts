// Wallet balances, operator credits and adjustments (contract §3, §6 and §10).
import type { Storage } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import { AppError } from '../../shared/errors'
import { formatAmount, MoneyFormatError, parsePositiveAmount, parseSignedAmount, USDC } from '../../shared/money'
import type { SecurityEventInput } from '../security/event-log'
import type { Actor } from '../audit/log'
import type { CustodyClient } from './custody'
import { historyPage } from './history'
import { heldPayoutsOf } from '../integrity/service'
import { formatSigned, holdingsOf, statementOf, type Holdings, type StatementEntry } from './holdings'
import { accounts, balanceOf, ledger } from './ledger'
import type { TransactionsPage, WalletResponse } from './model'
import type { Wallet } from './store'

export const DEFAULT_ASSET = USDC

/** Parses a request amount, turning a format error into the 422 of contract §0. */
export function amountFrom(input: unknown, path: string): bigint {
  try {
    return parsePositiveAmount(input, DEFAULT_ASSET)
  } catch (error) {
    if (error instanceof MoneyFormatError) {
      throw new AppError('validation_failed', 'Request failed validation', {
        details: [{ path, message: `Expected a positive decimal string with at most ${DEFAULT_ASSET.decimals} decimals` }],
      })
    }
    throw error
  }
}

/** Parses a signed request amount (an adjustment): the grammar with an optional leading '-', never zero; 422 otherwise. */
export function signedAmountFrom(input: unknown, path: string): bigint {
  try {
    return parseSignedAmount(input, DEFAULT_ASSET)
  } catch (error) {
    if (error instanceof MoneyFormatError) {
      throw new AppError('validation_failed', 'Request failed validation', {
        details: [{ path, message: `Expected a non-zero decimal string with an optional leading "-" and at most ${DEFAULT_ASSET.decimals} decimals` }],
      })
    }
    throw error
  }
}

/** The longest adjustment reason (the route's schema says the same). */
export const ADJUSTMENT_REASON_MAX = 500
/** The longest operator reference of a credit or an adjustment (the routes' schemas say the same). */
export const OPERATOR_REFERENCE_MAX = 128

export class WalletService {
  /** In-flight wallet creations per user, so two first requests make one key. */
  private readonly creating = new Map<string, Promise<{ address: string; keyRef: string }>>()

  /** `onSecurityEvent`: where adjustments are recorded (the security log), after their commit. */
  constructor(private readonly deps: { storage: Storage; clock: Clock; custody: CustodyClient; onSecurityEvent?: (event: SecurityEventInput) => void }) {}

  /** The user's wallet, created (a custody key, an address) on first use. */
  async wallet(userId: string): Promise<WalletResponse> {
    const row = await this.ensureWallet(userId)
    return { asset: row.asset, balance: await this.balance(userId), address: row.address }
  }

  /** The custody key of the user's wallet, if it has one (never creates it). */
  async keyRefOf(userId: string): Promise<string | null> {
    return (await this.deps.storage.read.wallet.wallet(userId))?.keyRef ?? null
  }

  async ensureWallet(userId: string): Promise<Wallet> {
    const { storage, clock } = this.deps
    const existing = await storage.read.wallet.wallet(userId)
    if (existing) return existing
    let pending = this.creating.get(userId)
    if (!pending) {
      pending = this.deps.custody.createWallet()
      this.creating.set(userId, pending)
    }
    try {
      // A custody outage is the server's trouble, not the caller's: 503, retry later.
      const key = await pending.catch(() => {
        throw new AppError('service_unavailable', 'Custody is not available to create the wallet; try again', {
          headers: { 'retry-after': '5' },
        })
      })
      return await storage.write(async (tx) => {
        // Another process may have won the race: the first row stays, ours is unused.
        await tx.wallet.addWalletUnlessExists({ userId, asset: DEFAULT_ASSET.code, address: key.address, keyRef: key.keyRef, createdAt: clock.now() })
        return (await tx.wallet.wallet(userId))!
      })
    } finally {
      // Only once the row is stored: a request arriving meanwhile shares this key instead of making another.
      this.creating.delete(userId)
    }
  }

  /** What the user's wallet holds and has on its way out (the operator's view of a user). */
  async holdings(userId: string): Promise<Holdings> {
    const { empty: _, ...holdings } = await holdingsOf(this.deps.storage.read.wallet, userId)
    return holdings
  }

  /** Every movement on the user's wallet, oldest first (the account export). */
  statement(userId: string): Promise<StatementEntry[]> {
    return statementOf(this.deps.storage.read.wallet, userId)
  }

  /** GET /wallet/transactions: the user's movements in the wallet's asset, oldest first, a page after the cursor, and their payouts held for review. */
  async transactions(userId: string, query: { after?: string; limit?: number }): Promise<TransactionsPage> {
    const page = await historyPage(this.deps.storage.read.wallet, userId, DEFAULT_ASSET, query)
    return { ...page, held: await heldPayoutsOf(this.deps.storage.read.payouts, userId) }
  }

  async balance(userId: string): Promise<string> {
    return formatAmount(await balanceOf(this.deps.storage.read.wallet, userId, DEFAULT_ASSET.code), DEFAULT_ASSET)
  }

  /**
   * Credits a user's wallet from the funding account. The same `reference`
   * credits once: a repeat with the same user and amount answers the current
   * balance, a repeat with anything else is 409.
   */
  async credit(input: { userId: string; amount: string; reference: string }, by: Actor): Promise<{ balance: string }> {
    const { storage, clock } = this.deps
    const amount = amountFrom(input.amount, 'body/amount')
    const asset = DEFAULT_ASSET.code
    const reference = `credit:${input.reference}`
    await storage.write(async (tx) => {
      if (!(await tx.wallet.userExists(input.userId))) throw new AppError('not_found', 'No such user')
      const earlier = await tx.wallet.transactionByReference(reference)
      if (earlier) {
        const memo = earlier.memo as { userId?: string; amount?: string } | null
        if (memo?.userId !== input.userId || memo?.amount !== amount.toString()) {
          throw new AppError('conflict', 'This reference was already used for another credit')
        }
        return
      }
      const now = clock.now()
      await ledger(tx.wallet, now).transfer({
        kind: 'credit',
        from: accounts.system('funding', asset),
        to: accounts.user(input.userId, asset),
        amount,
        reference,
        memo: { userId: input.userId, amount: amount.toString(), reference: input.reference },
      })
      const balance = await balanceOf(tx.wallet, input.userId, asset)
      const credited = formatAmount(amount, DEFAULT_ASSET)
      await tx.events.append(
        { userId: input.userId, topic: 'wallet', type: 'wallet.credited', data: { asset, amount: credited, reference: input.reference, balance: formatAmount(balance, DEFAULT_ASSET) } },
        now,
      )
      await by.record(tx, { action: 'wallet.credit', target: input.userId, details: { asset, amount: credited, reference: input.reference, balance: formatAmount(balance, DEFAULT_ASSET) } })
    })
    return { balance: await this.balance(input.userId) }
  }

  /**
   * An operator adjustment (contract §10): moves a signed amount between the
   * user's wallet and the adjustments account, with a reason. The same
   * `reference` moves once: a repeat with the same user and amount answers
   * the current balance and writes nothing; a repeat with another user or
   * amount is 409 `idempotency_key_reused`. A negative amount the balance
   * does not cover is 422 `insufficient_funds` and writes nothing. One unit
   * of work: the movement and the user's `wallet.adjusted` event; the
   * security event (`WALLET_ADJUSTED`, the operator's audit trail) follows
   * the commit.
   */
  async adjust(input: { userId: string; amount: string; reason: string; reference: string }, by: Actor): Promise<{ balance: string }> {
    const { storage, clock } = this.deps
    const amount = signedAmountFrom(input.amount, 'body/amount')
    const reason = input.reason
    if (typeof reason !== 'string' || reason.trim() === '' || reason.length > ADJUSTMENT_REASON_MAX) {
      throw new AppError('validation_failed', 'Request failed validation', { details: [{ path: 'body/reason', message: `Expected 1 to ${ADJUSTMENT_REASON_MAX} characters, not only spaces` }] })
    }
    if (typeof input.reference !== 'string' || input.reference === '' || input.reference.length > OPERATOR_REFERENCE_MAX) {
      throw new AppError('validation_failed', 'Request failed validation', { details: [{ path: 'body/reference', message: `Expected 1 to ${OPERATOR_REFERENCE_MAX} characters` }] })
    }
    const asset = DEFAULT_ASSET.code
    const reference = `adjustment:${input.reference}`
    const balance = await storage.write(async (tx) => {
      if (!(await tx.wallet.userExists(input.userId))) throw new AppError('not_found', 'No such user')
      const earlier = await tx.wallet.transactionByReference(reference)
      if (earlier) {
        const memo = earlier.memo as { userId?: string; amount?: string } | null
        if (memo?.userId !== input.userId || memo?.amount !== amount.toString()) {
          throw new AppError('idempotency_key_reused', 'This reference was already used for another adjustment')
        }
        return await balanceOf(tx.wallet, input.userId, asset)
      }
      const now = clock.now()
      // A signed amount: positive from the adjustments account to the wallet, negative the other way.
      const [wallet, adjustments] = [accounts.user(input.userId, asset), accounts.system('adjustments', asset)]
      const transactionId = await ledger(tx.wallet, now).transfer({
        kind: 'adjustment',
        from: amount > 0n ? adjustments : wallet,
        to: amount > 0n ? wallet : adjustments,
        amount: amount > 0n ? amount : -amount,
        reference,
        memo: { userId: input.userId, amount: amount.toString(), reference: input.reference, reason },
      })
      const after = await balanceOf(tx.wallet, input.userId, asset)
      const signed = formatSigned(amount, DEFAULT_ASSET)
      const balance = formatAmount(after, DEFAULT_ASSET)
      await tx.events.append(
        { userId: input.userId, topic: 'wallet', type: 'wallet.adjusted', data: { asset, amount: signed, reference: input.reference, reason, balance } },
        now,
      )
      await by.record(tx, { action: 'wallet.adjust', target: input.userId, reason, details: { asset, amount: signed, reference: input.reference, transactionId, balance } })
      tx.afterCommit(() =>
        this.deps.onSecurityEvent?.({
          userId: input.userId,
          source: 'server',
          kind: 'WALLET_ADJUSTED',
          level: 'WARN',
          details: { transactionId, asset, amount: signed, reason, reference: input.reference, balance },
        }),
      )
      return after
    })
    return { balance: formatAmount(balance, DEFAULT_ASSET) }
  }
}
