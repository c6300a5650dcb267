// The console's operations queries on SQLite (src/modules/operations/store.ts).
// Counts ride indexes where one exists: live and disputed matches are counted
// through running tournaments (tournaments_status, then each tournament's
// matches by the matches_tournament_place prefix), never a scan of every
// match ever played; withdrawals by withdrawals_status.
import { and, asc, count, desc, eq, inArray, isNull } from 'drizzle-orm'
import { games, matchClaims, matches, participants, tournaments, users, withdrawals } from '../../schema'
import type { MatchRecord } from '../../../modules/games/store'
import type { ClaimRecord } from '../../../modules/matches/store'
import type { DashboardCounts, DisputedMatch, GameListing, NamedId, NamedSeat, OperationsStore, WaitingWithdrawal, WithdrawalFilter } from '../../../modules/operations/store'
import { toWithdrawal } from '../../rows'
import { withdrawalHistoryWhere } from '../../withdrawal-history'
import { namesQuery, toNamedIds, type NameRow } from '../../names'
import type { SqliteScope } from '../storage'

export class SqliteOperationsStore implements OperationsStore {
  constructor(private readonly scope: SqliteScope) {}

  private get db() {
    return this.scope.handle.db
  }

  async dashboardCounts(): Promise<DashboardCounts> {
    const db = this.db
    const players = db.select({ n: count() }).from(users).where(isNull(users.deletedAt)).get()!.n
    const byMatchStatus = db
      .select({ status: matches.status, n: count() })
      .from(tournaments)
      .innerJoin(matches, eq(matches.tournamentId, tournaments.id))
      .where(and(eq(tournaments.status, 'running'), inArray(matches.status, ['running', 'disputed'])))
      .groupBy(matches.status)
      .all()
    const runningTournaments = db.select({ n: count() }).from(tournaments).where(inArray(tournaments.status, ['running', 'finalizing'])).get()!.n
    const byWithdrawalStatus = db
      .select({ status: withdrawals.status, n: count() })
      .from(withdrawals)
      .where(inArray(withdrawals.status, ['awaiting_approval', 'held']))
      .groupBy(withdrawals.status)
      .all()
    const matchesIn = (status: string) => byMatchStatus.find((r) => r.status === status)?.n ?? 0
    const withdrawalsIn = (status: string) => byWithdrawalStatus.find((r) => r.status === status)?.n ?? 0
    return {
      players,
      liveMatches: matchesIn('running'),
      disputedMatches: matchesIn('disputed'),
      runningTournaments,
      withdrawalsAwaitingApproval: withdrawalsIn('awaiting_approval'),
      withdrawalsHeld: withdrawalsIn('held'),
    }
  }

  async databaseSizeBytes(): Promise<number> {
    // The main file's pages (the WAL is checkpointed into it; what a backup copies).
    const row = this.scope.handle.sqlite.query<{ bytes: number }, []>('SELECT page_count * page_size AS bytes FROM pragma_page_count(), pragma_page_size()').get()
    return row?.bytes ?? 0
  }

  async disputedMatches(limit: number): Promise<DisputedMatch[]> {
    const rows = this.db
      .select({ match: matches, tournamentName: tournaments.name, format: tournaments.format })
      .from(tournaments)
      .innerJoin(matches, eq(matches.tournamentId, tournaments.id))
      .where(and(eq(tournaments.status, 'running'), eq(matches.status, 'disputed')))
      .orderBy(asc(tournaments.id), asc(matches.bracket), asc(matches.round), asc(matches.position))
      .limit(limit)
      .all()
    if (rows.length === 0) return []
    const seatIds = rows.flatMap((r) => [r.match.slot1ParticipantId, r.match.slot2ParticipantId]).filter((id): id is string => id !== null)
    const seats = new Map<string, NamedSeat>(
      this.db
        .select({ participantId: participants.id, userId: participants.userId, username: users.username, seed: participants.seed })
        .from(participants)
        .innerJoin(users, eq(users.id, participants.userId))
        .where(inArray(participants.id, seatIds))
        .all()
        .map((s) => [s.participantId, s]),
    )
    const claims = this.db
      .select({ matchId: matchClaims.matchId, claimRound: matchClaims.claimRound, participantId: matchClaims.participantId, outcome: matchClaims.outcome, winnerParticipantId: matchClaims.winnerParticipantId })
      .from(matchClaims)
      .where(inArray(matchClaims.matchId, rows.map((r) => r.match.id)))
      .all()
    return rows.map(({ match: raw, tournamentName, format }) => {
      const match: MatchRecord = raw
      const own: ClaimRecord[] = claims
        .filter((c) => c.matchId === match.id && c.claimRound === match.claimRound)
        .map((c) => ({ participantId: c.participantId, outcome: c.outcome, winnerParticipantId: c.winnerParticipantId }))
      return {
        match,
        tournamentId: match.tournamentId,
        tournamentName,
        format,
        slot1: match.slot1ParticipantId === null ? null : (seats.get(match.slot1ParticipantId) ?? null),
        slot2: match.slot2ParticipantId === null ? null : (seats.get(match.slot2ParticipantId) ?? null),
        claims: own,
      }
    })
  }

  async waitingWithdrawals(limit: number): Promise<WaitingWithdrawal[]> {
    return this.db
      .select({ withdrawal: withdrawals, username: users.username })
      .from(withdrawals)
      .innerJoin(users, eq(users.id, withdrawals.userId))
      .where(inArray(withdrawals.status, ['awaiting_approval', 'held']))
      .orderBy(asc(withdrawals.createdAt), asc(withdrawals.id))
      .limit(limit)
      .all()
      .map((r) => ({ withdrawal: toWithdrawal(r.withdrawal), username: r.username }))
  }

  async withdrawalHistory(filter: WithdrawalFilter, before: { createdAt: Date; id: string } | null, limit: number): Promise<WaitingWithdrawal[]> {
    return this.db
      .select({ withdrawal: withdrawals, username: users.username })
      .from(withdrawals)
      .innerJoin(users, eq(users.id, withdrawals.userId))
      .where(withdrawalHistoryWhere(withdrawals, filter, before))
      .orderBy(desc(withdrawals.createdAt), desc(withdrawals.id))
      .limit(limit)
      .all()
      .map((r) => ({ withdrawal: toWithdrawal(r.withdrawal), username: r.username }))
  }

  async listGames(limit: number): Promise<GameListing[]> {
    return this.db
      .select({ id: games.id, name: games.name, createdAt: games.createdAt, keyRotatedAt: games.keyRotatedAt })
      .from(games)
      .orderBy(asc(games.createdAt), asc(games.id))
      .limit(limit)
      .all()
  }

  async gameName(gameId: string): Promise<string | null> {
    return this.db.select({ name: games.name }).from(games).where(eq(games.id, gameId)).get()?.name ?? null
  }

  async usernamesOf(userIds: readonly string[]): Promise<Map<string, string>> {
    if (userIds.length === 0) return new Map()
    const rows = this.db.select({ id: users.id, username: users.username }).from(users).where(inArray(users.id, [...new Set(userIds)])).all()
    return new Map(rows.map((r) => [r.id, r.username]))
  }

  async namesOf(ids: readonly string[]): Promise<Map<string, NamedId>> {
    const query = namesQuery(ids)
    return query === null ? new Map() : toNamedIds(this.db.all<NameRow>(query))
  }
}
