/**
 * The match-result decision table: given what the two participants of a match
 * claim, decide whether the match is still pending, must be replayed, advances
 * a winner, or goes to dispute. Pure: no storage, no clock.
 *
 * What must stay true:
 * - The decision depends only on the set of claims, never on their order.
 * - A winner is only ever advanced when both participants name the same winner
 *   and that winner is one of the two slots of this match.
 * - Claims that could not have come from a well-behaved caller (more than two,
 *   from a non-participant, two from the same participant) throw instead of
 *   producing a decision: they are bugs, not disputes.
 */

export type Claim =
  | { participantId: string; outcome: 'WIN'; winnerParticipantId: string }
  | { participantId: string; outcome: 'DRAW' }

export interface ArbiterMatch {
  slot1ParticipantId: string
  slot2ParticipantId: string
  /** A draw is a result (round robin and Swiss, contract §9); elsewhere an agreed draw is played again. */
  drawIsResult: boolean
}

/**
 * The arbiter's decision. An agreed result is `game_advance`; whether it was
 * the tournament's last (`game_advance_pending_finalization`) is the format
 * engine's to say, once the result is applied.
 */
export type Decision =
  | { decision: 'pending'; reason: 'awaiting_opponent' }
  | { decision: 'replay'; reason: 'mutual_draw' }
  | { decision: 'game_advance'; reason: 'claims_agree'; outcome: 'WIN'; winnerParticipantId: string }
  | { decision: 'game_advance'; reason: 'claims_agree'; outcome: 'DRAW' }
  | { decision: 'dispute'; reason: 'claims_conflict' | 'winner_not_in_match' }

function assertWellFormed(match: ArbiterMatch, claims: readonly Claim[]): void {
  if (match.slot1ParticipantId === match.slot2ParticipantId) {
    throw new Error(`match has the same participant in both slots: ${match.slot1ParticipantId}`)
  }
  if (claims.length > 2) {
    throw new Error(`a match takes at most two claims, got ${claims.length}`)
  }
  const slots = [match.slot1ParticipantId, match.slot2ParticipantId]
  for (const claim of claims) {
    if (!slots.includes(claim.participantId)) {
      throw new Error(`claim from ${claim.participantId}, who is not in this match`)
    }
  }
  const [first, second] = claims
  if (first !== undefined && second !== undefined && first.participantId === second.participantId) {
    throw new Error(`two claims from the same participant: ${first.participantId}`)
  }
}

export function decide(match: ArbiterMatch, claims: readonly Claim[]): Decision {
  assertWellFormed(match, claims)

  const [first, second] = claims
  if (first === undefined || second === undefined) {
    return { decision: 'pending', reason: 'awaiting_opponent' }
  }

  if (first.outcome === 'DRAW' && second.outcome === 'DRAW') {
    // An elimination match cannot end in a draw, so there an agreed draw means play again.
    return match.drawIsResult ? { decision: 'game_advance', reason: 'claims_agree', outcome: 'DRAW' } : { decision: 'replay', reason: 'mutual_draw' }
  }

  if (
    first.outcome === 'WIN' &&
    second.outcome === 'WIN' &&
    first.winnerParticipantId === second.winnerParticipantId
  ) {
    const winnerParticipantId = first.winnerParticipantId
    if (winnerParticipantId !== match.slot1ParticipantId && winnerParticipantId !== match.slot2ParticipantId) {
      return { decision: 'dispute', reason: 'winner_not_in_match' }
    }
    return { decision: 'game_advance', reason: 'claims_agree', outcome: 'WIN', winnerParticipantId }
  }

  // WIN against DRAW, or WINs naming different winners (even if one of them is an outsider).
  return { decision: 'dispute', reason: 'claims_conflict' }
}
