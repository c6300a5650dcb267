// Games, tournaments, participants and brackets on SQLite: the queries of
// src/db/stores/games.ts, but the lookups the game-SDK and claim paths make
// (the key check on every call, a match's players, a tournament's players)
// and those every decision makes (its tournament, participants and bracket)
// are compiled once per connection: building them cost more than running them.
import { getTableColumns } from 'drizzle-orm'
import { games, participants, tournaments } from '../../schema'
import type { MatchRecord, Participant, TournamentFormatName, TournamentRecord } from '../../../modules/games/store'
import { GamesQueries } from '../../stores/games'
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
    // A rated decision's two seats (ratings/rate.ts).
    seatsOfTwo: sqlite.prepare<{ participantId: string; userId: string }, { a: string; b: string }>(
      `SELECT "${getTableColumns(participants).id.name}" AS "participantId", ${userOf} FROM participants WHERE id IN ($a, $b)`,
    ),
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

export class SqliteGamesStore extends GamesQueries {
  private readonly statements: ReturnType<typeof statements>

  constructor(scope: SqliteScope) {
    super(scope)
    this.statements = statements(scope.handle.sqlite)
  }

  override async keyHashOf(gameId: string): Promise<string | null> {
    return this.statements.keyHash.get({ id: gameId })?.keyHash ?? null
  }

  override async tournament(id: string): Promise<TournamentRecord | null> {
    const raw = this.statements.tournament.get({ id })
    return raw ? toTournamentRecord(raw) : null
  }

  override async formatOf(tournamentId: string): Promise<TournamentFormatName | null> {
    return this.statements.format.get({ id: tournamentId })?.format ?? null
  }

  override async participantsOf(tournamentId: string): Promise<Participant[]> {
    return this.statements.participants.all({ tournamentId }).map((raw) => ({
      ...raw,
      registeredAt: dateOrNull(raw.registeredAt),
      checkedInAt: dateOrNull(raw.checkedInAt),
      disqualifiedAt: dateOrNull(raw.disqualifiedAt),
    }))
  }

  override async bracketOf(tournamentId: string): Promise<MatchRecord[]> {
    return this.statements.bracket.all({ tournamentId }).map(toMatchRecord)
  }

  override async countUndecided(tournamentId: string): Promise<number> {
    return this.statements.countUndecided.get({ tournamentId })?.n ?? 0
  }

  override async hasDisqualified(tournamentId: string): Promise<boolean> {
    return this.statements.hasDisqualified.get({ tournamentId }) !== null
  }

  override async matchesAround(tournamentId: string, ids: readonly string[]): Promise<MatchRecord[]> {
    if (ids.length > 3) throw new RangeError('matchesAround takes up to three ids')
    // No id is empty: '' stands for none (a NULL would make NOT IN unknown for every row).
    const [a = '', b = '', c = ''] = ids
    return this.statements.around.all({ tournamentId, a, b, c }).map(toMatchRecord)
  }

  override async markFinalizing(tournamentId: string, winnerParticipantId: string): Promise<void> {
    this.statements.markFinalizing.run({ id: tournamentId, winner: winnerParticipantId })
  }

  override async participantUserIds(tournamentId: string): Promise<string[]> {
    return this.statements.usersOfTournament.all({ tournamentId }).map((row) => row.userId)
  }

  override async seatsOf(participantIds: readonly string[]): Promise<{ participantId: string; userId: string }[]> {
    const [a, b] = participantIds
    if (a === undefined || b === undefined || participantIds.length > 2) return super.seatsOf(participantIds)
    return this.statements.seatsOfTwo.all({ a, b })
  }

  override async usersOfParticipants(participantIds: readonly string[]): Promise<string[]> {
    const [a, b] = participantIds
    // More than two (never a match's players): the query builder's.
    if (a === undefined || participantIds.length > 2) return super.usersOfParticipants(participantIds)
    const rows = b === undefined ? this.statements.usersOfOne.all({ a }) : this.statements.usersOfTwo.all({ a, b })
    return rows.map((row) => row.userId)
  }
}
