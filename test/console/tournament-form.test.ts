// The "new tournament" form read into the admin API's body
// (src/console/tournament-form.ts): strings to numbers, lists and UTC times;
// only the chosen format's options; the API's own schema refuses the rest.
import { describe, expect, test } from 'bun:test'
import { participantList, readTournamentForm, utcInstant, type TournamentFormFields } from '../../src/console/tournament-form'

const base: TournamentFormFields = { _csrf: 'x', gameId: 'gam_1', name: ' Cup ', format: 'single_elimination', mode: 'players', participants: 'alice, bob\ncarol  dave' }

describe('tournament form', () => {
  test('players: usernames split on commas, spaces and new lines, in order; the name trimmed', () => {
    const read = readTournamentForm(base)
    expect(read).toEqual({ ok: true, body: { gameId: 'gam_1', name: 'Cup', format: 'single_elimination', participants: ['alice', 'bob', 'carol', 'dave'] } })
    expect(participantList(' a,,b ;c\n')).toEqual(['a', 'b', 'c'])
  })

  test("only the chosen format's options are sent", () => {
    const fields = { ...base, thirdPlaceMatch: 'on', grandFinal: 'simple', rounds: '3', matchDeadlineS: '600' }
    expect(readTournamentForm(fields)).toMatchObject({ ok: true, body: { options: { thirdPlaceMatch: true, matchDeadlineS: 600 } } })
    expect(readTournamentForm({ ...fields, format: 'double_elimination' })).toMatchObject({ ok: true, body: { options: { grandFinal: 'simple', matchDeadlineS: 600 } } })
    expect(readTournamentForm({ ...fields, format: 'swiss' })).toMatchObject({ ok: true, body: { options: { rounds: 3, matchDeadlineS: 600 } } })
    const rr = readTournamentForm({ ...fields, format: 'round_robin' })
    expect(rr.ok && rr.body.options).toEqual({ matchDeadlineS: 600 })
  })

  test('unrated: the box sends options.rated false for any format; unchecked sends nothing (rated is the default)', () => {
    for (const format of ['single_elimination', 'double_elimination', 'round_robin', 'swiss']) {
      expect(readTournamentForm({ ...base, format, unrated: 'on' })).toMatchObject({ ok: true, body: { options: { rated: false } } })
    }
    const rated = readTournamentForm(base)
    expect(rated.ok && rated.body.options).toBeUndefined()
  })

  test('registration: times typed in UTC, check-in both ends or neither, fee and prizes as given', () => {
    const fields: TournamentFormFields = { ...base, mode: 'registration', participants: 'ignored', closesAt: '2030-01-01T10:00', maxPlayers: '16', startsAt: '2030-01-01T12:00', seeding: 'random', entryFee: '2.50', prizes: '10, 5' }
    expect(readTournamentForm({ ...fields, seeding: 'rating' })).toMatchObject({ ok: true, body: { seeding: 'rating' } })
    const unknown = readTournamentForm({ ...fields, seeding: 'alphabetical' })
    expect(unknown.ok && 'seeding' in unknown.body).toBe(false)
    expect(readTournamentForm(fields)).toEqual({
      ok: true,
      body: { gameId: 'gam_1', name: 'Cup', format: 'single_elimination', prizes: ['10', '5'], registration: { closesAt: '2030-01-01T10:00:00.000Z', maxPlayers: 16 }, startsAt: '2030-01-01T12:00:00.000Z', seeding: 'random', entryFee: '2.50' },
    })
    const halfCheckIn = readTournamentForm({ ...fields, checkInOpensAt: '2030-01-01T09:00' })
    expect(halfCheckIn).toEqual({ ok: false, errors: [{ path: 'checkIn', message: 'Give both ends of the check-in window, or neither' }] })
    expect(utcInstant('2030-01-01T09:00:30')).toBe('2030-01-01T09:00:30.000Z')
  })

  test('what the form or the API schema refuses comes back by field', () => {
    expect(readTournamentForm({ ...base, participants: 'alice' })).toEqual({ ok: false, errors: [{ path: 'participants', message: 'List at least two players' }] })
    expect(readTournamentForm({ ...base, matchDeadlineS: 'soon' })).toEqual({ ok: false, errors: [{ path: 'matchDeadlineS', message: 'Expected a whole number' }] })
    const missing = readTournamentForm({ ...base, mode: 'registration' })
    expect(missing.ok).toBe(false)
    expect(!missing.ok && missing.errors.map((e) => e.path)).toEqual(['closesAt', 'startsAt', 'maxPlayers'])
    const badFormat = readTournamentForm({ ...base, format: 'knockout' })
    expect(!badFormat.ok && badFormat.errors.map((e) => e.path)).toContain('format')
    const badTime = readTournamentForm({ ...base, mode: 'registration', closesAt: 'tomorrow', startsAt: '2030-01-01T12:00', maxPlayers: '8' })
    expect(!badTime.ok && badTime.errors.map((e) => e.path)).toEqual(['registration.closesAt'])
  })
})
