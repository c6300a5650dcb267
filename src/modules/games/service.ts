// Games, their keys, and tournaments (contract §2 and §6). Knows nothing of HTTP.
import type { Storage, Transaction } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import { toIso } from '../../shared/clock'
import { AppError } from '../../shared/errors'
import { newId } from '../../shared/ids'
import type { SecurityEventInput } from '../security/event-log'
import type { Actor } from '../audit/log'
import { UniqueViolationError } from '../../db/errors'
import { isId } from '../../shared/ids'
import { assertMayAct } from '../auth/standing'
import { JOB_KINDS } from '../../jobs/queue'
import type { CreateTournamentBody, Match, Registration, RegistrationView, Tournament, TournamentsPage } from './model'
import { newSeedingSeed } from './seeding'
import { issueGameKey } from './game-keys'
import { BRACKETS, engineOf, FORMAT_OPTIONS, ownerOf, type FormatOptionName, type OptionProblem } from './formats/engines'
import { loadState, standingsOf } from './progress'
import { openBracket, startRegistered } from './start'
import { chargeEntryFee, formatOptions, fundPrizePool, planPurse, purseOf, refundEntryFee, settleCancelled, underfunded, PRIZE_ASSET, type PrizePool } from './prizes'
import { formatAmount, MoneyFormatError, parsePositiveAmount } from '../../shared/money'
import type { GamesStore, MatchRecord, Participant, TournamentRecord, TournamentStatus } from './store'

export function toMatch(row: MatchRecord): Match {
  return {
    id: row.id,
    bracket: row.bracket,
    round: row.round,
    position: row.position,
    status: row.status,
    slot1ParticipantId: row.slot1ParticipantId,
    slot2ParticipantId: row.slot2ParticipantId,
    winnerParticipantId: row.winnerParticipantId,
    outcome: row.status === 'decided' ? (row.outcome ?? 'WIN') : null,
    nextMatchId: row.nextMatchId,
    loserNextMatchId: row.loserNextMatchId,
    deadline: row.deadline ? toIso(row.deadline) : null,
  }
}

/** The order brackets are listed in: the way a tournament is played (each format lists its brackets so). */
const BRACKET_ORDER = new Map<string, number>(BRACKETS.map((bracket, i) => [bracket, i]))

/** Standings are shown once the tournament plays (live where results only feed the table; the engines give none for an unfinished bracket). */
const HAS_STANDINGS: readonly TournamentStatus[] = ['running', 'finalizing', 'completed']

/** The tournament object of contract §6 and §9, or null. */
export async function loadTournament(games: GamesStore, id: string): Promise<Tournament | null> {
  const row = await games.tournament(id)
  if (!row) return null
  const state = await loadState(games, row)
  const matches = [...state.rows.values()].sort((a, b) => BRACKET_ORDER.get(a.bracket)! - BRACKET_ORDER.get(b.bracket)! || a.round - b.round || a.position - b.position)
  return {
    id: row.id,
    gameId: row.gameId,
    name: row.name,
    format: row.format,
    status: row.status,
    participants: state.participants.map((p) => ({
      id: p.id,
      userId: p.userId,
      seed: p.seed,
      registeredAt: isoOrNull(p.registeredAt),
      checkedInAt: isoOrNull(p.checkedInAt),
      disqualifiedAt: isoOrNull(p.disqualifiedAt),
    })),
    matches: matches.map(toMatch),
    standings: HAS_STANDINGS.includes(row.status) ? standingsOf(state) : [],
    winnerParticipantId: row.winnerParticipantId,
    registration: registrationOf(row),
    options: formatOptions(row.options),
    ...purseView(row),
  }
}

/** The entry fee and prizes as the API shows them (decimal strings; null and [] for none). */
export function purseView(row: Pick<TournamentRecord, 'options'>): { entryFee: string | null; prizes: string[] } {
  const purse = purseOf(row)
  return { entryFee: purse.entryFee === null ? null : formatAmount(purse.entryFee, PRIZE_ASSET), prizes: purse.prizes.map((p) => formatAmount(p, PRIZE_ASSET)) }
}

/** A new tournament's stored options: the format's, and its fee and prizes; null for none. */
function storedOptions(input: CreateTournamentBody, purse: ReturnType<typeof planPurse>): TournamentRecord['options'] {
  const options = { ...(input.options ?? {}), ...purse }
  return Object.keys(options).length > 0 ? options : null
}

const isoOrNull = (at: Date | null): string | null => (at === null ? null : toIso(at))

/** A tournament's registration as the API shows it; null for one created with its participants. */
export function registrationOf(row: TournamentRecord): Registration | null {
  if (row.registrationClosesAt === null || row.startsAt === null || row.maxPlayers === null) return null
  return {
    closesAt: toIso(row.registrationClosesAt),
    maxPlayers: row.maxPlayers,
    checkIn: row.checkInOpensAt && row.checkInClosesAt ? { opensAt: toIso(row.checkInOpensAt), closesAt: toIso(row.checkInClosesAt) } : null,
    startsAt: toIso(row.startsAt),
    seeding: row.seeding ?? 'registration',
    // Shown once started: known before, it would let a registrant predict the bracket.
    seed: row.seeding === 'random' && row.startedAt !== null ? row.seed : null,
  }
}

/** What the audit record of a tournament's creation says: its game, name and format, its money, and how players get in. */
function createdDetails(input: CreateTournamentBody, players: Record<string, unknown>): Record<string, unknown> {
  return {
    gameId: input.gameId,
    name: input.name,
    format: input.format,
    ...players,
    ...(input.entryFee !== undefined ? { entryFee: input.entryFee } : {}),
    ...(input.prizes !== undefined && input.prizes.length > 0 ? { prizes: input.prizes } : {}),
  }
}

/** The furthest ahead a registration tournament may start. */
export const MAX_STARTS_AHEAD_MS = 366 * 24 * 3600_000
export const TOURNAMENTS_PAGE_DEFAULT = 50

function invalid(details: { path: string; message: string }[]): AppError {
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
  seeding: 'registration' | 'random'
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

/**
 * The options of a new tournament against its format, as the formats declare
 * them (formats/engines.ts): each format's own options only, the format's
 * player cap, then each given option's own checks (`players`: the
 * participants listed, or at most `maxPlayers` for a registration).
 */
export function checkOptions(input: Pick<CreateTournamentBody, 'format' | 'options'>, players: number, playersPath: string): void {
  const options = input.options ?? {}
  const engine = engineOf(input.format)
  const given = (Object.keys(FORMAT_OPTIONS) as FormatOptionName[]).filter((option) => options[option] !== undefined)
  const problems: OptionProblem[] = []
  for (const option of given) {
    const owner = ownerOf(option)
    if (owner !== engine) problems.push({ path: `body/options/${option}`, message: `Only for ${owner.name}` })
  }
  if (engine.maxPlayers && players > engine.maxPlayers.limit) problems.push({ path: playersPath, message: engine.maxPlayers.problem })
  // An option's own checks run wherever it is given, also in another format's tournament (reported beside the problem above).
  for (const owner of new Set(given.map(ownerOf))) problems.push(...(owner.optionProblems?.(options, players) ?? []))
  if (problems.length > 0) throw invalid(problems)
}

function registrationView(tournamentId: string, p: Participant): RegistrationView {
  return { tournamentId, participantId: p.id, registeredAt: toIso(p.registeredAt ?? new Date(0)), checkedInAt: isoOrNull(p.checkedInAt) }
}

const NO_REGISTRATION = { registrationClosesAt: null, maxPlayers: null, checkInOpensAt: null, checkInClosesAt: null, startsAt: null, seeding: null, seed: null } as const

function closed(tournament: TournamentRecord): AppError {
  return tournament.status === 'registration'
    ? new AppError('registration_closed', 'Registration for this tournament has closed')
    : new AppError('registration_closed', `This tournament is ${tournament.status}, not open for registration`)
}

/**
 * The refunds of a cancelled tournament (contract §9, §10; prizes.ts): every
 * participant's entry fee back and the operators' funding returned, in the
 * cancel's unit of work, so a cancel and its refunds commit together.
 */
async function refundEntryFees(tx: Transaction, tournamentId: string, now: Date): Promise<void> {
  await settleCancelled(tx, tournamentId, await tx.games.participantsOf(tournamentId), now)
}

/** The longest funding reference (the route's schema says the same). */
export const FUNDING_REFERENCE_MAX = 128

export interface GamesServiceDeps {
  storage: Storage
  clock: Clock
  onSecurityEvent?: (event: SecurityEventInput) => void
}

export class GamesService {
  constructor(private readonly deps: GamesServiceDeps) {}

  /** Creates a game and its key (shown once; the audit record names the game, never the key). */
  async createGame(name: string, by: Actor) {
    const now = this.deps.clock.now()
    const { gameKey, keyHash } = issueGameKey()
    const game = { id: newId('game'), name, keyHash, keyRotatedAt: now, createdAt: now }
    await this.deps.storage.write(async (tx) => {
      await tx.games.insertGame(game)
      await by.record(tx, { action: 'game.create', target: game.id, details: { name } })
    })
    return { game: { id: game.id, name: game.name, createdAt: toIso(game.createdAt) }, gameKey }
  }

  /** Issues a new key; the old one stops working at once. */
  async rotateKey(gameId: string, by: Actor) {
    const { gameKey, keyHash } = issueGameKey()
    await this.deps.storage.write(async (tx) => {
      const now = this.deps.clock.now()
      if (!(await tx.games.replaceKeyHash(gameId, keyHash, now))) throw new AppError('not_found', 'No such game')
      await by.record(tx, { action: 'game.rotate_key', target: gameId, details: { rotatedAt: toIso(now) } })
    })
    return { gameKey }
  }

  async createTournament(input: CreateTournamentBody, by: Actor): Promise<Tournament> {
    const { storage, clock } = this.deps
    if (!(await storage.read.games.gameExists(input.gameId))) throw new AppError('not_found', 'No such game')
    const players = input.participants?.length ?? input.registration?.maxPlayers ?? Number.MAX_SAFE_INTEGER
    const playersPath = input.participants ? 'body/participants' : 'body/registration/maxPlayers'
    checkOptions(input, players, playersPath)
    const purse = planPurse(input, { count: players, path: playersPath }, input.participants === undefined)
    if (input.participants === undefined) return this.createRegistration(input, purse, by)
    if (input.registration !== undefined || input.startsAt !== undefined || input.seeding !== undefined) {
      throw invalid(
        (['registration', 'startsAt', 'seeding'] as const)
          .filter((key) => input[key] !== undefined)
          .map((key) => ({ path: `body/${key}`, message: 'Only for a tournament players register for (without participants)' })),
      )
    }
    const participantRefs = input.participants
    if (new Set(participantRefs.map((p) => p.toLowerCase())).size !== participantRefs.length) {
      throw new AppError('validation_failed', 'Request failed validation', {
        details: [{ path: 'body/participants', message: 'Each participant may appear once' }],
      })
    }
    const keys = participantRefs.map((p) => p.toLowerCase())
    const found = await storage.read.games.findUsers(participantRefs, keys)
    const resolved: string[] = []
    const missing: string[] = []
    for (const ref of participantRefs) {
      const user = found.find((u) => u.id === ref || u.usernameKey === ref.toLowerCase())
      if (user) resolved.push(user.id)
      else missing.push(ref)
    }
    if (missing.length > 0 || new Set(resolved).size !== resolved.length) {
      throw new AppError('validation_failed', 'Request failed validation', {
        details:
          missing.length > 0
            ? missing.slice(0, 20).map((ref) => ({ path: 'body/participants', message: `No user ${JSON.stringify(ref)}` }))
            : [{ path: 'body/participants', message: 'A user is listed twice (by id and by username)' }],
      })
    }
    const id = newId('tournament')
    return storage.write(async (tx) => {
      await tx.games.insertTournament(
        { id, gameId: input.gameId, name: input.name, format: input.format, status: 'draft', createdAt: clock.now(), ...NO_REGISTRATION, options: storedOptions(input, purse) },
        resolved.map((userId, index) => ({ id: newId('participant'), tournamentId: id, userId, seed: index + 1, registeredAt: null, checkedInAt: null, disqualifiedAt: null })),
      )
      await by.record(tx, { action: 'tournament.create', target: id, details: createdDetails(input, { participants: resolved.length }) })
      return (await loadTournament(tx.games, id))!
    })
  }

  /** A tournament open for registration, and its start job due at startsAt: one unit of work, so the job exists exactly when the tournament does. */
  private async createRegistration(input: CreateTournamentBody, purse: ReturnType<typeof planPurse>, by: Actor): Promise<Tournament> {
    const { storage, clock } = this.deps
    const now = clock.now()
    const plan = planRegistration(input, now)
    const id = newId('tournament')
    return storage.write(async (tx) => {
      await tx.games.insertTournament(
        { id, gameId: input.gameId, name: input.name, format: input.format, status: 'registration', createdAt: now, ...plan, seed: plan.seeding === 'random' ? newSeedingSeed() : null, options: storedOptions(input, purse) },
        [],
      )
      await tx.jobs.enqueue(JOB_KINDS.startTournament, { tournamentId: id }, now, plan.startsAt)
      await by.record(tx, {
        action: 'tournament.create',
        target: id,
        details: createdDetails(input, { maxPlayers: plan.maxPlayers, closesAt: toIso(plan.registrationClosesAt), startsAt: toIso(plan.startsAt) }),
      })
      return (await loadTournament(tx.games, id))!
    })
  }

  /**
   * Builds the bracket, resolves byes, and opens every match whose two slots
   * are filled. One unit of work: a half-built bracket never exists. A
   * tournament in registration starts early only once its registration has
   * closed (409 registration_open before) and, when it asks for check-in, its
   * check-in window has ended (409 check_in_open before: the start drops who
   * has not checked in); its start job then finds it started and does nothing.
   */
  startTournament(id: string, by: Actor): Promise<Tournament> {
    return this.deps.storage.write(async (tx) => {
      const tournament = await tx.games.tournament(id)
      if (!tournament) throw new AppError('not_found', 'No such tournament')
      const now = this.deps.clock.now()
      if (tournament.status === 'registration') {
        if (tournament.registrationClosesAt !== null && now < tournament.registrationClosesAt) {
          throw new AppError('registration_open', `Registration is open until ${toIso(tournament.registrationClosesAt)}; start it after that`)
        }
        // The start drops everyone who has not checked in: before check-in has
        // ended, that is players who still may (or could not yet).
        const { checkInOpensAt: opens, checkInClosesAt: closes } = tournament
        if (opens !== null && closes !== null && now < closes) {
          const when = now < opens ? `opens at ${toIso(opens)} and closes at ${toIso(closes)}` : `is open until ${toIso(closes)}`
          throw new AppError('check_in_open', `Check-in ${when}; start it after that (a start drops who has not checked in)`)
        }
        await startRegistered(tx, this.deps.clock, id, 'refuse')
        await by.record(tx, { action: 'tournament.start', target: id, details: { from: 'registration' } })
        return (await loadTournament(tx.games, id))!
      }
      if (tournament.status !== 'draft') throw new AppError('conflict', `Tournament is ${tournament.status}, not draft`)
      const short = await underfunded(tx, tournament)
      if (short) throw short
      await openBracket(tx, tournament, now)
      await by.record(tx, { action: 'tournament.start', target: id, details: { from: 'draft' } })
      return (await loadTournament(tx.games, id))!
    })
  }

  /** Tournaments by status, oldest first, a page at a time. */
  async listTournaments(query: { status?: TournamentStatus; after?: string; limit?: number }): Promise<TournamentsPage> {
    if (query.after !== undefined && !isId('tournament', query.after)) throw invalid([{ path: 'query/after', message: 'Not a cursor this server issued' }])
    if (query.limit !== undefined && !Number.isInteger(query.limit)) throw invalid([{ path: 'query/limit', message: 'Expected a whole number' }])
    const limit = query.limit ?? TOURNAMENTS_PAGE_DEFAULT
    // One more than asked: whether there is a next page, without a second query.
    const rows = await this.deps.storage.read.games.listTournaments({ status: query.status ?? null, after: query.after ?? null, limit: limit + 1 })
    const page = rows.slice(0, limit)
    return {
      tournaments: page.map((row) => ({
        id: row.id,
        gameId: row.gameId,
        name: row.name,
        format: row.format,
        status: row.status,
        participantCount: row.participantCount,
        registration: registrationOf(row),
        ...purseView(row),
        createdAt: toIso(row.createdAt),
        startedAt: isoOrNull(row.startedAt),
      })),
      cursor: rows.length > limit ? page.at(-1)!.id : null,
    }
  }

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

  /**
   * Operator funding of a tournament's prize pool (contract §10): `amount`
   * from the funding account into its escrow, once per `reference`
   * (prizes.ts, fundPrizePool). 404 no such tournament; 409 conflict once it
   * is finalizing or over; 409 idempotency_key_reused for a reference used
   * for another funding.
   */
  fund(tournamentId: string, input: { amount: string; reference: string }, by: Actor): Promise<PrizePool> {
    let amount: bigint
    try {
      amount = parsePositiveAmount(input.amount, PRIZE_ASSET)
    } catch (error) {
      if (!(error instanceof MoneyFormatError)) throw error
      throw invalid([{ path: 'body/amount', message: `Expected a positive decimal string with at most ${PRIZE_ASSET.decimals} decimals` }])
    }
    if (typeof input.reference !== 'string' || input.reference === '' || input.reference.length > FUNDING_REFERENCE_MAX) {
      throw invalid([{ path: 'body/reference', message: `Expected 1 to ${FUNDING_REFERENCE_MAX} characters` }])
    }
    return this.deps.storage.write(async (tx) => {
      // Read for update: a start or a finalization and a funding take turns.
      const tournament = await tx.games.tournament(tournamentId)
      if (!tournament) throw new AppError('not_found', 'No such tournament')
      const { pool, funded } = await fundPrizePool(tx, tournament, amount, input.reference, this.deps.clock.now())
      // A replayed reference moved nothing: nothing to record.
      if (funded) {
        await by.record(tx, {
          action: 'tournament.fund',
          target: tournamentId,
          details: { amount: formatAmount(amount, PRIZE_ASSET), asset: PRIZE_ASSET.code, reference: input.reference, escrow: pool.escrow },
        })
      }
      return pool
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

  /**
   * Operator cancel (contract §9): status `cancelled`, every undecided match
   * `cancelled` (a game session issued for one is refused at its claim:
   * 409 match_not_running), `tournament.cancelled` with the reason to every
   * participant. A tournament whose winner is known (finalizing, completed)
   * or already cancelled: 409. One unit of work.
   */
  cancelTournament(id: string, reason: string, by: Actor): Promise<Tournament> {
    return this.deps.storage.write(async (tx) => {
      const tournament = await tx.games.tournament(id)
      if (!tournament) throw new AppError('not_found', 'No such tournament')
      if (tournament.status === 'finalizing' || tournament.status === 'completed' || tournament.status === 'cancelled') {
        throw new AppError('conflict', `Tournament is ${tournament.status}; it cannot be cancelled`)
      }
      const now = this.deps.clock.now()
      const cancelledMatches = await tx.matches.cancelOpenMatches(id)
      await tx.games.markCancelled(id, now)
      await refundEntryFees(tx, id, now)
      for (const userId of await tx.games.participantUserIds(id)) {
        await tx.events.append({ userId, topic: 'status', type: 'tournament.cancelled', data: { tournamentId: id, reason } }, now)
      }
      await by.record(tx, { action: 'tournament.cancel', target: id, reason, details: { previousStatus: tournament.status, cancelledMatches } })
      tx.afterCommit(() =>
        this.deps.onSecurityEvent?.({ userId: null, source: 'server', kind: 'TOURNAMENT_CANCELLED', level: 'WARN', details: { tournamentId: id, reason, cancelledMatches } }),
      )
      return (await loadTournament(tx.games, id))!
    })
  }

  async getTournament(id: string): Promise<Tournament> {
    const tournament = await loadTournament(this.deps.storage.read.games, id)
    if (!tournament) throw new AppError('not_found', 'No such tournament')
    return tournament
  }
}
