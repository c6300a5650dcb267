// Status events addressed to the two players of a match (contract §4, topic
// `status`). Match events go to the match's players only: a 1024-player
// bracket must not write a thousand rows per decision.
import type { Transaction } from '../../db/storage'
import type { EventData } from '../events/catalogue'
import type { OutboxEvent } from '../events/store'
import type { WebhookCatalogue } from '../webhooks/catalogue'
import { publishWebhook } from '../webhooks/publish'
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

type DecidedMatch = MatchPlayers & Pick<MatchRecord, 'gameId'>
type Seat = { participantId: string; userId: string }

/** A decision as the studio's `match.decided` names it. */
export interface MatchDecided {
  winnerParticipantId: string | null
  outcome: 'WIN' | 'DRAW'
  reason: WebhookCatalogue['match.decided']['reason']
}

/**
 * A match was decided: `match.decided` to its players and the studio's
 * `match.decided` webhook, in the decision's unit of work. Every way a match
 * is decided comes here once (applyDecision, a bye, a disqualification's
 * walkover); a correction does not (its players hear `match.corrected`).
 * `seats`: the match's seats, when the caller has read them.
 */
export async function announceDecided(tx: Transaction, now: Date, match: DecidedMatch, decided: MatchDecided, seats?: readonly Seat[] | null): Promise<void> {
  const ids = [match.slot1ParticipantId, match.slot2ParticipantId].filter((id): id is string => id !== null)
  const read = seats ?? (await tx.games.seatsOf(ids))
  // In slot order, whatever order the store answered in.
  const players = ids.map((participantId) => read.find((seat) => seat.participantId === participantId)).filter((seat): seat is Seat => seat !== undefined)
  const { winnerParticipantId, outcome, reason } = decided
  // The players hear a reason only when it is not a played result (agreed claims, a server's result, an operator's resolve).
  const told = reason === 'bye' || reason === 'no_show' || reason === 'disqualified' ? { winnerParticipantId, outcome, reason } : { winnerParticipantId, outcome }
  await notifyMatchPlayers(tx, now, match, 'match.decided', told, players.map((seat) => seat.userId))
  const winnerUserId = players.find((seat) => seat.participantId === winnerParticipantId)?.userId ?? null
  await publishWebhook(
    tx,
    {
      type: 'match.decided',
      data: { matchId: match.id, gameId: match.gameId, tournamentId: match.tournamentId, outcome, winnerParticipantId, winnerUserId, players: players.map(({ participantId, userId }) => ({ participantId, userId })), reason },
    },
    now,
  )
}

/** A match went to dispute: `match.disputed` to its players and the studio's webhook, in the unit of work that disputes it. */
export async function announceDisputed(tx: Transaction, now: Date, match: DecidedMatch, reason: WebhookCatalogue['match.disputed']['reason']): Promise<void> {
  await notifyMatchPlayers(tx, now, match, 'match.disputed', { reason })
  await publishWebhook(tx, { type: 'match.disputed', data: { matchId: match.id, gameId: match.gameId, tournamentId: match.tournamentId, reason } }, now)
}

/** Tells both players that their match can be played now. */
export function notifyReady(tx: Transaction, now: Date, match: MatchPlayers): Promise<void> {
  return notifyMatchPlayers(tx, now, match, 'match.ready', { round: match.round })
}
