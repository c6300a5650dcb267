// The console's "new tournament" form, read into the admin API's
// CreateTournamentBody (src/modules/games/model.ts). Pure: fields in, body or
// field errors out. A form posts only strings, so numbers, check boxes,
// lists and times are read here, then the body is checked against the same
// TypeBox schema the API route validates with, and the service checks the
// rest (options against the player count, times against now) exactly as for
// the API.
//
// Choices the form makes for the operator:
// - times are typed in UTC (an <input type="datetime-local"> has no zone);
// - an option of another format is left out, not refused: the form shows
//   every format's options at once, and one left filled in while switching
//   formats is not a mistake worth a refusal;
// - participants are usernames (or user ids) separated by commas, spaces or
//   new lines, seeded in that order.
import { t, type Static } from 'elysia'
import { Value } from '@sinclair/typebox/value'
import { CreateTournamentBody } from '../modules/games/model'
import { ownerOf, type FormatOptionName } from '../modules/games/formats/engines'
import type { ErrorDetail } from '../shared/errors'

const Field = t.Optional(t.String({ maxLength: 20_000 }))

/** Every field of the form, as posted (all strings; an unchecked box is absent). */
export const TournamentFormFields = t.Object({
  _csrf: t.String({ maxLength: 128 }),
  gameId: t.String({ maxLength: 64 }),
  name: t.String({ maxLength: 100 }),
  format: t.String({ maxLength: 32 }),
  mode: t.Union([t.Literal('players'), t.Literal('registration')]),
  participants: Field,
  thirdPlaceMatch: Field,
  grandFinal: Field,
  rounds: Field,
  matchDeadlineS: Field,
  unrated: Field,
  closesAt: Field,
  maxPlayers: Field,
  checkInOpensAt: Field,
  checkInClosesAt: Field,
  startsAt: Field,
  seeding: Field,
  entryFee: Field,
  prizes: Field,
})
export type TournamentFormFields = Static<typeof TournamentFormFields>

export type FormResult = { ok: true; body: CreateTournamentBody } | { ok: false; errors: ErrorDetail[] }

const filled = (value: string | undefined): string | undefined => {
  const trimmed = value?.trim()
  return trimmed === undefined || trimmed === '' ? undefined : trimmed
}

/** `2026-11-24T10:00` (datetime-local, read as UTC) or a full ISO time → ISO; anything else is kept for the schema to refuse. */
export function utcInstant(value: string): string {
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(value)) return `${value}:00.000Z`
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/.test(value)) return `${value}.000Z`
  return value
}

/** The names in a participants field: split on commas, white space and new lines. */
export function participantList(value: string): string[] {
  return value.split(/[\s,;]+/).filter((name) => name !== '')
}

export function readTournamentForm(fields: TournamentFormFields): FormResult {
  const errors: ErrorDetail[] = []
  const integer = (name: keyof TournamentFormFields, value: string | undefined): number | undefined => {
    const text = filled(value)
    if (text === undefined) return undefined
    if (!/^\d{1,9}$/.test(text)) {
      errors.push({ path: name, message: 'Expected a whole number' })
      return undefined
    }
    return Number(text)
  }
  const format = fields.format
  const options: NonNullable<CreateTournamentBody['options']> = {}
  const deadline = integer('matchDeadlineS', fields.matchDeadlineS)
  if (deadline !== undefined) options.matchDeadlineS = deadline
  // Rated is the default: only the exception is sent.
  if (fields.unrated !== undefined) options.rated = false
  // A format's own option is read only when that format is chosen (the registry says whose it is).
  const mine = (option: FormatOptionName) => format === ownerOf(option).name
  if (mine('thirdPlaceMatch') && fields.thirdPlaceMatch !== undefined) options.thirdPlaceMatch = true
  if (mine('grandFinal') && (fields.grandFinal === 'simple' || fields.grandFinal === 'reset')) options.grandFinal = fields.grandFinal
  if (mine('rounds')) {
    const rounds = integer('rounds', fields.rounds)
    if (rounds !== undefined) options.rounds = rounds
  }

  const body: Record<string, unknown> = { gameId: fields.gameId, name: fields.name.trim(), format }
  if (Object.keys(options).length > 0) body.options = options
  const prizes = filled(fields.prizes)
  if (prizes !== undefined) body.prizes = prizes.split(/[\s,;]+/).filter((p) => p !== '')

  if (fields.mode === 'players') {
    const names = participantList(fields.participants ?? '')
    if (names.length < 2) errors.push({ path: 'participants', message: 'List at least two players' })
    body.participants = names
  } else {
    const closesAt = filled(fields.closesAt)
    const startsAt = filled(fields.startsAt)
    const maxPlayers = integer('maxPlayers', fields.maxPlayers)
    if (closesAt === undefined) errors.push({ path: 'closesAt', message: 'When registration closes is required' })
    if (startsAt === undefined) errors.push({ path: 'startsAt', message: 'When it starts is required' })
    if (maxPlayers === undefined && filled(fields.maxPlayers) === undefined) errors.push({ path: 'maxPlayers', message: 'The capacity is required' })
    const opensAt = filled(fields.checkInOpensAt)
    const checkInClosesAt = filled(fields.checkInClosesAt)
    if ((opensAt === undefined) !== (checkInClosesAt === undefined)) errors.push({ path: 'checkIn', message: 'Give both ends of the check-in window, or neither' })
    body.registration = {
      closesAt: utcInstant(closesAt ?? ''),
      maxPlayers: maxPlayers ?? 0,
      ...(opensAt !== undefined && checkInClosesAt !== undefined ? { checkIn: { opensAt: utcInstant(opensAt), closesAt: utcInstant(checkInClosesAt) } } : {}),
    }
    body.startsAt = utcInstant(startsAt ?? '')
    if (fields.seeding === 'random' || fields.seeding === 'registration' || fields.seeding === 'rating') body.seeding = fields.seeding
    const fee = filled(fields.entryFee)
    if (fee !== undefined) body.entryFee = fee
  }
  if (errors.length > 0) return { ok: false, errors }
  // The API's own schema: what the route would refuse with 422, the form refuses the same way.
  if (!Value.Check(CreateTournamentBody, body)) {
    const seen = new Set<string>()
    for (const error of Value.Errors(CreateTournamentBody, body)) {
      const path = error.path.replace(/^\//, '').replaceAll('/', '.') || 'form'
      if (seen.has(path)) continue
      seen.add(path)
      errors.push({ path, message: error.message })
    }
    return { ok: false, errors }
  }
  return { ok: true, body: body as CreateTournamentBody }
}
