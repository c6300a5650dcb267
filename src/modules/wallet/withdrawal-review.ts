// An operator's decision on a waiting withdrawal, and the end of a
// new-destination hold (docs/decisions.md, "Withdrawal approval and the
// new-destination hold"). Above ARENA_WITHDRAWAL_APPROVAL_ABOVE a withdrawal
// is `awaiting_approval` until an operator approves (then signed) or rejects
// it (then its debit is reversed); the first one to an address the user never
// had a signed withdrawal to is `held` until its hold ends, when a durable job
// enqueued with it moves it to `pending_signature` and signs it. Both at once:
// it is held until both the approval and the hold's end came. An operator may
// reject one `awaiting_approval` or `held` (the hold exists to give the studio
// that time), never one custody has had. The release job reads the owner's
// standing in the write that would move a held withdrawal on: a banned
// owner's goes back to an operator (./withdrawal-signing.ts).
import type { Transaction } from '../../db/storage'
import { toIso } from '../../shared/clock'
import { AppError } from '../../shared/errors'
import { isId } from '../../shared/ids'
import { formatAmount } from '../../shared/money'
import { JOB_KINDS } from '../../jobs/queue'
import type { Actor } from '../audit/log'
import { ledger } from './ledger'
import type { Withdrawal as WithdrawalModel } from './model'
import { DEFAULT_ASSET } from './service'
import type { WalletStore, Withdrawal } from './store'
import { toWithdrawal, withdrawalFact } from './withdrawal-view'
import { publishWebhook } from '../webhooks/publish'
import { giveBack, ownerMayWithdraw, type WithdrawalSigning } from './withdrawal-signing'
import type { WithdrawalDeps } from './withdrawals'

/** What an approval's or a rejection's audit record says of the withdrawal: whose, how much, where to. */
function withdrawalFacts(row: Withdrawal): Record<string, unknown> {
  return { userId: row.userId, amount: formatAmount(row.amount, DEFAULT_ASSET), asset: row.asset, destinationAddress: row.destinationAddress }
}

export class WithdrawalReview {
  constructor(
    private readonly deps: Pick<WithdrawalDeps, 'storage' | 'clock' | 'logger'>,
    private readonly signing: WithdrawalSigning,
  ) {}

  /**
   * POST /admin/withdrawals/{id}/approve. An `awaiting_approval` withdrawal
   * becomes `pending_signature` and is signed at once, or `held` when its
   * new-destination hold has not ended (the hold's job signs it then). One
   * approved before answers as it now is; a rejected one, or one that never
   * awaited approval, is 409 withdrawal_not_awaiting_approval. While its owner
   * is banned (or deleted) it is 409 withdrawal_owner_banned and stays as it is.
   */
  async approve(withdrawalId: string, by: Actor): Promise<WithdrawalModel> {
    const { storage, clock } = this.deps
    const row = await storage.write(async (tx) => {
      const current = await this.withdrawalOrNotFound(tx.wallet, withdrawalId)
      if (current.status !== 'awaiting_approval') return current
      const now = clock.now()
      if (!(await ownerMayWithdraw(tx.auth, current.userId, now))) {
        throw new AppError('withdrawal_owner_banned', "The withdrawal's owner is banned: lift the ban before approving it, or reject it")
      }
      const held = current.holdUntil !== null && current.holdUntil > now
      const moved = await tx.wallet.moveWithdrawal(withdrawalId, 'awaiting_approval', held ? 'held' : 'pending_signature', now, { approvedAt: now })
      // A reject (or approve) moved it first: answer from what it now is.
      if (!moved) return (await tx.wallet.withdrawal(withdrawalId))!
      // The verify's release job may have run (and done nothing) already; this one is due at the same time.
      if (held) await tx.jobs.enqueue(JOB_KINDS.releaseWithdrawal, { withdrawalId }, now, current.holdUntil!)
      await tx.events.append(
        {
          userId: current.userId,
          topic: 'wallet',
          type: 'wallet.withdrawal_approved',
          data: { withdrawalId, status: held ? 'held' : 'pending_signature', ...(held ? { releasesAt: toIso(current.holdUntil!) } : {}) },
        },
        now,
      )
      if (held) await tx.events.append({ userId: current.userId, topic: 'wallet', type: 'wallet.withdrawal_held', data: { withdrawalId, releasesAt: toIso(current.holdUntil!) } }, now)
      await by.record(tx, { action: 'withdrawal.approve', target: withdrawalId, details: { ...withdrawalFacts(current), status: moved.status } })
      return moved
    })
    if (row.approvedAt === null) throw notAwaitingApproval(row)
    return toWithdrawal(await this.signing.signNow(row))
  }

  /**
   * POST /admin/withdrawals/{id}/reject: an `awaiting_approval` or `held`
   * withdrawal becomes `rejected` and a reversal gives its amount back, in one
   * unit of work with its event and audit record. One rejected before answers
   * as it is; one custody has had (`pending_signature`, `signed`, `failed`) is
   * 409 withdrawal_signing_started. Against the release job: both move it out
   * of `held` by one conditional update, so exactly one of them does.
   */
  async reject(withdrawalId: string, reason: string, by: Actor): Promise<WithdrawalModel> {
    const { storage, clock } = this.deps
    const row = await storage.write(async (tx) => {
      const current = await this.withdrawalOrNotFound(tx.wallet, withdrawalId)
      if (current.status !== 'awaiting_approval' && current.status !== 'held') return current
      const now = clock.now()
      const rejected = await tx.wallet.moveWithdrawal(withdrawalId, current.status, 'rejected', now, { rejectionReason: reason })
      if (!rejected) return (await tx.wallet.withdrawal(withdrawalId))!
      await ledger(tx.wallet, now).transfer(giveBack(current, { withdrawalId, reason, rejected: true }))
      await tx.events.append({ userId: current.userId, topic: 'wallet', type: 'wallet.withdrawal_rejected', data: { withdrawalId, reason } }, now)
      await publishWebhook(tx, { type: 'withdrawal.rejected', data: { ...withdrawalFact(current), reason } }, now)
      await by.record(tx, { action: 'withdrawal.reject', target: withdrawalId, reason, details: { ...withdrawalFacts(current), was: current.status } })
      return rejected
    })
    if (row.status !== 'rejected') throw notRejectable(row)
    return toWithdrawal(row)
  }

  /**
   * The release job's work, inside its unit of work: a `held` withdrawal
   * becomes `pending_signature`, signed once that commits (and by the
   * resumer, should this process stop first); one whose owner is banned
   * becomes `awaiting_approval` instead. Anything else (rejected meanwhile):
   * nothing.
   */
  async release(tx: Transaction, withdrawalId: string): Promise<void> {
    const now = this.deps.clock.now()
    const current = await tx.wallet.withdrawal(withdrawalId)
    if (current === null || current.status !== 'held') return
    if (!(await ownerMayWithdraw(tx.auth, current.userId, now))) {
      await this.signing.stopForBan(tx, current, now)
      return
    }
    const moved = await tx.wallet.moveWithdrawal(withdrawalId, 'held', 'pending_signature', now)
    if (!moved) return
    await tx.events.append({ userId: moved.userId, topic: 'wallet', type: 'wallet.withdrawal_released', data: { withdrawalId } }, now)
    tx.afterCommit(() => {
      this.signing.signNow(moved).catch((error: unknown) => this.deps.logger.warn('signing a released withdrawal failed; the resumer retries', { withdrawalId, error: String(error) }))
    })
  }

  private async withdrawalOrNotFound(store: WalletStore, withdrawalId: string): Promise<Withdrawal> {
    const row = isId('withdrawal', withdrawalId) ? await store.withdrawal(withdrawalId) : null
    if (row === null) throw new AppError('not_found', 'No withdrawal with this id')
    return row
  }
}

function notAwaitingApproval(row: Withdrawal): AppError {
  return new AppError('withdrawal_not_awaiting_approval', `The withdrawal is ${row.status}${row.approvedAt !== null ? ' (approved)' : ''}: only one awaiting approval can be approved`)
}

function notRejectable(row: Withdrawal): AppError {
  if (row.status === 'pending_signature' || row.status === 'signed' || row.status === 'failed') {
    const what = row.status === 'failed' ? 'custody refused it and its amount is already back' : 'custody has it, so it can no longer be stopped'
    return new AppError('withdrawal_signing_started', `The withdrawal is ${row.status}: ${what}`)
  }
  // Moved to another waiting status between the read and the update (no engine lets that happen today).
  return new AppError('conflict', `The withdrawal changed meanwhile (now ${row.status}); try again`)
}
