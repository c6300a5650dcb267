// The withdrawal history for an operator's scripts: GET /api/v1/admin/withdrawals
// and `arena withdrawal list`, one page of the console's own read
// (OperationsOverview.withdrawalHistory) with its filters read by the one
// shared parser (withdrawalHistoryQuery), answered in the admin API's shape.
import { toIso } from '../../shared/clock'
import { AppError } from '../../shared/errors'
import { HISTORY_PAGE, HISTORY_PAGE_MAX, withdrawalHistoryQuery, type OperationsOverview, type WithdrawalFilterNames, type WithdrawalFilterText } from '../operations/service'
import type { WaitingWithdrawal } from '../operations/store'
import { toWithdrawal } from '../wallet/withdrawal-view'
import type { AdminWithdrawal, WithdrawalsPage } from './model'

export interface WithdrawalPageQuery extends WithdrawalFilterText {
  /** The `cursor` of the previous page. */
  after?: string
  limit?: number
}

/** How each input is named in an error (`query/from`, `--from`). */
export type WithdrawalPageNames = WithdrawalFilterNames & Record<'after' | 'limit', string>

function invalid(path: string, message: string): AppError {
  return new AppError('validation_failed', 'Request failed validation', { details: [{ path, message }] })
}

export function adminWithdrawalView({ withdrawal, username }: WaitingWithdrawal): AdminWithdrawal {
  return { ...toWithdrawal(withdrawal), userId: withdrawal.userId, username, updatedAt: toIso(withdrawal.updatedAt) }
}

/**
 * One page of the withdrawal history: newest first, `limit` (1 to
 * HISTORY_PAGE_MAX, default HISTORY_PAGE) after the cursor. A bad filter, a
 * limit out of range or a cursor that is no withdrawal is a 422 naming its
 * input; a user that is none (by username or by id) is a 404, as the console
 * says "No user is named or numbered" rather than listing nothing.
 */
export async function withdrawalPage(operations: OperationsOverview, query: WithdrawalPageQuery, names: WithdrawalPageNames): Promise<WithdrawalsPage> {
  const filters = withdrawalHistoryQuery(query, names)
  const limit = query.limit ?? HISTORY_PAGE
  if (!Number.isInteger(limit) || limit < 1 || limit > HISTORY_PAGE_MAX) throw invalid(names.limit, `Expected a whole number from 1 to ${HISTORY_PAGE_MAX}`)
  const page = await operations.withdrawalHistory({ ...filters, limit, ...(query.after === undefined ? {} : { before: query.after }) })
  if (page.unknownBefore) throw invalid(names.after, 'Not a cursor this server issued')
  if (page.unknownUser) throw new AppError('not_found', `No user is named or numbered ${JSON.stringify(filters.user)}`)
  return { withdrawals: page.rows.map(adminWithdrawalView), cursor: page.cursor }
}
