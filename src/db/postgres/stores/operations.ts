// The console's operations queries on PostgreSQL (src/modules/operations/store.ts):
// the same queries as on SQLite, each one statement on the pool (committed
// state). Live and disputed matches are counted through running tournaments
// (tournaments_status, then each one's matches by matches_tournament_place).
import { and, asc, count, desc, eq, inArray, isNull, sql } from 'drizzle-orm'
import { games, matchClaims, matches, participants, tournaments, users, withdrawals } from '../schema'
import type { MatchRecord } from '../../../modules/games/store'
import type { ClaimRecord } from '../../../modules/matches/store'
import type { DashboardCounts, DisputedMatch, GameListing, NamedId, NamedSeat, OperationsStore, WaitingWithdrawal, WithdrawalFilter } from '../../../modules/operations/store'
import { toWithdrawal } from '../../rows'
import { withdrawalHistoryWhere } from '../../withdrawal-history'
import { namesQuery, toNamedIds, type NameRow } from '../../names'
import type { PostgresScope } from '../scope'
import { matchRecordColumns } from './matches'

export class PostgresOperationsStore implements OperationsStore {
  constructor(private readonly scope: PostgresScope) {}

  private get db() {
    return this.scope.db
  }

  async dashboardCounts(): Promise<DashboardCounts> {
    const db = this.db
    const [[players], byMatchStatus, [runningTournaments], byWithdrawalStatus] = await Promise.all([
      db.select({ n: count() }).from(users).where(isNull(users.deletedAt)),
      db
        .select({ status: matches.status, n: count() })
        .from(tournaments)
        .innerJoin(matches, eq(matches.tournamentId, tournaments.id))
        .where(and(eq(tournaments.status, 'running'), inArray(matches.status, ['running', 'disputed'])))
        .groupBy(matches.status),
      db.select({ n: count() }).from(tournaments).where(inArray(tournaments.status, ['running', 'finalizing'])),
      db
        .select({ status: withdrawals.status, n: count() })
        .from(withdrawals)
        .where(inArray(withdrawals.status, ['awaiting_approval', 'held']))
        .groupBy(withdrawals.status),
    ])
    const matchesIn = (status: string) => byMatchStatus.find((r) => r.status === status)?.n ?? 0
    const withdrawalsIn = (status: string) => byWithdrawalStatus.find((r) => r.status === status)?.n ?? 0
    return {
      players: players!.n,
      liveMatches: matchesIn('running'),
      disputedMatches: matchesIn('disputed'),
      runningTournaments: runningTournaments!.n,
      withdrawalsAwaitingApproval: withdrawalsIn('awaiting_approval'),
      withdrawalsHeld: withdrawalsIn('held'),
    }
  }

  async databaseSizeBytes(): Promise<number> {
    const [row] = await this.db.execute<{ bytes: string }>(sql`SELECT pg_database_size(current_database())::text AS bytes`)
    return Number(row?.bytes ?? 0)
  }

  async disputedMatches(limit: number): Promise<DisputedMatch[]> {
    const rows = await this.db
      .select({ match: matchRecordColumns, tournamentName: tournaments.name, format: tournaments.format })
      .from(tournaments)
      .innerJoin(matches, eq(matches.tournamentId, tournaments.id))
      .where(and(eq(tournaments.status, 'running'), eq(matches.status, 'disputed')))
      .orderBy(asc(tournaments.id), asc(matches.bracket), asc(matches.round), asc(matches.position))
      .limit(limit)
    if (rows.length === 0) return []
    const seatIds = rows.flatMap((r) => [r.match.slot1ParticipantId, r.match.slot2ParticipantId]).filter((id): id is string => id !== null)
    const [seatRows, claims] = await Promise.all([
      this.db
        .select({ participantId: participants.id, userId: participants.userId, username: users.username, seed: participants.seed })
        .from(participants)
        .innerJoin(users, eq(users.id, participants.userId))
        .where(inArray(participants.id, seatIds)),
      this.db
        .select({ matchId: matchClaims.matchId, claimRound: matchClaims.claimRound, participantId: matchClaims.participantId, outcome: matchClaims.outcome, winnerParticipantId: matchClaims.winnerParticipantId })
        .from(matchClaims)
        .where(inArray(matchClaims.matchId, rows.map((r) => r.match.id))),
    ])
    const seats = new Map<string, NamedSeat>(seatRows.map((s) => [s.participantId, s]))
    return rows.map(({ match, tournamentName, format }) => {
      const record: MatchRecord = match
      const own: ClaimRecord[] = claims
        .filter((c) => c.matchId === record.id && c.claimRound === record.claimRound)
        .map((c) => ({ participantId: c.participantId, outcome: c.outcome, winnerParticipantId: c.winnerParticipantId }))
      return {
        match: record,
        tournamentId: record.tournamentId,
        tournamentName,
        format,
        slot1: record.slot1ParticipantId === null ? null : (seats.get(record.slot1ParticipantId) ?? null),
        slot2: record.slot2ParticipantId === null ? null : (seats.get(record.slot2ParticipantId) ?? null),
        claims: own,
      }
    })
  }

  async waitingWithdrawals(limit: number): Promise<WaitingWithdrawal[]> {
    const rows = await this.db
      .select({ withdrawal: withdrawals, username: users.username })
      .from(withdrawals)
      .innerJoin(users, eq(users.id, withdrawals.userId))
      .where(inArray(withdrawals.status, ['awaiting_approval', 'held']))
      .orderBy(asc(withdrawals.createdAt), asc(withdrawals.id))
      .limit(limit)
    return rows.map((r) => ({ withdrawal: toWithdrawal(r.withdrawal), username: r.username }))
  }

  async withdrawalHistory(filter: WithdrawalFilter, before: { createdAt: Date; id: string } | null, limit: number): Promise<WaitingWithdrawal[]> {
    const rows = await this.db
      .select({ withdrawal: withdrawals, username: users.username })
      .from(withdrawals)
      .innerJoin(users, eq(users.id, withdrawals.userId))
      .where(withdrawalHistoryWhere(withdrawals, filter, before))
      .orderBy(desc(withdrawals.createdAt), desc(withdrawals.id))
      .limit(limit)
    return rows.map((r) => ({ withdrawal: toWithdrawal(r.withdrawal), username: r.username }))
  }

  async listGames(limit: number): Promise<GameListing[]> {
    return this.db
      .select({ id: games.id, name: games.name, createdAt: games.createdAt, keyRotatedAt: games.keyRotatedAt })
      .from(games)
      .orderBy(asc(games.createdAt), asc(games.id))
      .limit(limit)
  }

  async gameName(gameId: string): Promise<string | null> {
    const [row] = await this.db.select({ name: games.name }).from(games).where(eq(games.id, gameId))
    return row?.name ?? null
  }

  async usernamesOf(userIds: readonly string[]): Promise<Map<string, string>> {
    if (userIds.length === 0) return new Map()
    const rows = await this.db.select({ id: users.id, username: users.username }).from(users).where(inArray(users.id, [...new Set(userIds)]))
    return new Map(rows.map((r) => [r.id, r.username]))
  }

  async namesOf(ids: readonly string[]): Promise<Map<string, NamedId>> {
    const query = namesQuery(ids)
    return query === null ? new Map() : toNamedIds(await this.db.execute<NameRow>(query))
  }
}
