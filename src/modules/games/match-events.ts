// Status events addressed to the two players of a match (contract §4, topic
// `status`). Match events go to the match's players only: a 1024-player
// bracket must not write a thousand rows per decision.
import type { Transaction } from '../../db/storage'
import type { MatchRecord } from './store'

type MatchPlayers = Pick<MatchRecord, 'id' | 'tournamentId' | 'round' | 'slot1ParticipantId' | 'slot2ParticipantId'>

/** Appends `type` for each player of `match`, inside the unit of work `tx`. */
export async function notifyMatchPlayers(tx: Transaction, now: Date, match: MatchPlayers, type: string, data: Record<string, unknown>): Promise<void> {
  const ids = [match.slot1ParticipantId, match.slot2ParticipantId].filter((id): id is string => id !== null)
  if (ids.length === 0) return
  for (const userId of await tx.games.usersOfParticipants(ids)) {
    await tx.events.append({ userId, topic: 'status', type, data: { tournamentId: match.tournamentId, matchId: match.id, ...data } }, now)
  }
}

/** Tells both players that their match can be played now. */
export function notifyReady(tx: Transaction, now: Date, match: MatchPlayers): Promise<void> {
  return notifyMatchPlayers(tx, now, match, 'match.ready', { round: match.round })
}
