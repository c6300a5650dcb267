// Games, tournaments, participants and brackets on SQLite. The lookups the
// game-SDK and claim paths make (the key check on every call, a match's
// players, a tournament's players) are compiled once per connection: building
// them cost more than running them. The rest uses the query builder.
import { and, asc, count, eq, getTableColumns, gt, inArray, isNull, or, sql } from 'drizzle-orm'
import { games, matches, participants, tournaments, users } from '../../schema'
import type { GameRecord, GamesStore, MatchRecord, Participant, TournamentFormatName, TournamentRecord, TournamentStatus, TournamentSummary } from '../../../modules/games/store'
import { perConnection, selectList } from '../connection'
import type { SqliteScope } from '../storage'
import { matchColumns, toMatchRecord, type RawMatch } from './matches'

type UserRow = { userId: string }

const PARTICIPANT_FIELDS = ['id', 'userId', 'seed', 'registeredAt', 'checkedInAt', 'disqualifiedAt'] as const satisfies readonly (keyof Participant)[]
type RawParticipant = Omit<Participant, 'registeredAt' | 'checkedInAt' | 'disqualifiedAt'> & { registeredAt: number | null; checkedInAt: number | null; disqualifiedAt: number | null }
const dateOrNull = (ms: number | null): Date | null => (ms === null ? null : new Date(ms))

const TOURNAMENT_FIELDS = [
  'id', 'gameId', 'name', 'format', 'status', 'winnerParticipantId', 'createdAt', 'startedAt', 'completedAt', 'registrationClosesAt', 'maxPlayers',
  'checkInOpensAt', 'checkInClosesAt', 'startsAt', 'seeding', 'seed', 'registrationSeq', 'options',
] as const satisfies readonly (keyof TournamentRecord)[]
const TOURNAMENT_TIMES = ['createdAt', 'startedAt', 'completedAt', 'registrationClosesAt', 'checkInOpensAt', 'checkInClosesAt', 'startsAt'] as const
type RawTournament = Omit<TournamentRecord, (typeof TOURNAMENT_TIMES)[number] | 'options'> & { [K in (typeof TOURNAMENT_TIMES)[number]]: number | null } & { options: string | null }

/** A tournament row as Drizzle would read it: epoch-ms times to dates, the JSON options parsed. */
function toTournamentRecord(raw: RawTournament): TournamentRecord {
  return {
    ...raw,
    createdAt: new Date(raw.createdAt!),
    startedAt: dateOrNull(raw.startedAt),
    completedAt: dateOrNull(raw.completedAt),
    registrationClosesAt: dateOrNull(raw.registrationClosesAt),
    checkInOpensAt: dateOrNull(raw.checkInOpensAt),
    checkInClosesAt: dateOrNull(raw.checkInClosesAt),
    startsAt: dateOrNull(raw.startsAt),
    options: raw.options === null ? null : (JSON.parse(raw.options) as TournamentRecord['options']),
  }
}

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
    participants: sqlite.prepare<RawParticipant, { tournamentId: string }>(
      `SELECT ${selectList(getTableColumns(participants), PARTICIPANT_FIELDS)} FROM participants WHERE tournament_id = $tournamentId ORDER BY seed`,
    ),
    // Every decision reads its tournament (progress.ts): compiled once, as the bracket.
    tournament: sqlite.prepare<RawTournament, { id: string }>(`SELECT ${selectList(getTableColumns(tournaments), TOURNAMENT_FIELDS)} FROM tournaments WHERE id = $id`),
    countUndecided: sqlite.prepare<{ n: number }, { tournamentId: string }>(
      `SELECT count(*) AS n FROM matches WHERE tournament_id = $tournamentId AND status IN ('waiting', 'running', 'disputed')`,
    ),
    hasDisqualified: sqlite.prepare<{ one: number }, { tournamentId: string }>(
      'SELECT 1 AS one FROM participants WHERE tournament_id = $tournamentId AND disqualified_at IS NOT NULL LIMIT 1',
    ),
    // Three ids (the decided match, where its winner and its loser go; '' where
    // none) by primary key, and the matches that feed nothing by the partial
    // index matches_terminal (one OR of both scanned the whole tournament), in
    // one statement: UNION ALL, the second part leaving out the three. Not
    // UNION: SQLite recompiled that statement at every new binding (18 µs
    // instead of 3.5), as it does a JOIN (see stores/matches.ts).
    around: sqlite.prepare<RawMatch, { tournamentId: string; a: string; b: string; c: string }>(
      `SELECT ${matchColumns()} FROM matches WHERE id IN ($a, $b, $c) AND tournament_id = $tournamentId
       UNION ALL
       SELECT ${matchColumns()} FROM matches WHERE tournament_id = $tournamentId AND next_match_id IS NULL AND id NOT IN ($a, $b, $c)`,
    ),
    bracket: sqlite.prepare<RawMatch, { tournamentId: string }>(
      `SELECT ${matchColumns()} FROM matches WHERE tournament_id = $tournamentId ORDER BY bracket, round, position`,
    ),
  }
})

const participantColumns = { id: participants.id, userId: participants.userId, seed: participants.seed, registeredAt: participants.registeredAt, checkedInAt: participants.checkedInAt, disqualifiedAt: participants.disqualifiedAt }

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
    tournament: Omit<TournamentRecord, 'winnerParticipantId' | 'startedAt' | 'completedAt' | 'registrationSeq'>,
    people: readonly (Participant & { tournamentId: string })[],
  ): Promise<void> {
    this.db.insert(tournaments).values(tournament).run()
    if (people.length > 0) this.db.insert(participants).values([...people]).run()
  }

  async listTournaments(filter: { status: TournamentStatus | null; after: string | null; limit: number }): Promise<TournamentSummary[]> {
    const { status, after, limit } = filter
    const rows = this.db
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
      .all()
    if (rows.length === 0) return []
    const counts = this.db
      .select({ tournamentId: participants.tournamentId, n: count() })
      .from(participants)
      .where(inArray(participants.tournamentId, rows.map((r) => r.id)))
      .groupBy(participants.tournamentId)
      .all()
    const countOf = new Map(counts.map((c) => [c.tournamentId, c.n]))
    return rows.map((row) => ({ ...row, participantCount: countOf.get(row.id) ?? 0 }))
  }

  async nextRegistrationNumber(tournamentId: string): Promise<number> {
    const [row] = this.db
      .update(tournaments)
      .set({ registrationSeq: sql`${tournaments.registrationSeq} + 1` })
      .where(eq(tournaments.id, tournamentId))
      .returning({ seq: tournaments.registrationSeq })
      .all()
    if (!row) throw new Error(`no tournament ${tournamentId}`)
    return row.seq
  }

  async countParticipants(tournamentId: string): Promise<number> {
    return this.db.select({ n: count() }).from(participants).where(eq(participants.tournamentId, tournamentId)).get()?.n ?? 0
  }

  async participantOf(tournamentId: string, userId: string): Promise<Participant | null> {
    return this.db.select(participantColumns).from(participants).where(and(eq(participants.tournamentId, tournamentId), eq(participants.userId, userId))).get() ?? null
  }

  async insertParticipant(participant: Participant & { tournamentId: string }): Promise<void> {
    this.db.insert(participants).values(participant).run()
  }

  async removeParticipant(tournamentId: string, userId: string): Promise<boolean> {
    return this.db.delete(participants).where(and(eq(participants.tournamentId, tournamentId), eq(participants.userId, userId))).returning({ id: participants.id }).all().length > 0
  }

  async removeParticipants(participantIds: readonly string[]): Promise<void> {
    if (participantIds.length === 0) return
    this.db.delete(participants).where(inArray(participants.id, [...participantIds])).run()
  }

  async markCheckedIn(participantId: string, at: Date): Promise<void> {
    this.db.update(participants).set({ checkedInAt: at }).where(eq(participants.id, participantId)).run()
  }

  async markDisqualified(participantId: string, at: Date): Promise<void> {
    this.db.update(participants).set({ disqualifiedAt: at }).where(eq(participants.id, participantId)).run()
  }

  async assignSeeds(tournamentId: string, participantIds: readonly string[]): Promise<void> {
    // Out of the way first (registration numbers are positive), so no two rows share a seed midway.
    this.db.update(participants).set({ seed: sql`-${participants.seed}` }).where(eq(participants.tournamentId, tournamentId)).run()
    for (const [index, id] of participantIds.entries()) this.db.update(participants).set({ seed: index + 1 }).where(eq(participants.id, id)).run()
  }

  async markCancelled(tournamentId: string, at: Date): Promise<void> {
    this.db.update(tournaments).set({ status: 'cancelled', completedAt: at }).where(eq(tournaments.id, tournamentId)).run()
  }

  async tournament(id: string): Promise<TournamentRecord | null> {
    const raw = this.statements.tournament.get({ id })
    return raw ? toTournamentRecord(raw) : null
  }

  async formatOf(tournamentId: string): Promise<TournamentFormatName | null> {
    return this.statements.format.get({ id: tournamentId })?.format ?? null
  }

  async participantsOf(tournamentId: string): Promise<Participant[]> {
    // Every decision reads them (the format engine's context): compiled once, as the bracket.
    return this.statements.participants.all({ tournamentId }).map((raw) => ({
      ...raw,
      registeredAt: dateOrNull(raw.registeredAt),
      checkedInAt: dateOrNull(raw.checkedInAt),
      disqualifiedAt: dateOrNull(raw.disqualifiedAt),
    }))
  }

  async bracketOf(tournamentId: string): Promise<MatchRecord[]> {
    return this.statements.bracket.all({ tournamentId }).map(toMatchRecord)
  }

  async countUndecided(tournamentId: string): Promise<number> {
    return this.statements.countUndecided.get({ tournamentId })?.n ?? 0
  }

  async hasDisqualified(tournamentId: string): Promise<boolean> {
    return this.statements.hasDisqualified.get({ tournamentId }) !== null
  }

  async matchesAround(tournamentId: string, ids: readonly string[]): Promise<MatchRecord[]> {
    if (ids.length > 3) throw new RangeError('matchesAround takes up to three ids')
    // No id is empty: '' stands for none (a NULL would make NOT IN unknown for every row).
    const [a = '', b = '', c = ''] = ids
    return this.statements.around.all({ tournamentId, a, b, c }).map(toMatchRecord)
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
