// Match sessions, claims and match moves on SQLite: the queries of
// MatchesQueries (src/db/stores/matches.ts), with the claim and session-issue
// paths on statements of their own. A CPU profile of a claim showed about half
// its CPU in Drizzle BUILDING the ~15 queries it runs (the compiled statements
// were already cached by text), so those paths skip the query builder: each
// statement here is compiled once per connection and run with parameters.
// Hand-written SELECT lists come from the schema (selectList); rows are mapped
// once per row type: timestamp_ms columns are epoch-ms integers, JSON columns
// JSON text, as Drizzle writes them.
import { getTableColumns } from 'drizzle-orm'
import { games, gameSessions, matchClaims, matches, users } from '../../schema'
import { CLAIM_FIELDS, MatchesQueries, SESSION_FIELDS } from '../../stores/matches'
import type { GameResultMode, MatchRecord } from '../../../modules/games/store'
import type { UserStanding } from '../../../modules/auth/store'
import type { ClaimContext, ClaimRecord, IssueContext, GameSession, MatchResult, NewClaim, NewGameSession } from '../../../modules/matches/store'
import { insertInto, perConnection, selectList } from '../connection'
import type { SqliteScope } from '../storage'

const MATCH_FIELDS = [
  'id',
  'tournamentId',
  'gameId',
  'kind',
  'bracket',
  'round',
  'position',
  'status',
  'slot1ParticipantId',
  'slot2ParticipantId',
  'winnerParticipantId',
  'outcome',
  'decidedBy',
  'nextMatchId',
  'nextSlot',
  'loserNextMatchId',
  'loserNextSlot',
  'claimRound',
  'decidedAt',
  'deadline',
  'createdAt',
  'stake',
  'terms',
  'readyBy',
  'slot1ReadyAt',
  'slot2ReadyAt',
] as const satisfies readonly (keyof MatchRecord)[]

type MatchInstant = 'decidedAt' | 'deadline' | 'createdAt' | 'readyBy' | 'slot1ReadyAt' | 'slot2ReadyAt'
export type RawMatch = Omit<MatchRecord, MatchInstant | 'terms'> & { [K in MatchInstant]: number | null } & { terms: string | null }

/** The SELECT list of a match row, for hand-written SQL (games.ts reads brackets with it too). */
export function matchColumns(alias?: string): string {
  return selectList(getTableColumns(matches), MATCH_FIELDS, alias)
}

const dateOf = (ms: number | null) => (ms === null ? null : new Date(ms))

export function toMatchRecord(raw: RawMatch): MatchRecord {
  return {
    ...raw,
    decidedAt: dateOf(raw.decidedAt),
    deadline: dateOf(raw.deadline),
    createdAt: dateOf(raw.createdAt),
    readyBy: dateOf(raw.readyBy),
    slot1ReadyAt: dateOf(raw.slot1ReadyAt),
    slot2ReadyAt: dateOf(raw.slot2ReadyAt),
    terms: raw.terms === null ? null : JSON.parse(raw.terms),
  }
}

type RawSession = Omit<GameSession, 'expiresAt' | 'consumedAt'> & { expiresAt: number; consumedAt: number | null }

function toGameSession(raw: RawSession): GameSession {
  return { ...raw, expiresAt: new Date(raw.expiresAt), consumedAt: raw.consumedAt === null ? null : new Date(raw.consumedAt) }
}

// A claim's six reads (the game's key, the claimant's standing, the session,
// its match, the round's claims) in two statements: each statement has 2-3 µs
// of fixed cost. The other tables are reached by scalar subqueries, never by a
// JOIN: SQLite (3.54 here) recompiles a joined statement whenever its
// parameters are bound again, which made one joined statement of all six
// reads cost 20 µs instead of 2.
const userColumns = getTableColumns(users)
const STANDING_COLUMNS = (['bannedAt', 'bannedUntil', 'banReason', 'deletedAt'] as const).map((name) => `"${userColumns[name].name}"`).join(', ')
/** The game's key hash and, as a JSON array of the ban columns and deleted_at, the user's standing (null: no such user). */
interface RawStanding {
  keyHash: string | null
  results: GameResultMode | null
  standing: string | null
}
const standingScalars = `(SELECT "${getTableColumns(games).keyHash.name}" FROM games WHERE id = $gameId) AS "keyHash",
  (SELECT "${getTableColumns(games).results.name}" FROM games WHERE id = $gameId) AS "results",
  (SELECT json_array(${STANDING_COLUMNS}) FROM users WHERE id = $userId) AS "standing"`
type KeyParams = { gameId: string; userId: string }

function toStanding(json: string | null): UserStanding | null {
  if (json === null) return null
  const [bannedAt, bannedUntil, banReason, deletedAt] = JSON.parse(json) as [number | null, number | null, string | null, number | null]
  return {
    // As toUserBan (src/db/rows.ts) maps the ban columns.
    ban: bannedAt === null ? null : { bannedAt: new Date(bannedAt), until: bannedUntil === null ? null : new Date(bannedUntil), reason: banReason ?? '' },
    deletedAt: deletedAt === null ? null : new Date(deletedAt),
  }
}

type Id = { id: string }

const statements = perConnection((sqlite) => ({
  // The claim context (see standingScalars): the session of a token hash with
  // the game's key and the claimant's standing; both alone when there is no
  // such session (a refused claim); the match with its round's claims as JSON.
  sessionInContext: sqlite.prepare<RawSession & RawStanding, KeyParams & { tokenHash: string }>(
    `SELECT ${selectList(getTableColumns(gameSessions), SESSION_FIELDS)}, ${standingScalars} FROM game_sessions WHERE token_hash = $tokenHash`,
  ),
  standingAlone: sqlite.prepare<RawStanding, KeyParams>(`SELECT ${standingScalars}`),
  matchWithClaims: sqlite.prepare<RawMatch & { claims: string }, Id>(
    `SELECT ${matchColumns('m')}, (
       SELECT json_group_array(json_array(c."${getTableColumns(matchClaims).participantId.name}", c."${getTableColumns(matchClaims).outcome.name}", c."${getTableColumns(matchClaims).winnerParticipantId.name}"))
       FROM match_claims c WHERE c.match_id = m.id AND c.claim_round = m.claim_round
     ) AS "claims" FROM matches m WHERE m.id = $id`,
  ),
  byId: sqlite.prepare<RawMatch, Id>(`SELECT ${matchColumns()} FROM matches WHERE id = $id`),
  // A session issue's reads: the match, its game, the user's seat in it and
  // the participants who claimed in its round, with the game's key; the key
  // alone when there is no such match.
  issueContext: sqlite.prepare<RawMatch & { keyHash: string | null; seat: string | null; claimants: string }, { gameId: string; id: string; userId: string }>(
    `SELECT ${matchColumns('m')},
       (SELECT "${getTableColumns(games).keyHash.name}" FROM games WHERE id = $gameId) AS "keyHash",
       (SELECT id FROM participants p WHERE p.id IN (m.slot1_participant_id, m.slot2_participant_id) AND p.user_id = $userId) AS "seat",
       (SELECT json_group_array(c.participant_id) FROM match_claims c WHERE c.match_id = m.id AND c.claim_round = m.claim_round) AS "claimants"
     FROM matches m WHERE m.id = $id`,
  ),
  keyAlone: sqlite.prepare<{ keyHash: string | null }, { gameId: string }>(`SELECT (SELECT "${getTableColumns(games).keyHash.name}" FROM games WHERE id = $gameId) AS "keyHash"`),
  seat: sqlite.prepare<Id, { a: string; b: string; userId: string }>('SELECT id FROM participants WHERE id IN ($a, $b) AND user_id = $userId'),
  insertSession: sqlite.prepare<unknown, Omit<NewGameSession, 'expiresAt' | 'createdAt'> & { expiresAt: number; createdAt: number }>(
    insertInto(gameSessions, ['id', 'tokenHash', 'gameId', 'matchId', 'participantId', 'userId', 'claimRound', 'expiresAt', 'createdAt']),
  ),
  sessionByTokenHash: sqlite.prepare<RawSession, { tokenHash: string }>(
    `SELECT ${selectList(getTableColumns(gameSessions), SESSION_FIELDS)} FROM game_sessions WHERE token_hash = $tokenHash`,
  ),
  consumeSession: sqlite.prepare<unknown, { id: string; now: number }>('UPDATE game_sessions SET consumed_at = $now WHERE id = $id'),
  claimOf: sqlite.prepare<{ participantId: string }, { matchId: string; claimRound: number; participantId: string }>(
    `SELECT ${selectList(getTableColumns(matchClaims), ['participantId'])} FROM match_claims
     WHERE match_id = $matchId AND claim_round = $claimRound AND participant_id = $participantId`,
  ),
  insertClaim: sqlite.prepare<unknown, Omit<NewClaim, 'score' | 'createdAt'> & { score: string | null; createdAt: number }>(
    insertInto(matchClaims, ['matchId', 'claimRound', 'participantId', 'outcome', 'winnerParticipantId', 'score', 'gameSessionId', 'createdAt']),
  ),
  claimsOfRound: sqlite.prepare<ClaimRecord, { matchId: string; claimRound: number }>(
    `SELECT ${selectList(getTableColumns(matchClaims), CLAIM_FIELDS)} FROM match_claims WHERE match_id = $matchId AND claim_round = $claimRound`,
  ),
  setClaimRound: sqlite.prepare<unknown, { id: string; claimRound: number }>('UPDATE matches SET claim_round = $claimRound WHERE id = $id'),
  markDisputed: sqlite.prepare<unknown, Id>(`UPDATE matches SET status = 'disputed' WHERE id = $id`),
  markDecided: sqlite.prepare<unknown, { id: string; winner: string | null; outcome: string; decidedBy: string; now: number }>(
    `UPDATE matches SET status = 'decided', winner_participant_id = $winner, outcome = $outcome, decided_by = $decidedBy, decided_at = $now WHERE id = $id`,
  ),
  fillSlot1: sqlite.prepare<unknown, { id: string; participantId: string | null }>('UPDATE matches SET slot1_participant_id = $participantId WHERE id = $id'),
  fillSlot2: sqlite.prepare<unknown, { id: string; participantId: string | null }>('UPDATE matches SET slot2_participant_id = $participantId WHERE id = $id'),
  openMatch: sqlite.prepare<RawMatch, Id & { deadline: number | null }>(
    `UPDATE matches SET status = 'running', deadline = $deadline WHERE id = $id AND status IN ('waiting', 'disputed') RETURNING ${matchColumns()}`,
  ),
}))

/** The queries of MatchesQueries, the claim and session-issue paths on the statements above. */
export class SqliteMatchesStore extends MatchesQueries {
  private readonly statements: ReturnType<typeof statements>

  constructor(scope: SqliteScope) {
    super(scope)
    this.statements = statements(scope.handle.sqlite)
  }

  override async byId(matchId: string): Promise<MatchRecord | null> {
    const raw = this.statements.byId.get({ id: matchId })
    return raw ? toMatchRecord(raw) : null
  }

  override async claimContext(gameId: string, userId: string, tokenHash: string): Promise<ClaimContext> {
    const raw = this.statements.sessionInContext.get({ gameId, userId, tokenHash })
    if (!raw) {
      const alone = this.statements.standingAlone.get({ gameId, userId })!
      return { keyHash: alone.keyHash, results: alone.results ?? 'claims', standing: toStanding(alone.standing), session: null, match: null, claims: [] }
    }
    const { keyHash, results, standing, ...session } = raw
    const found = this.statements.matchWithClaims.get({ id: session.matchId })
    let match: MatchRecord | null = null
    let claims: ClaimRecord[] = []
    if (found) {
      const { claims: json, ...row } = found
      match = toMatchRecord(row)
      claims = (JSON.parse(json) as [string, 'WIN' | 'DRAW', string | null][]).map(([participantId, outcome, winnerParticipantId]) => ({ participantId, outcome, winnerParticipantId }))
    }
    return { keyHash, results: results ?? 'claims', standing: toStanding(standing), session: toGameSession(session), match, claims }
  }

  override async issueContext(gameId: string, matchId: string, userId: string): Promise<IssueContext> {
    const raw = this.statements.issueContext.get({ gameId, id: matchId, userId })
    if (!raw) return { keyHash: this.statements.keyAlone.get({ gameId })!.keyHash, match: null, gameId: null, seat: null, claimed: false }
    const { keyHash, seat, claimants, ...match } = raw
    return { keyHash, match: toMatchRecord(match), gameId: match.gameId, seat, claimed: seat !== null && (JSON.parse(claimants) as string[]).includes(seat) }
  }

  override async seatOf(participantIds: readonly string[], userId: string): Promise<string | null> {
    const [a, b = a] = participantIds
    if (a === undefined) return null
    return this.statements.seat.get({ a, b: b!, userId })?.id ?? null
  }

  override async insertSession(session: NewGameSession): Promise<void> {
    this.statements.insertSession.run({ ...session, expiresAt: session.expiresAt.getTime(), createdAt: session.createdAt.getTime() })
  }

  override async sessionByTokenHash(tokenHash: string): Promise<GameSession | null> {
    const raw = this.statements.sessionByTokenHash.get({ tokenHash })
    return raw ? toGameSession(raw) : null
  }

  override async consumeSession(sessionId: string, now: Date): Promise<void> {
    this.statements.consumeSession.run({ id: sessionId, now: now.getTime() })
  }

  override async hasClaimed(matchId: string, claimRound: number, participantId: string): Promise<boolean> {
    return this.statements.claimOf.get({ matchId, claimRound, participantId }) !== null
  }

  protected override async writeClaim(claim: NewClaim): Promise<void> {
    this.statements.insertClaim.run({ ...claim, score: claim.score === null ? null : JSON.stringify(claim.score), createdAt: claim.createdAt.getTime() })
  }

  override async claimsOf(matchId: string, claimRound: number): Promise<ClaimRecord[]> {
    return this.statements.claimsOfRound.all({ matchId, claimRound })
  }

  override async setClaimRound(matchId: string, claimRound: number): Promise<void> {
    this.statements.setClaimRound.run({ id: matchId, claimRound })
  }

  override async markDisputed(matchId: string): Promise<void> {
    this.statements.markDisputed.run({ id: matchId })
  }

  override async markDecided(matchId: string, result: MatchResult, now: Date): Promise<void> {
    this.statements.markDecided.run({ id: matchId, winner: result.winnerParticipantId, outcome: result.outcome, decidedBy: result.decidedBy, now: now.getTime() })
  }

  override async fillSlot(matchId: string, slot: 1 | 2, participantId: string | null): Promise<void> {
    ;(slot === 1 ? this.statements.fillSlot1 : this.statements.fillSlot2).run({ id: matchId, participantId })
  }

  override async openMatch(matchId: string, deadline: Date | null): Promise<MatchRecord | null> {
    const raw = this.statements.openMatch.get({ id: matchId, deadline: deadline === null ? null : deadline.getTime() })
    return raw ? toMatchRecord(raw) : null
  }
}
