// Finalization of a tournament whose deciding match was agreed: standings,
// status `completed`, events. Runs as a durable job (src/jobs), so a crash
// between the decision and this step only delays it.
import { eq } from 'drizzle-orm'
import type { Executor } from '../../db/sqlite/connection'
import { tournaments } from '../../db/schema'
import type { Clock } from '../../shared/clock'
import { appendEvent } from '../events/outbox'
import { loadTournament } from './service'

export interface Standing {
  participantId: string
  /** 1 for the winner, 2 for the finalist, 3 for both semi-final losers, and so on. */
  place: number
}

/** Pure: places from a decided bracket. Losers of the same round share a place. */
export function standingsOf(bracket: { round: number; slot1ParticipantId: string | null; slot2ParticipantId: string | null; winnerParticipantId: string | null }[]): Standing[] {
  const rounds = Math.max(...bracket.map((m) => m.round))
  const final = bracket.find((m) => m.round === rounds)
  if (!final?.winnerParticipantId) return []
  const standings: Standing[] = [{ participantId: final.winnerParticipantId, place: 1 }]
  for (let round = rounds; round >= 1; round--) {
    const place = 2 ** (rounds - round) + 1
    for (const m of bracket.filter((x) => x.round === round)) {
      const loser = m.winnerParticipantId === m.slot1ParticipantId ? m.slot2ParticipantId : m.slot1ParticipantId
      if (loser) standings.push({ participantId: loser, place })
    }
  }
  return standings
}

/** Idempotent: a tournament that is no longer finalizing is left alone. */
export function finalizeTournament(tx: Executor, clock: Clock, tournamentId: string): void {
  const tournament = loadTournament(tx, tournamentId)
  if (!tournament || tournament.status !== 'finalizing') return
  const standings = standingsOf(tournament.matches)
  const winner = standings[0]?.participantId ?? tournament.winnerParticipantId
  tx.update(tournaments)
    .set({ status: 'completed', winnerParticipantId: winner, completedAt: clock.now() })
    .where(eq(tournaments.id, tournamentId))
    .run()
  // Each player hears the winner and their own place, not the whole table:
  // the standings of 1024 players copied to 1024 inboxes would be a million rows of data.
  const placeOf = new Map(standings.map((s) => [s.participantId, s.place]))
  for (const p of tournament.participants) {
    appendEvent(tx, clock, {
      userId: p.userId,
      topic: 'status',
      type: 'tournament.completed',
      data: { tournamentId, winnerParticipantId: winner, participantId: p.id, place: placeOf.get(p.id) ?? null },
    })
  }
}
