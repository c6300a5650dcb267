// Tournament operations (contract §9): what an operator does to a tournament
// in play (resolve a disputed match, correct a decided result, disqualify a
// participant) and applyDecision, which every decision on a match goes
// through (a claim's, the deadline job's, an operator's), each moving the
// tournament through its format engine (progress.ts) in the caller's unit of
// work. The claims themselves stay with matches/service.ts.
import type { Storage, Transaction } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import { AppError } from '../../shared/errors'
import type { Actor } from '../audit/log'
import type { Decision } from '../matches/arbiter'
import type { DecisionResponse } from '../matches/model'
import type { SecurityEventInput } from '../security/event-log'
import { CorrectionTooLate } from './formats/engines'
import { announceDecided, announceDisputed, notifyMatchPlayers, type MatchEventData, type MatchEventType } from './match-events'
import type { Match } from './model'
import { advanceAfter, applyStep, engineMatches, keyOf, loadState, standingsOf } from './progress'
import type { MatchRecord } from './store'
import { toMatch } from './tournament-view'
import { rateCorrection, rateDecision } from '../ratings/rate'
import { settleStakes } from '../matchmaking/stakes'
import { reviewWin, type DecisionContext, type IntegrityPolicy } from '../integrity/signals'
import { holdStakeWinnings } from '../integrity/holds'
import { purseOf } from './prizes'

export interface TournamentOperationsDeps {
  storage: Storage
  clock: Clock
  /** The operator's audit trail (the security log): corrections and disqualifications, recorded once committed. */
  onSecurityEvent?: (event: SecurityEventInput) => void
  /** The integrity signals a resolved staked or prize win is reviewed by (docs/integrity.md). */
  integrity: IntegrityPolicy
}

export class TournamentOperations {
  constructor(private readonly deps: TournamentOperationsDeps) {}

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
      const decision = await applyDecision(tx, this.deps.clock.now(), match, { decision: 'game_advance', reason: 'operator_resolved', outcome: 'WIN', winnerParticipantId }, this.deps)
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
      const tooLate = (why: string) => new AppError('correction_too_late', `Too late to correct this result: ${why}`)
      const now = this.deps.clock.now()
      const result = { winnerParticipantId, outcome: 'WIN' as const, decidedBy: 'played' as const }
      if (match.tournamentId === null) {
        // A queue's or a challenge's match feeds nothing: only its result
        // changes (and the rating it moved). A staked one paid its pot with
        // the decision: the money is not taken back (docs/decisions.md).
        if (match.stake != null) throw tooLate('its stakes are paid')
        await tx.matches.markDecided(match.id, result, now)
      } else {
        await this.correctInTournament(tx, match, match.tournamentId, winnerParticipantId, now, tooLate)
      }
      await notifyMatchPlayers(tx, now, match, 'match.corrected', { winnerParticipantId, previousWinnerParticipantId: previous, reason })
      // The ratings the corrected result moved are moved again (nothing for an
      // unrated match). After the event above, as in a decision: on PostgreSQL
      // an event append takes the outbox lock (held to the commit) and every
      // rated decision takes it before its players' rows, so a correction
      // locking the rows first would deadlock with a decision of one of them.
      // The integrity signals are not evaluated again (docs/integrity.md): a flag against the old winner stays on record, and
      // holds no prize of theirs once the match is not theirs any more (integrity/holds.ts prizeFlagOf).
      await rateCorrection(tx, now, { gameId: match.gameId, match, outcome: 'WIN', winnerParticipantId })
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

  /** A correction's moves in a tournament: the format moves the bracket after it (see correct). */
  private async correctInTournament(tx: Transaction, match: MatchRecord, tournamentId: string, winnerParticipantId: string, now: Date, tooLate: (why: string) => AppError): Promise<void> {
    const tournament = (await tx.games.tournament(tournamentId))!
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
  | { decision: 'game_advance'; reason: 'server_result'; outcome: 'WIN'; winnerParticipantId: string } | { decision: 'game_advance'; reason: 'server_result'; outcome: 'DRAW' } | { decision: 'replay'; reason: 'server_draw' }

/** Evaluates a decided staked or prize win's integrity signals (integrity/signals.ts): the raised ones, the match flagged when there are any. */
function review(tx: Transaction, now: Date, match: MatchRecord, seats: readonly { participantId: string; userId: string }[], winner: string, atStake: bigint, staked: boolean, ctx: DecisionContext) {
  const won = seats.find((seat) => seat.participantId === winner)!
  const lost = seats.find((seat) => seat.participantId !== winner)!
  return reviewWin(tx, now, { matchId: match.id, gameId: match.gameId, tournamentId: match.tournamentId, winner: won, loser: lost, staked, atStake }, ctx.integrity)
}

/** A decided match's two seats (participant and account), or null for a match short of a player. */
async function seatsOf(tx: Transaction, match: MatchRecord): Promise<{ participantId: string; userId: string }[] | null> {
  const { slot1ParticipantId: one, slot2ParticipantId: two } = match
  return one === null || two === null ? null : tx.games.seatsOf([one, two])
}

/**
 * Applies a decision to the match and, for a result, to the tournament
 * through its format engine (progress.ts), in the unit of work `tx`, with the
 * status events. The result that leaves nothing to play is answered
 * `game_advance_pending_finalization`. Pending changes nothing.
 */
export async function applyDecision(tx: Transaction, now: Date, match: MatchRecord, decision: AppliedDecision, ctx: DecisionContext): Promise<DecisionResponse> {
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
      await announceDisputed(tx, now, match, decision.reason)
      return base
    case 'game_advance': {
      const winner = decision.outcome === 'WIN' ? decision.winnerParticipantId : null
      const result = { winnerParticipantId: winner, outcome: decision.outcome, decidedBy: decision.reason === 'no_show' ? ('walkover' as const) : ('played' as const) }
      await tx.matches.markDecided(match.id, result, now)
      // The two seats, read once: the event goes to their accounts, the webhook names them, and the rating moves theirs.
      const seats = await seatsOf(tx, match)
      await announceDecided(tx, now, match, { winnerParticipantId: winner, outcome: decision.outcome, reason: decision.reason }, seats)
      const answer = { ...base, outcome: decision.outcome, ...(winner === null ? {} : { winnerParticipantId: winner }) }
      if (match.tournamentId === null) {
        // A queue's or a challenge's match (contract §16): no bracket to move; rated as its terms say, its stakes settled with the decision,
        // unless a staked win raised an integrity signal (read before the rating moves): then its winnings are held for an operator.
        const signals = winner !== null && match.stake != null ? await review(tx, now, match, seats!, winner, BigInt(match.stake), true, ctx) : []
        if (match.terms?.rated === true) await rateDecision(tx, now, { gameId: match.gameId, match, outcome: decision.outcome, winnerParticipantId: winner, seats })
        if (signals.length > 0) await holdStakeWinnings(tx, now, match, seats!.find((seat) => seat.participantId === winner)!, signals)
        else await settleStakes(tx, now, match, { winnerParticipantId: winner }, seats!)
        return { ...answer, decision: 'game_advance' }
      }
      // After the decision, in the same unit of work: the engine sees it.
      const { step, tournament } = await advanceAfter(tx, match, now)
      // A prize tournament's win is reviewed now (flagged only: the prize is held at finalization, games/prizes.ts).
      const { prizes } = purseOf(tournament)
      if (winner !== null && seats !== null && prizes.length > 0) await review(tx, now, match, seats, winner, prizes.reduce((a, b) => (b > a ? b : a), 0n), false, ctx)
      // Rated once, here, whatever decided it (claims, an operator, the deadline job): byes and walkovers never come this way.
      if (tournament.options?.rated !== false) await rateDecision(tx, now, { gameId: tournament.gameId, match, outcome: decision.outcome, winnerParticipantId: winner, seats })
      return {
        ...answer,
        decision: step.finished ? 'game_advance_pending_finalization' : 'game_advance',
        ...(winner === null || match.nextMatchId === null ? {} : { nextMatchId: match.nextMatchId }),
      }
    }
  }
}
