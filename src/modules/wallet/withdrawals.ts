// Withdrawals, in recorded phases (contract §3), never awaiting the network
// inside a transaction:
//   1. one write checks the withdrawal limits, consumes the PIN session,
//      claims the idempotency key, debits the ledger and records the
//      withdrawal `pending_signature` (with its outbox event);
//   2. the custody client signs, outside any write;
//   3. a write records the signature: `signed`.
// A crash between 1 and 3 leaves a `pending_signature` withdrawal that
// resumePending() signs later. A withdrawal custody refuses for good is
// `failed`, and a compensating ledger transaction gives the money back.
//
// Before phase 2 a withdrawal may wait (docs/decisions.md, "Withdrawal
// approval and the new-destination hold"): above ARENA_WITHDRAWAL_APPROVAL_ABOVE
// it is `awaiting_approval` until an operator approves (then signed) or
// rejects it (then its debit is reversed); the first one to an address the
// user never had a signed withdrawal to is `held` until its hold ends, when a
// durable job enqueued with it moves it to `pending_signature` and signs it.
// Both at once: it is held until both the approval and the hold's end came.
// The resumer signs only `pending_signature` withdrawals. An operator may
// reject one `awaiting_approval` or `held` (the hold exists to give the studio
// that time), never one custody has had.
//
// A banned owner's withdrawal is never signed (docs/decisions.md, "A banned
// user's withdrawal goes back to an operator"): every path to custody ends in
// sign(), which reads the owner's standing before custody sees the message
// and again in the write that records the signature; the release job reads it
// in the write that would move a held withdrawal on. A banned owner's
// withdrawal becomes `awaiting_approval` instead, for an operator to reject
// (or approve once the ban is lifted).
//
// Each phase has its file: the request (the PIN verify, phase 1) in
// ./withdrawal-request.ts, the operator's decision and the hold's end in
// ./withdrawal-review.ts, signing and settling (phases 2 and 3, the resumer)
// in ./withdrawal-signing.ts. WithdrawalService is what the routes, the
// console, the jobs and the account export call.
import type { Storage, Transaction } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import { AppError } from '../../shared/errors'
import { isId } from '../../shared/ids'
import type { Logger } from '../../shared/logger'
import type { Actor } from '../audit/log'
import type { PinService } from '../security/pin-service'
import type { CustodyClient } from './custody'
import { HISTORY_PAGE_DEFAULT, pageLimit } from './history'
import type { Withdrawal as WithdrawalModel, WithdrawalsPage } from './model'
import type { WalletService } from './service'
import type { Withdrawal } from './store'
import { WithdrawalRequests, type VerifyInput, type VerifyResult, type WithdrawalApproval, type WithdrawalLimits } from './withdrawal-request'
import { WithdrawalReview } from './withdrawal-review'
import { WithdrawalSigning } from './withdrawal-signing'
import { toWithdrawal } from './withdrawal-view'

export interface WithdrawalDeps {
  storage: Storage
  clock: Clock
  logger: Logger
  pins: PinService
  wallet: WalletService
  custody: CustodyClient
  /** A verify by an account whose email is unverified answers 403 email_not_verified (ARENA_REQUIRE_VERIFIED_EMAIL; default off). */
  requireVerifiedEmail?: boolean
  /** ARENA_WITHDRAWAL_MAX and ARENA_WITHDRAWAL_DAILY_MAX; none by default. */
  limits?: WithdrawalLimits
  /** ARENA_WITHDRAWAL_APPROVAL_ABOVE and ARENA_NEW_DESTINATION_HOLD_S; neither by default. */
  approval?: WithdrawalApproval
}

export class WithdrawalService {
  private readonly requests: WithdrawalRequests
  private readonly review: WithdrawalReview
  private readonly signing: WithdrawalSigning

  constructor(private readonly deps: WithdrawalDeps) {
    this.signing = new WithdrawalSigning(deps)
    this.requests = new WithdrawalRequests(deps, this.signing)
    this.review = new WithdrawalReview(deps, this.signing)
  }

  /** POST /security/pin-session/{id}/verify: one PIN attempt authorizing one withdrawal (./withdrawal-request.ts). */
  verify(input: VerifyInput): Promise<VerifyResult> {
    return this.requests.verify(input)
  }

  /** POST /admin/withdrawals/{id}/approve (./withdrawal-review.ts). */
  approve(withdrawalId: string, by: Actor): Promise<WithdrawalModel> {
    return this.review.approve(withdrawalId, by)
  }

  /** POST /admin/withdrawals/{id}/reject (./withdrawal-review.ts). */
  reject(withdrawalId: string, reason: string, by: Actor): Promise<WithdrawalModel> {
    return this.review.reject(withdrawalId, reason, by)
  }

  /** The release job's work at a hold's end, in its unit of work (./withdrawal-review.ts). */
  release(tx: Transaction, withdrawalId: string): Promise<void> {
    return this.review.release(tx, withdrawalId)
  }

  /** Signs every withdrawal left pending (by a crash, or custody being away). Returns how many were settled. */
  resumePending(): Promise<number> {
    return this.signing.resumePending()
  }

  /** The user's withdrawals, oldest first (the account export). */
  async listOf(userId: string): Promise<WithdrawalModel[]> {
    return (await this.deps.storage.read.wallet.withdrawalsOf(userId)).map(toWithdrawal)
  }

  /**
   * GET /wallet/withdrawals: the user's withdrawals, oldest first, a page
   * after `after` (the id of one of them; anything else is 422).
   */
  async page(userId: string, query: { after?: string; limit?: number }): Promise<WithdrawalsPage> {
    const store = this.deps.storage.read.wallet
    const limit = pageLimit(query.limit, HISTORY_PAGE_DEFAULT)
    let after: Withdrawal | null = null
    if (query.after !== undefined && query.after !== '') {
      after = isId('withdrawal', query.after) ? await store.withdrawal(query.after) : null
      if (after === null || after.userId !== userId) {
        throw new AppError('validation_failed', 'Request failed validation', { details: [{ path: 'query/after', message: 'Not a cursor this server issued' }] })
      }
    }
    // One more than asked: whether a next page exists, without a second query.
    const rows = await store.withdrawalsPage(userId, after, limit + 1)
    const page = rows.slice(0, limit)
    return { withdrawals: page.map(toWithdrawal), cursor: rows.length > limit ? page.at(-1)!.id : null }
  }
}
