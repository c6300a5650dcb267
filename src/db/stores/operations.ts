// The console's operations queries (src/modules/operations/store.ts), on
// either engine: read only, each on committed state (the read stores).
// Counts ride indexes where one exists: live and disputed matches are counted
// through running tournaments (tournaments_status, then each tournament's
// matches by the matches_tournament_place prefix), never a scan of every
// match ever played; withdrawals by withdrawals_status. Independent queries
// are awaited together: PostgreSQL runs them on the pool at once, SQLite one
// after another as before.
//
// The database's size is each engine's own question (its subclass).
import { and, asc, count, desc, eq, inArray, isNull, or, sql } from 'drizzle-orm'
import type { ClaimRecord } from '../../modules/matches/store'
import type { DashboardCounts, DisputedMatch, GameListing, NamedId, NamedSeat, OperationsStore, WaitingWithdrawal, WithdrawalFilter } from '../../modules/operations/store'
import { toWithdrawal } from '../rows'
import { withdrawalHistoryWhere } from '../withdrawal-history'
import { namesQuery, toNamedIds, type NameRow } from '../names'
import { Queries } from './scope'

export abstract class OperationsQueries extends Queries implements OperationsStore {
  abstract databaseSizeBytes(): Promise<number>

  async dashboardCounts(): Promise<DashboardCounts> {
    const { matches, tournaments, users, withdrawals } = this.t
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

  async disputedMatches(limit: number): Promise<DisputedMatch[]> {
    const { matchClaims, matches, participants, tournaments, users } = this.t
    // Every column of a match is a MatchRecord's, named as the domain names it.
    const rows = await this.db
      .select({ match: matches, tournamentName: tournaments.name, format: tournaments.format })
      .from(matches)
      .leftJoin(tournaments, eq(matches.tournamentId, tournaments.id))
      .where(and(eq(matches.status, 'disputed'), or(isNull(matches.tournamentId), eq(tournaments.status, 'running'))))
      // Matches without a tournament first ('' sorts before any id on both engines), in the order they were made.
      .orderBy(asc(sql`coalesce(${matches.tournamentId}, '')`), asc(matches.bracket), asc(matches.round), asc(matches.position), asc(matches.createdAt), asc(matches.id))
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
    const { users, withdrawals } = this.t
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
    const { users, withdrawals } = this.t
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
    const { games } = this.t
    return this.db
      .select({ id: games.id, name: games.name, createdAt: games.createdAt, keyRotatedAt: games.keyRotatedAt })
      .from(games)
      .orderBy(asc(games.createdAt), asc(games.id))
      .limit(limit)
  }

  async gameName(gameId: string): Promise<string | null> {
    const { games } = this.t
    const [row] = await this.db.select({ name: games.name }).from(games).where(eq(games.id, gameId))
    return row?.name ?? null
  }

  async usernamesOf(userIds: readonly string[]): Promise<Map<string, string>> {
    if (userIds.length === 0) return new Map()
    const { users } = this.t
    const rows = await this.db.select({ id: users.id, username: users.username }).from(users).where(inArray(users.id, [...new Set(userIds)]))
    return new Map(rows.map((r) => [r.id, r.username]))
  }

  async namesOf(ids: readonly string[]): Promise<Map<string, NamedId>> {
    const query = namesQuery(ids)
    if (query === null) return new Map()
    // The union (src/db/names.ts) as a derived table, so that Drizzle runs it
    // on either engine; its columns come back as the engine's driver gives them.
    const column = <T>(name: keyof NameRow) => sql<T>`${sql.raw(`names.${name}`)}`
    const rows: NameRow[] = await this.db
      .select({
        id: column<NameRow['id']>('id'),
        name: column<NameRow['name']>('name'),
        user_id: column<NameRow['user_id']>('user_id'),
        deleted: column<NameRow['deleted']>('deleted'),
        tournament_id: column<NameRow['tournament_id']>('tournament_id'),
        tournament_name: column<NameRow['tournament_name']>('tournament_name'),
      })
      .from(sql`(${query}) AS names`)
    return toNamedIds(rows)
  }
}
