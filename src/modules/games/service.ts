// Games and tournaments (contract §2, §6, §9 and §10), as operators run them:
// create a game and rotate its key (the key itself: game-keys.ts), create a
// tournament (with its participants, or open for registration:
// registration.ts), start, fund, cancel, list and read one (tournament-view.ts).
// What happens in play is tournament-operations.ts. Knows nothing of HTTP.
import type { Storage, Transaction } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import { toIso } from '../../shared/clock'
import { AppError } from '../../shared/errors'
import { isId, newId } from '../../shared/ids'
import { formatAmount, MoneyFormatError, parsePositiveAmount } from '../../shared/money'
import { JOB_KINDS } from '../../jobs/queue'
import type { Actor } from '../audit/log'
import type { SecurityEventInput } from '../security/event-log'
import { engineOf, FORMAT_OPTIONS, ownerOf, type FormatOptionName, type OptionProblem } from './formats/engines'
import { issueGameKey } from './game-keys'
import { firstSeason } from '../ratings/seasons'
import type { CreateTournamentBody, Game, GameRatingPatch, Tournament, TournamentsPage, UpdateGameBody } from './model'
import type { GameRatingSettings } from '../ratings/model'
import type { RatingsService } from '../ratings/service'
import { fundPrizePool, planPurse, settleCancelled, underfunded, PRIZE_ASSET, type PrizePool } from './prizes'
import { invalid, planRegistration } from './registration'
import { newSeedingSeed } from './seeding'
import { openBracket, startRegistered } from './start'
import type { GameResultMode, GameSummary, TournamentRecord, TournamentStatus } from './store'
import { isoOrNull, loadTournament, purseView, registrationOf } from './tournament-view'
import { canonicalRake } from '../matchmaking/stakes'

/** A new tournament's stored options: the format's, and its fee and prizes; null for none. */
function storedOptions(input: CreateTournamentBody, purse: ReturnType<typeof planPurse>): TournamentRecord['options'] {
  const options = { ...(input.options ?? {}), ...purse }
  return Object.keys(options).length > 0 ? options : null
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

export const TOURNAMENTS_PAGE_DEFAULT = 50

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

const NO_REGISTRATION = { registrationClosesAt: null, maxPlayers: null, checkInOpensAt: null, checkInClosesAt: null, startsAt: null, seeding: null, seed: null } as const

/**
 * The refunds of a cancelled tournament (contract §9, §10; prizes.ts): every
 * participant's entry fee back and the operators' funding returned, in the
 * cancel's unit of work, so a cancel and its refunds commit together.
 */
async function refundEntryFees(tx: Transaction, tournamentId: string, now: Date): Promise<void> {
  await settleCancelled(tx, tournamentId, await tx.games.participantsOf(tournamentId), now)
}

/** A new game's rating settings where POST /admin/games leaves them out (contract §15). */
export const DEFAULT_RATING_SETTINGS: GameRatingSettings = { tau: 0.5, inactivityPeriodS: 604_800 }

/** The fields of a rating patch that were given (`{ tau: undefined }` sets nothing). */
function definedOf(patch: GameRatingPatch): Partial<GameRatingSettings> {
  return Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined))
}

function gameView(game: GameSummary): Game {
  return { id: game.id, name: game.name, createdAt: toIso(game.createdAt), rating: { tau: game.rating.tau, inactivityPeriodS: game.rating.inactivityPeriodS }, challengeRake: game.challengeRake, results: game.results }
}

/** A challenge rake as given, canonical; 422 validation_failed otherwise. */
function challengeRakeOf(input: string): string {
  const rake = canonicalRake(input)
  if (rake === null) throw invalid([{ path: 'body/challengeRake', message: 'A decimal fraction from 0 to 0.5, at most 6 decimals ("0.05")' }])
  return rake
}

/** The longest funding reference (the route's schema says the same). */
export const FUNDING_REFERENCE_MAX = 128

export interface GamesServiceDeps {
  storage: Storage
  clock: Clock
  /** A game's rating settings change with its board (PATCH /admin/games/{id}). */
  ratings: Pick<RatingsService, 'applySettings'>
  onSecurityEvent?: (event: SecurityEventInput) => void
}

export class GamesService {
  constructor(private readonly deps: GamesServiceDeps) {}

  /**
   * Creates a game and its key (shown once; the audit record names the game,
   * never the key), with its rating settings (contract §15): the defaults
   * (τ 0.5, a week) where `rating` leaves one out.
   */
  async createGame(name: string, by: Actor, rating: GameRatingPatch = {}, challengeRake = '0', results: GameResultMode = 'claims'): Promise<{ game: Game; gameKey: string }> {
    const now = this.deps.clock.now()
    const { gameKey, keyHash } = issueGameKey()
    const game = { id: newId('game'), name, keyHash, keyRotatedAt: now, createdAt: now, challengeRake: challengeRakeOf(challengeRake), results }
    const settings: GameRatingSettings = { ...DEFAULT_RATING_SETTINGS, ...definedOf(rating) }
    await this.deps.storage.write(async (tx) => {
      await tx.games.insertGame(game)
      await tx.ratings.setRatingConfig(game.id, settings)
      // Rated from its first match: a game has a current season from its creation (docs/ratings.md).
      await tx.ratings.insertSeason(firstSeason(game.id, now))
      await by.record(tx, { action: 'game.create', target: game.id, details: { name, rating: settings, challengeRake: game.challengeRake, results } })
    })
    return { game: { id: game.id, name: game.name, createdAt: toIso(game.createdAt), rating: settings, challengeRake: game.challengeRake, results }, gameKey }
  }

  /** A game as operators see it (never its key). */
  async getGame(gameId: string): Promise<Game> {
    const game = await this.deps.storage.read.games.game(gameId)
    if (!game) throw new AppError('not_found', 'No such game')
    return gameView(game)
  }

  /**
   * Renames a game or changes its rating settings (contract §15), in one
   * unit of work with its audit record, which names what changed (`from`,
   * `to`). τ applies from the next rated match; a new inactivity period
   * moves the game's board at once (RatingsService.applySettings).
   */
  async updateGame(gameId: string, patch: UpdateGameBody, by: Actor): Promise<Game> {
    const rating = definedOf(patch.rating ?? {})
    if (patch.name === undefined && patch.challengeRake === undefined && patch.results === undefined && Object.keys(rating).length === 0) {
      throw invalid([{ path: 'body', message: 'Give at least one of name, rating.tau, rating.inactivityPeriodS, challengeRake, results' }])
    }
    const challengeRake = patch.challengeRake === undefined ? undefined : challengeRakeOf(patch.challengeRake)
    return this.deps.storage.write(async (tx) => {
      const before = await tx.games.game(gameId)
      if (!before) throw new AppError('not_found', 'No such game')
      const after = { ...before, name: patch.name ?? before.name, rating: { ...before.rating, ...rating }, challengeRake: challengeRake ?? before.challengeRake, results: patch.results ?? before.results }
      const changed: Record<string, { from: unknown; to: unknown }> = {}
      if (after.name !== before.name) changed.name = { from: before.name, to: after.name }
      if (after.challengeRake !== before.challengeRake) {
        changed.challengeRake = { from: before.challengeRake, to: after.challengeRake }
        await tx.games.setChallengeRake(gameId, after.challengeRake)
      }
      for (const key of ['tau', 'inactivityPeriodS'] as const) {
        if (after.rating[key] !== before.rating[key]) changed[key] = { from: before.rating[key], to: after.rating[key] }
      }
      if (after.results !== before.results) {
        changed.results = { from: before.results, to: after.results }
        await tx.games.setResultMode(gameId, after.results)
      }
      if (changed.name) await tx.games.renameGame(gameId, after.name)
      if (changed.tau || changed.inactivityPeriodS) await this.deps.ratings.applySettings(tx, gameId, after.rating)
      await by.record(tx, { action: 'game.update', target: gameId, details: changed })
      return gameView(after)
    })
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
