// The withdrawal history's filter and page edge (console, GET
// /admin/withdrawals, `arena withdrawal list`) as one Drizzle condition,
// written once for both engines: it names only columns both schemas have
// (test/platform/schema-parity.test.ts), and Drizzle writes each engine's SQL.
import { and, eq, gte, lt, or, type Column, type SQL } from 'drizzle-orm'
import type { WithdrawalFilter } from '../modules/operations/store'

/** The withdrawals table's columns the history filters and orders on, on either engine. */
export interface WithdrawalHistoryColumns {
  status: Column
  userId: Column
  createdAt: Column
  id: Column
}

/** Withdrawals matching the filter, older than `before` (newest first: created_at desc, id desc). */
export function withdrawalHistoryWhere(table: WithdrawalHistoryColumns, filter: WithdrawalFilter, before: { createdAt: Date; id: string } | null): SQL | undefined {
  return and(
    filter.status === null ? undefined : eq(table.status, filter.status),
    filter.userId === null ? undefined : eq(table.userId, filter.userId),
    filter.since === null ? undefined : gte(table.createdAt, filter.since),
    filter.until === null ? undefined : lt(table.createdAt, filter.until),
    before === null ? undefined : or(lt(table.createdAt, before.createdAt), and(eq(table.createdAt, before.createdAt), lt(table.id, before.id))),
  )
}
