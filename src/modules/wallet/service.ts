// Wallet balances and operator credits (contract §3 and §6).
import type { Storage } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import { AppError } from '../../shared/errors'
import { formatAmount, MoneyFormatError, parsePositiveAmount, USDC } from '../../shared/money'
import type { CustodyClient } from './custody'
import { historyPage, type HistoryPage } from './history'
import { holdingsOf, statementOf, type Holdings, type StatementEntry } from './holdings'
import { balanceOf, postMovement, systemAccountId, userAccountId } from './ledger'
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

export interface WalletView {
  asset: string
  balance: string
  address: string
}

export class WalletService {
  /** In-flight wallet creations per user, so two first requests make one key. */
  private readonly creating = new Map<string, Promise<{ address: string; keyRef: string }>>()

  constructor(private readonly deps: { storage: Storage; clock: Clock; custody: CustodyClient }) {}

  /** The user's wallet, created (a custody key, an address) on first use. */
  async wallet(userId: string): Promise<WalletView> {
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

  /** GET /wallet/transactions: the user's movements in the wallet's asset, oldest first, a page after the cursor. */
  transactions(userId: string, query: { after?: string; limit?: number }): Promise<HistoryPage> {
    return historyPage(this.deps.storage.read.wallet, userId, DEFAULT_ASSET, query)
  }

  async balance(userId: string): Promise<string> {
    return formatAmount(await balanceOf(this.deps.storage.read.wallet, userId, DEFAULT_ASSET.code), DEFAULT_ASSET)
  }

  /**
   * Credits a user's wallet from the funding account. The same `reference`
   * credits once: a repeat with the same user and amount answers the current
   * balance, a repeat with anything else is 409.
   */
  async credit(input: { userId: string; amount: string; reference: string }): Promise<{ balance: string }> {
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
      await postMovement(
        tx.wallet,
        {
          kind: 'credit',
          asset,
          reference,
          memo: { userId: input.userId, amount: amount.toString(), reference: input.reference },
          postings: [
            { accountId: userAccountId(input.userId, asset), userId: input.userId, amount },
            { accountId: systemAccountId('funding', asset), userId: null, amount: -amount },
          ],
        },
        now,
      )
      const balance = await balanceOf(tx.wallet, input.userId, asset)
      await tx.events.append(
        { userId: input.userId, topic: 'wallet', type: 'wallet.credited', data: { asset, amount: formatAmount(amount, DEFAULT_ASSET), reference: input.reference, balance: formatAmount(balance, DEFAULT_ASSET) } },
        now,
      )
    })
    return { balance: await this.balance(input.userId) }
  }
}
