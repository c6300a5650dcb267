// The operator console's reads across modules (contract §11): the dashboard
// and the queues an operator works through. Read only: every action the
// console takes goes through the owning module's service (games, matches,
// withdrawals), which checks it and records its audit entry.
import type { Storage } from '../../db/storage'
import type { ChainCheck, ChainChecks } from './chain-checks'
import type { DashboardCounts, DisputedMatch, GameListing, NamedId, WaitingWithdrawal } from './store'
import type { WithdrawalStatus } from '../wallet/store'
import { isId } from '../../shared/ids'

/** The most rows a console queue shows at once (oldest first: the ones to handle next). */
export const QUEUE_LIMIT = 200
/** Withdrawal history rows per page (the page size is fixed: each page is one indexed read of this many). */
export const HISTORY_PAGE = 50

/** What the withdrawal history is narrowed to: a status, a user (id or username, any case), a creation time range [since, until). */
export interface WithdrawalHistoryQuery {
  status?: WithdrawalStatus
  user?: string
  since?: Date
  until?: Date
  /** The id of the last withdrawal of the page before (newest first); one that is not a withdrawal starts from the newest. */
  before?: string
}

export interface WithdrawalHistoryPage {
  rows: WaitingWithdrawal[]
  /** The `before` of the next page; null on the last. */
  cursor: string | null
  /** The user asked for is no user: nothing is listed. */
  unknownUser: boolean
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
    let userId: string | null = null
    if (text !== '') {
      userId = isId('user', text) ? text : ((await read.auth.userByUsernameKey(text.toLowerCase()))?.id ?? null)
      if (userId === null) return { rows: [], cursor: null, unknownUser: true }
    }
    const after = query.before === undefined ? null : await read.wallet.withdrawal(query.before)
    const rows = await read.operations.withdrawalHistory(
      { status: query.status ?? null, userId, since: query.since ?? null, until: query.until ?? null },
      after === null ? null : { createdAt: after.createdAt, id: after.id },
      HISTORY_PAGE + 1,
    )
    const more = rows.length > HISTORY_PAGE
    const page = more ? rows.slice(0, HISTORY_PAGE) : rows
    return { rows: page, cursor: more ? page[page.length - 1]!.withdrawal.id : null, unknownUser: false }
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
