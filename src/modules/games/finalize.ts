// Finalization of a tournament with nothing left to play: standings, status
// `completed`, the prizes paid by rank and the escrow's remainder to the
// house (prizes.ts), events. Runs as a durable job (src/jobs), one unit of
// work, so a crash between the last decision and this step, or in the middle
// of its payouts, only delays it: the job runs again and pays every prize once.
import type { Transaction } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import { loadState, standingsOf } from './progress'
import { payPrizes } from './prizes'
import { publishWebhook } from '../webhooks/publish'

/** Idempotent: a tournament that is no longer finalizing is left alone. */
export async function finalizeTournament(tx: Transaction, clock: Clock, tournamentId: string): Promise<void> {
  const tournament = await tx.games.tournament(tournamentId)
  if (!tournament || tournament.status !== 'finalizing') return
  const state = await loadState(tx.games, tournament)
  const standings = standingsOf(state)
  const winner = standings[0]?.participantId ?? tournament.winnerParticipantId
  const now = clock.now()
  await tx.games.markCompleted(tournamentId, winner, now)
  await payPrizes(tx, tournament, standings, state.participants, now)
  // Each player hears the winner and their own rank, not the whole table:
  // the standings of 1024 players copied to 1024 inboxes would be a million rows of data.
  const rankOf = new Map(standings.map((s) => [s.participantId, s.rank]))
  for (const p of state.participants) {
    await tx.events.append(
      {
        userId: p.userId,
        topic: 'status',
        type: 'tournament.completed',
        data: { tournamentId, winnerParticipantId: winner, participantId: p.id, place: rankOf.get(p.id) ?? null },
      },
      now,
    )
  }
  const winnerUserId = state.participants.find((p) => p.id === winner)?.userId ?? null
  await publishWebhook(tx, { type: 'tournament.completed', data: { tournamentId, gameId: tournament.gameId, winnerParticipantId: winner, winnerUserId } }, now)
}
