// Games, tournaments, participants and brackets, on either engine.
//
// A tournament's state moves (running, finalizing, completed) are plain
// read-then-write in the caller's unit of work: on PostgreSQL it is
// SERIALIZABLE, so two instances starting one tournament, or finalizing it,
// cannot both act on what they read (one fails with 40001 and, run again,
// finds it moved on); on SQLite every write waits for the one before.
//
// What each engine does its own way stays in its subclass: SQLite compiles
// the lookups of the game-SDK and claim paths once per connection
// (src/db/sqlite/stores/games.ts); PostgreSQL locks the tournament a write
// decides from, seeds a bracket in one statement and inserts larger chunks
// (src/db/postgres/stores/games.ts).
import { and, asc, count, eq, gt, inArray, isNotNull, isNull, lt, or, sql } from 'drizzle-orm'
import type { GameRecord, GameResultMode, GameServerRecord, GameSummary, GamesStore, MatchRecord, Participant, TournamentFormatName, TournamentRecord, TournamentStatus, TournamentSummary } from '../../modules/games/store'
import { mapEngineError } from '../errors'
import { Queries, type Tables } from './scope'

/** The columns of a match row that make a MatchRecord (all of them, named and ordered as the domain names them). */
export function matchRecordColumns(matches: Tables['matches']) {
  return {
    id: matches.id,
    tournamentId: matches.tournamentId,
    gameId: matches.gameId,
    kind: matches.kind,
    bracket: matches.bracket,
    round: matches.round,
    position: matches.position,
    status: matches.status,
    slot1ParticipantId: matches.slot1ParticipantId,
    slot2ParticipantId: matches.slot2ParticipantId,
    winnerParticipantId: matches.winnerParticipantId,
    outcome: matches.outcome,
    decidedBy: matches.decidedBy,
    nextMatchId: matches.nextMatchId,
    nextSlot: matches.nextSlot,
    loserNextMatchId: matches.loserNextMatchId,
    loserNextSlot: matches.loserNextSlot,
    claimRound: matches.claimRound,
    decidedAt: matches.decidedAt,
    deadline: matches.deadline,
    createdAt: matches.createdAt,
    stake: matches.stake,
    terms: matches.terms,
    readyBy: matches.readyBy,
    slot1ReadyAt: matches.slot1ReadyAt,
    slot2ReadyAt: matches.slot2ReadyAt,
  }
}

/** The columns of a participant row that make a Participant. */
function participantColumns(participants: Tables['participants']) {
  return {
    id: participants.id,
    userId: participants.userId,
    seed: participants.seed,
    registeredAt: participants.registeredAt,
    checkedInAt: participants.checkedInAt,
    disqualifiedAt: participants.disqualifiedAt,
  }
}

/** A read of one tournament's row, before the engine's lock (see `lockedInWrite`). */
type TournamentRead = ReturnType<GamesQueries['tournamentRead']>

export class GamesQueries extends Queries implements GamesStore {
  /** Matches per INSERT of a bracket: SQLite limits the bound variables of one statement (18 a row). */
  protected readonly bracketChunk: number = 50

  async insertGame(game: GameRecord): Promise<void> {
    await this.db.insert(this.t.games).values(game)
  }

  async game(gameId: string): Promise<GameSummary | null> {
    const { games } = this.t
    const [row] = await this.db
      .select({ id: games.id, name: games.name, createdAt: games.createdAt, tau: games.ratingTau, inactivityPeriodS: games.ratingInactivityPeriodS, challengeRake: games.challengeRake, results: games.results })
      .from(games)
      .where(eq(games.id, gameId))
    return row ? { id: row.id, name: row.name, createdAt: row.createdAt, rating: { tau: row.tau, inactivityPeriodS: row.inactivityPeriodS }, challengeRake: row.challengeRake, results: row.results } : null
  }

  async setResultMode(gameId: string, results: GameResultMode): Promise<void> {
    const { games } = this.t
    await this.db.update(games).set({ results }).where(eq(games.id, gameId))
  }

  async insertGameServer(server: GameServerRecord): Promise<void> {
    await this.db.insert(this.t.gameServers).values(server)
  }

  async gameServersOf(gameId: string): Promise<GameServerRecord[]> {
    const { gameServers } = this.t
    return this.db.select().from(gameServers).where(eq(gameServers.gameId, gameId)).orderBy(asc(gameServers.createdAt), asc(gameServers.id))
  }

  async countGameServers(gameId: string): Promise<number> {
    const { gameServers } = this.t
    const [row] = await this.db.select({ n: count() }).from(gameServers).where(eq(gameServers.gameId, gameId))
    return Number(row?.n ?? 0)
  }

  async gameServer(id: string): Promise<GameServerRecord | null> {
    const { gameServers } = this.t
    const [row] = await this.db.select().from(gameServers).where(eq(gameServers.id, id))
    return row ?? null
  }

  async disableGameServer(id: string, at: Date): Promise<boolean> {
    const { gameServers } = this.t
    const changed = await this.db.update(gameServers).set({ disabledAt: at }).where(and(eq(gameServers.id, id), isNull(gameServers.disabledAt))).returning({ id: gameServers.id })
    return changed.length > 0
  }

  async rotateGameServer(id: string, publicKey: string, at: Date): Promise<boolean> {
    const { gameServers } = this.t
    const changed = await this.db.update(gameServers).set({ publicKey, rotatedAt: at }).where(and(eq(gameServers.id, id), isNull(gameServers.disabledAt))).returning({ id: gameServers.id })
    return changed.length > 0
  }

  async insertServerSignature(signature: { signatureHash: string; serverId: string; expiresAt: Date }): Promise<void> {
    try {
      await this.db.insert(this.t.gameServerSignatures).values(signature)
    } catch (error) {
      // Accepted already: the primary key, on any instance (a racing one's insert waits for its commit, then fails here).
      throw mapEngineError(error)
    }
  }

  async pruneServerSignatures(now: Date): Promise<number> {
    const { gameServerSignatures } = this.t
    const removed = await this.db.delete(gameServerSignatures).where(lt(gameServerSignatures.expiresAt, now)).returning({ hash: gameServerSignatures.signatureHash })
    return removed.length
  }

  async setChallengeRake(gameId: string, rake: string): Promise<void> {
    const { games } = this.t
    await this.db.update(games).set({ challengeRake: rake }).where(eq(games.id, gameId))
  }

  async renameGame(gameId: string, name: string): Promise<boolean> {
    const { games } = this.t
    const renamed = await this.db.update(games).set({ name }).where(eq(games.id, gameId)).returning({ id: games.id })
    return renamed.length > 0
  }

  async replaceKeyHash(gameId: string, keyHash: string, rotatedAt: Date): Promise<boolean> {
    const { games } = this.t
    const replaced = await this.db.update(games).set({ keyHash, keyRotatedAt: rotatedAt }).where(eq(games.id, gameId)).returning({ id: games.id })
    return replaced.length > 0
  }

  async keyHashOf(gameId: string): Promise<string | null> {
    const { games } = this.t
    const [row] = await this.db.select({ keyHash: games.keyHash }).from(games).where(eq(games.id, gameId))
    return row?.keyHash ?? null
  }

  async gameExists(gameId: string): Promise<boolean> {
    const { games } = this.t
    const rows = await this.db.select({ id: games.id }).from(games).where(eq(games.id, gameId))
    return rows.length > 0
  }

  async findUsers(ids: readonly string[], usernameKeys: readonly string[]): Promise<{ id: string; usernameKey: string }[]> {
    const { users } = this.t
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
    await this.db.insert(this.t.tournaments).values(tournament)
    if (people.length > 0) await this.db.insert(this.t.participants).values([...people])
  }

  async listTournaments(filter: { status: TournamentStatus | null; after: string | null; limit: number }): Promise<TournamentSummary[]> {
    const { tournaments, participants } = this.t
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
    const countOf = new Map(counts.map((c) => [c.tournamentId, c.n]))
    return rows.map((row) => ({ ...row, participantCount: countOf.get(row.id) ?? 0 }))
  }

  async nextRegistrationNumber(tournamentId: string): Promise<number> {
    const { tournaments } = this.t
    // The update locks the row on PostgreSQL, which orders joins to one
    // tournament: the second waits, and SERIALIZABLE runs it again on what the
    // first committed. SQLite runs one write at a time.
    const [row] = await this.db
      .update(tournaments)
      .set({ registrationSeq: sql`${tournaments.registrationSeq} + 1` })
      .where(eq(tournaments.id, tournamentId))
      .returning({ seq: tournaments.registrationSeq })
    if (!row) throw new Error(`no tournament ${tournamentId}`)
    return row.seq
  }

  async countParticipants(tournamentId: string): Promise<number> {
    const { participants } = this.t
    const [row] = await this.db.select({ n: count() }).from(participants).where(eq(participants.tournamentId, tournamentId))
    return row?.n ?? 0
  }

  async participantOf(tournamentId: string, userId: string): Promise<Participant | null> {
    const { participants } = this.t
    const [row] = await this.db
      .select(participantColumns(participants))
      .from(participants)
      .where(and(eq(participants.tournamentId, tournamentId), eq(participants.userId, userId)))
    return row ?? null
  }

  async insertParticipant(participant: Participant & { tournamentId: string }): Promise<void> {
    await this.db.insert(this.t.participants).values(participant)
  }

  async removeParticipant(tournamentId: string, userId: string): Promise<boolean> {
    const { participants } = this.t
    const removed = await this.db
      .delete(participants)
      .where(and(eq(participants.tournamentId, tournamentId), eq(participants.userId, userId)))
      .returning({ id: participants.id })
    return removed.length > 0
  }

  async removeParticipants(participantIds: readonly string[]): Promise<void> {
    if (participantIds.length === 0) return
    const { participants } = this.t
    await this.db.delete(participants).where(inArray(participants.id, [...participantIds]))
  }

  async markCheckedIn(participantId: string, at: Date): Promise<void> {
    const { participants } = this.t
    await this.db.update(participants).set({ checkedInAt: at }).where(eq(participants.id, participantId))
  }

  async markDisqualified(participantId: string, at: Date): Promise<void> {
    const { participants } = this.t
    await this.db.update(participants).set({ disqualifiedAt: at }).where(eq(participants.id, participantId))
  }

  async assignSeeds(tournamentId: string, participantIds: readonly string[]): Promise<void> {
    const { participants } = this.t
    // Out of the way first (registration numbers are positive), so no two rows share a seed midway.
    await this.db.update(participants).set({ seed: sql`-${participants.seed}` }).where(eq(participants.tournamentId, tournamentId))
    for (const [index, id] of participantIds.entries()) await this.db.update(participants).set({ seed: index + 1 }).where(eq(participants.id, id))
  }

  async markCancelled(tournamentId: string, at: Date): Promise<void> {
    const { tournaments } = this.t
    await this.db.update(tournaments).set({ status: 'cancelled', completedAt: at }).where(eq(tournaments.id, tournamentId))
  }

  /** The read `tournament` makes, for the engine to lock. */
  protected tournamentRead(id: string) {
    const { tournaments } = this.t
    return this.db.select().from(tournaments).where(eq(tournaments.id, id)).$dynamic()
  }

  /**
   * The tournament read as a start or a finalization decides from it: as it
   * is here; PostgreSQL locks it inside a write, so two of them take turns.
   */
  protected lockedInWrite(query: TournamentRead): TournamentRead {
    return query
  }

  async tournament(id: string): Promise<TournamentRecord | null> {
    const [row] = await this.lockedInWrite(this.tournamentRead(id))
    return row ?? null
  }

  async formatOf(tournamentId: string): Promise<TournamentFormatName | null> {
    const { tournaments } = this.t
    const [row] = await this.db.select({ format: tournaments.format }).from(tournaments).where(eq(tournaments.id, tournamentId))
    return row?.format ?? null
  }

  async participantsOf(tournamentId: string): Promise<Participant[]> {
    const { participants } = this.t
    return this.db
      .select(participantColumns(participants))
      .from(participants)
      .where(eq(participants.tournamentId, tournamentId))
      .orderBy(asc(participants.seed))
  }

  async bracketOf(tournamentId: string): Promise<MatchRecord[]> {
    const { matches } = this.t
    return this.db
      .select(matchRecordColumns(matches))
      .from(matches)
      .where(eq(matches.tournamentId, tournamentId))
      .orderBy(asc(matches.bracket), asc(matches.round), asc(matches.position))
  }

  async countUndecided(tournamentId: string): Promise<number> {
    const { matches } = this.t
    const [row] = await this.db
      .select({ n: count() })
      .from(matches)
      .where(and(eq(matches.tournamentId, tournamentId), inArray(matches.status, ['waiting', 'running', 'disputed'])))
    return row?.n ?? 0
  }

  async hasDisqualified(tournamentId: string): Promise<boolean> {
    const { participants } = this.t
    const rows = await this.db
      .select({ id: participants.id })
      .from(participants)
      .where(and(eq(participants.tournamentId, tournamentId), isNotNull(participants.disqualifiedAt)))
      .limit(1)
    return rows.length > 0
  }

  async matchesAround(tournamentId: string, ids: readonly string[]): Promise<MatchRecord[]> {
    const { matches } = this.t
    return this.db
      .select(matchRecordColumns(matches))
      .from(matches)
      .where(and(eq(matches.tournamentId, tournamentId), or(inArray(matches.id, [...ids]), isNull(matches.nextMatchId))))
  }

  async insertBracket(rows: readonly MatchRecord[]): Promise<void> {
    for (let i = 0; i < rows.length; i += this.bracketChunk) await this.db.insert(this.t.matches).values(rows.slice(i, i + this.bracketChunk))
  }

  async markRunning(tournamentId: string, startedAt: Date): Promise<void> {
    const { tournaments } = this.t
    await this.db.update(tournaments).set({ status: 'running', startedAt }).where(eq(tournaments.id, tournamentId))
  }

  async markFinalizing(tournamentId: string, winnerParticipantId: string): Promise<void> {
    const { tournaments } = this.t
    await this.db.update(tournaments).set({ status: 'finalizing', winnerParticipantId }).where(eq(tournaments.id, tournamentId))
  }

  async markCompleted(tournamentId: string, winnerParticipantId: string | null, completedAt: Date): Promise<void> {
    const { tournaments } = this.t
    await this.db.update(tournaments).set({ status: 'completed', winnerParticipantId, completedAt }).where(eq(tournaments.id, tournamentId))
  }

  async matchDeadlineOf(tournamentId: string): Promise<number | null> {
    const { tournaments } = this.t
    const [row] = await this.db.select({ options: tournaments.options }).from(tournaments).where(eq(tournaments.id, tournamentId))
    return row?.options?.matchDeadlineS ?? null
  }

  async participantUserIds(tournamentId: string): Promise<string[]> {
    const { participants } = this.t
    const rows = await this.db.select({ userId: participants.userId }).from(participants).where(eq(participants.tournamentId, tournamentId))
    return rows.map((row) => row.userId)
  }

  async usersOfParticipants(participantIds: readonly string[]): Promise<string[]> {
    if (participantIds.length === 0) return []
    const { participants } = this.t
    const rows = await this.db.select({ userId: participants.userId }).from(participants).where(inArray(participants.id, [...participantIds]))
    return rows.map((row) => row.userId)
  }

  async seatsOf(participantIds: readonly string[]): Promise<{ participantId: string; userId: string }[]> {
    if (participantIds.length === 0) return []
    const { participants } = this.t
    return this.db.select({ participantId: participants.id, userId: participants.userId }).from(participants).where(inArray(participants.id, [...participantIds]))
  }
}
