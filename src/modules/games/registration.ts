// Tournament registration (contract §6): the rules of a tournament players
// register for, checked when an operator creates one (planRegistration), and
// the players' own steps: register (the entry fee charged), leave (refunded)
// and check in, each one unit of work.
import { UniqueViolationError } from '../../db/errors'
import type { Storage, Transaction } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import { toIso } from '../../shared/clock'
import { AppError } from '../../shared/errors'
import { newId } from '../../shared/ids'
import { assertMayAct } from '../auth/standing'
import type { CreateTournamentBody, RegistrationView } from './model'
import { chargeEntryFee, refundEntryFee } from './prizes'
import type { Participant, Seeding, TournamentRecord } from './store'
import { isoOrNull } from './tournament-view'

/** The furthest ahead a registration tournament may start. */
export const MAX_STARTS_AHEAD_MS = 366 * 24 * 3600_000

/** 422 validation_failed with every problem found (the tournament services report them all at once). */
export function invalid(details: { path: string; message: string }[]): AppError {
  return new AppError('validation_failed', 'Request failed validation', { details })
}

/** A body's instant as a Date; the schema checked its form, this catches what the form allows and a date cannot be. */
function instant(value: string, path: string, problems: { path: string; message: string }[]): Date {
  const at = new Date(value)
  if (Number.isNaN(at.getTime())) problems.push({ path, message: 'Expected an ISO-8601 date-time' })
  return at
}

interface RegistrationPlan {
  registrationClosesAt: Date
  maxPlayers: number
  checkInOpensAt: Date | null
  checkInClosesAt: Date | null
  startsAt: Date
  seeding: Seeding
}

/**
 * The registration rules (docs/decisions.md "Tournament registration"):
 * now < closesAt <= startsAt <= now + a year; with check-in,
 * now < checkIn.opensAt < checkIn.closesAt <= startsAt. Every problem is
 * reported at once.
 */
export function planRegistration(input: CreateTournamentBody, now: Date): RegistrationPlan {
  const problems: { path: string; message: string }[] = []
  const { registration, startsAt } = input
  if (registration === undefined) problems.push({ path: 'body/registration', message: 'Required without participants' })
  if (startsAt === undefined) problems.push({ path: 'body/startsAt', message: 'Required without participants' })
  if (registration === undefined || startsAt === undefined) throw invalid(problems)
  const start = instant(startsAt, 'body/startsAt', problems)
  const closes = instant(registration.closesAt, 'body/registration/closesAt', problems)
  const opens = registration.checkIn ? instant(registration.checkIn.opensAt, 'body/registration/checkIn/opensAt', problems) : null
  const checkInCloses = registration.checkIn ? instant(registration.checkIn.closesAt, 'body/registration/checkIn/closesAt', problems) : null
  if (problems.length > 0) throw invalid(problems)
  const t = now.getTime()
  if (start.getTime() <= t) problems.push({ path: 'body/startsAt', message: 'Must be in the future' })
  if (start.getTime() > t + MAX_STARTS_AHEAD_MS) problems.push({ path: 'body/startsAt', message: 'Must be at most 366 days ahead' })
  if (closes.getTime() <= t) problems.push({ path: 'body/registration/closesAt', message: 'Must be in the future' })
  if (closes.getTime() > start.getTime()) problems.push({ path: 'body/registration/closesAt', message: 'Must be at or before startsAt' })
  if (opens && checkInCloses) {
    if (opens.getTime() <= t) problems.push({ path: 'body/registration/checkIn/opensAt', message: 'Must be in the future' })
    if (opens.getTime() >= checkInCloses.getTime()) problems.push({ path: 'body/registration/checkIn/opensAt', message: 'Must be before checkIn.closesAt' })
    if (checkInCloses.getTime() > start.getTime()) problems.push({ path: 'body/registration/checkIn/closesAt', message: 'Must be at or before startsAt' })
  }
  if (problems.length > 0) throw invalid(problems)
  return {
    registrationClosesAt: closes,
    maxPlayers: registration.maxPlayers,
    checkInOpensAt: opens,
    checkInClosesAt: checkInCloses,
    startsAt: start,
    seeding: input.seeding ?? 'registration',
  }
}

function registrationView(tournamentId: string, p: Participant): RegistrationView {
  return { tournamentId, participantId: p.id, registeredAt: toIso(p.registeredAt ?? new Date(0)), checkedInAt: isoOrNull(p.checkedInAt) }
}

function closed(tournament: TournamentRecord): AppError {
  return tournament.status === 'registration'
    ? new AppError('registration_closed', 'Registration for this tournament has closed')
    : new AppError('registration_closed', `This tournament is ${tournament.status}, not open for registration`)
}

export interface TournamentRegistrationDeps {
  storage: Storage
  clock: Clock
}

/** A player's registration for a tournament: join, leave, check in. */
export class TournamentRegistration {
  constructor(private readonly deps: TournamentRegistrationDeps) {}

  /**
   * Joins a tournament in registration (201). 409: registration_closed (past
   * closesAt, or not in registration), already_registered, tournament_full.
   * The tournament's row is updated first (its join counter): joins to one
   * tournament take turns, so two racing for the last seat cannot both win.
   */
  register(tournamentId: string, userId: string): Promise<RegistrationView> {
    const { storage, clock } = this.deps
    return storage
      .write(async (tx) => {
        const now = clock.now()
        await assertMayAct(tx.auth, userId, now)
        const tournament = await this.inRegistration(tx, tournamentId)
        if (tournament.registrationClosesAt !== null && now >= tournament.registrationClosesAt) throw closed(tournament)
        if (await tx.games.participantOf(tournamentId, userId)) throw new AppError('already_registered', 'You are registered for this tournament already')
        const number = await tx.games.nextRegistrationNumber(tournamentId)
        if ((await tx.games.countParticipants(tournamentId)) >= (tournament.maxPlayers ?? 0)) {
          throw new AppError('tournament_full', `All ${tournament.maxPlayers} places are taken`)
        }
        const participant: Participant = { id: newId('participant'), userId, seed: number, registeredAt: now, checkedInAt: null, disqualifiedAt: null }
        await tx.games.insertParticipant({ ...participant, tournamentId })
        // The fee, in this unit of work: short of it, 422 insufficient_funds and no registration.
        await chargeEntryFee(tx, tournament, participant, now)
        return registrationView(tournamentId, participant)
      })
      .catch((error: unknown) => {
        // The unique (tournament, user) index: the same player's two joins raced.
        if (error instanceof UniqueViolationError) throw new AppError('already_registered', 'You are registered for this tournament already')
        throw error
      })
  }

  /** Leaves a tournament before it starts (even after registration closed), the entry fee refunded. 409 not_registered, or registration_closed once started. */
  async leave(tournamentId: string, userId: string): Promise<void> {
    const { storage, clock } = this.deps
    await storage.write(async (tx) => {
      const now = clock.now()
      await assertMayAct(tx.auth, userId, now)
      await this.inRegistration(tx, tournamentId)
      const participant = await tx.games.participantOf(tournamentId, userId)
      if (!participant || !(await tx.games.removeParticipant(tournamentId, userId))) throw new AppError('not_registered', 'You are not registered for this tournament')
      await refundEntryFee(tx, tournamentId, participant, now, 'left')
    })
  }

  /** Checks in within [checkIn.opensAt, checkIn.closesAt); again is the same answer. 409 check_in_closed outside it (or when no check-in is asked), not_registered. */
  checkIn(tournamentId: string, userId: string): Promise<RegistrationView> {
    const { storage, clock } = this.deps
    return storage.write(async (tx) => {
      const now = clock.now()
      await assertMayAct(tx.auth, userId, now)
      const tournament = await this.inRegistration(tx, tournamentId)
      const participant = await tx.games.participantOf(tournamentId, userId)
      if (!participant) throw new AppError('not_registered', 'You are not registered for this tournament')
      const { checkInOpensAt: opens, checkInClosesAt: closes } = tournament
      if (opens === null || closes === null) throw new AppError('check_in_closed', 'This tournament asks for no check-in')
      if (now < opens || now >= closes) throw new AppError('check_in_closed', `Check-in is open from ${toIso(opens)} until ${toIso(closes)}`)
      if (participant.checkedInAt !== null) return registrationView(tournamentId, participant)
      await tx.games.markCheckedIn(participant.id, now)
      return registrationView(tournamentId, { ...participant, checkedInAt: now })
    })
  }

  private async inRegistration(tx: Transaction, tournamentId: string): Promise<TournamentRecord> {
    const tournament = await tx.games.tournament(tournamentId)
    if (!tournament) throw new AppError('not_found', 'No such tournament')
    if (tournament.status !== 'registration') throw closed(tournament)
    return tournament
  }
}
