// Status events addressed to the two players of a match (contract §4, topic
// `status`). Match events go to the match's players only: a 1024-player
// bracket must not write a thousand rows per decision.
import type { Transaction } from '../../db/storage'
import type { EventData } from '../events/catalogue'
import type { OutboxEvent } from '../events/store'
import type { MatchRecord } from './store'

type MatchPlayers = Pick<MatchRecord, 'id' | 'tournamentId' | 'round' | 'slot1ParticipantId' | 'slot2ParticipantId'>

/** The events of a match, and what each carries besides the match's tournamentId and matchId. */
export type MatchEventType = 'match.ready' | 'match.decided' | 'match.replay' | 'match.disputed' | 'match.corrected'
export type MatchEventData<K extends MatchEventType> = Omit<EventData<K>, 'tournamentId' | 'matchId'>

function matchEvent<K extends MatchEventType>(userId: string, match: MatchPlayers, type: K, data: MatchEventData<K>): OutboxEvent<K> {
  // The catalogue's data of K is these two ids and `data`: TypeScript cannot follow that through a generic K.
  return { userId, topic: 'status', type, data: { tournamentId: match.tournamentId, matchId: match.id, ...data } } as OutboxEvent<K>
}

/** Appends `type` for each player of `match`, inside the unit of work `tx` (`userIds`: the players' accounts, when the caller has read them already). */
export async function notifyMatchPlayers<K extends MatchEventType>(tx: Transaction, now: Date, match: MatchPlayers, type: K, data: MatchEventData<K>, userIds?: readonly string[]): Promise<void> {
  const ids = [match.slot1ParticipantId, match.slot2ParticipantId].filter((id): id is string => id !== null)
  if (ids.length === 0) return
  for (const userId of userIds ?? (await tx.games.usersOfParticipants(ids))) {
    await tx.events.append(matchEvent(userId, match, type, data), now)
  }
}

/** Tells both players that their match can be played now. */
export function notifyReady(tx: Transaction, now: Date, match: MatchPlayers): Promise<void> {
  return notifyMatchPlayers(tx, now, match, 'match.ready', { round: match.round })
}
