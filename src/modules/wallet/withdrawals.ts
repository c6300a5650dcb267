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
import { base58 } from '@scure/base'
import type { Storage, Transaction } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import { toIso } from '../../shared/clock'
import { AppError } from '../../shared/errors'
import { isId, newId } from '../../shared/ids'
import type { Logger } from '../../shared/logger'
import type { Actor } from '../audit/log'
import { formatAmount } from '../../shared/money'
import { verifyPassword } from '../auth/passwords'
import { assertMayAct, standingMayAct } from '../auth/standing'
import type { AuthStore } from '../auth/store'
import { JOB_KINDS } from '../../jobs/queue'
import type { PinService } from '../security/pin-service'
import { CustodyRefusedError, type CustodyClient } from './custody'
import { isValidAddress, verifyEd25519, withdrawalMessage } from './frost'
import { HISTORY_PAGE_DEFAULT, pageLimit } from './history'
import { accounts, balanceOf, ledger, type Transfer } from './ledger'
import { amountFrom, DEFAULT_ASSET, type WalletService } from './service'
import type { Withdrawal as WithdrawalModel } from '../security/model'
import type { WithdrawalsPage } from './model'
import type { WalletStore, Withdrawal, WithdrawalStatus } from './store'

/** A stored withdrawal as every answer shows it (the API's `Withdrawal` model, the console, the admin list). */
export function toWithdrawal(row: Withdrawal): WithdrawalModel {
  return {
    id: row.id,
    status: row.status,
    amount: formatAmount(row.amount, DEFAULT_ASSET),
    asset: row.asset,
    destinationAddress: row.destinationAddress,
    idempotencyKey: row.idempotencyKey,
    ...(row.signature ? { signature: row.signature } : {}),
    ...(row.failureReason ? { failureReason: row.failureReason } : {}),
    ...(row.status === 'awaiting_approval' ? { reason: 'approval_required' as const } : {}),
    ...(row.status === 'held' ? { reason: 'new_destination' as const } : {}),
    ...((row.status === 'awaiting_approval' || row.status === 'held') && row.holdUntil ? { releasesAt: toIso(row.holdUntil) } : {}),
    ...(row.status === 'rejected' && row.rejectionReason !== null ? { rejectionReason: row.rejectionReason } : {}),
    createdAt: toIso(row.createdAt),
  }
}

/** What an approval's or a rejection's audit record says of the withdrawal: whose, how much, where to. */
function withdrawalFacts(row: Withdrawal): Record<string, unknown> {
  return { userId: row.userId, amount: formatAmount(row.amount, DEFAULT_ASSET), asset: row.asset, destinationAddress: row.destinationAddress }
}

/**
 * A failed or rejected withdrawal's money back to its owner: a transfer of
 * kind `reversal` from the withdrawals account, its memo naming the
 * withdrawal (`arena ledger check` counts one per failed or rejected
 * withdrawal). Not `ledger.reverse` of the debit: the withdrawal's row, not
 * the ledger, knows its debit, and its status already makes the give-back
 * happen once (docs/decisions.md, "Money moves by name").
 */
function giveBack(row: Withdrawal, memo: { withdrawalId: string; reason: string; rejected?: true }): Transfer {
  return { kind: 'reversal', from: accounts.system('withdrawals', row.asset), to: accounts.user(row.userId, row.asset), amount: row.amount, memo }
}

export interface VerifyInput {
  userId: string
  /** Whether the user's email is verified, as the bearer check read it on this request. */
  emailVerified: boolean
  sessionId: string
  sessionToken: string | null
  pin: string
  amount: string
  destinationAddress: string
  idempotencyKey: string
}

export type VerifyResult =
  | { valid: false; locked: boolean; attempt: number }
  | { valid: true; locked: false; attempt: 0; withdrawal: WithdrawalModel }

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

export interface WithdrawalApproval {
  /** A withdrawal strictly above this (minor units of the default asset) waits for an operator; absent: none does. */
  above?: bigint
  /** Seconds the first withdrawal to a new address is held; 0 or absent: none is. */
  newDestinationHoldS?: number
}

/** Withdrawal limits in minor units of the default asset; an absent one is no limit. */
export interface WithdrawalLimits {
  /** The largest single withdrawal. */
  perWithdrawal?: bigint
  /** The most one user may withdraw in any DAILY_WINDOW_MS. */
  daily?: bigint
}

/**
 * The daily limit's window: a withdrawal counts while it is less than 24 hours
 * old (created strictly after now - 24 h), and not once it is exactly 24 hours old.
 */
export const DAILY_WINDOW_MS = 24 * 60 * 60 * 1000

/**
 * Whether a withdrawal in the window counts toward the daily limit: money that
 * left the balance, or may still leave it, counts; one custody refused, whose
 * amount came back, does not. A switch over every status, so a new status
 * does not compile until it is decided here.
 */
export function countsTowardDailyLimit(status: WithdrawalStatus): boolean {
  switch (status) {
    case 'awaiting_approval':
    case 'held':
    case 'pending_signature':
    case 'signed':
      return true
    case 'failed':
    case 'rejected':
      return false
  }
}

export class WithdrawalService {
  constructor(private readonly deps: WithdrawalDeps) {}

  /** POST /security/pin-session/{id}/verify: one PIN attempt authorizing one withdrawal. */
  async verify(input: VerifyInput): Promise<VerifyResult> {
    const { storage, clock, pins } = this.deps
    const asset = DEFAULT_ASSET.code
    // Checks that neither consume the session nor count as a PIN failure.
    // The account may not withdraw at all first: the session stays as it
    // was, to be verified once the email is.
    if (this.deps.requireVerifiedEmail && !input.emailVerified) {
      throw new AppError('email_not_verified', 'Verify your email address before withdrawing (POST /api/v1/user/email/verify)')
    }
    await pins.checkSession(storage.read.security, input.userId, input.sessionId, input.sessionToken)
    const amount = amountFrom(input.amount, 'body/amount')
    if (!isValidAddress(input.destinationAddress)) {
      throw new AppError('invalid_destination', 'destinationAddress is not a valid Ed25519 (base58) address')
    }
    await this.earlierWithdrawal(storage.read.wallet, input, amount)
    const wallet = await this.deps.wallet.ensureWallet(input.userId)

    // The slow hash runs outside any write; everything it decides is
    // re-checked inside the one below. If the hash gate refuses it (503 +
    // Retry-After), this throws before that write: the session is not
    // consumed, no PIN failure is counted, nothing is debited, and the same
    // session can verify again later.
    const pinOk = await verifyPassword(input.pin, await pins.pinHashOf(input.userId), pins.hashGate)

    const outcome = await storage.write(async (tx) => {
      await pins.checkSession(tx.security, input.userId, input.sessionId, input.sessionToken)
      // A PIN session outlives nothing: a user banned (or deleted) since the
      // bearer was checked withdraws nothing, and the session is not consumed.
      await assertMayAct(tx.auth, input.userId, clock.now())
      // The key and the funds are checked again here, before the PIN's
      // verdict is recorded: a verify racing another one that took the key
      // or the money answers 409/422 and counts no failure, as it would
      // have had it arrived after it.
      const again = await this.earlierWithdrawal(tx.wallet, input, amount)
      if (!pinOk) return pins.recordFailure(tx, input.userId)
      await pins.recordSuccess(tx.security, input.userId)
      if (again) {
        await pins.consume(tx.security, input.sessionId)
        return { row: again, fresh: false }
      }
      const now = clock.now()
      const id = newId('withdrawal')
      // Debit first: insufficient funds throws and rolls everything back,
      // the session included.
      await ledger(tx.wallet, now).transfer({
        kind: 'withdrawal',
        from: accounts.user(input.userId, asset),
        to: accounts.system('withdrawals', asset),
        amount,
        memo: { withdrawalId: id },
      })
      const { above, newDestinationHoldS = 0 } = this.deps.approval ?? {}
      const needsApproval = above !== undefined && amount > above
      // Read in this unit of work: a signed withdrawal to the address makes it known.
      const holdUntil =
        newDestinationHoldS > 0 && !(await tx.wallet.hasSignedWithdrawalTo(input.userId, input.destinationAddress))
          ? new Date(now.getTime() + newDestinationHoldS * 1000)
          : null
      const status: WithdrawalStatus = needsApproval ? 'awaiting_approval' : holdUntil ? 'held' : 'pending_signature'
      const row: Withdrawal = {
        id,
        userId: input.userId,
        asset,
        amount,
        destinationAddress: input.destinationAddress,
        idempotencyKey: input.idempotencyKey,
        status,
        signature: null,
        failureReason: null,
        rejectionReason: null,
        approvedAt: null,
        holdUntil,
        pinSessionId: input.sessionId,
        createdAt: now,
        updatedAt: now,
      }
      await tx.wallet.addWithdrawal(row)
      await pins.consume(tx.security, input.sessionId)
      // The release exists exactly when the hold does; it finds an awaiting
      // withdrawal still awaiting and does nothing (the approval enqueues its own).
      if (holdUntil) await tx.jobs.enqueue(JOB_KINDS.releaseWithdrawal, { withdrawalId: id }, now, holdUntil)
      await tx.events.append({ userId: input.userId, topic: 'wallet', type: 'wallet.withdrawal_pending', data: { withdrawalId: id, amount: formatAmount(amount), asset } }, now)
      if (status === 'awaiting_approval') {
        await tx.events.append(
          { userId: input.userId, topic: 'wallet', type: 'wallet.withdrawal_awaiting_approval', data: { withdrawalId: id, ...(holdUntil ? { releasesAt: toIso(holdUntil) } : {}) } },
          now,
        )
      } else if (status === 'held') {
        await tx.events.append({ userId: input.userId, topic: 'wallet', type: 'wallet.withdrawal_held', data: { withdrawalId: id, releasesAt: toIso(holdUntil!) } }, now)
      }
      return { row, fresh: true }
    })
    if ('valid' in outcome) return outcome
    const row = outcome.row.status === 'pending_signature' ? await this.sign(outcome.row.id, wallet.keyRef, wallet.address) : outcome.row
    return { valid: true, locked: false, attempt: 0, withdrawal: toWithdrawal(row) }
  }

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
  private async stopForBan(tx: Transaction, current: Withdrawal, now: Date): Promise<Withdrawal> {
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
      return failed
    })
  }

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
    return toWithdrawal(await this.signNow(row))
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
      await this.stopForBan(tx, current, now)
      return
    }
    const moved = await tx.wallet.moveWithdrawal(withdrawalId, 'held', 'pending_signature', now)
    if (!moved) return
    await tx.events.append({ userId: moved.userId, topic: 'wallet', type: 'wallet.withdrawal_released', data: { withdrawalId } }, now)
    tx.afterCommit(() => {
      this.signNow(moved).catch((error: unknown) => this.deps.logger.warn('signing a released withdrawal failed; the resumer retries', { withdrawalId, error: String(error) }))
    })
  }

  /** Signs a withdrawal that is `pending_signature` now; any other is returned as it is. */
  private async signNow(row: Withdrawal): Promise<Withdrawal> {
    if (row.status !== 'pending_signature') return row
    const wallet = await this.deps.wallet.ensureWallet(row.userId)
    return this.sign(row.id, wallet.keyRef, wallet.address)
  }

  private async withdrawalOrNotFound(store: WalletStore, withdrawalId: string): Promise<Withdrawal> {
    const row = isId('withdrawal', withdrawalId) ? await store.withdrawal(withdrawalId) : null
    if (row === null) throw new AppError('not_found', 'No withdrawal with this id')
    return row
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

  /**
   * The withdrawal already made under this idempotency key, if any; throws 409
   * when it was made with other parameters, or 422 when there is none and the
   * amount is over a withdrawal limit or the balance does not cover it. (A
   * repeat of an earlier withdrawal is that withdrawal again: no limit applies.)
   */
  private async earlierWithdrawal(ledger: WalletStore, input: VerifyInput, amount: bigint): Promise<Withdrawal | null> {
    const earlier = await ledger.withdrawalByKey(input.userId, input.idempotencyKey)
    if (earlier && !sameRequest(earlier, amount, input.destinationAddress)) throw keyReused()
    if (!earlier) await this.assertWithinLimits(ledger, input.userId, amount)
    if (!earlier && (await balanceOf(ledger, input.userId, DEFAULT_ASSET.code)) < amount) {
      throw new AppError('insufficient_funds', 'The balance is lower than the amount')
    }
    return earlier
  }

  /**
   * 422 withdrawal_limit when a new withdrawal of `amount` is over the single
   * withdrawal limit, or would take the user's withdrawals of the last 24
   * hours (those that count, see countsTowardDailyLimit) over the daily one.
   * Compared in minor units, as bigints. Called with `tx.wallet` inside the
   * verify's unit of work, before the debit in that same unit of work: on
   * SQLite one writer at a time, on PostgreSQL a SERIALIZABLE transaction that
   * updates the user's account row, so concurrent withdrawals of one user are
   * decided one after another and never exceed the limit together.
   */
  private async assertWithinLimits(ledger: WalletStore, userId: string, amount: bigint): Promise<void> {
    const { perWithdrawal, daily } = this.deps.limits ?? {}
    if (perWithdrawal === undefined && daily === undefined) return
    const asset = DEFAULT_ASSET
    let dailyLeft: bigint | undefined
    let counted: Withdrawal[] = []
    if (daily !== undefined) {
      const since = new Date(this.deps.clock.now().getTime() - DAILY_WINDOW_MS)
      counted = (await ledger.withdrawalsSince(userId, since)).filter((w) => w.asset === asset.code && countsTowardDailyLimit(w.status))
      const used = counted.reduce((sum, w) => sum + w.amount, 0n)
      dailyLeft = used >= daily ? 0n : daily - used
    }
    if (perWithdrawal !== undefined && amount > perWithdrawal) {
      const allowed = dailyLeft !== undefined && dailyLeft < perWithdrawal ? dailyLeft : perWithdrawal
      throw new AppError(
        'withdrawal_limit',
        `The amount is over the limit of ${formatAmount(perWithdrawal, asset)} ${asset.code} for a single withdrawal; the limits allow at most ${formatAmount(allowed, asset)} ${asset.code} now`,
      )
    }
    if (daily !== undefined && dailyLeft !== undefined && amount > dailyLeft) {
      const fits = amount <= daily ? whenItFits(counted, daily, amount) : null
      throw new AppError(
        'withdrawal_limit',
        `The amount is over the daily withdrawal limit of ${formatAmount(daily, asset)} ${asset.code} (any 24 hours); ${formatAmount(dailyLeft, asset)} ${asset.code} left` +
          (fits ? `, enough for this amount from ${toIso(fits)}` : ''),
      )
    }
  }
}

/**
 * When a withdrawal of `amount` fits under the daily limit again, as the
 * counted withdrawals (oldest first) leave the window one by one.
 */
function whenItFits(counted: Withdrawal[], daily: bigint, amount: bigint): Date | null {
  let used = counted.reduce((sum, w) => sum + w.amount, 0n)
  for (const w of counted) {
    used -= w.amount
    if (used + amount <= daily) return new Date(w.createdAt.getTime() + DAILY_WINDOW_MS)
  }
  return null
}

/** Whether the base58 signature verifies (strict Ed25519) over the message under the base58 address. */
export function verifyWithdrawalSignature(signature: string, message: Uint8Array, address: string): boolean {
  try {
    return verifyEd25519(base58.decode(signature), message, base58.decode(address))
  } catch {
    return false
  }
}

function sameRequest(row: Withdrawal, amount: bigint, destinationAddress: string): boolean {
  return row.amount === amount && row.destinationAddress === destinationAddress
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

/**
 * Whether the owner may have a withdrawal signed now: an account that exists
 * and is not banned. Read with the unit of work's store (`tx.auth`) where it
 * decides a move toward signing.
 */
async function ownerMayWithdraw(store: AuthStore, userId: string, now: Date): Promise<boolean> {
  return standingMayAct(await store.standing(userId), now)
}

function keyReused(): AppError {
  return new AppError('idempotency_key_reused', 'This idempotencyKey was used for a different withdrawal')
}
