// Phase 1 of a withdrawal (./withdrawals.ts): the PIN verify. One write
// checks the withdrawal limits, records the PIN's verdict (the security
// module's PinService: the session re-checked, a failure counted or the
// session consumed), claims the idempotency key, debits the ledger and
// records the withdrawal, `pending_signature` or waiting (with its outbox
// events); one `pending_signature` is then signed (./withdrawal-signing.ts).
import { toIso } from '../../shared/clock'
import { AppError } from '../../shared/errors'
import { newId } from '../../shared/ids'
import { formatAmount } from '../../shared/money'
import { JOB_KINDS } from '../../jobs/queue'
import { assertMayAct } from '../auth/standing'
import type { PinVerdict } from '../security/pin-service'
import { isValidAddress } from './frost'
import { accounts, balanceOf, ledger } from './ledger'
import type { Withdrawal as WithdrawalModel } from './model'
import { amountFrom, DEFAULT_ASSET } from './service'
import type { WalletStore, Withdrawal, WithdrawalStatus } from './store'
import { toWithdrawal, withdrawalFact } from './withdrawal-view'
import { publishWebhook } from '../webhooks/publish'
import type { WithdrawalSigning } from './withdrawal-signing'
import type { WithdrawalDeps } from './withdrawals'

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

/** The PIN's verdict (a wrong one as the PIN service answers it), with the withdrawal a right one made. */
export type VerifyResult = Extract<PinVerdict, { valid: false }> | { valid: true; locked: false; attempt: 0; withdrawal: WithdrawalModel }

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

export class WithdrawalRequests {
  constructor(
    private readonly deps: Omit<WithdrawalDeps, 'logger' | 'custody'>,
    private readonly signing: WithdrawalSigning,
  ) {}

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
    const pinOk = await pins.judge(input.userId, input.pin)

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
      // A wrong PIN is counted and the session kept for the next guess; a
      // right one clears the count and consumes the session, in this write.
      const verdict = await pins.settle(tx, input.userId, input.sessionId, pinOk)
      if (!verdict.valid) return verdict
      if (again) return { row: again, fresh: false }
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
      const status = needsApproval ? 'awaiting_approval' : holdUntil ? 'held' : 'pending_signature'
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
      await publishWebhook(tx, { type: 'withdrawal.requested', data: { ...withdrawalFact(row), destinationAddress: row.destinationAddress, status } }, now)
      return { row, fresh: true }
    })
    if ('valid' in outcome) return outcome
    const row = outcome.row.status === 'pending_signature' ? await this.signing.sign(outcome.row.id, wallet.keyRef, wallet.address) : outcome.row
    return { valid: true, locked: false, attempt: 0, withdrawal: toWithdrawal(row) }
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

function sameRequest(row: Withdrawal, amount: bigint, destinationAddress: string): boolean {
  return row.amount === amount && row.destinationAddress === destinationAddress
}

function keyReused(): AppError {
  return new AppError('idempotency_key_reused', 'This idempotencyKey was used for a different withdrawal')
}
