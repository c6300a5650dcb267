// Finalization of a tournament whose deciding match was agreed: standings,
// status `completed`, events. Runs as a durable job (src/jobs), so a crash
// between the decision and this step only delays it.
import type { Transaction } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import { formatOf } from './formats'

/** Idempotent: a tournament that is no longer finalizing is left alone. */
export async function finalizeTournament(tx: Transaction, clock: Clock, tournamentId: string): Promise<void> {
  const tournament = await tx.games.tournament(tournamentId)
  if (!tournament || tournament.status !== 'finalizing') return
  const standings = formatOf(tournament.format).standings(await tx.games.bracketOf(tournamentId))
  const winner = standings[0]?.participantId ?? tournament.winnerParticipantId
  const now = clock.now()
  await tx.games.markCompleted(tournamentId, winner, now)
  // Each player hears the winner and their own place, not the whole table:
  // the standings of 1024 players copied to 1024 inboxes would be a million rows of data.
  const placeOf = new Map(standings.map((s) => [s.participantId, s.place]))
  for (const p of await tx.games.participantsOf(tournamentId)) {
    await tx.events.append(
      {
        userId: p.userId,
        topic: 'status',
        type: 'tournament.completed',
        data: { tournamentId, winnerParticipantId: winner, participantId: p.id, place: placeOf.get(p.id) ?? null },
      },
      now,
    )
  }
}
