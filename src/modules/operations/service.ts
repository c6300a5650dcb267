// The operator console's reads across modules (contract §11): the dashboard
// and the queues an operator works through. Read only: every action the
// console takes goes through the owning module's service (games, matches,
// withdrawals), which checks it and records its audit entry.
import type { Storage } from '../../db/storage'
import type { ChainCheck, ChainChecks } from './chain-checks'
import type { DashboardCounts, DisputedMatch, GameListing, NamedId, WaitingWithdrawal } from './store'
import type { WithdrawalStatus } from '../wallet/store'
import { AppError } from '../../shared/errors'
import { isId } from '../../shared/ids'

/** The most rows a console queue shows at once (oldest first: the ones to handle next). */
export const QUEUE_LIMIT = 200
/** Withdrawal history rows per page by default (the console's fixed page; the admin API and the CLI take 1 to HISTORY_PAGE_MAX). Each page is one indexed read of this many. */
export const HISTORY_PAGE = 50
/** The most withdrawal history rows one page may ask for (`limit`). */
export const HISTORY_PAGE_MAX = 100

/** Every status a withdrawal can be in, in the order it can reach them. */
export const WITHDRAWAL_STATUSES = ['awaiting_approval', 'held', 'pending_signature', 'signed', 'failed', 'rejected'] as const satisfies readonly WithdrawalStatus[]

/** What the withdrawal history is narrowed to: a status, a user (id or username, any case), a creation time range [since, until). */
export interface WithdrawalHistoryQuery {
  status?: WithdrawalStatus
  user?: string
  since?: Date
  until?: Date
  /** The id of the last withdrawal of the page before (newest first); one that is not a withdrawal starts from the newest (and the page says so: unknownBefore). */
  before?: string
  /** Rows per page, 1 to HISTORY_PAGE_MAX; HISTORY_PAGE when absent. */
  limit?: number
}

export interface WithdrawalHistoryPage {
  rows: WaitingWithdrawal[]
  /** The `before` of the next page; null on the last. */
  cursor: string | null
  /** The user asked for is no user (no such username, or no user with that id): nothing is listed. */
  unknownUser: boolean
  /** `before` was given and is no withdrawal: the page starts from the newest. */
  unknownBefore: boolean
}

/** The history's filters as an operator types them (the console's form, the admin API's query, the CLI's flags): each a string or absent. */
export interface WithdrawalFilterText {
  status?: string
  user?: string
  /** The first UTC day (YYYY-MM-DD) of the creation range. */
  from?: string
  /** The last UTC day (YYYY-MM-DD) of the creation range, included. */
  to?: string
}

/** How each filter is named to the one who typed it, in a 422's details (`query/since`, `--from`). */
export type WithdrawalFilterNames = Record<'status' | 'from' | 'to', string>

function invalid(path: string, message: string): AppError {
  return new AppError('validation_failed', 'Request failed validation', { details: [{ path, message }] })
}

/** A YYYY-MM-DD day as the instant it starts (UTC); a day that does not exist (2026-02-30), or any other text, is a 422 naming the field. */
function dayStart(path: string, value: string | undefined): Date | undefined {
  if (value === undefined || value === '') return undefined
  const date = /^\d{4}-\d{2}-\d{2}$/.test(value) ? new Date(`${value}T00:00:00Z`) : new Date(Number.NaN)
  if (Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== value) throw invalid(path, 'Expected a day that exists, e.g. 2026-11-27')
  return date
}

/**
 * The history query the typed filters ask for, the one reading of them the
 * console, the admin API and the CLI share: an empty field is no filter; the
 * status one of WITHDRAWAL_STATUSES; the days UTC, `to` included (the range
 * ends at the start of the day after it). Anything else is a 422 naming the
 * field as `names` calls it.
 */
export function withdrawalHistoryQuery(text: WithdrawalFilterText, names: WithdrawalFilterNames): Omit<WithdrawalHistoryQuery, 'before' | 'limit'> {
  const status = text.status === undefined || text.status === '' ? undefined : text.status
  if (status !== undefined && !(WITHDRAWAL_STATUSES as readonly string[]).includes(status)) throw invalid(names.status, `Expected one of ${WITHDRAWAL_STATUSES.join(', ')}`)
  const since = dayStart(names.from, text.from)
  const lastDay = dayStart(names.to, text.to)
  const user = text.user?.trim() ?? ''
  return {
    ...(status === undefined ? {} : { status: status as WithdrawalStatus }),
    ...(user === '' ? {} : { user }),
    ...(since === undefined ? {} : { since }),
    ...(lastDay === undefined ? {} : { until: new Date(lastDay.getTime() + 86_400_000) }),
  }
}

/** The most games the games page lists. */
export const GAMES_LIMIT = 500

/** A chain's recorded end: how many links it has and the last hash (null while empty). */
export interface ChainState {
  seq: number
  hash: string | null
}

export interface Dashboard extends DashboardCounts {
  databaseBytes: number
  engine: 'sqlite' | 'postgres'
  /** The security-event log's recorded head. */
  securityChain: ChainState
  /** The audit log's recorded head. */
  auditChain: ChainState
  /** Whether each chain held when last walked, and when that was (ChainChecks.recent); null while a first walk is under way. */
  securityCheck: ChainCheck | null
  auditCheck: ChainCheck | null
}

export class OperationsOverview {
  constructor(private readonly deps: { storage: Storage; chainChecks: ChainChecks }) {}

  async dashboard(): Promise<Dashboard> {
    const read = this.deps.storage.read
    const [counts, databaseBytes, security, audit, securityCheck, auditCheck] = await Promise.all([
      read.operations.dashboardCounts(),
      read.operations.databaseSizeBytes(),
      read.security.recordedHead(),
      read.audit.auditHead(),
      this.deps.chainChecks.recent('security'),
      this.deps.chainChecks.recent('audit'),
    ])
    return {
      ...counts,
      databaseBytes,
      engine: this.deps.storage.engine,
      securityChain: security === null ? { seq: 0, hash: null } : { seq: security.seq, hash: security.hash },
      auditChain: audit.seq === 0 ? { seq: 0, hash: null } : { seq: audit.seq, hash: audit.hash },
      securityCheck,
      auditCheck,
    }
  }

  disputes(): Promise<DisputedMatch[]> {
    return this.deps.storage.read.operations.disputedMatches(QUEUE_LIMIT)
  }

  waitingWithdrawals(): Promise<WaitingWithdrawal[]> {
    return this.deps.storage.read.operations.waitingWithdrawals(QUEUE_LIMIT)
  }

  /** Every withdrawal in any status, newest first, narrowed by `query`, HISTORY_PAGE at a time. */
  async withdrawalHistory(query: WithdrawalHistoryQuery): Promise<WithdrawalHistoryPage> {
    const read = this.deps.storage.read
    const text = query.user?.trim() ?? ''
    const limit = Math.min(Math.max(Math.trunc(query.limit ?? HISTORY_PAGE), 1), HISTORY_PAGE_MAX)
    const after = query.before === undefined || query.before === '' ? null : await read.wallet.withdrawal(query.before)
    const unknownBefore = query.before !== undefined && query.before !== '' && after === null
    let userId: string | null = null
    if (text !== '') {
      // An id is checked too: a user id that is no user is as unknown as a username that is none.
      userId = isId('user', text) ? ((await read.auth.userById(text))?.id ?? null) : ((await read.auth.userByUsernameKey(text.toLowerCase()))?.id ?? null)
      if (userId === null) return { rows: [], cursor: null, unknownUser: true, unknownBefore }
    }
    const rows = await read.operations.withdrawalHistory(
      { status: query.status ?? null, userId, since: query.since ?? null, until: query.until ?? null },
      after === null ? null : { createdAt: after.createdAt, id: after.id },
      limit + 1,
    )
    const more = rows.length > limit
    const page = more ? rows.slice(0, limit) : rows
    return { rows: page, cursor: more ? page[page.length - 1]!.withdrawal.id : null, unknownUser: false, unknownBefore }
  }

  /** One withdrawal with its user's name; null when there is none. */
  async withdrawal(id: string): Promise<WaitingWithdrawal | null> {
    const read = this.deps.storage.read
    const withdrawal = await read.wallet.withdrawal(id)
    if (withdrawal === null) return null
    const names = await read.operations.usernamesOf([withdrawal.userId])
    return { withdrawal, username: names.get(withdrawal.userId) ?? withdrawal.userId }
  }

  games(): Promise<GameListing[]> {
    return this.deps.storage.read.operations.listGames(GAMES_LIMIT)
  }

  gameName(gameId: string): Promise<string | null> {
    return this.deps.storage.read.operations.gameName(gameId)
  }

  usernames(userIds: readonly string[]): Promise<Map<string, string>> {
    return this.deps.storage.read.operations.usernamesOf(userIds)
  }

  /** What the ids of one console page name (users, operators, tournaments, games, matches, participants, withdrawals), in one query. */
  namesOf(ids: readonly (string | null)[]): Promise<Map<string, NamedId>> {
    return this.deps.storage.read.operations.namesOf(ids.filter((id): id is string => id !== null))
  }
}
