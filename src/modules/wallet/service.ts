// Wallet balances and operator credits (contract §3 and §6).
import { eq } from 'drizzle-orm'
import type { Db } from '../../db/sqlite/connection'
import { ledgerTransactions, users, wallets } from '../../db/schema'
import type { Clock } from '../../shared/clock'
import { AppError } from '../../shared/errors'
import { formatAmount, MoneyFormatError, parsePositiveAmount, USDC } from '../../shared/money'
import { appendEvent } from '../events/outbox'
import type { CustodyClient } from './custody'
import { balanceOf, postMovement, systemAccountId, userAccountId } from './ledger'

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

export interface WalletView {
  asset: string
  balance: string
  address: string
}

export class WalletService {
  /** In-flight wallet creations per user, so two first requests make one key. */
  private readonly creating = new Map<string, Promise<{ address: string; keyRef: string }>>()

  constructor(private readonly deps: { db: Db; clock: Clock; custody: CustodyClient }) {}

  /** The user's wallet, created (a custody key, an address) on first use. */
  async wallet(userId: string): Promise<WalletView> {
    const row = await this.ensureWallet(userId)
    return { asset: row.asset, balance: this.balance(userId), address: row.address }
  }

  async ensureWallet(userId: string): Promise<typeof wallets.$inferSelect> {
    const { db, clock } = this.deps
    const existing = db.select().from(wallets).where(eq(wallets.userId, userId)).get()
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
      // Another process may have won the race: the first row stays, ours is unused.
      db.insert(wallets)
        .values({ userId, asset: DEFAULT_ASSET.code, address: key.address, keyRef: key.keyRef, createdAt: clock.now() })
        .onConflictDoNothing()
        .run()
    } finally {
      this.creating.delete(userId)
    }
    return db.select().from(wallets).where(eq(wallets.userId, userId)).get()!
  }

  balance(userId: string): string {
    return formatAmount(balanceOf(this.deps.db, userId, DEFAULT_ASSET.code), DEFAULT_ASSET)
  }

  /**
   * Credits a user's wallet from the funding account. The same `reference`
   * credits once: a repeat with the same user and amount answers the current
   * balance, a repeat with anything else is 409.
   */
  credit(input: { userId: string; amount: string; reference: string }): { balance: string } {
    const { db, clock } = this.deps
    const amount = amountFrom(input.amount, 'body/amount')
    const asset = DEFAULT_ASSET.code
    const reference = `credit:${input.reference}`
    db.transaction(
      (tx) => {
        const user = tx.select({ id: users.id }).from(users).where(eq(users.id, input.userId)).get()
        if (!user) throw new AppError('not_found', 'No such user')
        const earlier = tx.select().from(ledgerTransactions).where(eq(ledgerTransactions.reference, reference)).get()
        if (earlier) {
          const memo = earlier.memo as { userId?: string; amount?: string } | null
          if (memo?.userId !== input.userId || memo?.amount !== amount.toString()) {
            throw new AppError('conflict', 'This reference was already used for another credit')
          }
          return
        }
        postMovement(tx, clock, {
          kind: 'credit',
          asset,
          reference,
          memo: { userId: input.userId, amount: amount.toString(), reference: input.reference },
          postings: [
            { accountId: userAccountId(input.userId, asset), userId: input.userId, amount },
            { accountId: systemAccountId('funding', asset), userId: null, amount: -amount },
          ],
        })
        appendEvent(tx, clock, {
          userId: input.userId,
          topic: 'wallet',
          type: 'wallet.credited',
          data: { asset, amount: formatAmount(amount, DEFAULT_ASSET), reference: input.reference, balance: formatAmount(balanceOf(tx, input.userId, asset), DEFAULT_ASSET) },
        })
      },
      { behavior: 'immediate' },
    )
    return { balance: this.balance(input.userId) }
  }
}
