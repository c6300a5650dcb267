// Starting a tournament: the bracket planned by its format, byes applied,
// the first matches opened, every participant told. One unit of work (the
// caller's `tx`): a half-built bracket never exists.
//
// A tournament players registered for is started by a durable job due at
// its `startsAt` (src/jobs), or earlier by an operator once registration has
// closed; whichever comes first starts it, the other finds it no longer in
// registration and does nothing.
import type { Transaction } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import { deadlineFrom, scheduleSettle } from './deadlines'
import { formatOf } from './formats'
import { notifyReady } from './match-events'
import { seedOrder } from './seeding'
import type { MatchRecord, Participant, TournamentRecord } from './store'

/** Fewest players a tournament starts with; with fewer left at start it is cancelled. */
export const MIN_PLAYERS_TO_START = 2

/** Plans and stores the bracket of `tournament` for `seeded` (seeds 1..n in order), marks it running, and announces it. */
export async function openBracket(tx: Transaction, tournament: TournamentRecord, seeded: readonly Participant[], now: Date): Promise<void> {
  const rows = formatOf(tournament.format).plan(tournament.id, seeded, now)
  // Each match opened now runs until its deadline (options.matchDeadlineS), and its settle job is queued with it.
  const deadline = deadlineFrom(now, tournament.options?.matchDeadlineS)
  for (const row of rows) row.deadline = row.status === 'running' ? deadline : null
  await tx.games.insertBracket(rows)
  for (const row of rows) if (row.status === 'running') await scheduleSettle(tx, row.id, deadline, now)
  await tx.games.markRunning(tournament.id, now)
  await announceStart(tx, tournament.id, seeded, rows, now)
}

/** The started tournament's status events: to everyone, to each bye's winner, to the players of each open match. */
async function announceStart(tx: Transaction, id: string, seeded: readonly { id: string; userId: string }[], rows: readonly MatchRecord[], now: Date): Promise<void> {
  for (const p of seeded) {
    await tx.events.append({ userId: p.userId, topic: 'status', type: 'tournament.started', data: { tournamentId: id } }, now)
  }
  const userOf = new Map(seeded.map((p) => [p.id, p.userId]))
  for (const row of rows) {
    if (row.status === 'decided' && row.winnerParticipantId) {
      await tx.events.append(
        {
          userId: userOf.get(row.winnerParticipantId)!,
          topic: 'status',
          type: 'match.decided',
          data: { tournamentId: id, matchId: row.id, winnerParticipantId: row.winnerParticipantId, reason: 'bye' },
        },
        now,
      )
    }
    if (row.status === 'running') await notifyReady(tx, now, row)
  }
}

export type RegisteredStart = 'started' | 'cancelled' | 'not_in_registration'

/**
 * Starts a tournament that is in registration: drops the registrants who did
 * not check in (when check-in was asked), seeds the rest (registration order,
 * or the stored seed's shuffle of it), and opens the bracket; with fewer than
 * two left it is cancelled instead (reason `not_enough_players`). Idempotent:
 * a tournament no longer in registration is left alone.
 */
export async function startRegistered(tx: Transaction, clock: Clock, tournamentId: string): Promise<RegisteredStart> {
  // In a write this reads the row for update (PostgreSQL): a job and an operator starting it take turns.
  const tournament = await tx.games.tournament(tournamentId)
  if (!tournament || tournament.status !== 'registration') return 'not_in_registration'
  const now = clock.now()
  const registered = await tx.games.participantsOf(tournamentId) // by registration number: join order
  const checkInAsked = tournament.checkInOpensAt !== null
  const dropped = checkInAsked ? registered.filter((p) => p.checkedInAt === null) : []
  const kept = checkInAsked ? registered.filter((p) => p.checkedInAt !== null) : registered
  await tx.games.removeParticipants(dropped.map((p) => p.id))
  for (const p of dropped) {
    await tx.events.append({ userId: p.userId, topic: 'status', type: 'tournament.dropped', data: { tournamentId, reason: 'not_checked_in' } }, now)
  }
  if (kept.length < MIN_PLAYERS_TO_START) {
    await tx.games.markCancelled(tournamentId, now)
    for (const p of kept) {
      await tx.events.append({ userId: p.userId, topic: 'status', type: 'tournament.cancelled', data: { tournamentId, reason: 'not_enough_players' } }, now)
    }
    return 'cancelled'
  }
  const ordered = seedOrder(kept, tournament.seeding ?? 'registration', tournament.seed)
  await tx.games.assignSeeds(tournamentId, ordered.map((p) => p.id))
  const seeded = ordered.map((p, index) => ({ ...p, seed: index + 1 }))
  await openBracket(tx, tournament, seeded, now)
  return 'started'
}
