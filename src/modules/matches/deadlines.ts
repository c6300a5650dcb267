// The settle job of a match deadline (contract §9), run by the job worker in
// its unit of work. A match still running at its deadline is settled: if
// exactly one participant claimed in the open round of claims, that one
// advances (`no_show`), as an agreed claim would; otherwise (nobody claimed)
// the match goes to dispute (`deadline_passed`) for an operator to resolve.
//
// Idempotent, as every job: a match decided (or disputed, or cancelled)
// before its deadline, or given another deadline since the job was queued, is
// left alone. The match is read locked (FOR NO KEY UPDATE on PostgreSQL), so a
// claim racing the job waits for it or it for the claim: one of them decides.
import type { Transaction } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import { applyDecision } from '../games/tournament-operations'
import type { DecisionContext } from '../integrity/signals'

export async function settleMatchDeadline(tx: Transaction, clock: Clock, matchId: string, deadlineMs: number, ctx: DecisionContext): Promise<void> {
  const match = await tx.matches.byId(matchId)
  if (!match || match.status !== 'running') return
  if (match.deadline?.getTime() !== deadlineMs) return
  const now = clock.now()
  const claims = await tx.matches.claimsOf(match.id, match.claimRound)
  if (claims.length === 1) {
    // Whatever the one claim said (even a draw): the one who showed up wins.
    await applyDecision(tx, now, match, { decision: 'game_advance', reason: 'no_show', outcome: 'WIN', winnerParticipantId: claims[0]!.participantId }, ctx)
    return
  }
  await applyDecision(tx, now, match, { decision: 'dispute', reason: 'deadline_passed' }, ctx)
}
