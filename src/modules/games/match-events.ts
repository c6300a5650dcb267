// Status events addressed to the two players of a match (contract §4, topic
// `status`). Match events go to the match's players only: a 1024-player
// bracket must not write a thousand rows per decision.
import { inArray } from 'drizzle-orm'
import type { Db, Executor } from '../../db/sqlite/connection'
import { matches, participants } from '../../db/schema'
import type { Clock } from '../../shared/clock'
import { appendEvent, type EventAppender } from '../events/outbox'

type MatchRow = typeof matches.$inferSelect
type MatchPlayers = Pick<MatchRow, 'id' | 'tournamentId' | 'round' | 'slot1ParticipantId' | 'slot2ParticipantId'>

function matchParticipantIds(match: MatchPlayers): string[] {
  return [match.slot1ParticipantId, match.slot2ParticipantId].filter((id): id is string => id !== null)
}

export function notifyMatchPlayers(tx: Executor, clock: Clock, match: MatchPlayers, type: string, data: Record<string, unknown>): void {
  const ids = matchParticipantIds(match)
  if (ids.length === 0) return
  const userIds = tx.select({ userId: participants.userId }).from(participants).where(inArray(participants.id, ids)).all()
  for (const { userId } of userIds) {
    appendEvent(tx, clock, { userId, topic: 'status', type, data: { tournamentId: match.tournamentId, matchId: match.id, ...data } })
  }
}

/** Tells both players that their match can be played now. */
export function notifyReady(tx: Executor, clock: Clock, match: MatchPlayers): void {
  notifyMatchPlayers(tx, clock, match, 'match.ready', { round: match.round })
}

export interface MatchNotifier {
  notifyMatchPlayers(clock: Clock, match: MatchPlayers, type: string, data: Record<string, unknown>): void
  notifyReady(clock: Clock, match: MatchPlayers): void
}

/**
 * The functions above with their queries compiled once, for the result-claim
 * path (building queries cost more CPU there than running them). Same rows,
 * same order: the lookups are the ones the query builder emits, `IN` with one
 * or two ids. Runs on `db`'s one connection, inside whatever transaction is open.
 */
export function createMatchNotifier(db: Db, append: EventAppender): MatchNotifier {
  type Row = { userId: string }
  const usersOfOne = db.$client.prepare<Row, { a: string }>('SELECT user_id AS userId FROM participants WHERE id IN ($a)')
  const usersOfTwo = db.$client.prepare<Row, { a: string; b: string }>('SELECT user_id AS userId FROM participants WHERE id IN ($a, $b)')
  const notify: MatchNotifier['notifyMatchPlayers'] = (clock, match, type, data) => {
    const [a, b] = matchParticipantIds(match)
    if (a === undefined) return
    const rows = b === undefined ? usersOfOne.all({ a }) : usersOfTwo.all({ a, b })
    for (const { userId } of rows) {
      append(clock, { userId, topic: 'status', type, data: { tournamentId: match.tournamentId, matchId: match.id, ...data } })
    }
  }
  return {
    notifyMatchPlayers: notify,
    notifyReady: (clock, match) => notify(clock, match, 'match.ready', { round: match.round }),
  }
}
