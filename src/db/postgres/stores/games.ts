// Games, tournaments, participants and brackets on PostgreSQL.
//
// A tournament's state moves (running, finalizing, completed) are plain
// read-then-write in the caller's unit of work: it is SERIALIZABLE, so two
// instances starting one tournament, or finalizing it, cannot both act on
// what they read (one fails with 40001 and, run again, finds it moved on).
import { and, asc, count, eq, gt, inArray, isNotNull, isNull, or, sql } from 'drizzle-orm'
import type { GameRecord, GamesStore, MatchRecord, Participant, TournamentFormatName, TournamentRecord, TournamentStatus, TournamentSummary } from '../../../modules/games/store'
import { games, matches, participants, tournaments, users } from '../schema'
import type { PostgresScope } from '../scope'
import { matchRecordColumns } from './matches'

const participantColumns = { id: participants.id, userId: participants.userId, seed: participants.seed, registeredAt: participants.registeredAt, checkedInAt: participants.checkedInAt, disqualifiedAt: participants.disqualifiedAt }

/** Matches per INSERT: a 1024-player bracket is 1023 rows of 12 parameters, under PostgreSQL's 65535 per statement with room to spare. */
const INSERT_CHUNK = 1000

export class PostgresGamesStore implements GamesStore {
  constructor(private readonly scope: PostgresScope) {}

  private get db() {
    return this.scope.db
  }

  async insertGame(game: GameRecord): Promise<void> {
    await this.db.insert(games).values(game)
  }

  async replaceKeyHash(gameId: string, keyHash: string, rotatedAt: Date): Promise<boolean> {
    const replaced = await this.db.update(games).set({ keyHash, keyRotatedAt: rotatedAt }).where(eq(games.id, gameId)).returning({ id: games.id })
    return replaced.length > 0
  }

  async keyHashOf(gameId: string): Promise<string | null> {
    const [row] = await this.db.select({ keyHash: games.keyHash }).from(games).where(eq(games.id, gameId))
    return row?.keyHash ?? null
  }

  async gameExists(gameId: string): Promise<boolean> {
    const rows = await this.db.select({ id: games.id }).from(games).where(eq(games.id, gameId))
    return rows.length > 0
  }

  async findUsers(ids: readonly string[], usernameKeys: readonly string[]): Promise<{ id: string; usernameKey: string }[]> {
    return this.db
      .select({ id: users.id, usernameKey: users.usernameKey })
      .from(users)
      // A deleted account plays no more: it is no user to seat.
      .where(and(or(inArray(users.id, [...ids]), inArray(users.usernameKey, [...usernameKeys])), isNull(users.deletedAt)))
  }

  async insertTournament(
    tournament: Omit<TournamentRecord, 'winnerParticipantId' | 'startedAt' | 'completedAt' | 'registrationSeq'>,
    people: readonly (Participant & { tournamentId: string })[],
  ): Promise<void> {
    await this.db.insert(tournaments).values(tournament)
    if (people.length > 0) await this.db.insert(participants).values([...people])
  }

  async listTournaments(filter: { status: TournamentStatus | null; after: string | null; limit: number }): Promise<TournamentSummary[]> {
    const { status, after, limit } = filter
    const rows = await this.db
      .select()
      .from(tournaments)
      .where(
        and(
          status === null ? undefined : eq(tournaments.status, status),
          after === null ? undefined : gt(tournaments.id, after),
        ),
      )
      .orderBy(asc(tournaments.id))
      .limit(limit)
    if (rows.length === 0) return []
    const counts = await this.db
      .select({ tournamentId: participants.tournamentId, n: count() })
      .from(participants)
      .where(inArray(participants.tournamentId, rows.map((r) => r.id)))
      .groupBy(participants.tournamentId)
    const countOf = new Map(counts.map((c) => [c.tournamentId, Number(c.n)]))
    return rows.map((row) => ({ ...row, participantCount: countOf.get(row.id) ?? 0 }))
  }

  async nextRegistrationNumber(tournamentId: string): Promise<number> {
    // The row lock orders joins to one tournament: the second waits, and SERIALIZABLE runs it again on what the first committed.
    const [row] = await this.db
      .update(tournaments)
      .set({ registrationSeq: sql`${tournaments.registrationSeq} + 1` })
      .where(eq(tournaments.id, tournamentId))
      .returning({ seq: tournaments.registrationSeq })
    if (!row) throw new Error(`no tournament ${tournamentId}`)
    return row.seq
  }

  async countParticipants(tournamentId: string): Promise<number> {
    const [row] = await this.db.select({ n: count() }).from(participants).where(eq(participants.tournamentId, tournamentId))
    return Number(row?.n ?? 0)
  }

  async participantOf(tournamentId: string, userId: string): Promise<Participant | null> {
    const [row] = await this.db.select(participantColumns).from(participants).where(and(eq(participants.tournamentId, tournamentId), eq(participants.userId, userId)))
    return row ?? null
  }

  async insertParticipant(participant: Participant & { tournamentId: string }): Promise<void> {
    await this.db.insert(participants).values(participant)
  }

  async removeParticipant(tournamentId: string, userId: string): Promise<boolean> {
    const removed = await this.db.delete(participants).where(and(eq(participants.tournamentId, tournamentId), eq(participants.userId, userId))).returning({ id: participants.id })
    return removed.length > 0
  }

  async removeParticipants(participantIds: readonly string[]): Promise<void> {
    if (participantIds.length === 0) return
    await this.db.delete(participants).where(inArray(participants.id, [...participantIds]))
  }

  async markCheckedIn(participantId: string, at: Date): Promise<void> {
    await this.db.update(participants).set({ checkedInAt: at }).where(eq(participants.id, participantId))
  }

  async markDisqualified(participantId: string, at: Date): Promise<void> {
    await this.db.update(participants).set({ disqualifiedAt: at }).where(eq(participants.id, participantId))
  }

  async assignSeeds(tournamentId: string, participantIds: readonly string[]): Promise<void> {
    if (participantIds.length === 0) return
    // PostgreSQL checks the unique (tournament, seed) index row by row: out of
    // the way first (registration numbers are positive), then one statement.
    await this.db.update(participants).set({ seed: sql`-${participants.seed}` }).where(eq(participants.tournamentId, tournamentId))
    const pairs = sql.join(participantIds.map((id, index) => sql`(${id}::text, ${index + 1}::integer)`), sql`, `)
    await this.db.execute(sql`UPDATE participants SET seed = v.seed FROM (VALUES ${pairs}) AS v(id, seed) WHERE participants.id = v.id AND participants.tournament_id = ${tournamentId}`)
  }

  async markCancelled(tournamentId: string, at: Date): Promise<void> {
    await this.db.update(tournaments).set({ status: 'cancelled', completedAt: at }).where(eq(tournaments.id, tournamentId))
  }

  async tournament(id: string): Promise<TournamentRecord | null> {
    const query = this.db.select().from(tournaments).where(eq(tournaments.id, id))
    // In a write, what a start or a finalization moves on from: two of them take turns.
    const [row] = await (this.scope.afterCommit !== undefined ? query.for('no key update') : query)
    return row ?? null
  }

  async formatOf(tournamentId: string): Promise<TournamentFormatName | null> {
    const [row] = await this.db.select({ format: tournaments.format }).from(tournaments).where(eq(tournaments.id, tournamentId))
    return row?.format ?? null
  }

  async participantsOf(tournamentId: string): Promise<Participant[]> {
    return this.db
      .select(participantColumns)
      .from(participants)
      .where(eq(participants.tournamentId, tournamentId))
      .orderBy(asc(participants.seed))
  }

  async bracketOf(tournamentId: string): Promise<MatchRecord[]> {
    return this.db.select(matchRecordColumns).from(matches).where(eq(matches.tournamentId, tournamentId)).orderBy(asc(matches.bracket), asc(matches.round), asc(matches.position))
  }

  async insertBracket(rows: readonly MatchRecord[]): Promise<void> {
    for (let i = 0; i < rows.length; i += INSERT_CHUNK) await this.db.insert(matches).values(rows.slice(i, i + INSERT_CHUNK))
  }

  async markRunning(tournamentId: string, startedAt: Date): Promise<void> {
    await this.db.update(tournaments).set({ status: 'running', startedAt }).where(eq(tournaments.id, tournamentId))
  }

  async markFinalizing(tournamentId: string, winnerParticipantId: string): Promise<void> {
    await this.db.update(tournaments).set({ status: 'finalizing', winnerParticipantId }).where(eq(tournaments.id, tournamentId))
  }

  async markCompleted(tournamentId: string, winnerParticipantId: string | null, completedAt: Date): Promise<void> {
    await this.db.update(tournaments).set({ status: 'completed', winnerParticipantId, completedAt }).where(eq(tournaments.id, tournamentId))
  }

  async matchDeadlineOf(tournamentId: string): Promise<number | null> {
    const [row] = await this.db.select({ options: tournaments.options }).from(tournaments).where(eq(tournaments.id, tournamentId))
    return row?.options?.matchDeadlineS ?? null
  }

  async countUndecided(tournamentId: string): Promise<number> {
    const [row] = await this.db
      .select({ n: count() })
      .from(matches)
      .where(and(eq(matches.tournamentId, tournamentId), inArray(matches.status, ['waiting', 'running', 'disputed'])))
    return row?.n ?? 0
  }

  async hasDisqualified(tournamentId: string): Promise<boolean> {
    const rows = await this.db
      .select({ id: participants.id })
      .from(participants)
      .where(and(eq(participants.tournamentId, tournamentId), isNotNull(participants.disqualifiedAt)))
      .limit(1)
    return rows.length > 0
  }

  async matchesAround(tournamentId: string, ids: readonly string[]): Promise<MatchRecord[]> {
    return this.db
      .select(matchRecordColumns)
      .from(matches)
      .where(and(eq(matches.tournamentId, tournamentId), or(inArray(matches.id, [...ids]), isNull(matches.nextMatchId))))
  }

  async participantUserIds(tournamentId: string): Promise<string[]> {
    const rows = await this.db.select({ userId: participants.userId }).from(participants).where(eq(participants.tournamentId, tournamentId))
    return rows.map((row) => row.userId)
  }

  async usersOfParticipants(participantIds: readonly string[]): Promise<string[]> {
    if (participantIds.length === 0) return []
    const rows = await this.db.select({ userId: participants.userId }).from(participants).where(inArray(participants.id, [...participantIds]))
    return rows.map((row) => row.userId)
  }
}
