// Match sessions, claims and match moves on PostgreSQL.
//
// One decision per match and one bracket move across instances: every store
// call of a claim runs in the claim's unit of work, one SERIALIZABLE
// transaction, and the claim path reads what it decides on (the session, the
// match, the round's claims) through that same transaction. Two claims of one
// match each read the round's claims and insert their own, so each wrote into
// what the other read: PostgreSQL's SSI fails one of them (40001) and the
// engine runs it again from the start, when it sees both claims and decides.
// Two decisions moving winners into one next match both update that match's
// row: the second waits for the first and fails with 40001, and on its rerun
// finds the other slot filled and opens the match.
//
// Inside a write, the session and the match a claim decides on are also read
// FOR NO KEY UPDATE, so claims of one match (and two uses of one token) take
// turns on those rows instead of racing to a 40001 at commit. SSI does not
// need it; it is what keeps the claim path right without SSI (at READ
// COMMITTED each statement sees what the claim it waited for committed),
// where a burst of claims does not fail over and over on SSI's page-sized
// read locks. NO KEY UPDATE: the claims and sessions inserted meanwhile check
// their foreign key with KEY SHARE on the match, which it does not block.
import { and, asc, eq, gt, inArray, isNotNull, isNull, lt, ne, or } from 'drizzle-orm'
import { alias } from 'drizzle-orm/pg-core'
import { mapEngineError } from '../../errors'
import type { MatchRecord } from '../../../modules/games/store'
import type { ClaimContext, ClaimRecord, IssueContext, GameSession, MatchesStore, MatchResult, NewClaim, NewGameSession, OpenMatch, PlayedMatch } from '../../../modules/matches/store'
import { games, gameSessions, matchClaims, matches, participants, tournaments, users } from '../schema'
import { toUserBan } from '../../rows'
import type { PostgresScope } from '../scope'

/** The columns of a match row that make a MatchRecord (all of them, named as the domain names them). */
export const matchRecordColumns = {
  id: matches.id,
  tournamentId: matches.tournamentId,
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
}

const sessionColumns = {
  id: gameSessions.id,
  gameId: gameSessions.gameId,
  matchId: gameSessions.matchId,
  participantId: gameSessions.participantId,
  userId: gameSessions.userId,
  claimRound: gameSessions.claimRound,
  expiresAt: gameSessions.expiresAt,
  consumedAt: gameSessions.consumedAt,
}

const claimColumns = {
  participantId: matchClaims.participantId,
  outcome: matchClaims.outcome,
  winnerParticipantId: matchClaims.winnerParticipantId,
}

// The caller's seat and the opponent's, in openMatchesOf.
const mine = alias(participants, 'mine')
const opponentSeat = alias(participants, 'opponent_seat')
const opponentUser = alias(users, 'opponent_user')

export class PostgresMatchesStore implements MatchesStore {
  constructor(private readonly scope: PostgresScope) {}

  private get db() {
    return this.scope.db
  }

  /** Inside a unit of work (reads outside one have no afterCommit). */
  private get inWrite(): boolean {
    return this.scope.afterCommit !== undefined
  }

  async byId(matchId: string): Promise<MatchRecord | null> {
    const query = this.db.select(matchRecordColumns).from(matches).where(eq(matches.id, matchId))
    // In a write, what a claim or a resolve decides on: claims of one match take turns (see the top of this file).
    const [row] = await (this.inWrite ? query.for('no key update') : query)
    return row ?? null
  }

  async claimContext(gameId: string, userId: string, tokenHash: string): Promise<ClaimContext> {
    // One statement after another, in the order the claim path always read
    // them: the session locked before its match, and the round's claims read
    // once the match is locked, so they include those of a claim this one
    // waited for (READ COMMITTED).
    const [game] = await this.db.select({ keyHash: games.keyHash }).from(games).where(eq(games.id, gameId))
    const [user] = await this.db
      .select({ bannedAt: users.bannedAt, bannedUntil: users.bannedUntil, banReason: users.banReason, deletedAt: users.deletedAt })
      .from(users)
      .where(eq(users.id, userId))
    const session = await this.sessionByTokenHash(tokenHash)
    const match = session ? await this.byId(session.matchId) : null
    return {
      keyHash: game?.keyHash ?? null,
      standing: user ? { ban: toUserBan(user), deletedAt: user.deletedAt } : null,
      session,
      match,
      claims: match ? await this.claimsOf(match.id, match.claimRound) : [],
    }
  }

  async issueContext(gameId: string, matchId: string, userId: string): Promise<IssueContext> {
    // As the session issue read them one by one: the key, the match locked (see withGame), the seat, its claim.
    const [game] = await this.db.select({ keyHash: games.keyHash }).from(games).where(eq(games.id, gameId))
    const found = await this.withGame(matchId)
    const ids = found ? [found.match.slot1ParticipantId, found.match.slot2ParticipantId].filter((id): id is string => id !== null) : []
    const seat = await this.seatOf(ids, userId)
    return {
      keyHash: game?.keyHash ?? null,
      match: found?.match ?? null,
      gameId: found?.gameId ?? null,
      seat,
      claimed: found !== null && seat !== null && (await this.hasClaimed(found.match.id, found.match.claimRound, seat)),
    }
  }

  async withGame(matchId: string): Promise<{ match: MatchRecord; gameId: string } | null> {
    const query = this.db
      .select({ match: matchRecordColumns, gameId: tournaments.gameId })
      .from(matches)
      .innerJoin(tournaments, eq(tournaments.id, matches.tournamentId))
      .where(eq(matches.id, matchId))
    // In a write (a session issue), the match is locked: a correction that
    // deletes it (a Swiss round paired again) holds the same lock, so the issue
    // either waits and finds no match, or commits first and its session is
    // deleted with the match. The foreign key's KEY SHARE alone does not order them.
    const [row] = await (this.inWrite ? query.for('no key update', { of: matches }) : query)
    return row ?? null
  }

  async seatOf(participantIds: readonly string[], userId: string): Promise<string | null> {
    if (participantIds.length === 0) return null
    const [row] = await this.db
      .select({ id: participants.id })
      .from(participants)
      .where(and(inArray(participants.id, [...participantIds]), eq(participants.userId, userId)))
      .limit(1)
    return row?.id ?? null
  }

  async insertSession(session: NewGameSession): Promise<void> {
    await this.db.insert(gameSessions).values({
      id: session.id,
      tokenHash: session.tokenHash,
      gameId: session.gameId,
      matchId: session.matchId,
      participantId: session.participantId,
      userId: session.userId,
      claimRound: session.claimRound,
      expiresAt: session.expiresAt,
      createdAt: session.createdAt,
    })
  }

  async sessionByTokenHash(tokenHash: string): Promise<GameSession | null> {
    const query = this.db.select(sessionColumns).from(gameSessions).where(eq(gameSessions.tokenHash, tokenHash))
    // In a write, the claim about to spend it: two claims with one token take turns, the second finds it spent.
    const [row] = await (this.inWrite ? query.for('no key update') : query)
    return row ?? null
  }

  async consumeSession(sessionId: string, now: Date): Promise<void> {
    await this.db.update(gameSessions).set({ consumedAt: now }).where(eq(gameSessions.id, sessionId))
  }

  async openSessionIds(userId: string, gameId: string, now: Date): Promise<string[]> {
    const rows = await this.db
      .select({ id: gameSessions.id })
      .from(gameSessions)
      .where(and(eq(gameSessions.userId, userId), eq(gameSessions.gameId, gameId), isNull(gameSessions.consumedAt), gt(gameSessions.expiresAt, now)))
      .orderBy(asc(gameSessions.createdAt), asc(gameSessions.id))
    return rows.map((row) => row.id)
  }

  async deleteSessions(ids: readonly string[]): Promise<void> {
    if (ids.length > 0) await this.db.delete(gameSessions).where(inArray(gameSessions.id, [...ids]))
  }

  async pruneGameSessionsExpiredBefore(cutoff: Date): Promise<number> {
    const result = await this.db.delete(gameSessions).where(lt(gameSessions.expiresAt, cutoff))
    return result.count
  }

  async hasClaimed(matchId: string, claimRound: number, participantId: string): Promise<boolean> {
    const rows = await this.db
      .select({ participantId: matchClaims.participantId })
      .from(matchClaims)
      .where(and(eq(matchClaims.matchId, matchId), eq(matchClaims.claimRound, claimRound), eq(matchClaims.participantId, participantId)))
    return rows.length > 0
  }

  async insertClaim(claim: NewClaim): Promise<void> {
    try {
      await this.db.insert(matchClaims).values({
        matchId: claim.matchId,
        claimRound: claim.claimRound,
        participantId: claim.participantId,
        outcome: claim.outcome,
        winnerParticipantId: claim.winnerParticipantId,
        score: claim.score,
        gameSessionId: claim.gameSessionId,
        createdAt: claim.createdAt,
      })
    } catch (error) {
      // The caller answers a second claim in the round (the primary key) in
      // its own terms. A claim racing another instance's for the same key,
      // after this transaction read that there was none, fails with 40001
      // instead (SSI): that passes through unmapped, and the rerun finds the claim.
      throw mapEngineError(error)
    }
  }

  async claimsOf(matchId: string, claimRound: number): Promise<ClaimRecord[]> {
    return this.db
      .select(claimColumns)
      .from(matchClaims)
      .where(and(eq(matchClaims.matchId, matchId), eq(matchClaims.claimRound, claimRound)))
  }

  async setClaimRound(matchId: string, claimRound: number): Promise<void> {
    await this.db.update(matches).set({ claimRound }).where(eq(matches.id, matchId))
  }

  async markDisputed(matchId: string): Promise<void> {
    await this.db.update(matches).set({ status: 'disputed' }).where(eq(matches.id, matchId))
  }

  async markDecided(matchId: string, result: MatchResult, now: Date): Promise<void> {
    await this.db.update(matches).set({ status: 'decided', ...result, decidedAt: now }).where(eq(matches.id, matchId))
  }

  async fillSlot(matchId: string, slot: 1 | 2, participantId: string | null): Promise<void> {
    await this.db
      .update(matches)
      .set(slot === 1 ? { slot1ParticipantId: participantId } : { slot2ParticipantId: participantId })
      .where(eq(matches.id, matchId))
  }

  async openMatch(matchId: string, deadline: Date | null): Promise<MatchRecord | null> {
    const [row] = await this.db
      .update(matches)
      .set({ status: 'running', deadline })
      .where(and(eq(matches.id, matchId), inArray(matches.status, ['waiting', 'disputed'])))
      .returning(matchRecordColumns)
    return row ?? null
  }

  async deleteMatches(matchIds: readonly string[]): Promise<void> {
    if (matchIds.length === 0) return
    await this.db.delete(gameSessions).where(inArray(gameSessions.matchId, [...matchIds]))
    await this.db.delete(matches).where(inArray(matches.id, [...matchIds]))
  }

  async setDeadline(matchId: string, deadline: Date | null): Promise<void> {
    await this.db.update(matches).set({ deadline }).where(eq(matches.id, matchId))
  }

  async hasAnyClaim(matchId: string): Promise<boolean> {
    const rows = await this.db.select({ matchId: matchClaims.matchId }).from(matchClaims).where(eq(matchClaims.matchId, matchId)).limit(1)
    return rows.length > 0
  }

  async cancelOpenMatches(tournamentId: string): Promise<number> {
    const rows = await this.db
      .update(matches)
      .set({ status: 'cancelled' })
      .where(and(eq(matches.tournamentId, tournamentId), inArray(matches.status, ['waiting', 'running', 'disputed'])))
      .returning({ id: matches.id })
    return rows.length
  }

  async openMatchesOf(userId: string): Promise<OpenMatch[]> {
    // One statement, so one snapshot: the matches, their tournaments and the
    // opponents are read as of the same commit without a transaction.
    const rows = await this.db
      .select({
        match: matchRecordColumns,
        tournamentName: tournaments.name,
        gameId: tournaments.gameId,
        participantId: mine.id,
        opponentParticipantId: opponentSeat.id,
        opponentUserId: opponentUser.id,
        opponentUsername: opponentUser.username,
      })
      .from(mine)
      .innerJoin(matches, or(eq(matches.slot1ParticipantId, mine.id), eq(matches.slot2ParticipantId, mine.id)))
      .innerJoin(tournaments, eq(tournaments.id, matches.tournamentId))
      .leftJoin(
        opponentSeat,
        or(
          and(eq(matches.slot1ParticipantId, mine.id), eq(opponentSeat.id, matches.slot2ParticipantId)),
          and(eq(matches.slot2ParticipantId, mine.id), eq(opponentSeat.id, matches.slot1ParticipantId)),
        ),
      )
      .leftJoin(opponentUser, eq(opponentUser.id, opponentSeat.userId))
      .where(and(eq(mine.userId, userId), ne(matches.status, 'decided'), eq(tournaments.status, 'running')))
      .orderBy(asc(matches.round), asc(matches.position))
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
    // One statement, so one snapshot (as openMatchesOf).
    return this.db
      .select({ match: matchRecordColumns, tournamentName: tournaments.name, gameId: tournaments.gameId, participantId: participants.id })
      .from(participants)
      .innerJoin(matches, or(eq(matches.slot1ParticipantId, participants.id), eq(matches.slot2ParticipantId, participants.id)))
      .innerJoin(tournaments, eq(tournaments.id, matches.tournamentId))
      .where(eq(participants.userId, userId))
      .orderBy(asc(tournaments.createdAt), asc(tournaments.id), asc(matches.round), asc(matches.position))
  }
}
