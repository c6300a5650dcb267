// Starting a tournament: the bracket planned by its format engine, byes
// applied, the first matches opened, every participant told. One unit of work (the
// caller's `tx`): a half-built bracket never exists.
//
// A tournament players registered for is started by a durable job due at
// its `startsAt` (src/jobs), or earlier by an operator once registration has
// closed; whichever comes first starts it, the other finds it no longer in
// registration and does nothing.
import type { Transaction } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import { insertStartingBracket, loadState } from './progress'
import { refundEntryFee, settleCancelled, underfunded } from './prizes'
import { displaysAtStart } from '../ratings/seeding'
import { seedOrder } from './seeding'
import type { TournamentRecord } from './store'

/** Fewest players a tournament starts with; with fewer left at start it is cancelled. */
export const MIN_PLAYERS_TO_START = 2

/** Marks `tournament` running, tells every participant, and stores its starting bracket (participants seeded 1..n already). */
export async function openBracket(tx: Transaction, tournament: TournamentRecord, now: Date): Promise<void> {
  await tx.games.markRunning(tournament.id, now)
  const state = await loadState(tx.games, { ...tournament, status: 'running', startedAt: now })
  for (const p of state.participants) {
    await tx.events.append({ userId: p.userId, topic: 'status', type: 'tournament.started', data: { tournamentId: tournament.id } }, now)
  }
  await insertStartingBracket(tx, state, now)
}

export type RegisteredStart = 'started' | 'cancelled' | 'not_in_registration'

/**
 * Starts a tournament that is in registration: drops the registrants who did
 * not check in (when check-in was asked; their entry fees refunded), seeds
 * the rest (registration order, the stored seed's shuffle of it, or by
 * display rating in the game at this moment, ties in registration order), and
 * opens the bracket; with fewer than two left it is cancelled instead (reason
 * `not_enough_players`, every fee refunded). With prizes its escrow must
 * cover (prizes.ts): short of that, `onUnderfunded` says what happens, `refuse`
 * (an operator's start: 409 prize_pool_underfunded, nothing written) or
 * `cancel` (the start job: cancelled, reason `prize_pool_underfunded`, every
 * fee refunded). Idempotent: a tournament no longer in registration is left
 * alone.
 */
export async function startRegistered(tx: Transaction, clock: Clock, tournamentId: string, onUnderfunded: 'refuse' | 'cancel'): Promise<RegisteredStart> {
  // In a write this reads the row for update (PostgreSQL): a job and an operator starting it take turns.
  const tournament = await tx.games.tournament(tournamentId)
  if (!tournament || tournament.status !== 'registration') return 'not_in_registration'
  const now = clock.now()
  const registered = await tx.games.participantsOf(tournamentId) // by registration number: join order
  const checkInAsked = tournament.checkInOpensAt !== null
  const dropped = checkInAsked ? registered.filter((p) => p.checkedInAt === null) : []
  const kept = checkInAsked ? registered.filter((p) => p.checkedInAt !== null) : registered
  await tx.games.removeParticipants(dropped.map((p) => p.id))
  // Every refund before any event: a refund locks its user against a deletion, and a deletion appends
  // its own event under the outbox's lock, so an event first could hold that lock while waiting for a user.
  for (const p of dropped) await refundEntryFee(tx, tournamentId, p, now, 'not_checked_in')
  for (const p of dropped) {
    await tx.events.append({ userId: p.userId, topic: 'status', type: 'tournament.dropped', data: { tournamentId, reason: 'not_checked_in' } }, now)
  }
  const cancel = async (reason: string): Promise<RegisteredStart> => {
    await tx.games.markCancelled(tournamentId, now)
    await settleCancelled(tx, tournamentId, kept, now)
    for (const p of kept) {
      await tx.events.append({ userId: p.userId, topic: 'status', type: 'tournament.cancelled', data: { tournamentId, reason } }, now)
    }
    return 'cancelled'
  }
  if (kept.length < MIN_PLAYERS_TO_START) return cancel('not_enough_players')
  const short = await underfunded(tx, tournament)
  if (short) {
    if (onUnderfunded === 'refuse') throw short
    return cancel('prize_pool_underfunded')
  }
  const seeding = tournament.seeding ?? 'registration'
  const displays = seeding === 'rating' ? await displaysAtStart(tx, tournament.gameId, kept.map((p) => p.userId), now) : null
  const ordered = seedOrder(kept, seeding, tournament.seed, displays ? (p) => displays.get(p.userId)! : undefined)
  await tx.games.assignSeeds(tournamentId, ordered.map((p) => p.id))
  await openBracket(tx, tournament, now)
  return 'started'
}
