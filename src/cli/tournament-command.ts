// `arena tournament`: create (any format, with its players or open for
// registration), list, start, show, cancel, disqualify. The same services the
// admin routes call, on the data dir's database; `--json` prints the objects
// those routes answer.
//
// `create` builds the very body `POST /api/v1/admin/tournaments` takes
// (CreateTournamentBody) from its flags: the limits of the numbers are read
// off that schema, and the service's own checks (the time rules of a
// registration, the players) answer as they do over HTTP, with the field
// named by its flag.
import type { Command, Io } from './command'
import { UsageError } from './command'
import { AppError, type ErrorCode } from '../shared/errors'
import type { Services } from '../services'
import { cliActor } from './actor'
import { CreateTournamentBody, TournamentOptions, type Tournament, type TournamentsPage } from '../modules/games/model'
import { DEFAULT_FORMAT, FORMAT_NAMES, isFormatName, ownerOf, type FormatOptionName } from '../modules/games/formats/engines'

type Body = CreateTournamentBody
type Format = Body['format']
type Status = NonNullable<Parameters<Services['games']['listTournaments']>[0]['status']>

/** The formats `--format` takes: the registry's. */
export const FORMATS: readonly Format[] = FORMAT_NAMES
const STATUSES: readonly Status[] = ['draft', 'registration', 'running', 'finalizing', 'completed', 'cancelled']

/** Which flag sets each field of the body: the service's `body/...` paths are reported by flag. */
const FLAG_OF: Record<string, string> = {
  'body/gameId': '--game',
  'body/name': '--name',
  'body/format': '--format',
  'body/participants': '--players',
  'body/registration': '--closes-at/--max-players',
  'body/registration/closesAt': '--closes-at',
  'body/registration/maxPlayers': '--max-players',
  'body/registration/checkIn': '--check-in-opens-at/--check-in-closes-at',
  'body/registration/checkIn/opensAt': '--check-in-opens-at',
  'body/registration/checkIn/closesAt': '--check-in-closes-at',
  'body/startsAt': '--starts-at',
  'body/seeding': '--seeding',
  'body/options': 'options',
  'body/options/matchDeadlineS': '--deadline',
  'body/options/thirdPlaceMatch': '--third-place',
  'body/options/grandFinal': '--grand-final',
  'body/options/rounds': '--rounds',
  'body/entryFee': '--entry-fee',
  'body/prizes': '--prizes',
  'body/amount': '--amount',
  'body/reference': '--reference',
}

/** An AppError with `body/...` paths, the paths renamed to the flags that set them (`body/prizes/2`: the third of --prizes). */
function byFlag(error: unknown): unknown {
  if (!(error instanceof AppError) || !error.details) return error
  const flagOf = (path: string) => FLAG_OF[path] ?? (/^body\/prizes\/[0-9]+$/.test(path) ? `--prizes #${Number(path.slice('body/prizes/'.length)) + 1}` : path)
  const details = error.details.map((d) => ({ ...d, path: flagOf(d.path) }))
  return new AppError(error.code as ErrorCode, error.message, { details, status: error.status })
}

const registrationSchema = (CreateTournamentBody.properties.registration as unknown as { properties: { maxPlayers: { minimum: number; maximum: number } } }).properties
const optionSchema = TournamentOptions.properties as unknown as Record<'matchDeadlineS' | 'rounds', { minimum: number; maximum: number }>

/** A whole number within the schema's bounds for the field, else a UsageError naming the flag. */
function wholeNumber(raw: string, flag: string, bounds: { minimum: number; maximum: number }): number {
  const n = /^[0-9]{1,10}$/.test(raw) ? Number(raw) : NaN
  if (!(n >= bounds.minimum && n <= bounds.maximum)) throw new UsageError(`${flag} takes a whole number from ${bounds.minimum} to ${bounds.maximum}, got "${raw}"`)
  return n
}

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const

/**
 * An instant flag: an ISO-8601 date-time (with its offset, or `Z`), or a time
 * from now, `+<n><s|m|h|d>` (`+90s`, `+30m`, `+2h`, `+7d`). Answers the ISO
 * string the HTTP body would carry.
 */
export function instantFlag(raw: string, flag: string, now: Date): string {
  const relative = /^\+([0-9]{1,7})([smhd])$/.exec(raw)
  if (relative) return new Date(now.getTime() + Number(relative[1]) * UNIT_MS[relative[2] as keyof typeof UNIT_MS]).toISOString()
  if (/^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,9})?)?(Z|[+-][0-9]{2}:[0-9]{2})$/.test(raw) && !Number.isNaN(Date.parse(raw))) {
    return new Date(raw).toISOString()
  }
  throw new UsageError(`${flag} takes an ISO-8601 date-time with its offset (2030-05-01T18:00:00Z) or a time from now (+30m, +2h, +1d), got "${raw}"`)
}

const str = (values: Record<string, unknown>, name: string) => values[name] as string | undefined

/**
 * The body of `POST /api/v1/admin/tournaments` for `arena tournament create`'s
 * flags. Flags that cannot go together, or that do not fit the format, are a
 * UsageError (exit 2).
 */
export function createBody(values: Record<string, unknown>, now: Date): Body {
  const need = (name: string) => {
    const value = str(values, name)
    if (!value) throw new UsageError(`missing --${name}`)
    return value
  }
  const format = str(values, 'format') ?? DEFAULT_FORMAT
  if (!isFormatName(format)) throw new UsageError(`--format takes ${FORMATS.join(', ')}; got "${format}"`)

  const options: NonNullable<Body['options']> = {}
  const deadline = str(values, 'deadline')
  if (deadline !== undefined) options.matchDeadlineS = wholeNumber(deadline, '--deadline', optionSchema.matchDeadlineS)
  // Rated is the default (docs/ratings.md): the flag is the exception.
  if (values.unrated === true) options.rated = false
  // A format's own option's flag is for that format only (the registry says whose).
  const only = (flag: string, option: FormatOptionName) => {
    const wanted = ownerOf(option).name
    if (format !== wanted) throw new UsageError(`--${flag} is for --format ${wanted}, not ${format}`)
  }
  if (values['third-place'] === true) {
    only('third-place', 'thirdPlaceMatch')
    options.thirdPlaceMatch = true
  }
  const grandFinal = str(values, 'grand-final')
  if (grandFinal !== undefined) {
    only('grand-final', 'grandFinal')
    if (grandFinal !== 'simple' && grandFinal !== 'reset') throw new UsageError(`--grand-final takes simple or reset, got "${grandFinal}"`)
    options.grandFinal = grandFinal
  }
  const rounds = str(values, 'rounds')
  if (rounds !== undefined) {
    only('rounds', 'rounds')
    options.rounds = wholeNumber(rounds, '--rounds', optionSchema.rounds)
  }

  const entryFee = str(values, 'entry-fee')
  const prizes = str(values, 'prizes')
  const body: Body = {
    gameId: need('game'),
    name: need('name'),
    format,
    ...(Object.keys(options).length > 0 ? { options } : {}),
    ...(entryFee !== undefined ? { entryFee } : {}),
    // Amounts as given: the service checks each against the money grammar, as over HTTP.
    ...(prizes !== undefined ? { prizes: prizes.split(',').map((p) => p.trim()) } : {}),
  }

  const registrationFlags = ['closes-at', 'max-players', 'starts-at', 'check-in-opens-at', 'check-in-closes-at', 'seeding'].filter((name) => values[name] !== undefined)
  const players = str(values, 'players')
  if (players !== undefined) {
    if (registrationFlags.length > 0) {
      throw new UsageError(`--players lists the players of a draft; ${registrationFlags.map((f) => `--${f}`).join(', ')} are for a tournament players register for`)
    }
    const list = players
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean)
    if (list.length < 2 || list.length > 1024) throw new UsageError('--players takes 2 to 1024 players')
    return { ...body, participants: list }
  }
  if (registrationFlags.length === 0) {
    throw new UsageError('give --players a,b,... (a draft you start), or --closes-at, --max-players and --starts-at (a tournament players register for)')
  }
  const missing = ['closes-at', 'max-players', 'starts-at'].filter((name) => values[name] === undefined)
  if (missing.length > 0) throw new UsageError(`a tournament players register for needs ${missing.map((f) => `--${f}`).join(', ')} too`)
  const opens = str(values, 'check-in-opens-at')
  const closes = str(values, 'check-in-closes-at')
  if ((opens === undefined) !== (closes === undefined)) throw new UsageError('--check-in-opens-at and --check-in-closes-at go together')
  const seeding = str(values, 'seeding')
  if (seeding !== undefined && seeding !== 'registration' && seeding !== 'random' && seeding !== 'rating') throw new UsageError(`--seeding takes registration, random or rating, got "${seeding}"`)
  return {
    ...body,
    registration: {
      closesAt: instantFlag(need('closes-at'), '--closes-at', now),
      maxPlayers: wholeNumber(need('max-players'), '--max-players', registrationSchema.maxPlayers),
      ...(opens !== undefined && closes !== undefined
        ? { checkIn: { opensAt: instantFlag(opens, '--check-in-opens-at', now), closesAt: instantFlag(closes, '--check-in-closes-at', now) } }
        : {}),
    },
    startsAt: instantFlag(need('starts-at'), '--starts-at', now),
    ...(seeding !== undefined ? { seeding } : {}),
  }
}

function optionsText(t: Tournament): string | null {
  const o = t.options
  const parts = [
    o.thirdPlaceMatch ? 'third-place match' : null,
    t.format === ownerOf('grandFinal').name ? `grand final ${o.grandFinal ?? 'reset'}` : null,
    o.rounds !== undefined ? `${o.rounds} rounds` : null,
    o.matchDeadlineS !== undefined ? `match deadline ${o.matchDeadlineS} s` : null,
    o.rated === false ? 'unrated' : null,
  ].filter((p): p is string => p !== null)
  return parts.length > 0 ? parts.join(', ') : null
}

/**
 * The tournament as text: its options and registration, the participants
 * (checked in, disqualified), every match with its bracket and result (a win,
 * a draw, a bye; where the winner and the loser go), then the standings.
 */
export function tournamentText(t: Tournament, usernames: ReadonlyMap<string, string> = new Map()): string {
  const out = new Set(t.participants.filter((p) => p.disqualifiedAt !== null).map((p) => p.id))
  // A participant is its id (what a claim, resolve or disqualify takes) and, where known, its player's username.
  const nameOf = new Map(t.participants.flatMap((p) => (usernames.has(p.userId) ? [[p.id, usernames.get(p.userId)!] as const] : [])))
  const named = (id: string) => (nameOf.has(id) ? `${id} (${nameOf.get(id)})` : id)
  const who = (id: string | null) => (id === null ? '-' : out.has(id) ? `${named(id)} (disqualified)` : named(id))
  const lines = [`${t.id}  ${t.name}  ${t.format}  ${t.status}  game ${t.gameId}${t.winnerParticipantId ? `  winner ${named(t.winnerParticipantId)}` : ''}`]
  const options = optionsText(t)
  if (options) lines.push(`options  ${options}`)
  if (t.entryFee !== null || t.prizes.length > 0) {
    lines.push(`money  entry fee ${t.entryFee ?? 'none'}  prizes ${t.prizes.length > 0 ? t.prizes.map((p, i) => `#${i + 1} ${p}`).join(', ') : 'none'}`)
  }
  const r = t.registration
  if (r) {
    lines.push(
      `registration  closes ${r.closesAt}  at most ${r.maxPlayers} players  ${r.checkIn ? `check-in ${r.checkIn.opensAt} to ${r.checkIn.closesAt}` : 'no check-in'}  starts ${r.startsAt}  seeding ${r.seeding}${r.seed ? ` (seed ${r.seed})` : ''}`,
    )
  }
  lines.push(`participants (${t.participants.length})`)
  for (const p of t.participants) {
    const notes = [
      p.registeredAt ? `registered ${p.registeredAt}` : null,
      p.checkedInAt ? `checked in ${p.checkedInAt}` : null,
      p.disqualifiedAt ? `DISQUALIFIED ${p.disqualifiedAt}` : null,
    ].filter(Boolean)
    const username = usernames.get(p.userId)
    lines.push(`  seed ${String(p.seed).padStart(4)}  ${p.id}  user ${p.userId}${username !== undefined ? ` ${username}` : ''}${notes.length > 0 ? `  ${notes.join('  ')}` : ''}`)
  }
  if (t.matches.length > 0) lines.push(`matches (${t.matches.length})`)
  const bracketWidth = Math.max(0, ...t.matches.map((m) => m.bracket.length))
  for (const m of t.matches) {
    const bye = m.status === 'decided' && (m.slot1ParticipantId === null || m.slot2ParticipantId === null)
    const result =
      m.status !== 'decided' ? '' : m.outcome === 'DRAW' ? '  draw' : bye ? `  bye for ${named(m.winnerParticipantId!)}` : m.winnerParticipantId ? `  won by ${named(m.winnerParticipantId)}` : ''
    const where = [m.nextMatchId ? `winner to ${m.nextMatchId}` : null, m.loserNextMatchId ? `loser to ${m.loserNextMatchId}` : null].filter(Boolean)
    lines.push(
      `  ${m.bracket.padEnd(bracketWidth)}  round ${String(m.round).padStart(2)} #${String(m.position).padEnd(3)} ${m.id}  ${m.status.padEnd(9)} ${who(m.slot1ParticipantId)} vs ${who(m.slot2ParticipantId)}${result}${m.deadline && (m.status === 'running' || m.status === 'waiting') ? `  deadline ${m.deadline}` : ''}${where.length > 0 ? `  (${where.join(', ')})` : ''}`,
    )
  }
  if (t.standings.length > 0) {
    const width = Math.max(...t.standings.map((s) => who(s.participantId).length), 'participant'.length)
    lines.push('standings', `  rank  ${'participant'.padEnd(width)}  wins  draws  losses  points`)
    for (const s of t.standings) {
      lines.push(
        `  ${String(s.rank).padStart(4)}  ${who(s.participantId).padEnd(width)}  ${String(s.wins).padStart(4)}  ${String(s.draws).padStart(5)}  ${String(s.losses).padStart(6)}  ${String(s.points).padStart(6)}`,
      )
    }
  }
  return lines.join('\n')
}

function listText(page: TournamentsPage): string {
  const lines = page.tournaments.map((t) => {
    const r = t.registration
    const seats = r ? `${t.participantCount}/${r.maxPlayers} players` : `${t.participantCount} players`
    const when = r && t.status === 'registration' ? `  closes ${r.closesAt}  starts ${r.startsAt}` : t.startedAt ? `  started ${t.startedAt}` : ''
    return `${t.id}  ${t.format.padEnd(18)}  ${t.status.padEnd(12)}  ${seats}  "${t.name}"  game ${t.gameId}${when}`
  })
  if (lines.length === 0) lines.push('no tournaments')
  if (page.cursor) lines.push(`more: --after ${page.cursor}`)
  return lines.join('\n')
}

/** What a disqualification did to the match the participant was in (the admin route's answer). */
function disqualifiedText(participantId: string, m: Tournament['matches'][number]): string {
  const head = `${participantId} disqualified (every later match of theirs goes to the opponent)`
  if (m.status === 'waiting') return `${head}; match ${m.id} goes to the opponent as a walkover once the opponent is known`
  const opponent = m.slot1ParticipantId === participantId ? m.slot2ParticipantId : m.slot1ParticipantId
  if (m.status === 'decided' && m.winnerParticipantId !== null && m.winnerParticipantId === opponent) return `${head}; match ${m.id} decided for ${opponent} (walkover)`
  // A player between rounds paired as it goes (a Swiss): their last match stands; no more pairings.
  return `${head}; their last match ${m.id} stands, and they are paired no more`
}

function print(io: Io, json: boolean, value: unknown, text: () => string): number {
  io.out(json ? JSON.stringify(value) : text())
  return 0
}

export function tournamentCommand(withServices: <T>(fn: (services: Services) => Promise<T> | T) => Promise<T>): Command {
  return {
    summary: 'Create (any format, with its players or open for registration), list, start, fund, show, cancel a tournament, or disqualify a participant',
    usage:
      `arena tournament create --game <gameId> --name <name> [--format ${FORMATS.join('|')}]\n` +
      '         [--third-place] [--grand-final simple|reset] [--rounds N] [--deadline <seconds>] [--unrated]\n' +
      '         (--players <userId|username,...> | --closes-at <time> --max-players N --starts-at <time>\n' +
      '          [--check-in-opens-at <time> --check-in-closes-at <time>] [--seeding registration|random|rating]) [--json]\n' +
      '       arena tournament list [--status draft|registration|running|finalizing|completed|cancelled] [--after <cursor>] [--limit N] [--json]\n' +
      '         [--entry-fee <amount>] [--prizes <amount,amount,...>]\n' +
      '       arena tournament start <tournamentId> [--json]\n' +
      '       arena tournament fund <tournamentId> --amount <amount> --reference <text> [--json]\n' +
      '       arena tournament show <tournamentId> [--json]\n' +
      '       arena tournament cancel <tournamentId> --reason <text> [--json]\n' +
      '       arena tournament disqualify <tournamentId> <participantId> --reason <text> [--json]\n' +
      '  <time>: ISO-8601 with its offset (2030-05-01T18:00:00Z), or from now: +90s, +30m, +2h, +7d',
    options: {
      game: { type: 'string' },
      name: { type: 'string' },
      format: { type: 'string' },
      players: { type: 'string' },
      deadline: { type: 'string' },
      unrated: { type: 'boolean' },
      'third-place': { type: 'boolean' },
      'grand-final': { type: 'string' },
      rounds: { type: 'string' },
      'closes-at': { type: 'string' },
      'max-players': { type: 'string' },
      'starts-at': { type: 'string' },
      'check-in-opens-at': { type: 'string' },
      'check-in-closes-at': { type: 'string' },
      seeding: { type: 'string' },
      'entry-fee': { type: 'string' },
      prizes: { type: 'string' },
      amount: { type: 'string' },
      reference: { type: 'string' },
      status: { type: 'string' },
      after: { type: 'string' },
      limit: { type: 'string' },
      reason: { type: 'string' },
      json: { type: 'boolean' },
    },
    positionals: true,
    async run({ values, positionals }, io) {
      const [action, id] = positionals
      const json = values.json === true
      const show = async (t: Tournament) => {
        const usernames = json ? new Map<string, string>() : await withServices(({ operations }) => operations.usernames(t.participants.map((p) => p.userId)))
        return print(io, json, { tournament: t }, () => tournamentText(t, usernames))
      }
      const need = (value: string | undefined, what: string) => {
        if (!value) throw new UsageError(`missing ${what}`)
        return value
      }
      if (action === 'create') {
        const body = createBody(values, new Date())
        return show(await withServices((services) => services.games.createTournament(body, cliActor(services)).catch((error: unknown) => Promise.reject(byFlag(error)))))
      }
      if (action === 'list') {
        const status = str(values, 'status') as Status | undefined
        if (status !== undefined && !STATUSES.includes(status)) throw new UsageError(`--status takes ${STATUSES.join(', ')}; got "${status}"`)
        const limit = str(values, 'limit')
        const query = {
          ...(status !== undefined ? { status } : {}),
          ...(values.after !== undefined ? { after: str(values, 'after')! } : {}),
          ...(limit !== undefined ? { limit: wholeNumber(limit, '--limit', { minimum: 1, maximum: 100 }) } : {}),
        }
        const page = await withServices(({ games }) => games.listTournaments(query))
        return print(io, json, page, () => listText(page))
      }
      if (action === 'start') return show(await withServices((services) => services.games.startTournament(need(id, '<tournamentId>'), cliActor(services))))
      if (action === 'fund') {
        const tournamentId = need(id, '<tournamentId>')
        const input = { amount: need(str(values, 'amount'), '--amount'), reference: need(str(values, 'reference'), '--reference') }
        const pool = await withServices((services) => services.games.fund(tournamentId, input, cliActor(services)).catch((error: unknown) => Promise.reject(byFlag(error))))
        return print(io, json, pool, () => `${pool.tournamentId}  escrow ${pool.escrow}  prizes ${pool.prizesTotal}`)
      }
      if (action === 'show') return show(await withServices(({ games }) => games.getTournament(need(id, '<tournamentId>'))))
      const reason = () => need(str(values, 'reason'), '--reason')
      if (action === 'cancel') {
        const tournamentId = need(id, '<tournamentId>')
        const why = reason()
        return show(await withServices((services) => services.games.cancelTournament(tournamentId, why, cliActor(services))))
      }
      if (action === 'disqualify') {
        const tournamentId = need(id, '<tournamentId>')
        const participantId = need(positionals[2], '<participantId>')
        const why = reason()
        const result = await withServices((services) => services.tournamentOperations.disqualify(tournamentId, participantId, why, cliActor(services)))
        return print(io, json, result, () => disqualifiedText(participantId, result.match))
      }
      throw new UsageError(`unknown action "${action ?? ''}"`)
    },
  }
}
