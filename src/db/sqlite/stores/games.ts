// Games, tournaments, participants and brackets on SQLite. The lookups the
// game-SDK and claim paths make (the key check on every call, a match's
// players, a tournament's players) are compiled once per connection: building
// them cost more than running them. The rest uses the query builder.
import { and, asc, eq, getTableColumns, inArray, isNull, or } from 'drizzle-orm'
import { games, matches, participants, tournaments, users } from '../../schema'
import type { GameRecord, GamesStore, MatchRecord, Participant, TournamentFormatName, TournamentRecord } from '../../../modules/games/store'
import { perConnection, selectList } from '../connection'
import type { SqliteScope } from '../storage'
import { matchColumns, toMatchRecord, type RawMatch } from './matches'

type UserRow = { userId: string }

const statements = perConnection((sqlite) => {
  const userOf = selectList(getTableColumns(participants), ['userId'])
  return {
    keyHash: sqlite.prepare<{ keyHash: string }, { id: string }>(`SELECT ${selectList(getTableColumns(games), ['keyHash'])} FROM games WHERE id = $id`),
    // A match's players: `IN` with one or two ids, as the query builder would emit.
    usersOfOne: sqlite.prepare<UserRow, { a: string }>(`SELECT ${userOf} FROM participants WHERE id IN ($a)`),
    usersOfTwo: sqlite.prepare<UserRow, { a: string; b: string }>(`SELECT ${userOf} FROM participants WHERE id IN ($a, $b)`),
    usersOfTournament: sqlite.prepare<UserRow, { tournamentId: string }>(`SELECT ${userOf} FROM participants WHERE tournament_id = $tournamentId`),
    format: sqlite.prepare<{ format: TournamentFormatName }, { id: string }>(
      `SELECT ${selectList(getTableColumns(tournaments), ['format'])} FROM tournaments WHERE id = $id`,
    ),
    markFinalizing: sqlite.prepare<unknown, { id: string; winner: string }>(
      `UPDATE tournaments SET status = 'finalizing', winner_participant_id = $winner WHERE id = $id`,
    ),
    bracket: sqlite.prepare<RawMatch, { tournamentId: string }>(
      `SELECT ${matchColumns()} FROM matches WHERE tournament_id = $tournamentId ORDER BY round, position`,
    ),
  }
})

/** Rows per multi-row INSERT: SQLite limits the bound variables of one statement. */
const INSERT_CHUNK = 50

export class SqliteGamesStore implements GamesStore {
  private readonly statements: ReturnType<typeof statements>

  constructor(private readonly scope: SqliteScope) {
    this.statements = statements(scope.handle.sqlite)
  }

  private get db() {
    return this.scope.handle.db
  }

  async insertGame(game: GameRecord): Promise<void> {
    this.db.insert(games).values(game).run()
  }

  async replaceKeyHash(gameId: string, keyHash: string, rotatedAt: Date): Promise<boolean> {
    return this.db.update(games).set({ keyHash, keyRotatedAt: rotatedAt }).where(eq(games.id, gameId)).returning({ id: games.id }).all().length > 0
  }

  async keyHashOf(gameId: string): Promise<string | null> {
    return this.statements.keyHash.get({ id: gameId })?.keyHash ?? null
  }

  async gameExists(gameId: string): Promise<boolean> {
    return this.db.select({ id: games.id }).from(games).where(eq(games.id, gameId)).get() !== undefined
  }

  async findUsers(ids: readonly string[], usernameKeys: readonly string[]): Promise<{ id: string; usernameKey: string }[]> {
    return this.db
      .select({ id: users.id, usernameKey: users.usernameKey })
      .from(users)
      // A deleted account plays no more: it is no user to seat.
      .where(and(or(inArray(users.id, [...ids]), inArray(users.usernameKey, [...usernameKeys])), isNull(users.deletedAt)))
      .all()
  }

  async insertTournament(
    tournament: Omit<TournamentRecord, 'winnerParticipantId' | 'startedAt' | 'completedAt'>,
    people: readonly (Participant & { tournamentId: string })[],
  ): Promise<void> {
    this.db.insert(tournaments).values(tournament).run()
    this.db.insert(participants).values([...people]).run()
  }

  async tournament(id: string): Promise<TournamentRecord | null> {
    return this.db.select().from(tournaments).where(eq(tournaments.id, id)).get() ?? null
  }

  async formatOf(tournamentId: string): Promise<TournamentFormatName | null> {
    return this.statements.format.get({ id: tournamentId })?.format ?? null
  }

  async participantsOf(tournamentId: string): Promise<Participant[]> {
    return this.db
      .select({ id: participants.id, userId: participants.userId, seed: participants.seed })
      .from(participants)
      .where(eq(participants.tournamentId, tournamentId))
      .orderBy(asc(participants.seed))
      .all()
  }

  async bracketOf(tournamentId: string): Promise<MatchRecord[]> {
    return this.statements.bracket.all({ tournamentId }).map(toMatchRecord)
  }

  async insertBracket(rows: readonly MatchRecord[]): Promise<void> {
    for (let i = 0; i < rows.length; i += INSERT_CHUNK) this.db.insert(matches).values(rows.slice(i, i + INSERT_CHUNK)).run()
  }

  async markRunning(tournamentId: string, startedAt: Date): Promise<void> {
    this.db.update(tournaments).set({ status: 'running', startedAt }).where(eq(tournaments.id, tournamentId)).run()
  }

  async markFinalizing(tournamentId: string, winnerParticipantId: string): Promise<void> {
    this.statements.markFinalizing.run({ id: tournamentId, winner: winnerParticipantId })
  }

  async markCompleted(tournamentId: string, winnerParticipantId: string | null, completedAt: Date): Promise<void> {
    this.db.update(tournaments).set({ status: 'completed', winnerParticipantId, completedAt }).where(eq(tournaments.id, tournamentId)).run()
  }

  async markCancelled(tournamentId: string, now: Date): Promise<void> {
    this.db.update(tournaments).set({ status: 'cancelled', completedAt: now }).where(eq(tournaments.id, tournamentId)).run()
  }

  async matchDeadlineOf(tournamentId: string): Promise<number | null> {
    const row = this.db.select({ options: tournaments.options }).from(tournaments).where(eq(tournaments.id, tournamentId)).get()
    return row?.options?.matchDeadlineS ?? null
  }

  async participantUserIds(tournamentId: string): Promise<string[]> {
    return this.statements.usersOfTournament.all({ tournamentId }).map((row) => row.userId)
  }

  async usersOfParticipants(participantIds: readonly string[]): Promise<string[]> {
    const [a, b] = participantIds
    if (a === undefined) return []
    if (participantIds.length > 2) {
      return this.db.select({ userId: participants.userId }).from(participants).where(inArray(participants.id, [...participantIds])).all().map((row) => row.userId)
    }
    const rows = b === undefined ? this.statements.usersOfOne.all({ a }) : this.statements.usersOfTwo.all({ a, b })
    return rows.map((row) => row.userId)
  }
}
