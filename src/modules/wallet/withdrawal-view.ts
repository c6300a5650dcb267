// A stored withdrawal as every answer shows it: the API's `Withdrawal` model
// (the verify's answer, GET /wallet/withdrawals, the operator's approve and
// reject, the account export), the console and the admin list; and what the
// studio's withdrawal webhooks say of it.
import { toIso } from '../../shared/clock'
import { formatAmount } from '../../shared/money'
import type { Withdrawal as WithdrawalModel } from './model'
import { DEFAULT_ASSET } from './service'
import type { Withdrawal } from './store'

/** The fields every withdrawal webhook (`withdrawal.requested|signed|failed|rejected`) carries: whose, how much. */
export function withdrawalFact(row: Pick<Withdrawal, 'id' | 'userId' | 'amount' | 'asset'>): { withdrawalId: string; userId: string; amount: string; asset: string } {
  return { withdrawalId: row.id, userId: row.userId, amount: formatAmount(row.amount, DEFAULT_ASSET), asset: row.asset }
}

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
