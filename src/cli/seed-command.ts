// `arena seed`: a whole local platform in one command, for trying arena out.
// A game and its key, N players (same password and PIN, funded wallets) and
// one started tournament of each format (single elimination with a
// third-place match, double elimination, round robin, Swiss), every player in
// each, made through the same services the routes call, on the data dir's
// database (no server needed).
//
// Seed data has known passwords, so production refuses it. Every run gets a
// fresh random prefix for its usernames, so seeding twice never collides.
import { openServices, type Services } from '../services'
import type { Command, Io } from './command'
import { UsageError } from './command'
import { cliActor } from './actor'
import type { Actor } from '../modules/audit/log'
import { loadConfig } from '../config'
import type { Game, Tournament } from '../modules/games/model'
import { isCommonPin } from '../modules/security/pin-rules'
import { commandName, serveCommand } from '../shared/invocation'
import { systemClock } from '../shared/clock'
import { AppError } from '../shared/errors'
import { createLogger } from '../shared/logger'
import { MoneyFormatError, parsePositiveAmount, USDC } from '../shared/money'

export const SEED_USAGE =
  'arena seed [--players N] [--prefix P] [--password PW] [--pin PIN] [--amount AMOUNT] [--json]'

export const SEED_DEFAULTS = { players: 4, minPlayers: 2, maxPlayers: 64, amount: '100' } as const

/** Every seeded email ends with this (a reserved test domain: no mail ever leaves). */
export const SEED_EMAIL_DOMAIN = 'seed.arena.test'

const USERNAME = /^[A-Za-z0-9_]{3,32}$/

export interface SeedOptions {
  players: number
  prefix: string
  password: string
  pin: string
  amount: string
}

export interface SeededPlayer {
  id: string
  username: string
  email: string
  balance: string
  address: string
}

export interface SeedResult {
  game: Game
  gameKey: string
  password: string
  pin: string
  players: SeededPlayer[]
  /** One of each format, started, in the order of SEED_FORMATS. */
  tournaments: Tournament[]
}

/** The tournaments a seed makes, in this order: every player plays in each. */
export const SEED_FORMATS = [
  { format: 'single_elimination', name: 'Local cup', options: { thirdPlaceMatch: true } },
  { format: 'double_elimination', name: 'Local double-elimination cup', options: { grandFinal: 'reset' } },
  { format: 'round_robin', name: 'Local league', options: {} },
  { format: 'swiss', name: 'Local Swiss', options: {} },
] as const satisfies readonly { format: Tournament['format']; name: string; options: Tournament['options'] }[]

/** What a failed seed had already written (it stays: seeding is not one transaction). */
export interface SeedProgress {
  gameId?: string
  /** Shown once: printed on failure too, since only its hash is stored. */
  gameKey?: string
  users: string[]
  tournamentIds: string[]
}

/** A seed that stopped midway: the step, the cause and what was already created. */
export class SeedError extends Error {
  constructor(
    readonly step: string,
    override readonly cause: unknown,
    readonly created: SeedProgress,
  ) {
    super(`${step}: ${cause instanceof Error ? cause.message : String(cause)}`)
    this.name = 'SeedError'
  }
}

// --- random defaults -------------------------------------------------------

const LOWER = 'abcdefghijklmnopqrstuvwxyz0123456789'
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'

/** `length` characters drawn uniformly from `alphabet` (rejection sampling, no modulo bias). */
function randomString(alphabet: string, length: number): string {
  const limit = 256 - (256 % alphabet.length)
  let out = ''
  while (out.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(length * 2))) {
      if (byte < limit && out.length < length) out += alphabet[byte % alphabet.length]
    }
  }
  return out
}

/** A short lowercase tag for usernames: 4 of [a-z0-9], about 1.7 million values. */
export function randomPrefix(): string {
  return randomString(LOWER, 4)
}

/** 16 letters and digits (about 95 bits): url-safe, and easy to paste into a login form. */
export function randomPassword(): string {
  return randomString(ALNUM, 16)
}

/** A 6-digit PIN that the PIN rules accept. */
export function randomPin(): string {
  for (;;) {
    const pin = randomString('0123456789', 6)
    if (!isCommonPin(pin)) return pin
  }
}

// --- options ---------------------------------------------------------------

export function usernamesFor(prefix: string, players: number): string[] {
  return Array.from({ length: players }, (_, i) => `${prefix}_${i + 1}`)
}

export function emailFor(username: string): string {
  return `${username}@${SEED_EMAIL_DOMAIN}`
}

/** Turns the command's flags into options; a bad flag is a UsageError (exit 2). */
export function parseSeedOptions(values: Record<string, unknown>): SeedOptions {
  const str = (name: string) => values[name] as string | undefined

  const playersRaw = str('players') ?? String(SEED_DEFAULTS.players)
  const players = /^[0-9]{1,4}$/.test(playersRaw) ? Number(playersRaw) : NaN
  if (!(players >= SEED_DEFAULTS.minPlayers && players <= SEED_DEFAULTS.maxPlayers)) {
    throw new UsageError(`--players must be a whole number from ${SEED_DEFAULTS.minPlayers} to ${SEED_DEFAULTS.maxPlayers}, got "${playersRaw}"`)
  }

  const prefix = str('prefix') ?? randomPrefix()
  // The longest and the shortest usernames decide; `<prefix>_<n>` must fit ^[A-Za-z0-9_]{3,32}$.
  if (prefix === '' || !usernamesFor(prefix, players).every((name) => USERNAME.test(name))) {
    throw new UsageError(`--prefix must be letters, digits or "_", short enough that "${prefix}_${players}" has at most 32 characters`)
  }

  const password = str('password') ?? randomPassword()
  const passwordLength = [...password].length
  if (passwordLength < 8 || passwordLength > 128) throw new UsageError('--password must be 8 to 128 characters')

  const pin = str('pin') ?? randomPin()
  if (!/^[0-9]{4,8}$/.test(pin)) throw new UsageError('--pin must be 4 to 8 digits')
  if (isCommonPin(pin)) throw new UsageError('--pin is too easy to guess (repeated digits, a run like 1234, or a common PIN); choose another')

  const amount = str('amount') ?? SEED_DEFAULTS.amount
  try {
    parsePositiveAmount(amount, USDC)
  } catch (error) {
    if (error instanceof MoneyFormatError) throw new UsageError(`--amount: ${error.message}`)
    throw error
  }

  return { players, prefix, password, pin, amount }
}

// --- seeding ---------------------------------------------------------------

/** Usernames or emails of `prefix` that already exist (case-insensitive). */
export function takenSeedNames(registration: Services['registration'], prefix: string, players: number): Promise<string[]> {
  const names = usernamesFor(prefix, players)
  return registration.takenNames(names, names.map((name) => emailFor(name.toLowerCase())))
}

/**
 * Creates the game, the players (PIN set, wallet funded) and a started
 * tournament of each format (SEED_FORMATS), every player in each. Checks first that no seeded username or email exists, so a
 * reused prefix fails before anything is written; a later failure throws a
 * SeedError saying what was already created.
 */
export async function seed(deps: { services: Pick<Services, 'registration' | 'games' | 'pins' | 'wallet'>; by: Actor }, options: SeedOptions): Promise<SeedResult> {
  const { registration, games, pins, wallet } = deps.services
  const { by } = deps
  const { prefix, players: count, password, pin, amount } = options
  const created: SeedProgress = { users: [], tournamentIds: [] }
  let step = 'checking usernames'
  try {
    const taken = await takenSeedNames(registration, prefix, count)
    if (taken.length > 0) {
      throw new AppError('username_taken', `Prefix "${prefix}" is already used (${taken.slice(0, 3).join(', ')}${taken.length > 3 ? ', ...' : ''} exist); choose another --prefix or leave it out`)
    }

    step = 'creating the game'
    const { game, gameKey } = await games.createGame(`Local game ${prefix}`, by)
    created.gameId = game.id
    created.gameKey = gameKey

    const players: SeededPlayer[] = []
    for (const [index, username] of usernamesFor(prefix, count).entries()) {
      const email = emailFor(username)
      step = `registering ${username}`
      const user = await registration.register({ email, username, password, country: 'US', accept_terms: true })
      created.users.push(user.id)
      step = `setting the PIN of ${username}`
      await pins.setPin(user.id, pin, password)
      step = `crediting the wallet of ${username}`
      await wallet.credit({ userId: user.id, amount, reference: `seed:${prefix}:${index + 1}` }, by)
      step = `creating the wallet of ${username}`
      const view = await wallet.wallet(user.id)
      players.push({ id: user.id, username, email, balance: view.balance, address: view.address })
    }

    const tournaments: Tournament[] = []
    for (const kind of SEED_FORMATS) {
      const label = kind.format.replace('_', '-')
      step = `creating the ${label} tournament`
      // A third-place match needs two semi-finals: 4 players or more.
      const options = kind.format === 'single_elimination' && count < 4 ? {} : kind.options
      const draft = await games.createTournament({
        gameId: game.id,
        name: `${kind.name} ${prefix}`,
        format: kind.format,
        participants: players.map((p) => p.id),
        ...(Object.keys(options).length > 0 ? { options } : {}),
      }, by)
      created.tournamentIds.push(draft.id)
      step = `starting the ${label} tournament`
      await games.startTournament(draft.id, by)
      tournaments.push(await games.getTournament(draft.id))
    }

    return { game, gameKey, password, pin, players, tournaments }
  } catch (error) {
    throw new SeedError(step, error, created)
  }
}

// --- the command -------------------------------------------------------------

/** Single-quoted for a POSIX shell, so a chosen --password survives copy and paste. */
function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`
}

/** A seeded tournament: its line, then its first round (round 1 of the winners bracket, of the league, of the Swiss). */
function tournamentLines(t: Tournament, usernameOf: ReadonlyMap<string, string>): string[] {
  const nameOf = new Map(t.participants.map((p) => [p.id, usernameOf.get(p.userId) ?? p.userId]))
  const who = (id: string | null) => (id === null ? '-' : (nameOf.get(id) ?? id))
  const options = [t.options.thirdPlaceMatch ? 'third-place match' : null, t.options.grandFinal ? `grand final ${t.options.grandFinal}` : null].filter(Boolean)
  const running = t.matches.filter((m) => m.status === 'running').length
  return [
    `  ${t.format.padEnd(18)}  ${t.id}  "${t.name}"  ${t.status}${options.length > 0 ? `  (${options.join(', ')})` : ''}  ${t.matches.length} matches, ${running} running`,
    ...t.matches
      .filter((m) => m.round === 1 && (m.bracket === 'winners' || m.bracket === 'round_robin' || m.bracket === 'swiss'))
      .map((m) => {
        const bye = m.status === 'decided' && (m.slot1ParticipantId === null || m.slot2ParticipantId === null)
        return `    ${m.bracket} round 1 #${m.position}  ${m.id}  ${m.status.padEnd(8)}  ${bye ? `${who(m.winnerParticipantId)} (bye)` : `${who(m.slot1ParticipantId)} vs ${who(m.slot2ParticipantId)}`}`
      }),
  ]
}

function seedText(result: SeedResult, where: { database: string; port: number }): string {
  const first = result.players[0]!
  const usernameOf = new Map(result.players.map((p) => [p.id, p.username]))
  const width = Math.max(...result.players.map((p) => p.username.length))
  const base = `http://127.0.0.1:${where.port}`
  const lines = [
    `Seeded ${where.database}`,
    '',
    `game        ${result.game.id}  "${result.game.name}"`,
    `game key    ${result.gameKey}  (shown once: store it now)`,
    `password    ${result.password}  (every player below)`,
    `PIN         ${result.pin}  (every player below)`,
    '',
    'players',
    ...result.players.map((p) => `  ${p.username.padEnd(width)}  ${p.id}  balance ${p.balance} ${USDC.code}  address ${p.address}`),
    '',
    `tournaments (every player plays in each; \`${commandName()} tournament show <id>\` prints one whole)`,
    ...result.tournaments.flatMap((t) => tournamentLines(t, usernameOf)),
    '',
    `Next: ${serveCommand()} if the server is not running yet, then open ${base}/openapi (ARENA_PORT=${where.port} here) and log in as a player:`,
    `  curl -s ${base}/api/v1/user/login -H 'content-type: application/json' \\`,
    `    -d ${shellQuote(JSON.stringify({ identifier: first.username, password: result.password }))}`,
  ]
  return lines.join('\n')
}

function reportFailure(io: Io, error: SeedError): void {
  const cause = error.cause
  const reason =
    cause instanceof AppError
      ? `${cause.message} (${cause.code})${cause.details ? '\n' + cause.details.map((d) => `  ${d.path}: ${d.message}`).join('\n') : ''}`
      : cause instanceof Error
        ? cause.message
        : String(cause)
  const lines = [`arena: seed failed while ${error.step}: ${reason}`]
  const { gameId, users: userIds, tournamentIds } = error.created
  if (gameId || userIds.length > 0 || tournamentIds.length > 0) {
    const parts = [
      gameId && `game ${gameId}${error.created.gameKey ? ` (key ${error.created.gameKey})` : ''}`,
      userIds.length > 0 && `${userIds.length} user(s) ${userIds.join(', ')}`,
      tournamentIds.length > 0 && `${tournamentIds.length} tournament(s) ${tournamentIds.join(', ')}`,
    ]
    lines.push(`arena: already created and left in place: ${parts.filter(Boolean).join('; ')}`)
  }
  io.err(lines.join('\n'))
}

export const seedCommand: Command = {
  summary: 'Create a local game, funded players with a PIN and a started tournament of each format (not in production)',
  usage: SEED_USAGE,
  options: {
    players: { type: 'string' },
    prefix: { type: 'string' },
    password: { type: 'string' },
    pin: { type: 'string' },
    amount: { type: 'string' },
    json: { type: 'boolean' },
  },
  async run({ values }, io) {
    // Checked before the configuration: production also fails validation
    // without its secrets, and the refusal is the message that matters.
    if (process.env.ARENA_ENV === 'production') {
      io.err('arena: seed refuses to run with ARENA_ENV=production: seeded players have a known password and PIN')
      return 1
    }
    const options = parseSeedOptions(values)
    const config = loadConfig()
    const opened = await openServices(config)
    const { services } = opened
    let result: SeedResult
    try {
      // A random prefix that happens to exist already is drawn again.
      if (values.prefix === undefined) {
        for (let tries = 0; tries < 20 && (await takenSeedNames(services.registration, options.prefix, options.players)).length > 0; tries++) options.prefix = randomPrefix()
      }
      result = await seed({ services, by: cliActor(services) }, options)
    } catch (error) {
      if (!(error instanceof SeedError)) throw error
      reportFailure(io, error)
      return 1
    } finally {
      await opened.close()
    }
    io.out(values.json === true ? JSON.stringify(result) : seedText(result, { database: services.storage.location, port: config.port }))
    return 0
  },
}
