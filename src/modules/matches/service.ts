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
import { assertStandingMayAct } from '../auth/standing'
import { newId } from '../../shared/ids'
import { CorrectionTooLate, engineOf, type FormatName } from '../games/formats/engines'
import { notifyMatchPlayers, type MatchEventData, type MatchEventType } from '../games/match-events'
import type { Match } from '../games/model'
import type { Actor } from '../audit/log'
import { advanceAfter, applyStep, engineMatches, keyOf, loadState, standingsOf } from '../games/progress'
import type { GameKeys } from '../games/game-keys'
import { toMatch } from '../games/service'
import type { MatchRecord } from '../games/store'
import type { SecurityEventInput } from '../security/event-log'
import { decide, type Claim, type Decision } from './arbiter'
import type { DecisionResponse } from './model'
import type { NewClaim } from './store'

/**
 * Open (unconsumed, unexpired) game sessions one account may hold for one
 * game. Issuing one more supersedes the oldest: it is deleted, and its token
 * answers 401 session_token_invalid as a used one does. A game client that
 * lost a token simply asks again, and never waits (docs/operations.md, "How
 * the database's growth is bounded").
 */
export const MAX_OPEN_GAME_SESSIONS = 5

export type ClaimInput =
  | { outcome: 'WIN'; winnerParticipantId: string; score?: Record<string, unknown> }
  | { outcome: 'DRAW'; score?: Record<string, unknown> }

export interface MatchesServiceDeps {
  storage: Storage
  clock: Clock
  /** The x-game-key check, on the key hash each unit of work reads with the rest. */
  gameKeys: GameKeys
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
  private readonly formats = new Map<string, FormatName>()

  constructor(private readonly deps: MatchesServiceDeps) {}

  /** The format `match` is played in, through `tx`. */
  private async formatFor(tx: Transaction, match: MatchRecord): Promise<FormatName> {
    let format = this.formats.get(match.tournamentId)
    if (format === undefined) {
      format = (await tx.games.formatOf(match.tournamentId))!
      if (this.formats.size >= REMEMBERED_FORMATS) this.formats.clear()
      this.formats.set(match.tournamentId, format)
    }
    return format
  }

  async issueSession(input: { userId: string; gameId: string; gameKey: string | null; matchId: string }) {
    // Answered once the session row is durable; a refusal writes nothing.
    return this.deps.storage.write(async (tx) => {
      // Every read the checks below need, at once (one statement on SQLite).
      const context = await tx.matches.issueContext(input.gameId, input.matchId, input.userId)
      this.deps.gameKeys.check(input.gameId, input.gameKey, context.keyHash)
      const { match } = context
      if (!match) throw new AppError('not_found', 'No such match')
      if (context.gameId !== input.gameId) throw new AppError('invalid_game_key', 'This match belongs to another game')
      if (context.seat === null) throw new AppError('not_a_participant', 'You are not a player of this match')
      const seat = { participantId: context.seat, slot: context.seat === match.slot1ParticipantId ? (1 as const) : (2 as const) }
      if (match.status !== 'running') throw new AppError('match_not_running', `Match is ${match.status}`)
      // A session that could only ever be refused is not handed out.
      if (context.claimed) throw alreadyClaimed()

      const token = randomToken(32)
      const now = this.deps.clock.now()
      const expiresAt = new Date(now.getTime() + this.deps.gameSessionTtlS * 1000)
      const sessionId = newId('gameSession')
      // The account's bound for this game: the oldest open sessions beyond it are superseded.
      const open = await tx.matches.openSessionIds(input.userId, input.gameId, now)
      await tx.matches.deleteSessions(open.slice(0, Math.max(0, open.length - (MAX_OPEN_GAME_SESSIONS - 1))))
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

  async submitResult(input: { userId: string; gameId: string; gameKey: string | null; sessionToken: string | null; claim: ClaimInput }): Promise<DecisionResponse> {
    const { clock } = this.deps
    // A refusal thrown in here rolls back this claim only: it spends nothing.
    return this.deps.storage.write(async (tx) => {
      const now = clock.now()
      // Every read the checks below need, at once (one statement on SQLite).
      const context = await tx.matches.claimContext(input.gameId, input.userId, input.sessionToken ? sha256Hex(input.sessionToken) : '')
      this.deps.gameKeys.check(input.gameId, input.gameKey, context.keyHash)
      if (!input.sessionToken) throw sessionTokenInvalid()
      // A game session outlives nothing: a user banned (or deleted) since the
      // bearer was checked claims nothing, and the token is not spent.
      assertStandingMayAct(context.standing, now)
      const { session, match } = context
      // Another user's token is refused without being spent: its owner can still use it.
      if (!session || session.userId !== input.userId || session.gameId !== input.gameId) throw sessionTokenInvalid()
      if (session.consumedAt !== null || session.expiresAt.getTime() <= now.getTime()) throw sessionTokenInvalid()

      // Gone: a correction paired the Swiss round again (and deleted its sessions) while this claim waited.
      if (!match) throw sessionTokenInvalid()
      if (match.status !== 'running') throw new AppError('match_not_running', `Match is ${match.status}`)
      if (context.claims.some((c) => c.participantId === session.participantId)) throw alreadyClaimed()
      // Issued before a replay: the players must fetch new sessions (contract §2).
      if (session.claimRound !== match.claimRound) throw sessionTokenInvalid()

      // The token is spent by this call whatever the decision.
      await tx.matches.consumeSession(session.id, now)
      const mine: NewClaim = {
        matchId: match.id,
        claimRound: match.claimRound,
        participantId: session.participantId,
        outcome: input.claim.outcome,
        winnerParticipantId: input.claim.outcome === 'WIN' ? input.claim.winnerParticipantId : null,
        score: input.claim.score ?? null,
        gameSessionId: session.id,
        createdAt: now,
      }
      await insertClaim(tx, mine)

      // The round's claims as read (the match was read after its lock on PostgreSQL) and this one.
      const claims: Claim[] = [...context.claims, mine].map((c) =>
        c.outcome === 'WIN'
          ? { participantId: c.participantId, outcome: 'WIN', winnerParticipantId: c.winnerParticipantId! }
          : { participantId: c.participantId, outcome: 'DRAW' },
      )
      const format = await this.formatFor(tx, match)
      const decision = decide(
        { slot1ParticipantId: match.slot1ParticipantId!, slot2ParticipantId: match.slot2ParticipantId!, drawIsResult: engineOf(format).drawsAreResults },
        claims,
      )
      return applyDecision(tx, now, match, decision)
      // The session and the match are read locked (claims of one match take
      // turns on the match's row); everything the decision writes is that match,
      // its tournament and the next match, each by an UPDATE that locks its row.
    }, { rowLocks: true })
  }

  /** Operator decision for a disputed (or still running) match; advances like an agreed claim. */
  resolve(matchId: string, winnerParticipantId: string, by: Actor): Promise<{ match: Match; decision: DecisionResponse }> {
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
      const decision = await applyDecision(tx, this.deps.clock.now(), match, { decision: 'game_advance', reason: 'operator_resolved', outcome: 'WIN', winnerParticipantId })
      await by.record(tx, { action: 'match.resolve', target: matchId, details: { tournamentId: match.tournamentId, winnerParticipantId, previousStatus: match.status } })
      return { match: toMatch((await tx.matches.byId(matchId))!), decision }
      // Row locks, as a claim: the match and then the tournament are read locked, and what follows is read fresh.
    }, { rowLocks: true })
  }

  /**
   * Operator correction of a decided result (contract §9): `winnerParticipantId`
   * (the other player, or either after a draw) becomes its winner, and the
   * format moves the bracket after it: the new winner (and loser) take the old
   * ones' slots in the matches it fed, or, in Swiss, the next round is paired
   * again. Refused with 409 correction_too_late once a match it fed is decided
   * or has a claim (in any round of claims), and once the tournament completed.
   * A fed match already running opens a new round of claims (sessions issued
   * to the player replaced stop working), restarts its deadline and tells its
   * players it is ready again. While the tournament is finalizing, a correction
   * that leaves nothing to play is taken (the finalization job reads the
   * corrected table); one that would reopen play is too late. One unit of
   * work: no half-moved bracket.
   */
  correct(matchId: string, winnerParticipantId: string, reason: string, by: Actor): Promise<{ match: Match }> {
    return this.deps.storage.write(async (tx) => {
      const match = await tx.matches.byId(matchId)
      if (!match) throw new AppError('not_found', 'No such match')
      if (match.status !== 'decided') throw new AppError('conflict', `Match is ${match.status}; only a decided result can be corrected`)
      const previous = match.winnerParticipantId
      const bye = match.slot1ParticipantId === null || match.slot2ParticipantId === null
      if (bye || (winnerParticipantId !== match.slot1ParticipantId && winnerParticipantId !== match.slot2ParticipantId) || winnerParticipantId === previous) {
        throw new AppError('validation_failed', 'Request failed validation', {
          details: [{ path: 'body/winnerParticipantId', message: bye ? 'A bye has no other player to win it' : 'Not the other participant of this match' }],
        })
      }
      const tournament = (await tx.games.tournament(match.tournamentId))!
      const tooLate = (why: string) => new AppError('correction_too_late', `Too late to correct this result: ${why}`)
      if (tournament.status !== 'running' && tournament.status !== 'finalizing') throw tooLate(`the tournament is ${tournament.status}`)
      const state = await loadState(tx.games, tournament)
      // A disqualified participant wins nothing more: a correction may not hand
      // them a match (a walkover taken from them, or a result they played), in
      // any format; the bracket would carry them on or credit them points.
      if (state.ctx.disqualified?.includes(winnerParticipantId)) {
        throw new AppError('winner_disqualified', 'This participant is disqualified: a correction cannot make them the winner')
      }
      const key = keyOf(match)
      let step
      try {
        step = state.engine.correct(state.ctx, engineMatches(state), key, winnerParticipantId)
      } catch (error) {
        if (error instanceof CorrectionTooLate) throw tooLate('a match it fed is decided')
        throw error
      }
      // Every stored match the correction would change must be unclaimed: a
      // claim is a result someone reported. Each is read locked first (FOR NO
      // KEY UPDATE on PostgreSQL), so a claim racing this correction either
      // committed before (and is seen) or waits and then finds its round of
      // claims closed or its match gone.
      for (const touched of new Set([...step.fills.map((f) => f.key), ...step.removed])) {
        const row = state.rows.get(touched)
        if (!row) continue
        // As it is now, locked (the settle job may have disputed it since the bracket was read).
        state.rows.set(touched, (await tx.matches.byId(row.id))!)
        if (await tx.matches.hasAnyClaim(row.id)) throw tooLate('a match it fed has a claim')
      }
      if (tournament.status === 'finalizing' && !step.finished) throw tooLate('the tournament is finalizing')
      const now = this.deps.clock.now()
      const result = { winnerParticipantId, outcome: 'WIN' as const, decidedBy: 'played' as const }
      await tx.matches.markDecided(match.id, result, now)
      state.rows.set(key, { ...match, ...result, decidedAt: now })
      await applyStep(tx, state, step, now)
      if (tournament.status === 'finalizing') {
        const winner = standingsOf(state)[0]!.participantId
        await tx.games.markFinalizing(tournament.id, winner)
        if (winner !== tournament.winnerParticipantId) {
          // Everyone heard the old winner: they hear the new one.
          for (const userId of await tx.games.participantUserIds(tournament.id)) {
            await tx.events.append({ userId, topic: 'status', type: 'tournament.finalizing', data: { tournamentId: tournament.id, winnerParticipantId: winner } }, now)
          }
        }
      }
      await notifyMatchPlayers(tx, now, match, 'match.corrected', { winnerParticipantId, previousWinnerParticipantId: previous, reason })
      await by.record(tx, { action: 'match.correct', target: matchId, reason, details: { tournamentId: match.tournamentId, winnerParticipantId, previousWinnerParticipantId: previous } })
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
   * (running or disputed) goes to the opponent (`disqualified`), and so does
   * every later one, as it comes: a waiting match the moment the opponent is
   * known, every remaining round-robin match at once, no more Swiss pairings.
   * The tournament goes on. Answers the match they were in: the undecided one,
   * or for a Swiss player who has played this round, their last. One unit of
   * work.
   */
  disqualify(tournamentId: string, participantId: string, reason: string, by: Actor): Promise<{ match: Match }> {
    return this.deps.storage.write(async (tx) => {
      const tournament = await tx.games.tournament(tournamentId)
      if (!tournament) throw new AppError('not_found', 'No such tournament')
      const state = await loadState(tx.games, tournament)
      const participant = state.participants.find((p) => p.id === participantId)
      if (!participant) throw new AppError('not_found', 'No such participant in this tournament')
      if (tournament.status !== 'running') throw new AppError('conflict', `Tournament is ${tournament.status}, not running`)
      if (participant.disqualifiedAt !== null) throw new AppError('conflict', 'The participant is disqualified already')
      const theirs = [...state.rows.values()].filter((m) => m.slot1ParticipantId === participantId || m.slot2ParticipantId === participantId)
      const undecided = theirs.find((m) => m.status === 'waiting' || m.status === 'running' || m.status === 'disputed')
      // Where rounds are paired as it goes, a player who has played this round is still in (the next round pairs them); elsewhere no match left means out.
      const current = undecided ?? (state.engine.plays === 'paired-rounds' ? theirs.sort((a, b) => b.round - a.round)[0] : undefined)
      if (!current) throw new AppError('conflict', 'The participant has no match left to play: already out')
      const now = this.deps.clock.now()
      await tx.games.markDisqualified(participantId, now)
      participant.disqualifiedAt = now
      state.ctx = { ...state.ctx, disqualified: [...(state.ctx.disqualified ?? []), participantId] }
      await tx.events.append({ userId: participant.userId, topic: 'status', type: 'tournament.disqualified', data: { tournamentId, participantId, reason } }, now)
      await applyStep(tx, state, state.engine.disqualify(state.ctx, engineMatches(state), participantId), now)
      await by.record(tx, { action: 'participant.disqualify', target: participantId, reason, details: { tournamentId, userId: participant.userId, matchId: current.id } })
      tx.afterCommit(() =>
        this.deps.onSecurityEvent?.({
          userId: participant.userId,
          source: 'server',
          kind: 'PARTICIPANT_DISQUALIFIED',
          level: 'WARN',
          details: { tournamentId, participantId, matchId: current.id, reason },
        }),
      )
      return { match: toMatch(state.rows.get(keyOf(current))!) }
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
      result: resultFor(match, participantId),
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

/**
 * A decision the services apply: the arbiter's, or one an operator or the
 * deadline job makes (contract §9): an operator's resolution
 * (`operator_resolved`), a walkover for a player whose opponent did not show
 * (`no_show`), a dispute for a match nobody claimed by its deadline
 * (`deadline_passed`).
 */
export type AppliedDecision =
  | Decision
  | { decision: 'game_advance'; reason: 'operator_resolved' | 'no_show'; outcome: 'WIN'; winnerParticipantId: string }
  | { decision: 'dispute'; reason: 'deadline_passed' }

/**
 * Applies a decision to the match and, for a result, to the tournament
 * through its format engine (progress.ts), in the unit of work `tx`, with the
 * status events. The result that leaves nothing to play is answered
 * `game_advance_pending_finalization`. Pending changes nothing.
 */
export async function applyDecision(tx: Transaction, now: Date, match: MatchRecord, decision: AppliedDecision): Promise<DecisionResponse> {
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
    case 'game_advance': {
      const winner = decision.outcome === 'WIN' ? decision.winnerParticipantId : null
      const result = { winnerParticipantId: winner, outcome: decision.outcome, decidedBy: decision.reason === 'no_show' ? ('walkover' as const) : ('played' as const) }
      await tx.matches.markDecided(match.id, result, now)
      await notify('match.decided', decision.reason === 'no_show' ? { winnerParticipantId: winner, outcome: decision.outcome, reason: 'no_show' } : { winnerParticipantId: winner, outcome: decision.outcome })
      // After the decision, in the same unit of work: the engine sees it.
      const step = await advanceAfter(tx, match, now)
      return {
        ...base,
        decision: step.finished ? 'game_advance_pending_finalization' : 'game_advance',
        outcome: decision.outcome,
        ...(winner === null ? {} : { winnerParticipantId: winner }),
        ...(winner === null || match.nextMatchId === null ? {} : { nextMatchId: match.nextMatchId }),
      }
    }
  }
}

/** A decided match from one player's side: a bye is won, a draw drawn; null before it is decided. */
function resultFor(match: MatchRecord, participantId: string): 'won' | 'lost' | 'drawn' | null {
  if (match.status !== 'decided') return null
  if (match.outcome === 'DRAW') return 'drawn'
  return match.winnerParticipantId === participantId ? 'won' : 'lost'
}

/** Where a match is, as the match views show it. */
function placeOf(match: Pick<MatchRecord, 'id' | 'tournamentId' | 'bracket' | 'round' | 'position'>, tournamentName: string, gameId: string) {
  return { matchId: match.id, tournamentId: match.tournamentId, tournamentName, gameId, bracket: match.bracket, round: match.round, position: match.position }
}
