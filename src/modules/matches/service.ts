// Match sessions, result claims and the bracket moves they cause (contract §2).
// A claim is one unit of work: consume the session token, record the claim,
// decide, move the winner. Claims (and session issues) are each one
// storage.write: on SQLite each runs in its own savepoint of a shared
// IMMEDIATE transaction (group commit) and is answered once that transaction
// has committed, so concurrent claims share one fsync. Units of work run one
// after another, so two racing claims still produce exactly one decision and
// one bracket move.
import { UniqueViolationError } from '../../db/errors'
import type { Storage, Transaction } from '../../db/storage'
import { JOB_KINDS } from '../../jobs/queue'
import type { Clock } from '../../shared/clock'
import { toIso } from '../../shared/clock'
import { randomToken, sha256Hex } from '../../shared/crypto'
import { AppError } from '../../shared/errors'
import { assertMayAct } from '../auth/standing'
import { newId } from '../../shared/ids'
import { formatOf, type TournamentFormat } from '../games/formats'
import { deadlineFrom, scheduleSettle } from '../games/deadlines'
import { notifyMatchPlayers, notifyReady, type MatchEventData, type MatchEventType } from '../games/match-events'
import type { Match } from '../games/model'
import { toMatch, type GamesService } from '../games/service'
import type { MatchRecord } from '../games/store'
import type { SecurityEventInput } from '../security/event-log'
import { decide, type Claim, type Decision } from './arbiter'
import type { NewClaim } from './store'

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
  storage: Storage
  clock: Clock
  games: GamesService
  gameSessionTtlS: number
  /** The operator's audit trail (the security log): corrections and disqualifications, recorded once committed. */
  onSecurityEvent?: (event: SecurityEventInput) => void
}

function sessionTokenInvalid(): AppError {
  return new AppError('session_token_invalid', 'Missing, used, expired or foreign x-session-token')
}

function alreadyClaimed(): AppError {
  return new AppError('already_claimed', 'You already claimed a result in this round of claims')
}

/** Tournaments whose format a service remembers; past this it forgets them all and reads again. */
const REMEMBERED_FORMATS = 10_000

export class MatchesService {
  /**
   * The format of each tournament a claim touched. A tournament's format
   * never changes, and reading it on every claim cost as much as reading the
   * match, so it is read once.
   */
  private readonly formats = new Map<string, TournamentFormat>()

  constructor(private readonly deps: MatchesServiceDeps) {}

  /** The format `match` is played in, through `tx`. */
  private async formatFor(tx: Transaction, match: MatchRecord): Promise<TournamentFormat> {
    let format = this.formats.get(match.tournamentId)
    if (format === undefined) {
      format = formatOf((await tx.games.formatOf(match.tournamentId))!)
      if (this.formats.size >= REMEMBERED_FORMATS) this.formats.clear()
      this.formats.set(match.tournamentId, format)
    }
    return format
  }

  async issueSession(input: { userId: string; gameId: string; gameKey: string | null; matchId: string }) {
    // Answered once the session row is durable; a refusal writes nothing.
    return this.deps.storage.write(async (tx) => {
      await this.deps.games.verifyGameKey(input.gameId, input.gameKey, tx.games)
      const found = await tx.matches.withGame(input.matchId)
      if (!found) throw new AppError('not_found', 'No such match')
      const { match } = found
      if (found.gameId !== input.gameId) throw new AppError('invalid_game_key', 'This match belongs to another game')
      const seat = await seatOf(tx, match, input.userId)
      if (!seat) throw new AppError('not_a_participant', 'You are not a player of this match')
      if (match.status !== 'running') throw new AppError('match_not_running', `Match is ${match.status}`)
      // A session that could only ever be refused is not handed out.
      if (await tx.matches.hasClaimed(match.id, match.claimRound, seat.participantId)) throw alreadyClaimed()

      const token = randomToken(32)
      const now = this.deps.clock.now()
      const expiresAt = new Date(now.getTime() + this.deps.gameSessionTtlS * 1000)
      const sessionId = newId('gameSession')
      await tx.matches.insertSession({
        id: sessionId,
        tokenHash: sha256Hex(token),
        gameId: input.gameId,
        matchId: match.id,
        participantId: seat.participantId,
        userId: input.userId,
        claimRound: match.claimRound,
        expiresAt,
        createdAt: now,
      })
      return {
        sessionId,
        token,
        expiresAt: toIso(expiresAt),
        context: { tournamentId: match.tournamentId, matchId: match.id, participantId: seat.participantId, slot: seat.slot },
      }
      // Decides on the match and the seat only; a session issued as the match is decided is refused at its claim.
    }, { rowLocks: true })
  }

  async submitResult(input: { userId: string; gameId: string; gameKey: string | null; sessionToken: string | null; claim: ClaimInput }): Promise<DecisionView> {
    const { clock } = this.deps
    // A refusal thrown in here rolls back this claim only: it spends nothing.
    return this.deps.storage.write(async (tx) => {
      await this.deps.games.verifyGameKey(input.gameId, input.gameKey, tx.games)
      if (!input.sessionToken) throw sessionTokenInvalid()
      const tokenHash = sha256Hex(input.sessionToken)
      const now = clock.now()
      // A game session outlives nothing: a user banned (or deleted) since the
      // bearer was checked claims nothing, and the token is not spent.
      await assertMayAct(tx.auth, input.userId, now)
      const session = await tx.matches.sessionByTokenHash(tokenHash)
      // Another user's token is refused without being spent: its owner can still use it.
      if (!session || session.userId !== input.userId || session.gameId !== input.gameId) throw sessionTokenInvalid()
      if (session.consumedAt !== null || session.expiresAt.getTime() <= now.getTime()) throw sessionTokenInvalid()

      const match = (await tx.matches.byId(session.matchId))!
      if (match.status !== 'running') throw new AppError('match_not_running', `Match is ${match.status}`)
      if (await tx.matches.hasClaimed(match.id, match.claimRound, session.participantId)) throw alreadyClaimed()
      // Issued before a replay: the players must fetch new sessions (contract §2).
      if (session.claimRound !== match.claimRound) throw sessionTokenInvalid()

      // The token is spent by this call whatever the decision.
      await tx.matches.consumeSession(session.id, now)
      await insertClaim(tx, {
        matchId: match.id,
        claimRound: match.claimRound,
        participantId: session.participantId,
        outcome: input.claim.outcome,
        winnerParticipantId: input.claim.outcome === 'WIN' ? input.claim.winnerParticipantId : null,
        score: input.claim.score ?? null,
        gameSessionId: session.id,
        createdAt: now,
      })

      const claims: Claim[] = (await tx.matches.claimsOf(match.id, match.claimRound)).map((c) =>
        c.outcome === 'WIN'
          ? { participantId: c.participantId, outcome: 'WIN', winnerParticipantId: c.winnerParticipantId! }
          : { participantId: c.participantId, outcome: 'DRAW' },
      )
      const format = await this.formatFor(tx, match)
      const decision = decide(
        { slot1ParticipantId: match.slot1ParticipantId!, slot2ParticipantId: match.slot2ParticipantId!, deciding: format.advance(match).kind === 'finalize' },
        claims,
      )
      return applyDecision(tx, format, now, match, decision)
      // The session and the match are read locked (claims of one match take
      // turns on the match's row); everything the decision writes is that match,
      // its tournament and the next match, each by an UPDATE that locks its row.
    }, { rowLocks: true })
  }

  /** Operator decision for a disputed (or still running) match; advances like an agreed claim. */
  resolve(matchId: string, winnerParticipantId: string): Promise<{ match: Match; decision: DecisionView }> {
    return this.deps.storage.write(async (tx) => {
      const match = await tx.matches.byId(matchId)
      if (!match) throw new AppError('not_found', 'No such match')
      if (match.status !== 'disputed' && match.status !== 'running') {
        throw new AppError('match_not_running', `Match is ${match.status}; only disputed or running matches can be resolved`)
      }
      if (winnerParticipantId !== match.slot1ParticipantId && winnerParticipantId !== match.slot2ParticipantId) {
        throw new AppError('validation_failed', 'Request failed validation', {
          details: [{ path: 'body/winnerParticipantId', message: 'Not a participant of this match' }],
        })
      }
      const format = await this.formatFor(tx, match)
      const decision = await applyDecision(tx, format, this.deps.clock.now(), match, {
        decision: format.advance(match).kind === 'finalize' ? 'game_advance_pending_finalization' : 'game_advance',
        reason: 'claims_agree',
        winnerParticipantId,
      })
      const view = { ...decision, reason: 'operator_resolved' }
      return { match: toMatch((await tx.matches.byId(matchId))!), decision: view }
    })
  }

  /**
   * Operator correction of a decided result (contract §9): the other player
   * of the match becomes its winner and takes the old winner's slot in the
   * match it fed, while that match has no claim yet (in any round) and is not
   * decided; 409 correction_too_late otherwise. A fed match already running
   * opens a new round of claims (sessions issued to the old winner stop
   * working), restarts its deadline and tells its players it is ready again.
   * The final can be corrected while the tournament is finalizing (the
   * finalization job reads the corrected bracket), not once it completed.
   * One unit of work: no half-moved bracket.
   */
  correct(matchId: string, winnerParticipantId: string, reason: string): Promise<{ match: Match }> {
    return this.deps.storage.write(async (tx) => {
      const match = await tx.matches.byId(matchId)
      if (!match) throw new AppError('not_found', 'No such match')
      if (match.status !== 'decided' || match.winnerParticipantId === null) {
        throw new AppError('conflict', `Match is ${match.status}; only a decided result can be corrected`)
      }
      const previous = match.winnerParticipantId
      const other = previous === match.slot1ParticipantId ? match.slot2ParticipantId : match.slot1ParticipantId
      if (other === null || winnerParticipantId !== other) {
        throw new AppError('validation_failed', 'Request failed validation', {
          details: [{ path: 'body/winnerParticipantId', message: other === null ? 'A bye has no other player to win it' : 'Not the other participant of this match' }],
        })
      }
      const tournament = (await tx.games.tournament(match.tournamentId))!
      const now = this.deps.clock.now()
      const tooLate = (why: string) => new AppError('correction_too_late', `Too late to correct this result: ${why}`)
      if (tournament.status !== 'running' && tournament.status !== 'finalizing') throw tooLate(`the tournament is ${tournament.status}`)
      const format = await this.formatFor(tx, match)
      const advance = format.advance(match)
      await tx.matches.markDecided(match.id, winnerParticipantId, now)
      if (advance.kind === 'finalize') {
        await tx.games.markFinalizing(match.tournamentId, winnerParticipantId)
      } else {
        const fed = (await tx.matches.byId(advance.matchId))!
        if (fed.status !== 'waiting' && fed.status !== 'running') throw tooLate(`the match it fed is ${fed.status}`)
        if (await tx.matches.hasAnyClaim(fed.id)) throw tooLate('the match it fed has a claim')
        await tx.matches.fillSlot(fed.id, advance.slot, winnerParticipantId)
        if (fed.status === 'running') {
          const moved = (await tx.matches.byId(fed.id))!
          await tx.matches.setClaimRound(fed.id, fed.claimRound + 1)
          const deadline = deadlineFrom(now, await tx.games.matchDeadlineOf(fed.tournamentId))
          await tx.matches.setDeadline(fed.id, deadline)
          await notifyReady(tx, now, moved)
          await scheduleSettle(tx, fed.id, deadline, now)
        }
      }
      await notifyMatchPlayers(tx, now, match, 'match.corrected', { winnerParticipantId, previousWinnerParticipantId: previous, reason })
      tx.afterCommit(() =>
        this.deps.onSecurityEvent?.({
          userId: null,
          source: 'server',
          kind: 'MATCH_CORRECTED',
          level: 'WARN',
          details: { tournamentId: match.tournamentId, matchId, winnerParticipantId, previousWinnerParticipantId: previous, reason },
        }),
      )
      return { match: toMatch((await tx.matches.byId(matchId))!) }
    }, { rowLocks: true })
  }

  /**
   * Operator disqualification (contract §9): the participant's current match
   * (waiting, running or disputed) goes to the opponent (`disqualified`). When
   * the opponent is not known yet, the match is marked and becomes that
   * walkover the moment the opponent arrives. The tournament goes on. One unit
   * of work.
   */
  disqualify(tournamentId: string, participantId: string, reason: string): Promise<{ match: Match }> {
    return this.deps.storage.write(async (tx) => {
      const tournament = await tx.games.tournament(tournamentId)
      if (!tournament) throw new AppError('not_found', 'No such tournament')
      const participant = (await tx.games.participantsOf(tournamentId)).find((p) => p.id === participantId)
      if (!participant) throw new AppError('not_found', 'No such participant in this tournament')
      if (tournament.status !== 'running') throw new AppError('conflict', `Tournament is ${tournament.status}, not running`)
      const current = (await tx.games.bracketOf(tournamentId)).find(
        (m) => (m.slot1ParticipantId === participantId || m.slot2ParticipantId === participantId) && (m.status === 'waiting' || m.status === 'running' || m.status === 'disputed'),
      )
      if (!current) throw new AppError('conflict', 'The participant has no match left to play: already out')
      const now = this.deps.clock.now()
      await tx.events.append({ userId: participant.userId, topic: 'status', type: 'tournament.disqualified', data: { tournamentId, participantId, reason } }, now)
      const match = (await tx.matches.byId(current.id))!
      const opponent = match.slot1ParticipantId === participantId ? match.slot2ParticipantId : match.slot1ParticipantId
      if (match.status === 'waiting' || opponent === null) {
        await tx.matches.setForfeit(match.id, participantId)
      } else {
        const format = await this.formatFor(tx, match)
        await applyDecision(tx, format, now, match, walkover(format, match, opponent, 'disqualified'))
      }
      tx.afterCommit(() =>
        this.deps.onSecurityEvent?.({
          userId: participant.userId,
          source: 'server',
          kind: 'PARTICIPANT_DISQUALIFIED',
          level: 'WARN',
          details: { tournamentId, participantId, matchId: match.id, reason },
        }),
      )
      return { match: toMatch((await tx.matches.byId(match.id))!) }
    }, { rowLocks: true })
  }

  /**
   * Every match the user was seated in, whatever its state (the account
   * export): `result` is `won` or `lost` once decided (a bye is won), null
   * before.
   */
  async playedBy(userId: string) {
    const played = await this.deps.storage.read.matches.playedBy(userId)
    return played.map(({ match, tournamentName, gameId, participantId }) => ({
      ...placeOf(match, tournamentName, gameId),
      status: match.status,
      participantId,
      opponentParticipantId: (match.slot1ParticipantId === participantId ? match.slot2ParticipantId : match.slot1ParticipantId) ?? null,
      winnerParticipantId: match.winnerParticipantId,
      result: match.status !== 'decided' ? null : match.winnerParticipantId === participantId ? ('won' as const) : ('lost' as const),
      decidedAt: match.decidedAt === null ? null : toIso(match.decidedAt),
    }))
  }

  /** The caller's matches that are not decided yet, in tournaments still running. */
  async myMatches(userId: string) {
    const open = await this.deps.storage.read.matches.openMatchesOf(userId)
    return open.map(({ match, tournamentName, gameId, participantId, slot, opponent }) => ({
      ...placeOf(match, tournamentName, gameId),
      status: match.status as 'waiting' | 'running' | 'disputed',
      participantId,
      slot,
      opponent,
    }))
  }
}

async function insertClaim(tx: Transaction, claim: NewClaim): Promise<void> {
  try {
    await tx.matches.insertClaim(claim)
  } catch (error) {
    // The check before it answers this; the primary key is the backstop for a race.
    if (error instanceof UniqueViolationError) throw alreadyClaimed()
    throw error
  }
}

async function seatOf(tx: Transaction, match: MatchRecord, userId: string): Promise<{ participantId: string; slot: 1 | 2 } | null> {
  const ids = [match.slot1ParticipantId, match.slot2ParticipantId].filter((id): id is string => id !== null)
  if (ids.length === 0) return null
  const participantId = await tx.matches.seatOf(ids, userId)
  if (participantId === null) return null
  return { participantId, slot: participantId === match.slot1ParticipantId ? 1 : 2 }
}

/**
 * A decision the services apply: the arbiter's, or one an operator or the
 * deadline job makes (contract §9): a walkover for a player whose opponent did
 * not show (`no_show`) or was disqualified (`disqualified`), a dispute for a
 * match nobody claimed by its deadline (`deadline_passed`).
 */
export type AppliedDecision =
  | Decision
  | { decision: 'game_advance' | 'game_advance_pending_finalization'; reason: 'no_show' | 'disqualified'; winnerParticipantId: string }
  | { decision: 'dispute'; reason: 'deadline_passed' }

/** The walkover decision for `winner` of `match` in `format`: deferred to finalization when it is the deciding match. */
export function walkover(format: TournamentFormat, match: MatchRecord, winner: string, reason: 'no_show' | 'disqualified'): AppliedDecision {
  return { decision: format.advance(match).kind === 'finalize' ? 'game_advance_pending_finalization' : 'game_advance', reason, winnerParticipantId: winner }
}

/**
 * Applies a decision to the match and the bracket, in the unit of work `tx`,
 * and writes the status events. Pending changes nothing.
 */
export async function applyDecision(tx: Transaction, format: TournamentFormat, now: Date, match: MatchRecord, decision: AppliedDecision): Promise<DecisionView> {
  const base = { decision: decision.decision, reason: decision.reason, matchId: match.id, tournamentId: match.tournamentId }
  const notify = <K extends MatchEventType>(type: K, data: MatchEventData<K>) => notifyMatchPlayers(tx, now, match, type, data)

  switch (decision.decision) {
    case 'pending':
      return base
    case 'replay':
      // Claims stay for the record; the next round of claims starts empty.
      await tx.matches.setClaimRound(match.id, match.claimRound + 1)
      await notify('match.replay', { reason: decision.reason })
      return base
    case 'dispute':
      await tx.matches.markDisputed(match.id)
      await notify('match.disputed', { reason: decision.reason })
      return base
    case 'game_advance':
    case 'game_advance_pending_finalization': {
      const winner = decision.winnerParticipantId
      await tx.matches.markDecided(match.id, winner, now)
      await notify('match.decided', decision.reason === 'claims_agree' ? { winnerParticipantId: winner } : { winnerParticipantId: winner, reason: decision.reason })
      const advance = format.advance(match)
      if (advance.kind === 'finalize') {
        await tx.games.markFinalizing(match.tournamentId, winner)
        await tx.jobs.enqueue(JOB_KINDS.finalizeTournament, { tournamentId: match.tournamentId }, now)
        for (const userId of await tx.games.participantUserIds(match.tournamentId)) {
          await tx.events.append({ userId, topic: 'status', type: 'tournament.finalizing', data: { tournamentId: match.tournamentId, winnerParticipantId: winner } }, now)
        }
        return { ...base, winnerParticipantId: winner }
      }
      await tx.matches.fillSlot(advance.matchId, advance.slot, winner)
      // The next match opens once both of its players are known.
      await openIfReady(tx, format, now, match.tournamentId, advance.matchId)
      return { ...base, winnerParticipantId: winner, nextMatchId: advance.matchId }
    }
  }
}

/**
 * Opens `matchId` if both its players are known: with its deadline and the
 * job that settles it, and `match.ready` to both; or, when a disqualified
 * participant sits in it, decided at once for the other (a walkover, which may
 * open the match after it in turn).
 */
async function openIfReady(tx: Transaction, format: TournamentFormat, now: Date, tournamentId: string, matchId: string): Promise<void> {
  const deadline = deadlineFrom(now, await tx.games.matchDeadlineOf(tournamentId))
  const opened = await tx.matches.openIfReady(matchId, deadline)
  if (!opened) return
  const forfeit = opened.forfeitParticipantId
  if (forfeit && (forfeit === opened.slot1ParticipantId || forfeit === opened.slot2ParticipantId)) {
    const winner = forfeit === opened.slot1ParticipantId ? opened.slot2ParticipantId! : opened.slot1ParticipantId!
    await applyDecision(tx, format, now, opened, walkover(format, opened, winner, 'disqualified'))
    return
  }
  await notifyReady(tx, now, opened)
  await scheduleSettle(tx, opened.id, deadline, now)
}

/** Where a match is, as the match views show it. */
function placeOf(match: Pick<MatchRecord, 'id' | 'tournamentId' | 'round' | 'position'>, tournamentName: string, gameId: string) {
  return { matchId: match.id, tournamentId: match.tournamentId, tournamentName, gameId, round: match.round, position: match.position }
}
