// Match sessions, result claims and the bracket moves they cause (contract §2).
// A claim is one unit of work: consume the session token, record the claim,
// decide, move the winner. Claims (and session issues) go through the group
// committer: each runs in its own savepoint of a shared IMMEDIATE transaction
// and is answered once that transaction has committed, so concurrent claims
// share one fsync. Items of a batch run one after another in one transaction,
// so two racing claims still produce exactly one decision and one bracket move.
import { and, asc, eq, inArray, isNotNull, ne, or } from 'drizzle-orm'
import type { Db, Executor } from '../../db/client'
import { createGroupCommitter, type GroupCommitter } from '../../db/group-commit'
import { gameSessions, matchClaims, matches, participants, tournaments, users } from '../../db/schema'
import { enqueueJob, JOB_KINDS } from '../../jobs/queue'
import type { Clock } from '../../shared/clock'
import { toIso } from '../../shared/clock'
import { randomToken, sha256Hex } from '../../shared/crypto'
import { AppError } from '../../shared/errors'
import { newId } from '../../shared/ids'
import { appendEvent } from '../events/outbox'
import { notifyMatchPlayers, notifyReady } from '../games/match-events'
import { participantUserIds, toMatch, type GamesService } from '../games/service'
import type { Match } from '../games/model'
import { decide, type Claim, type Decision } from './arbiter'

type MatchRow = typeof matches.$inferSelect

export interface DecisionView {
  decision: Decision['decision']
  reason: string
  matchId: string
  tournamentId: string
  winnerParticipantId?: string
  nextMatchId?: string
}

export type ClaimInput =
  | { outcome: 'WIN'; winnerParticipantId: string; score?: Record<string, unknown> }
  | { outcome: 'DRAW'; score?: Record<string, unknown> }

export interface MatchesServiceDeps {
  db: Db
  clock: Clock
  games: GamesService
  gameSessionTtlS: number
  /** Shared with the app's other writers; one of its own when not given (operator commands). */
  commits?: GroupCommitter
}

function sessionTokenInvalid(): AppError {
  return new AppError('session_token_invalid', 'Missing, used, expired or foreign x-session-token')
}

export class MatchesService {
  private readonly commits: GroupCommitter

  constructor(private readonly deps: MatchesServiceDeps) {
    this.commits = deps.commits ?? createGroupCommitter(deps.db)
  }

  async issueSession(input: { userId: string; gameId: string; gameKey: string | null; matchId: string }) {
    this.deps.games.verifyGameKey(input.gameId, input.gameKey)
    // Answered once the session row is durable; a refusal writes nothing.
    return this.commits.run((db) => this.issueSessionIn(db, input))
  }

  private issueSessionIn(db: Executor, input: { userId: string; gameId: string; matchId: string }) {
    const { clock } = this.deps
    const row = db
      .select({ match: matches, gameId: tournaments.gameId })
      .from(matches)
      .innerJoin(tournaments, eq(tournaments.id, matches.tournamentId))
      .where(eq(matches.id, input.matchId))
      .get()
    if (!row) throw new AppError('not_found', 'No such match')
    if (row.gameId !== input.gameId) throw new AppError('invalid_game_key', 'This match belongs to another game')
    const seat = seatOf(db, row.match, input.userId)
    if (!seat) throw new AppError('not_a_participant', 'You are not a player of this match')
    if (row.match.status !== 'running') throw new AppError('match_not_running', `Match is ${row.match.status}`)
    // A session that could only ever be refused is not handed out.
    if (hasClaimed(db, row.match.id, row.match.claimRound, seat.participantId)) {
      throw new AppError('already_claimed', 'You already claimed a result in this round of claims')
    }

    const token = randomToken(32)
    const now = clock.now()
    const expiresAt = new Date(now.getTime() + this.deps.gameSessionTtlS * 1000)
    const sessionId = newId('gameSession')
    db.insert(gameSessions)
      .values({
        id: sessionId,
        tokenHash: sha256Hex(token),
        gameId: input.gameId,
        matchId: row.match.id,
        participantId: seat.participantId,
        userId: input.userId,
        claimRound: row.match.claimRound,
        expiresAt,
        createdAt: now,
      })
      .run()
    return {
      sessionId,
      token,
      expiresAt: toIso(expiresAt),
      context: { tournamentId: row.match.tournamentId, matchId: row.match.id, participantId: seat.participantId, slot: seat.slot },
    }
  }

  async submitResult(input: { userId: string; gameId: string; gameKey: string | null; sessionToken: string | null; claim: ClaimInput }): Promise<DecisionView> {
    const { clock } = this.deps
    this.deps.games.verifyGameKey(input.gameId, input.gameKey)
    if (!input.sessionToken) throw sessionTokenInvalid()
    const tokenHash = sha256Hex(input.sessionToken)

    // A refusal thrown in here rolls back this claim's savepoint only: it spends nothing.
    return this.commits.run(
      (tx) => {
        const now = clock.now()
        const session = tx.select().from(gameSessions).where(eq(gameSessions.tokenHash, tokenHash)).get()
        // Another user's token is refused without being spent: its owner can still use it.
        if (!session || session.userId !== input.userId || session.gameId !== input.gameId) throw sessionTokenInvalid()
        if (session.consumedAt || session.expiresAt.getTime() <= now.getTime()) throw sessionTokenInvalid()

        const match = tx.select().from(matches).where(eq(matches.id, session.matchId)).get()!
        if (match.status !== 'running') throw new AppError('match_not_running', `Match is ${match.status}`)
        if (hasClaimed(tx, match.id, match.claimRound, session.participantId)) {
          throw new AppError('already_claimed', 'You already claimed a result in this round of claims')
        }
        // Issued before a replay: the players must fetch new sessions (contract §2).
        if (session.claimRound !== match.claimRound) throw sessionTokenInvalid()

        // The token is spent by this call whatever the decision.
        tx.update(gameSessions).set({ consumedAt: now }).where(eq(gameSessions.id, session.id)).run()
        insertClaim(tx, {
          matchId: match.id,
          claimRound: match.claimRound,
          participantId: session.participantId,
          outcome: input.claim.outcome,
          winnerParticipantId: input.claim.outcome === 'WIN' ? input.claim.winnerParticipantId : null,
          score: input.claim.score ?? null,
          gameSessionId: session.id,
          createdAt: now,
        })

        const claims: Claim[] = tx
          .select()
          .from(matchClaims)
          .where(and(eq(matchClaims.matchId, match.id), eq(matchClaims.claimRound, match.claimRound)))
          .all()
          .map((c) =>
            c.outcome === 'WIN'
              ? { participantId: c.participantId, outcome: 'WIN', winnerParticipantId: c.winnerParticipantId! }
              : { participantId: c.participantId, outcome: 'DRAW' },
          )
        const decision = decide(
          { slot1ParticipantId: match.slot1ParticipantId!, slot2ParticipantId: match.slot2ParticipantId!, deciding: match.nextMatchId === null },
          claims,
        )
        return applyDecision(tx, clock, match, decision)
      },
    )
  }

  /** Operator decision for a disputed (or still running) match; advances like an agreed claim. */
  resolve(matchId: string, winnerParticipantId: string): { match: Match; decision: DecisionView } {
    const { db, clock } = this.deps
    return db.transaction(
      (tx) => {
        const match = tx.select().from(matches).where(eq(matches.id, matchId)).get()
        if (!match) throw new AppError('not_found', 'No such match')
        if (match.status !== 'disputed' && match.status !== 'running') {
          throw new AppError('match_not_running', `Match is ${match.status}; only disputed or running matches can be resolved`)
        }
        if (winnerParticipantId !== match.slot1ParticipantId && winnerParticipantId !== match.slot2ParticipantId) {
          throw new AppError('validation_failed', 'Request failed validation', {
            details: [{ path: 'body/winnerParticipantId', message: 'Not a participant of this match' }],
          })
        }
        const decision = applyDecision(tx, clock, match, {
          decision: match.nextMatchId === null ? 'game_advance_pending_finalization' : 'game_advance',
          reason: 'claims_agree',
          winnerParticipantId,
        })
        const view = { ...decision, reason: 'operator_resolved' }
        return { match: toMatch(tx.select().from(matches).where(eq(matches.id, matchId)).get()!), decision: view }
      },
      { behavior: 'immediate' },
    )
  }

  /** The caller's matches that are not decided yet, in tournaments still running. */
  myMatches(userId: string) {
    const { db } = this.deps
    const mine = db
      .select({ participantId: participants.id })
      .from(participants)
      .where(eq(participants.userId, userId))
      .all()
      .map((p) => p.participantId)
    if (mine.length === 0) return []
    const rows = db
      .select({ match: matches, tournament: tournaments })
      .from(matches)
      .innerJoin(tournaments, eq(tournaments.id, matches.tournamentId))
      .where(
        and(
          or(inArray(matches.slot1ParticipantId, mine), inArray(matches.slot2ParticipantId, mine)),
          ne(matches.status, 'decided'),
          eq(tournaments.status, 'running'),
        ),
      )
      .orderBy(asc(matches.round), asc(matches.position))
      .all()
    return rows.map(({ match, tournament }) => {
      const slot = mine.includes(match.slot1ParticipantId ?? '') ? (1 as const) : (2 as const)
      const participantId = slot === 1 ? match.slot1ParticipantId! : match.slot2ParticipantId!
      const opponentId = slot === 1 ? match.slot2ParticipantId : match.slot1ParticipantId
      const opponent = opponentId
        ? db
            .select({ participantId: participants.id, userId: users.id, username: users.username })
            .from(participants)
            .innerJoin(users, eq(users.id, participants.userId))
            .where(eq(participants.id, opponentId))
            .get() ?? null
        : null
      return {
        matchId: match.id,
        tournamentId: tournament.id,
        tournamentName: tournament.name,
        gameId: tournament.gameId,
        round: match.round,
        position: match.position,
        status: match.status as 'waiting' | 'running' | 'disputed',
        participantId,
        slot,
        opponent,
      }
    })
  }
}

function insertClaim(tx: Executor, claim: typeof matchClaims.$inferInsert): void {
  try {
    tx.insert(matchClaims).values(claim).run()
  } catch (error) {
    if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
      throw new AppError('already_claimed', 'You already claimed a result in this round of claims')
    }
    throw error
  }
}

function hasClaimed(db: Executor, matchId: string, claimRound: number, participantId: string): boolean {
  const claim = db
    .select({ participantId: matchClaims.participantId })
    .from(matchClaims)
    .where(and(eq(matchClaims.matchId, matchId), eq(matchClaims.claimRound, claimRound), eq(matchClaims.participantId, participantId)))
    .get()
  return claim !== undefined
}

function seatOf(db: Executor, match: MatchRow, userId: string): { participantId: string; slot: 1 | 2 } | null {
  const ids = [match.slot1ParticipantId, match.slot2ParticipantId].filter((id): id is string => id !== null)
  if (ids.length === 0) return null
  const seat = db
    .select({ id: participants.id })
    .from(participants)
    .where(and(inArray(participants.id, ids), eq(participants.userId, userId)))
    .get()
  if (!seat) return null
  return { participantId: seat.id, slot: seat.id === match.slot1ParticipantId ? 1 : 2 }
}

/**
 * Applies a decision to the match and the bracket, in the caller's
 * transaction, and writes the status events. Pending changes nothing.
 */
function applyDecision(tx: Executor, clock: Clock, match: MatchRow, decision: Decision): DecisionView {
  const now = clock.now()
  const base = { decision: decision.decision, reason: decision.reason, matchId: match.id, tournamentId: match.tournamentId }
  const notify = (type: string, data: Record<string, unknown>) => notifyMatchPlayers(tx, clock, match, type, data)

  switch (decision.decision) {
    case 'pending':
      return base
    case 'replay':
      // Claims stay for the record; the next round of claims starts empty.
      tx.update(matches).set({ claimRound: match.claimRound + 1 }).where(eq(matches.id, match.id)).run()
      notify('match.replay', { reason: decision.reason })
      return base
    case 'dispute':
      tx.update(matches).set({ status: 'disputed' }).where(eq(matches.id, match.id)).run()
      notify('match.disputed', { reason: decision.reason })
      return base
    case 'game_advance':
    case 'game_advance_pending_finalization': {
      const winner = decision.winnerParticipantId
      tx.update(matches).set({ status: 'decided', winnerParticipantId: winner, decidedAt: now }).where(eq(matches.id, match.id)).run()
      notify('match.decided', { winnerParticipantId: winner })
      if (match.nextMatchId === null) {
        tx.update(tournaments)
          .set({ status: 'finalizing', winnerParticipantId: winner })
          .where(eq(tournaments.id, match.tournamentId))
          .run()
        enqueueJob(tx, clock, JOB_KINDS.finalizeTournament, { tournamentId: match.tournamentId })
        for (const userId of participantUserIds(tx, match.tournamentId)) {
          appendEvent(tx, clock, { userId, topic: 'status', type: 'tournament.finalizing', data: { tournamentId: match.tournamentId, winnerParticipantId: winner } })
        }
        return { ...base, winnerParticipantId: winner }
      }
      const slot = match.nextSlot === 1 ? { slot1ParticipantId: winner } : { slot2ParticipantId: winner }
      tx.update(matches).set(slot).where(eq(matches.id, match.nextMatchId)).run()
      // The next match opens once both of its players are known.
      const opened = tx
        .update(matches)
        .set({ status: 'running' })
        .where(
          and(
            eq(matches.id, match.nextMatchId),
            eq(matches.status, 'waiting'),
            isNotNull(matches.slot1ParticipantId),
            isNotNull(matches.slot2ParticipantId),
          ),
        )
        .returning()
        .all()
      for (const next of opened) notifyReady(tx, clock, next)
      return { ...base, winnerParticipantId: winner, nextMatchId: match.nextMatchId }
    }
  }
}
