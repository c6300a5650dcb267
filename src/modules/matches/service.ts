// Match sessions, result claims and the bracket moves they cause (contract §2).
// A claim is one unit of work: consume the session token, record the claim,
// decide, move the winner. Claims (and session issues) go through the group
// committer: each runs in its own savepoint of a shared IMMEDIATE transaction
// and is answered once that transaction has committed, so concurrent claims
// share one fsync. Items of a batch run one after another in one transaction,
// so two racing claims still produce exactly one decision and one bracket move.
import { and, asc, eq, inArray, ne, or } from 'drizzle-orm'
import type { Db } from '../../db/sqlite/connection'
import { createGroupCommitter, type GroupCommitter } from '../../db/sqlite/group-commit'
import { matches, participants, tournaments, users } from '../../db/schema'
import { createJobEnqueuer, JOB_KINDS, type JobEnqueuer } from '../../jobs/queue'
import type { Clock } from '../../shared/clock'
import { toIso } from '../../shared/clock'
import { randomToken, sha256Hex } from '../../shared/crypto'
import { AppError } from '../../shared/errors'
import { newId } from '../../shared/ids'
import { createEventAppender, type EventAppender } from '../events/outbox'
import { createMatchNotifier, type MatchNotifier } from '../games/match-events'
import { toMatch, type GamesService } from '../games/service'
import type { Match } from '../games/model'
import { decide, type Claim, type Decision } from './arbiter'
import { prepareMatchQueries, type MatchQueries, type MatchRow } from './queries'

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
  /**
   * Shared with the app's other writers; one of its own when not given (operator commands).
   * Must be built on `db`: the claim path's prepared statements run on `db`'s connection.
   */
  commits?: GroupCommitter
}

function sessionTokenInvalid(): AppError {
  return new AppError('session_token_invalid', 'Missing, used, expired or foreign x-session-token')
}

function alreadyClaimed(): AppError {
  return new AppError('already_claimed', 'You already claimed a result in this round of claims')
}

/** The statements a claim runs, built once per service (see queries.ts). */
interface Statements {
  q: MatchQueries
  events: EventAppender
  notifier: MatchNotifier
  enqueueJob: JobEnqueuer
}

export class MatchesService {
  private readonly commits: GroupCommitter
  private readonly statements: Statements

  constructor(private readonly deps: MatchesServiceDeps) {
    this.commits = deps.commits ?? createGroupCommitter(deps.db)
    const events = createEventAppender(deps.db)
    this.statements = {
      q: prepareMatchQueries(deps.db),
      events,
      notifier: createMatchNotifier(deps.db, events),
      enqueueJob: createJobEnqueuer(deps.db),
    }
  }

  async issueSession(input: { userId: string; gameId: string; gameKey: string | null; matchId: string }) {
    this.deps.games.verifyGameKey(input.gameId, input.gameKey)
    // Answered once the session row is durable; a refusal writes nothing.
    // The work ignores the committer's tx handle: its statements run on the
    // same connection, inside that transaction (see queries.ts).
    return this.commits.run(() => this.issueSessionIn(input))
  }

  private issueSessionIn(input: { userId: string; gameId: string; matchId: string }) {
    const { clock } = this.deps
    const { q } = this.statements
    const row = q.matchWithGame(input.matchId)
    if (!row) throw new AppError('not_found', 'No such match')
    if (row.gameId !== input.gameId) throw new AppError('invalid_game_key', 'This match belongs to another game')
    const seat = seatOf(q, row.match, input.userId)
    if (!seat) throw new AppError('not_a_participant', 'You are not a player of this match')
    if (row.match.status !== 'running') throw new AppError('match_not_running', `Match is ${row.match.status}`)
    // A session that could only ever be refused is not handed out.
    if (q.hasClaimed(row.match.id, row.match.claimRound, seat.participantId)) throw alreadyClaimed()

    const token = randomToken(32)
    const now = clock.now()
    const expiresAt = new Date(now.getTime() + this.deps.gameSessionTtlS * 1000)
    const sessionId = newId('gameSession')
    q.insertSession({
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
    return {
      sessionId,
      token,
      expiresAt: toIso(expiresAt),
      context: { tournamentId: row.match.tournamentId, matchId: row.match.id, participantId: seat.participantId, slot: seat.slot },
    }
  }

  async submitResult(input: { userId: string; gameId: string; gameKey: string | null; sessionToken: string | null; claim: ClaimInput }): Promise<DecisionView> {
    const { clock } = this.deps
    const statements = this.statements
    const { q } = statements
    this.deps.games.verifyGameKey(input.gameId, input.gameKey)
    if (!input.sessionToken) throw sessionTokenInvalid()
    const tokenHash = sha256Hex(input.sessionToken)

    // A refusal thrown in here rolls back this claim's savepoint only: it spends nothing.
    // The statements run on the committer's connection, inside its transaction.
    return this.commits.run(() => {
      const now = clock.now()
      const session = q.sessionByTokenHash(tokenHash)
      // Another user's token is refused without being spent: its owner can still use it.
      if (!session || session.userId !== input.userId || session.gameId !== input.gameId) throw sessionTokenInvalid()
      if (session.consumedAtMs !== null || session.expiresAtMs <= now.getTime()) throw sessionTokenInvalid()

      const match = q.match(session.matchId)!
      if (match.status !== 'running') throw new AppError('match_not_running', `Match is ${match.status}`)
      if (q.hasClaimed(match.id, match.claimRound, session.participantId)) throw alreadyClaimed()
      // Issued before a replay: the players must fetch new sessions (contract §2).
      if (session.claimRound !== match.claimRound) throw sessionTokenInvalid()

      // The token is spent by this call whatever the decision.
      q.consumeSession(session.id, now)
      insertClaim(q, {
        matchId: match.id,
        claimRound: match.claimRound,
        participantId: session.participantId,
        outcome: input.claim.outcome,
        winnerParticipantId: input.claim.outcome === 'WIN' ? input.claim.winnerParticipantId : null,
        score: input.claim.score ?? null,
        gameSessionId: session.id,
        createdAt: now,
      })

      const claims: Claim[] = q
        .claimsOfRound(match.id, match.claimRound)
        .map((c) =>
          c.outcome === 'WIN'
            ? { participantId: c.participantId, outcome: 'WIN', winnerParticipantId: c.winnerParticipantId! }
            : { participantId: c.participantId, outcome: 'DRAW' },
        )
      const decision = decide(
        { slot1ParticipantId: match.slot1ParticipantId!, slot2ParticipantId: match.slot2ParticipantId!, deciding: match.nextMatchId === null },
        claims,
      )
      return applyDecision(statements, clock, match, decision)
    })
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
        const decision = applyDecision(this.statements, clock, match, {
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

function insertClaim(q: MatchQueries, claim: Parameters<MatchQueries['insertClaim']>[0]): void {
  try {
    q.insertClaim(claim)
  } catch (error) {
    // The check before it answers this; the primary key is the backstop for a race.
    if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY') throw alreadyClaimed()
    throw error
  }
}

function seatOf(q: MatchQueries, match: MatchRow, userId: string): { participantId: string; slot: 1 | 2 } | null {
  const ids = [match.slot1ParticipantId, match.slot2ParticipantId].filter((id): id is string => id !== null)
  if (ids.length === 0) return null
  const participantId = q.seatOf(ids, userId)
  if (participantId === null) return null
  return { participantId, slot: participantId === match.slot1ParticipantId ? 1 : 2 }
}

/**
 * Applies a decision to the match and the bracket, in the transaction open on
 * the connection, and writes the status events. Pending changes nothing.
 */
function applyDecision(statements: Statements, clock: Clock, match: MatchRow, decision: Decision): DecisionView {
  const { q, notifier, events } = statements
  const now = clock.now()
  const base = { decision: decision.decision, reason: decision.reason, matchId: match.id, tournamentId: match.tournamentId }
  const notify = (type: string, data: Record<string, unknown>) => notifier.notifyMatchPlayers(clock, match, type, data)

  switch (decision.decision) {
    case 'pending':
      return base
    case 'replay':
      // Claims stay for the record; the next round of claims starts empty.
      q.setClaimRound(match.id, match.claimRound + 1)
      notify('match.replay', { reason: decision.reason })
      return base
    case 'dispute':
      q.markDisputed(match.id)
      notify('match.disputed', { reason: decision.reason })
      return base
    case 'game_advance':
    case 'game_advance_pending_finalization': {
      const winner = decision.winnerParticipantId
      q.markDecided(match.id, winner, now)
      notify('match.decided', { winnerParticipantId: winner })
      if (match.nextMatchId === null) {
        q.markFinalizing(match.tournamentId, winner)
        statements.enqueueJob(clock, JOB_KINDS.finalizeTournament, { tournamentId: match.tournamentId })
        for (const userId of q.participantUserIds(match.tournamentId)) {
          events(clock, { userId, topic: 'status', type: 'tournament.finalizing', data: { tournamentId: match.tournamentId, winnerParticipantId: winner } })
        }
        return { ...base, winnerParticipantId: winner }
      }
      q.setSlot(match.nextMatchId, match.nextSlot, winner)
      // The next match opens once both of its players are known.
      for (const next of q.openIfReady(match.nextMatchId)) notifier.notifyReady(clock, next)
      return { ...base, winnerParticipantId: winner, nextMatchId: match.nextMatchId }
    }
  }
}
