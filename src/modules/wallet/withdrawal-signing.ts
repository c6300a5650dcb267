// Phases 2 and 3 of a withdrawal (./withdrawals.ts): custody signs a
// `pending_signature` withdrawal outside any write, and a write records the
// signature (`signed`). A refusal fails it and gives the money back; custody
// away leaves it pending for resumePending().
//
// A banned owner's withdrawal is never signed (docs/decisions.md, "A banned
// user's withdrawal goes back to an operator"): every path to custody ends in
// sign(), which reads the owner's standing before custody sees the message
// and again in the write that records the signature. A banned owner's
// withdrawal becomes `awaiting_approval` instead, for an operator to reject
// (or approve once the ban is lifted).
import { base58 } from '@scure/base'
import type { Transaction } from '../../db/storage'
import { standingMayAct } from '../auth/standing'
import type { AuthStore } from '../auth/store'
import { CustodyRefusedError } from './custody'
import { verifyEd25519, withdrawalMessage } from './frost'
import { accounts, ledger, type Transfer } from './ledger'
import type { Withdrawal } from './store'
import { withdrawalFact } from './withdrawal-view'
import { publishWebhook } from '../webhooks/publish'
import type { WithdrawalDeps } from './withdrawals'

export type SigningDeps = Pick<WithdrawalDeps, 'storage' | 'clock' | 'logger' | 'custody' | 'wallet'>

/**
 * A failed or rejected withdrawal's money back to its owner: a transfer of
 * kind `reversal` from the withdrawals account, its memo naming the
 * withdrawal (`arena ledger check` counts one per failed or rejected
 * withdrawal). Not `ledger.reverse` of the debit: the withdrawal's row, not
 * the ledger, knows its debit, and its status already makes the give-back
 * happen once (docs/decisions.md, "Money moves by name").
 */
export function giveBack(row: Withdrawal, memo: { withdrawalId: string; reason: string; rejected?: true }): Transfer {
  return { kind: 'reversal', from: accounts.system('withdrawals', row.asset), to: accounts.user(row.userId, row.asset), amount: row.amount, memo }
}

export class WithdrawalSigning {
  constructor(private readonly deps: SigningDeps) {}

  /**
   * Phases 2 and 3 for one withdrawal. A custody error that may pass leaves it
   * pending for resumePending(); a refusal fails it and reverses the debit.
   */
  async sign(withdrawalId: string, keyRef: string, address: string): Promise<Withdrawal> {
    const { storage, clock, custody, logger } = this.deps
    const pending = (await storage.read.wallet.withdrawal(withdrawalId))!
    if (pending.status !== 'pending_signature') return pending
    // Custody never sees the message of a banned owner's withdrawal (the
    // write below decides again, should the ban come while custody signs).
    if (!(await ownerMayWithdraw(storage.read.auth, pending.userId, clock.now()))) return this.stopIfBanned(withdrawalId)
    const message = withdrawalMessage({ id: pending.id, asset: pending.asset, amount: pending.amount.toString(), destinationAddress: pending.destinationAddress })
    let signature: string
    try {
      signature = await custody.signWithdrawal(keyRef, message)
    } catch (error) {
      if (error instanceof CustodyRefusedError) return this.fail(pending.id, error.message)
      logger.warn('custody unavailable, withdrawal stays pending', { withdrawalId, error: String(error) })
      return pending
    }
    // Whatever the provider, a signature is recorded only if it verifies with
    // plain Ed25519 against the wallet address over this withdrawal's message.
    if (!verifyWithdrawalSignature(signature, message, address)) {
      logger.error('custody returned a signature that does not verify; withdrawal stays pending', { withdrawalId })
      return pending
    }
    return storage.write(async (tx) => {
      const current = (await tx.wallet.withdrawal(withdrawalId))!
      // Another resumer may have finished it meanwhile: first signature wins.
      if (current.status !== 'pending_signature') return current
      const now = clock.now()
      // Banned while custody signed: the signature is dropped unrecorded and unsent.
      if (!(await ownerMayWithdraw(tx.auth, current.userId, now))) {
        logger.warn('withdrawal owner banned while custody signed; signature discarded, the withdrawal awaits an operator', { withdrawalId })
        return this.stopForBan(tx, current, now)
      }
      const signed = await tx.wallet.markWithdrawalSigned(withdrawalId, signature, now)
      await tx.events.append({ userId: current.userId, topic: 'wallet', type: 'wallet.withdrawal_signed', data: { withdrawalId, signature } }, now)
      await publishWebhook(tx, { type: 'withdrawal.signed', data: { ...withdrawalFact(current), destinationAddress: current.destinationAddress, signature } }, now)
      return signed
    })
  }

  /** A `pending_signature` withdrawal whose owner is banned now goes to an operator; otherwise it is returned as it is (the resumer tries again). */
  private stopIfBanned(withdrawalId: string): Promise<Withdrawal> {
    const { storage, clock } = this.deps
    return storage.write(async (tx) => {
      const current = (await tx.wallet.withdrawal(withdrawalId))!
      const now = clock.now()
      if (current.status !== 'pending_signature' || (await ownerMayWithdraw(tx.auth, current.userId, now))) return current
      return this.stopForBan(tx, current, now)
    })
  }

  /**
   * In the caller's unit of work, after it read the owner banned: the
   * withdrawal (`held` or `pending_signature`) becomes `awaiting_approval`, so
   * nothing signs it until an operator decides; the debit stays (a reject
   * reverses it). A conditional move: if something else moved it first, the
   * withdrawal is returned as it now is.
   */
  async stopForBan(tx: Transaction, current: Withdrawal, now: Date): Promise<Withdrawal> {
    const moved = await tx.wallet.moveWithdrawal(current.id, current.status, 'awaiting_approval', now)
    if (!moved) return (await tx.wallet.withdrawal(current.id))!
    await tx.events.append({ userId: current.userId, topic: 'wallet', type: 'wallet.withdrawal_awaiting_approval', data: { withdrawalId: current.id } }, now)
    this.deps.logger.info('withdrawal of a banned user stopped before signing; it awaits an operator', { withdrawalId: current.id, from: current.status })
    return moved
  }

  private fail(withdrawalId: string, reason: string): Promise<Withdrawal> {
    const { storage, clock } = this.deps
    return storage.write(async (tx) => {
      const current = (await tx.wallet.withdrawal(withdrawalId))!
      if (current.status !== 'pending_signature') return current
      const now = clock.now()
      await ledger(tx.wallet, now).transfer(giveBack(current, { withdrawalId, reason }))
      const failed = await tx.wallet.markWithdrawalFailed(withdrawalId, reason, now)
      await tx.events.append({ userId: current.userId, topic: 'wallet', type: 'wallet.withdrawal_failed', data: { withdrawalId, reason } }, now)
      await publishWebhook(tx, { type: 'withdrawal.failed', data: { ...withdrawalFact(current), reason } }, now)
      return failed
    })
  }

  /** Signs a withdrawal that is `pending_signature` now; any other is returned as it is. */
  async signNow(row: Withdrawal): Promise<Withdrawal> {
    if (row.status !== 'pending_signature') return row
    const wallet = await this.deps.wallet.ensureWallet(row.userId)
    return this.sign(row.id, wallet.keyRef, wallet.address)
  }

  /** Signs every withdrawal left pending (by a crash, or custody being away). Returns how many were settled. */
  async resumePending(): Promise<number> {
    const pending = await this.deps.storage.read.wallet.pendingWithdrawals()
    let settled = 0
    for (const row of pending) {
      const wallet = await this.deps.wallet.ensureWallet(row.userId)
      const after = await this.sign(row.id, wallet.keyRef, wallet.address)
      if (after.status !== 'pending_signature') settled++
    }
    return settled
  }
}

/** Whether the base58 signature verifies (strict Ed25519) over the message under the base58 address. */
export function verifyWithdrawalSignature(signature: string, message: Uint8Array, address: string): boolean {
  try {
    return verifyEd25519(base58.decode(signature), message, base58.decode(address))
  } catch {
    return false
  }
}

/**
 * Whether the owner may have a withdrawal signed now: an account that exists
 * and is not banned. Read with the unit of work's store (`tx.auth`) where it
 * decides a move toward signing.
 */
export async function ownerMayWithdraw(store: AuthStore, userId: string, now: Date): Promise<boolean> {
  return standingMayAct(await store.standing(userId), now)
}
