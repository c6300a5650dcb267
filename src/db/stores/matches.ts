// Match sessions, claims and match moves, on either engine.
//
// What differs stays in each engine's subclass: SQLite runs the claim and
// session-issue paths on statements it prepares once per connection
// (src/db/sqlite/stores/matches.ts), and PostgreSQL locks, inside a write,
// the rows a claim or a session issue decides on (lockedInWrite, in
// src/db/postgres/stores/matches.ts, which says why).
import { aliasedTable, and, asc, eq, gt, inArray, isNull, lt, ne, or, sql, type Table } from 'drizzle-orm'
import { mapEngineError } from '../errors'
import { toUserBan } from '../rows'
import type { MatchRecord } from '../../modules/games/store'
import type { ClaimContext, ClaimRecord, IssueContext, GameSession, MatchesStore, MatchResult, NewClaim, NewGameSession, OpenMatch, PlayedMatch } from '../../modules/matches/store'
import { matchRecordColumns } from './games'
import { Queries, type Tables } from './scope'
import { pick } from '../../shared/pick'
import type { AliasedTable } from '../postgres/schema/mirror'

/** The columns of a game session row that make a GameSession. */
export const SESSION_FIELDS = ['id', 'gameId', 'matchId', 'participantId', 'userId', 'claimRound', 'expiresAt', 'consumedAt'] as const satisfies readonly (keyof GameSession)[]

/** The columns of a claim row that make a ClaimRecord. */
export const CLAIM_FIELDS = ['participantId', 'outcome', 'winnerParticipantId'] as const satisfies readonly (keyof ClaimRecord)[]

/** `table` under the name `name` in one query (a self-join): Drizzle's alias, the same on both engines. */
function aliased<T extends Tables[keyof Tables], A extends string>(table: T, name: A): AliasedTable<T, A> {
  return aliasedTable(table, name) as unknown as AliasedTable<T, A>
}

export class MatchesQueries extends Queries implements MatchesStore {
  /**
   * A read of a row a claim or a session issue decides on (of the table `of`
   * when the query joins others). As it is here; PostgreSQL's store locks it
   * inside a write.
   */
  protected lockedInWrite<Q>(query: Q, _of?: Table): Q {
    return query
  }

  async byId(matchId: string): Promise<MatchRecord | null> {
    const { matches } = this.t
    const [row] = await this.lockedInWrite(this.db.select(matchRecordColumns(matches)).from(matches).where(eq(matches.id, matchId)))
    return row ?? null
  }

  async claimContext(gameId: string, userId: string, tokenHash: string): Promise<ClaimContext> {
    // One statement after another, in the order the claim path always read
    // them: the session before its match, and the round's claims once the
    // match is read (on PostgreSQL, locked: they then include those of a
    // claim this one waited for).
    const { games, users } = this.t
    const [game] = await this.db.select({ keyHash: games.keyHash, results: games.results }).from(games).where(eq(games.id, gameId))
    const [user] = await this.db
      .select({ bannedAt: users.bannedAt, bannedUntil: users.bannedUntil, banReason: users.banReason, deletedAt: users.deletedAt })
      .from(users)
      .where(eq(users.id, userId))
    const session = await this.sessionByTokenHash(tokenHash)
    const match = session ? await this.byId(session.matchId) : null
    return {
      keyHash: game?.keyHash ?? null,
      results: game?.results ?? 'claims',
      standing: user ? { ban: toUserBan(user), deletedAt: user.deletedAt } : null,
      session,
      match,
      claims: match ? await this.claimsOf(match.id, match.claimRound) : [],
    }
  }

  async issueContext(gameId: string, matchId: string, userId: string): Promise<IssueContext> {
    // As the session issue read them one by one: the key, the match (locked in a write, see byId), the seat, its claim.
    const { games } = this.t
    const [game] = await this.db.select({ keyHash: games.keyHash }).from(games).where(eq(games.id, gameId))
    const match = await this.byId(matchId)
    const ids = match ? [match.slot1ParticipantId, match.slot2ParticipantId].filter((id): id is string => id !== null) : []
    const seat = await this.seatOf(ids, userId)
    return {
      keyHash: game?.keyHash ?? null,
      match,
      gameId: match?.gameId ?? null,
      seat,
      claimed: match !== null && seat !== null && (await this.hasClaimed(match.id, match.claimRound, seat)),
    }
  }

  async seatOf(participantIds: readonly string[], userId: string): Promise<string | null> {
    if (participantIds.length === 0) return null
    const { participants } = this.t
    const [row] = await this.db
      .select({ id: participants.id })
      .from(participants)
      .where(and(inArray(participants.id, [...participantIds]), eq(participants.userId, userId)))
      .limit(1)
    return row?.id ?? null
  }

  async insertSession(session: NewGameSession): Promise<void> {
    const { id, tokenHash, gameId, matchId, participantId, userId, claimRound, expiresAt, createdAt } = session
    await this.db.insert(this.t.gameSessions).values({ id, tokenHash, gameId, matchId, participantId, userId, claimRound, expiresAt, createdAt })
  }

  async sessionByTokenHash(tokenHash: string): Promise<GameSession | null> {
    const { gameSessions } = this.t
    // Locked on PostgreSQL in a write, the claim about to spend it: two claims with one token take turns, the second finds it spent.
    const [row] = await this.lockedInWrite(this.db.select(pick(gameSessions, SESSION_FIELDS)).from(gameSessions).where(eq(gameSessions.tokenHash, tokenHash)))
    return row ?? null
  }

  async consumeSession(sessionId: string, now: Date): Promise<void> {
    await this.db.update(this.t.gameSessions).set({ consumedAt: now }).where(eq(this.t.gameSessions.id, sessionId))
  }

  async openSessionIds(userId: string, gameId: string, now: Date): Promise<string[]> {
    const { gameSessions } = this.t
    const rows = await this.db
      .select({ id: gameSessions.id })
      .from(gameSessions)
      .where(and(eq(gameSessions.userId, userId), eq(gameSessions.gameId, gameId), isNull(gameSessions.consumedAt), gt(gameSessions.expiresAt, now)))
      .orderBy(asc(gameSessions.createdAt), asc(gameSessions.id))
    return rows.map((row) => row.id)
  }

  async deleteSessions(ids: readonly string[]): Promise<void> {
    if (ids.length > 0) await this.db.delete(this.t.gameSessions).where(inArray(this.t.gameSessions.id, [...ids]))
  }

  async pruneGameSessionsExpiredBefore(cutoff: Date): Promise<number> {
    const { gameSessions } = this.t
    const rows = await this.db.delete(gameSessions).where(lt(gameSessions.expiresAt, cutoff)).returning({ id: gameSessions.id })
    return rows.length
  }

  async hasClaimed(matchId: string, claimRound: number, participantId: string): Promise<boolean> {
    const { matchClaims } = this.t
    const rows = await this.db
      .select({ participantId: matchClaims.participantId })
      .from(matchClaims)
      .where(and(eq(matchClaims.matchId, matchId), eq(matchClaims.claimRound, claimRound), eq(matchClaims.participantId, participantId)))
    return rows.length > 0
  }

  async insertClaim(claim: NewClaim): Promise<void> {
    try {
      await this.writeClaim(claim)
    } catch (error) {
      // The caller answers a second claim in the round (the primary key) in
      // its own terms. On PostgreSQL, a claim racing another instance's for
      // the same key, after this transaction read that there was none, fails
      // with 40001 instead (SSI): that passes through unmapped, and the rerun
      // finds the claim.
      throw mapEngineError(error)
    }
  }

  /** The insert of insertClaim, which maps what it throws. */
  protected async writeClaim(claim: NewClaim): Promise<void> {
    const { matchId, claimRound, participantId, outcome, winnerParticipantId, score, gameSessionId, createdAt } = claim
    await this.db.insert(this.t.matchClaims).values({ matchId, claimRound, participantId, outcome, winnerParticipantId, score, gameSessionId, createdAt })
  }

  async claimsOf(matchId: string, claimRound: number): Promise<ClaimRecord[]> {
    const { matchClaims } = this.t
    return this.db
      .select(pick(matchClaims, CLAIM_FIELDS))
      .from(matchClaims)
      .where(and(eq(matchClaims.matchId, matchId), eq(matchClaims.claimRound, claimRound)))
  }

  async setClaimRound(matchId: string, claimRound: number): Promise<void> {
    await this.db.update(this.t.matches).set({ claimRound }).where(eq(this.t.matches.id, matchId))
  }

  async markDisputed(matchId: string): Promise<void> {
    await this.db.update(this.t.matches).set({ status: 'disputed' }).where(eq(this.t.matches.id, matchId))
  }

  async markDecided(matchId: string, result: MatchResult, now: Date): Promise<void> {
    const { winnerParticipantId, outcome, decidedBy } = result
    await this.db.update(this.t.matches).set({ status: 'decided', winnerParticipantId, outcome, decidedBy, decidedAt: now }).where(eq(this.t.matches.id, matchId))
  }

  async fillSlot(matchId: string, slot: 1 | 2, participantId: string | null): Promise<void> {
    await this.db
      .update(this.t.matches)
      .set(slot === 1 ? { slot1ParticipantId: participantId } : { slot2ParticipantId: participantId })
      .where(eq(this.t.matches.id, matchId))
  }

  async openMatch(matchId: string, deadline: Date | null): Promise<MatchRecord | null> {
    const { matches } = this.t
    const [row] = await this.db
      .update(matches)
      .set({ status: 'running', deadline })
      .where(and(eq(matches.id, matchId), inArray(matches.status, ['waiting', 'disputed'])))
      .returning(matchRecordColumns(matches))
    return row ?? null
  }

  async deleteMatches(matchIds: readonly string[]): Promise<void> {
    if (matchIds.length === 0) return
    const { gameSessions, matches } = this.t
    await this.db.delete(gameSessions).where(inArray(gameSessions.matchId, [...matchIds]))
    await this.db.delete(matches).where(inArray(matches.id, [...matchIds]))
  }

  async setDeadline(matchId: string, deadline: Date | null): Promise<void> {
    await this.db.update(this.t.matches).set({ deadline }).where(eq(this.t.matches.id, matchId))
  }

  async hasAnyClaim(matchId: string): Promise<boolean> {
    const { matchClaims } = this.t
    const rows = await this.db.select({ matchId: matchClaims.matchId }).from(matchClaims).where(eq(matchClaims.matchId, matchId)).limit(1)
    return rows.length > 0
  }

  async cancelOpenMatches(tournamentId: string): Promise<number> {
    const { matches } = this.t
    const rows = await this.db
      .update(matches)
      .set({ status: 'cancelled' })
      .where(and(eq(matches.tournamentId, tournamentId), inArray(matches.status, ['waiting', 'running', 'disputed'])))
      .returning({ id: matches.id })
    return rows.length
  }

  async openMatchesOf(userId: string): Promise<OpenMatch[]> {
    const { matches, tournaments } = this.t
    // The caller's seat and the opponent's.
    const mine = aliased(this.t.participants, 'mine')
    const opponentSeat = aliased(this.t.participants, 'opponent_seat')
    const opponentUser = aliased(this.t.users, 'opponent_user')
    // One statement, so one snapshot: the matches, their tournaments and the
    // opponents are read as of the same commit without a transaction.
    const rows = await this.db
      .select({
        match: matchRecordColumns(matches),
        tournamentName: tournaments.name,
        gameId: matches.gameId,
        participantId: mine.id,
        opponentParticipantId: opponentSeat.id,
        opponentUserId: opponentUser.id,
        opponentUsername: opponentUser.username,
      })
      .from(mine)
      .innerJoin(matches, or(eq(matches.slot1ParticipantId, mine.id), eq(matches.slot2ParticipantId, mine.id)))
      .leftJoin(tournaments, eq(tournaments.id, matches.tournamentId))
      .leftJoin(
        opponentSeat,
        or(
          and(eq(matches.slot1ParticipantId, mine.id), eq(opponentSeat.id, matches.slot2ParticipantId)),
          and(eq(matches.slot2ParticipantId, mine.id), eq(opponentSeat.id, matches.slot1ParticipantId)),
        ),
      )
      .leftJoin(opponentUser, eq(opponentUser.id, opponentSeat.userId))
      // A tournament's in a tournament still running; a queue's or a challenge's until decided or cancelled.
      .where(and(eq(mine.userId, userId), inArray(matches.status, ['waiting', 'running', 'disputed']), or(isNull(matches.tournamentId), eq(tournaments.status, 'running'))))
      .orderBy(asc(matches.round), asc(matches.position), asc(matches.id))
    return rows.map(({ match, tournamentName, gameId, participantId, opponentParticipantId, opponentUserId, opponentUsername }) => ({
      match,
      tournamentName,
      gameId,
      participantId,
      slot: match.slot1ParticipantId === participantId ? (1 as const) : (2 as const),
      opponent:
        opponentParticipantId !== null && opponentUserId !== null && opponentUsername !== null
          ? { participantId: opponentParticipantId, userId: opponentUserId, username: opponentUsername }
          : null,
    }))
  }

  async playedBy(userId: string): Promise<PlayedMatch[]> {
    const { matches, participants, tournaments } = this.t
    // One statement, so one snapshot (as openMatchesOf).
    return this.db
      .select({ match: matchRecordColumns(matches), tournamentName: tournaments.name, gameId: matches.gameId, participantId: participants.id })
      .from(participants)
      .innerJoin(matches, or(eq(matches.slot1ParticipantId, participants.id), eq(matches.slot2ParticipantId, participants.id)))
      .leftJoin(tournaments, eq(tournaments.id, matches.tournamentId))
      .where(eq(participants.userId, userId))
      // In the order they were made: a tournament's matches by its creation, a match without one by its own.
      .orderBy(asc(sql`coalesce(${tournaments.createdAt}, ${matches.createdAt})`), asc(matches.tournamentId), asc(matches.round), asc(matches.position), asc(matches.id))
  }
}
