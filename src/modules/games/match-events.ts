// Status events addressed to the two players of a match (contract §4, topic
// `status`). Match events go to the match's players only: a 1024-player
// bracket must not write a thousand rows per decision.
import { inArray } from 'drizzle-orm'
import type { Executor } from '../../db/client'
import { matches, participants } from '../../db/schema'
import type { Clock } from '../../shared/clock'
import { appendEvent } from '../events/outbox'

type MatchRow = typeof matches.$inferSelect

export function notifyMatchPlayers(tx: Executor, clock: Clock, match: MatchRow, type: string, data: Record<string, unknown>): void {
  const ids = [match.slot1ParticipantId, match.slot2ParticipantId].filter((id): id is string => id !== null)
  if (ids.length === 0) return
  const userIds = tx.select({ userId: participants.userId }).from(participants).where(inArray(participants.id, ids)).all()
  for (const { userId } of userIds) {
    appendEvent(tx, clock, { userId, topic: 'status', type, data: { tournamentId: match.tournamentId, matchId: match.id, ...data } })
  }
}

/** Tells both players that their match can be played now. */
export function notifyReady(tx: Executor, clock: Clock, match: MatchRow): void {
  notifyMatchPlayers(tx, clock, match, 'match.ready', { round: match.round })
}
