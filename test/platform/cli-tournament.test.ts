// The operator CLI for issue 19: a tournament with a match deadline,
// disqualify, correct and cancel, running the same services as the admin
// routes on the app's own database.
import { afterAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { tempDir } from '../helpers/app'
import { claim, createArenaApp, createGame, playerOf, playOut, players, tournament, type MatchView } from '../helpers/arena'
import { run, SOURCE_COMMAND } from '../helpers/process'
import { UsageError } from '../../src/cli/command'
import { createBody, instantFlag } from '../../src/cli/tournament-command'

const dataDir = tempDir('arena-cli-t19-')
const app = await createArenaApp({}, { dataDir })
afterAll(async () => {
  await app.close()
  rmSync(dataDir, { recursive: true, force: true })
})

test('tournament create --deadline, disqualify, match correct, tournament cancel', async () => {
  const env = { ARENA_DATA_DIR: dataDir, ...app.databaseEnv }
  const cli = async (...args: string[]) => {
    const result = await run([...SOURCE_COMMAND, ...args, '--json'], env)
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' })
    return JSON.parse(result.stdout)
  }
  const { game, gameKey } = await createGame(app)
  const people = await players(app, 4)
  const { tournament: created } = await cli('tournament', 'create', '--game', game.id, '--name', 'CLI Cup', '--players', people.map((p) => p.username).join(','), '--deadline', '90')
  expect(created.options).toEqual({ matchDeadlineS: 90 })
  const { tournament: t } = await cli('tournament', 'start', created.id)
  const [m1, m2] = t.matches.filter((m: { status: string }) => m.status === 'running')
  expect(m1.deadline).not.toBeNull()

  await playOut(app, game.id, gameKey, t, people, m1, m1.slot1ParticipantId)
  const corrected = await cli('match', 'correct', m1.id, '--winner', m1.slot2ParticipantId, '--reason', 'typo')
  expect(corrected.match.winnerParticipantId).toBe(m1.slot2ParticipantId)

  const dq = await cli('tournament', 'disqualify', t.id, m2.slot1ParticipantId, '--reason', 'cheating')
  expect(dq.match).toMatchObject({ id: m2.id, status: 'decided', winnerParticipantId: m2.slot2ParticipantId })

  const { tournament: cancelled } = await cli('tournament', 'cancel', t.id, '--reason', 'storm')
  expect(cancelled.status).toBe('cancelled')
  expect((await tournament(app, t.id)).matches.find((m) => m.id === m1.nextMatchId)!.status).toBe('cancelled')

  const usage = await run([...SOURCE_COMMAND, 'tournament', 'cancel', t.id], env)
  expect(usage.code).toBe(2)
  const refused = await run([...SOURCE_COMMAND, 'tournament', 'cancel', t.id, '--reason', 'again'], env)
  expect(refused.code).toBe(1)
}, 60_000)

test('every format from the command line: options, the bracket, a draw, a disqualification and the standings in the printout', async () => {
  const env = { ARENA_DATA_DIR: dataDir, ...app.databaseEnv }
  const cli = async (...args: string[]) => {
    const result = await run([...SOURCE_COMMAND, ...args], env)
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' })
    return result.stdout
  }
  const json = async (...args: string[]) => JSON.parse(await cli(...args, '--json'))
  const { game, gameKey } = await createGame(app)
  const people = await players(app, 4)
  const names = people.map((p) => p.username).join(',')

  const { tournament: se } = await json('tournament', 'create', '--game', game.id, '--name', 'SE', '--third-place', '--players', names)
  expect(se).toMatchObject({ format: 'single_elimination', status: 'draft', options: { thirdPlaceMatch: true } })
  const { tournament: seStarted } = await json('tournament', 'start', se.id)
  const third = seStarted.matches.find((m: { bracket: string }) => m.bracket === 'third_place')
  expect(third).toMatchObject({ round: 2, position: 1, status: 'waiting' })
  expect(seStarted.matches.filter((m: { loserNextMatchId: string | null }) => m.loserNextMatchId === third.id)).toHaveLength(2)

  const { tournament: de } = await json('tournament', 'create', '--game', game.id, '--name', 'DE', '--format', 'double_elimination', '--grand-final', 'simple', '--players', names)
  expect(de.options).toEqual({ grandFinal: 'simple' })
  const { tournament: deStarted } = await json('tournament', 'start', de.id)
  expect(deStarted.matches.map((m: { bracket: string; round: number; position: number }) => `${m.bracket}:${m.round}:${m.position}`).sort()).toEqual(
    ['winners:1:1', 'winners:1:2', 'winners:2:1', 'losers:1:1', 'losers:2:1', 'grand_final:1:1'].sort(),
  )

  const { tournament: swiss } = await json('tournament', 'create', '--game', game.id, '--name', 'Swiss', '--format', 'swiss', '--rounds', '3', '--players', names)
  expect(swiss.options).toEqual({ rounds: 3 })
  const { tournament: swissStarted } = await json('tournament', 'start', swiss.id)
  expect(swissStarted.matches.map((m: { bracket: string; round: number; status: string }) => [m.bracket, m.round, m.status])).toEqual([
    ['swiss', 1, 'running'],
    ['swiss', 1, 'running'],
  ])

  // A league of three: one draw, then the third player disqualified.
  const { tournament: rr } = await json('tournament', 'create', '--game', game.id, '--name', 'League', '--format', 'round_robin', '--players', names.split(',').slice(0, 3).join(','))
  const { tournament: league } = await json('tournament', 'start', rr.id)
  expect(league.matches).toHaveLength(3)
  expect(league.matches.every((m: { status: string; bracket: string }) => m.status === 'running' && m.bracket === 'round_robin')).toBe(true)
  const [p1, p2, p3] = league.participants as { id: string }[]
  const drawn: MatchView = league.matches.find((m: MatchView) => m.slot1ParticipantId === p1!.id && m.slot2ParticipantId === p2!.id)
  const [a, b] = [playerOf(league, people, p1!.id), playerOf(league, people, p2!.id)]
  expect((await claim(app, game.id, gameKey, a, drawn.id, { outcome: 'DRAW' })).decision).toBe('pending')
  expect(await claim(app, game.id, gameKey, b, drawn.id, { outcome: 'DRAW' })).toMatchObject({ decision: 'game_advance', outcome: 'DRAW' })
  const out = p3!
  await json('tournament', 'disqualify', rr.id, out.id, '--reason', 'cheating')

  const text = await cli('tournament', 'show', rr.id)
  const lines = text.trimEnd().split('\n')
  expect(lines[0]).toMatch(new RegExp(`^${rr.id}  League  round_robin  (finalizing|completed)  game ${game.id}`))
  // Each participant is its id and its player's username; seeded in the order given.
  const usernames = names.split(',').slice(0, 3)
  expect(lines.find((l) => l.includes(out.id) && l.includes('seed'))).toContain('DISQUALIFIED')
  expect(lines.find((l) => l.includes(out.id) && l.includes('seed'))).toContain(` ${usernames[2]}  DISQUALIFIED`)
  expect(lines.find((l) => l.includes(drawn.id))).toMatch(/round_robin {2}round {2}\d #\d +mat_\S+ {2}decided {3}par_\S+ \(\S+\) vs par_\S+ \(\S+\) {2}draw$/)
  expect(lines.find((l) => l.includes(drawn.id))).toContain(`${p1!.id} (${usernames[0]}) vs ${p2!.id} (${usernames[1]})`)
  expect(lines.filter((l) => l.includes(`${out.id} (${usernames[2]}) (disqualified)`) && l.includes('won by'))).toHaveLength(2)
  const table = lines.slice(lines.indexOf('standings') + 1)
  expect(table[0]).toMatch(/^ {2}rank {2}participant +wins {2}draws {2}losses {2}points$/)
  // Seeds 1 and 2: a walkover won and a draw each, 4 points, level head to head and on wins: by seed. Seed 3 last, two losses.
  expect(table.slice(1).map((l) => l.trim().split(/ +/).filter((w) => !w.startsWith('(')))).toEqual([
    ['1', p1!.id, '1', '1', '0', '4'],
    ['2', p2!.id, '1', '1', '0', '4'],
    ['3', out.id, '0', '0', '2', '0'],
  ])

  // A tournament players register for, listed by status.
  const { tournament: open } = await json(
    'tournament', 'create', '--game', game.id, '--name', 'Open', '--format', 'swiss', '--rounds', '7',
    '--closes-at', '+1h', '--max-players', '8', '--starts-at', '+2h', '--check-in-opens-at', '+30m', '--check-in-closes-at', '+2h', '--seeding', 'random',
  )
  expect(open).toMatchObject({ status: 'registration', format: 'swiss', options: { rounds: 7 }, registration: { maxPlayers: 8, seeding: 'random', seed: null } })
  const { closesAt, startsAt, checkIn } = open.registration
  const ms = (iso: string) => Date.parse(iso)
  expect([ms(startsAt) - ms(closesAt), ms(checkIn.closesAt) - ms(checkIn.opensAt), ms(startsAt) - ms(checkIn.closesAt)]).toEqual([3_600_000, 5_400_000, 0])
  const listed: { tournaments: { id: string; status: string }[] } = await json('tournament', 'list', '--status', 'registration', '--limit', '100')
  expect(listed.tournaments.map((t) => t.id)).toContain(open.id)
  expect(listed.tournaments.every((t) => t.status === 'registration')).toBe(true)
  expect((await cli('tournament', 'list', '--status', 'registration')).split('\n').find((l) => l.startsWith(open.id))).toMatch(/ swiss +registration +0\/8 players {2}"Open"  game gam_\S+  closes \S+  starts \S+$/)

  // The service's own checks answer with the flag: exit 1. Flags that do not fit: exit 2.
  const late = await run([...SOURCE_COMMAND, 'tournament', 'create', '--game', game.id, '--name', 'X', '--closes-at', '+3h', '--max-players', '8', '--starts-at', '+2h'], env)
  expect(late.code).toBe(1)
  expect(late.stderr).toContain('--closes-at: Must be at or before startsAt')
  const misfit = await run([...SOURCE_COMMAND, 'tournament', 'create', '--game', game.id, '--name', 'X', '--format', 'swiss', '--third-place', '--players', names], env)
  expect(misfit.code).toBe(2)
  expect(misfit.stderr).toContain('--third-place is for --format single_elimination')
  // Swiss rounds against the places: at most maxPlayers − 1, checked by the service as over HTTP.
  const tooMany = await run([...SOURCE_COMMAND, 'tournament', 'create', '--game', game.id, '--name', 'X', '--format', 'swiss', '--rounds', '8', '--closes-at', '+1h', '--max-players', '8', '--starts-at', '+2h'], env)
  expect(tooMany.code).toBe(1)
  expect(tooMany.stderr).toContain('--rounds: At most 7 rounds for 8 players')
}, 120_000)

describe('tournament create: the flags make the body POST /admin/tournaments takes', () => {
  const now = new Date('2030-01-01T12:00:00.000Z')
  const base = { game: 'gam_1', name: 'N' }
  const usage = (values: Record<string, unknown>) => {
    try {
      createBody(values, now)
    } catch (error) {
      expect(error).toBeInstanceOf(UsageError)
      return (error as Error).message
    }
    throw new Error(`accepted ${JSON.stringify(values)}`)
  }

  test('each format with its options; single elimination by default', () => {
    expect(createBody({ ...base, players: 'a, b,c' }, now)).toEqual({ gameId: 'gam_1', name: 'N', format: 'single_elimination', participants: ['a', 'b', 'c'] })
    expect(createBody({ ...base, players: 'a,b,c,d', 'third-place': true, deadline: '90' }, now)).toMatchObject({ options: { thirdPlaceMatch: true, matchDeadlineS: 90 } })
    expect(createBody({ ...base, players: 'a,b', format: 'double_elimination', 'grand-final': 'simple' }, now)).toMatchObject({ format: 'double_elimination', options: { grandFinal: 'simple' } })
    expect(createBody({ ...base, players: 'a,b', format: 'round_robin' }, now)).toEqual({ gameId: 'gam_1', name: 'N', format: 'round_robin', participants: ['a', 'b'] })
    expect(createBody({ ...base, players: 'a,b,c,d', format: 'swiss', rounds: '3' }, now)).toMatchObject({ format: 'swiss', options: { rounds: 3 } })
    for (const format of ['single_elimination', 'double_elimination', 'round_robin', 'swiss']) {
      expect(createBody({ ...base, players: 'a,b', format, unrated: true }, now)).toMatchObject({ format, options: { rated: false } })
    }
  })

  test('a tournament players register for: times as ISO-8601 or from now', () => {
    expect(
      createBody(
        {
          ...base,
          format: 'swiss',
          'closes-at': '+2h',
          'max-players': '16',
          'starts-at': '2030-01-02T09:30:00+01:00',
          'check-in-opens-at': '+90s',
          'check-in-closes-at': '+1d',
          seeding: 'random',
        },
        now,
      ),
    ).toEqual({
      gameId: 'gam_1',
      name: 'N',
      format: 'swiss',
      registration: {
        closesAt: '2030-01-01T14:00:00.000Z',
        maxPlayers: 16,
        checkIn: { opensAt: '2030-01-01T12:01:30.000Z', closesAt: '2030-01-02T12:00:00.000Z' },
      },
      startsAt: '2030-01-02T08:30:00.000Z',
      seeding: 'random',
    })
    expect(instantFlag('+30m', '--x', now)).toBe('2030-01-01T12:30:00.000Z')
    for (const bad of ['tomorrow', '2030-01-02', '2030-01-02T10:00:00', '+5w', '-1h', '2030-13-45T10:00:00Z']) expect(() => instantFlag(bad, '--x', now)).toThrow(UsageError)
  })

  test('flags that do not fit are usage errors that name them', () => {
    expect(usage({ ...base, players: 'a,b', format: 'knockout' })).toContain('--format')
    expect(usage({ ...base, players: 'a,b', format: 'swiss', 'third-place': true })).toBe('--third-place is for --format single_elimination, not swiss')
    expect(usage({ ...base, players: 'a,b', 'grand-final': 'reset' })).toContain('--grand-final is for --format double_elimination')
    expect(usage({ ...base, players: 'a,b', format: 'double_elimination', 'grand-final': 'twice' })).toContain('simple or reset')
    expect(usage({ ...base, players: 'a,b', format: 'round_robin', rounds: '2' })).toContain('--rounds is for --format swiss')
    expect(usage({ ...base, players: 'a,b', format: 'swiss', rounds: '0' })).toBe('--rounds takes a whole number from 1 to 1023, got "0"')
    expect(usage({ ...base, players: 'a,b', deadline: '1.5' })).toContain('--deadline takes a whole number from 1 to 31536000')
    expect(usage({ ...base, players: 'a' })).toContain('2 to 1024')
    expect(usage({ ...base })).toContain('--players')
    expect(usage({ ...base, players: 'a,b', 'closes-at': '+1h' })).toContain('--closes-at')
    expect(usage({ ...base, 'closes-at': '+1h', 'max-players': '8' })).toBe('a tournament players register for needs --starts-at too')
    expect(usage({ ...base, 'closes-at': '+1h', 'max-players': '1', 'starts-at': '+2h' })).toContain('--max-players takes a whole number from 2 to 1024')
    expect(usage({ ...base, 'closes-at': '+1h', 'max-players': '8', 'starts-at': '+2h', 'check-in-opens-at': '+1h' })).toContain('go together')
    expect(usage({ ...base, 'closes-at': '+1h', 'max-players': '8', 'starts-at': '+2h', seeding: 'elo' })).toContain('--seeding')
    expect(createBody({ ...base, 'closes-at': '+1h', 'max-players': '8', 'starts-at': '+2h', seeding: 'rating' }, now)).toMatchObject({ seeding: 'rating' })
    expect(usage({ name: 'N', players: 'a,b' })).toBe('missing --game')
  })
})
