// `arena seed` (and `npm run seed`): one command makes a game, funded players
// with a PIN and a started tournament, on the configured database (the data
// dir's, or ARENA_DATABASE_URL's); the server then serves them (checked here
// through the real routes of an app on the same database).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { createTestApp, postJson, req, tempDir, testDatabaseEnv, type TestApp } from '../helpers/app'
import { CLI_OPERATOR, run, SOURCE_COMMAND, type RunResult } from '../helpers/process'
import { someAddress } from '../helpers/purchases'
import { isCommonPin } from '../../src/modules/security/pin-rules'
import { AppError } from '../../src/shared/errors'
import { parseSeedOptions, randomPin, seed, SeedError, type SeedResult } from '../../src/cli/seed-command'
import { UsageError } from '../../src/cli/command'
import { testActor } from '../helpers/actors'

const seedCli = (args: string[], env: Record<string, string>) => run([...SOURCE_COMMAND, 'seed', ...args], env)

function noStack(result: RunResult) {
  expect(result.stderr).not.toContain('    at ')
}

describe('arena seed', () => {
  const dataDir = tempDir('arena-seed-')
  let database: Record<string, string>
  let env: Record<string, string>
  let first: RunResult
  let second: RunResult
  let seeded: SeedResult

  beforeAll(async () => {
    database = await testDatabaseEnv()
    env = { ARENA_DATA_DIR: dataDir, ...database }
    // Two runs on one database: the second, in text mode, must not collide.
    first = await seedCli(['--json'], env)
    second = await seedCli([], env)
    seeded = JSON.parse(first.stdout) as SeedResult
  }, 30_000)
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

  test('--json prints one line: the game, its key, the password and PIN, 4 funded players and a running tournament of each format', () => {
    expect(first.code).toBe(0)
    expect(first.stderr).toBe('')
    expect(first.stdout.trim().split('\n')).toHaveLength(1)
    expect(Object.keys(seeded).sort()).toEqual(['game', 'gameKey', 'password', 'pin', 'players', 'tournaments'])
    const prefix = seeded.players[0]!.username.replace(/_1$/, '')
    expect(prefix).toMatch(/^[a-z0-9]{4}$/)
    expect(seeded.game).toEqual({ id: expect.stringMatching(/^gam_/), name: `Local game ${prefix}`, createdAt: expect.any(String), rating: { tau: 0.5, inactivityPeriodS: 604800 }, challengeRake: '0', results: 'claims' })
    expect(seeded.gameKey).toMatch(/^agk_/)
    expect(seeded.password).toMatch(/^[A-Za-z0-9_-]{12,}$/)
    expect(seeded.pin).toMatch(/^[0-9]{6}$/)
    expect(isCommonPin(seeded.pin)).toBe(false)
    expect(seeded.players).toHaveLength(4)
    seeded.players.forEach((p, i) => {
      expect(p).toEqual({
        id: expect.stringMatching(/^usr_/),
        username: `${prefix}_${i + 1}`,
        email: `${prefix}_${i + 1}@seed.arena.test`,
        balance: '100',
        address: expect.any(String),
      })
    })
    expect(new Set(seeded.players.map((p) => p.address)).size).toBe(4)
    const [se, de, rr, swiss] = seeded.tournaments
    expect(seeded.tournaments.map((t) => [t.format, t.name, t.status, t.gameId, t.winnerParticipantId, t.options])).toEqual([
      ['single_elimination', `Local cup ${prefix}`, 'running', seeded.game.id, null, { thirdPlaceMatch: true }],
      ['double_elimination', `Local double-elimination cup ${prefix}`, 'running', seeded.game.id, null, { grandFinal: 'reset' }],
      ['round_robin', `Local league ${prefix}`, 'running', seeded.game.id, null, {}],
      ['swiss', `Local Swiss ${prefix}`, 'running', seeded.game.id, null, {}],
    ])
    for (const t of seeded.tournaments) expect(t.participants.map((p) => p.userId)).toEqual(seeded.players.map((p) => p.id))
    const running = (t: SeedResult['tournaments'][number]) => t.matches.filter((m) => m.status === 'running').map((m) => `${m.bracket}:${m.round}:${m.position}`)
    expect(running(se!)).toEqual(['winners:1:1', 'winners:1:2'])
    expect(se!.matches.find((m) => m.bracket === 'third_place')).toMatchObject({ status: 'waiting', round: 2 })
    expect(running(de!)).toEqual(['winners:1:1', 'winners:1:2'])
    expect(de!.matches.filter((m) => m.bracket === 'losers')).toHaveLength(2)
    // Every pair of the four once, all playable; Swiss pairs its first round only.
    expect(running(rr!)).toHaveLength(6)
    expect(running(swiss!)).toEqual(['swiss:1:1', 'swiss:1:2'])
    expect(swiss!.matches).toHaveLength(2)
    expect(rr!.standings.map((s) => s.points)).toEqual([0, 0, 0, 0])
  })

  test('a second run on the same data dir picks another prefix; text mode shows the key, password and PIN', () => {
    expect(second.code).toBe(0)
    const prefix = seeded.players[0]!.username.replace(/_1$/, '')
    const other = /game {8}gam_[0-9a-f]+ {2}"Local game ([a-z0-9]{4})"/.exec(second.stdout)
    expect(other).not.toBeNull()
    expect(other![1]).not.toBe(prefix)
    expect(second.stdout).toMatch(/game key {4}agk_\S+ {2}\(shown once/)
    expect(second.stdout).toMatch(/password {4}[A-Za-z0-9]{16} /)
    expect(second.stdout).toMatch(/PIN {9}[0-9]{6} /)
    expect(second.stdout).toContain(`${other![1]}_4`)
    for (const [format, name] of [
      ['single_elimination', 'Local cup'],
      ['double_elimination', 'Local double-elimination cup'],
      ['round_robin', 'Local league'],
      ['swiss', 'Local Swiss'],
    ]) {
      expect(second.stdout).toMatch(new RegExp(`^  ${format} +trn_\\S+  "${name} ${other![1]}"  running`, 'm'))
    }
    expect(second.stdout).toContain(`(third-place match)`)
    expect(second.stdout).toMatch(new RegExp(`^    swiss round 1 #1  mat_\\S+  running   ${other![1]}_1 vs ${other![1]}_3$`, 'm'))
    expect(second.stdout).toContain('npm start')
  })

  describe('the server serves what was seeded', () => {
    let ctx: TestApp
    let bearer: Record<string, string>
    beforeAll(async () => {
      ctx = await createTestApp({ dataDir, env: database })
      const res = await ctx.handle(postJson('/api/v1/user/login', { identifier: seeded.players[0]!.username, password: seeded.password }))
      expect(res.status).toBe(200)
      bearer = { authorization: `Bearer ${((await res.json()) as { accessToken: string }).accessToken}` }
    })
    afterAll(() => ctx.close())

    test('the wallet holds the credited amount at the printed address', async () => {
      const res = await ctx.handle(req('/api/v1/wallet', { headers: bearer }))
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({ asset: 'USDC', balance: '100', address: seeded.players[0]!.address })
    })

    test('the first player has running matches in each of the four tournaments', async () => {
      const mine = await ctx.handle(req('/api/v1/me/matches', { headers: bearer }))
      const { matches } = (await mine.json()) as { matches: { matchId: string; tournamentId: string; bracket: string; status: string; round: number; opponent: { username: string } | null }[] }
      const [se, de, rr, swiss] = seeded.tournaments.map((t) => t.id)
      const opponents = (id: string | undefined) =>
        matches
          .filter((m) => m.tournamentId === id)
          .map((m) => `${m.bracket}:${m.round}:${m.status}:${m.opponent?.username}`)
          .sort()
      const name = (i: number) => seeded.players[i - 1]!.username
      // Seed 1 meets seed 4 in both brackets, everyone in the league (seed 1 stays put in the circle), seed 3 in Swiss round 1.
      expect(opponents(se)).toEqual([`winners:1:running:${name(4)}`])
      expect(opponents(de)).toEqual([`winners:1:running:${name(4)}`])
      expect(opponents(rr)).toEqual([`round_robin:1:running:${name(4)}`, `round_robin:2:running:${name(3)}`, `round_robin:3:running:${name(2)}`])
      expect(opponents(swiss)).toEqual([`swiss:1:running:${name(3)}`])
      expect(matches).toHaveLength(6)
      const res = await ctx.handle(req(`/api/v1/tournaments/${rr}`, { headers: bearer }))
      const { tournament } = (await res.json()) as { tournament: SeedResult['tournaments'][number] }
      expect(tournament).toMatchObject({ status: 'running', format: 'round_robin' })
      expect(tournament.participants).toHaveLength(4)
      expect(tournament.standings).toHaveLength(4)
    })

    test('the printed PIN verifies a PIN session (a withdrawal)', async () => {
      const minted = await ctx.handle(postJson('/api/v1/security/pin-session', {}, bearer))
      expect(minted.status).toBe(201)
      const session = (await minted.json()) as { sessionId: string; sessionToken: string }
      const res = await ctx.handle(
        postJson(
          `/api/v1/security/pin-session/${session.sessionId}/verify`,
          { pin: seeded.pin, amount: '1', destinationAddress: someAddress(), idempotencyKey: 'seed-test' },
          { ...bearer, 'x-secure-session': session.sessionToken },
        ),
      )
      expect(res.status).toBe(200)
      expect(await res.json()).toMatchObject({ valid: true, locked: false })
    })
  })

  test('each run is in the audit log: via cli as cli:<OS user>, one request id per run, and the chain verifies', async () => {
    const listed = await run([...SOURCE_COMMAND, 'audit', 'list', '--limit', '500', '--json'], env)
    expect(listed.code).toBe(0)
    const { records } = JSON.parse(listed.stdout) as { records: { via: string; action: string; target: string; requestId: string; operator: { name: string; role: string } }[] }
    expect(new Set(records.map((r) => `${r.via} ${r.operator.role} ${r.operator.name}`))).toEqual(new Set([`cli admin ${CLI_OPERATOR}`]))
    const runs = [...new Set(records.map((r) => r.requestId))]
    expect(runs).toHaveLength(2)
    const ofRun = (requestId: string) => records.filter((r) => r.requestId === requestId)
    const actions = ofRun(runs[0]!).map((r) => r.action)
    expect(actions).toEqual(['game.create', ...Array(4).fill('wallet.credit'), ...Array(4).fill(['tournament.create', 'tournament.start']).flat()])
    expect(ofRun(runs[0]!).filter((r) => r.action === 'tournament.start').map((r) => r.target)).toEqual(seeded.tournaments.map((t) => t.id))
    expect(ofRun(runs[1]!).map((r) => r.action)).toEqual(actions)
    const verified = await run([...SOURCE_COMMAND, 'audit', 'verify'], env)
    expect({ code: verified.code, stdout: verified.stdout }).toEqual({ code: 0, stdout: `ok: ${records.length} records, chain intact\n` })
  })

  test('a prefix already in use fails before writing anything: exit 1, the reason and its code, no stack trace', async () => {
    const prefix = seeded.players[0]!.username.replace(/_1$/, '')
    const result = await seedCli(['--prefix', prefix], env)
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('username_taken')
    expect(result.stderr).toContain(`"${prefix}"`)
    expect(result.stdout).toBe('')
    noStack(result)
  })
})

describe('arena seed refuses', () => {
  test('bad flags exit 2 with the usage line', async () => {
    const env = { ARENA_DATA_DIR: tempDir('arena-seed-') }
    const [players, pin] = await Promise.all([seedCli(['--players', '1'], env), seedCli(['--pin', '1234'], env)])
    for (const result of [players, pin]) {
      expect(result.code).toBe(2)
      expect(result.stderr).toContain('Usage: npx arena seed')
      noStack(result)
    }
    expect(players.stderr).toContain('--players')
    expect(pin.stderr).toContain('--pin')
  })

  test('ARENA_ENV=production: refused before touching the data dir', async () => {
    const dir = tempDir('arena-seed-')
    const result = await seedCli([], { ARENA_DATA_DIR: dir, ARENA_ENV: 'production', ARENA_JWT_SECRET: 'x'.repeat(40) })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('ARENA_ENV=production')
    expect(result.stdout).toBe('')
    expect(existsSync(join(dir, 'arena.sqlite'))).toBe(false)
  })

  test('options are checked before anything runs', () => {
    expect(parseSeedOptions({})).toMatchObject({ players: 4, amount: '100' })
    // "<prefix>_<n>" must fit 32 characters: 30 + "_4" does, 30 + "_10" does not.
    expect(parseSeedOptions({ prefix: 'x'.repeat(30) }).prefix).toBe('x'.repeat(30))
    expect(parseSeedOptions({ players: '64', prefix: 'x'.repeat(29) }).players).toBe(64)
    const refused: Record<string, string>[] = [
      { players: '65' },
      { players: '2.5' },
      { players: '10', prefix: 'x'.repeat(30) },
      { prefix: 'bad-prefix' },
      { prefix: '' },
      { password: 'short' },
      { pin: '123' },
      { pin: '12a4' },
      { pin: '777777' },
      { amount: '0' },
      { amount: '-5' },
      { amount: '1e3' },
    ]
    for (const values of refused) expect(() => parseSeedOptions(values)).toThrow(UsageError)
    for (let i = 0; i < 200; i++) expect(isCommonPin(randomPin())).toBe(false)
  })

  test('a failure midway names the step and what was already created', async () => {
    const ctx = await createTestApp()
    try {
      const options = { ...parseSeedOptions({ prefix: 'mid' }), players: 3 }
      let calls = 0
      const pins = {
        setPin: (userId: string, pin: string, password: string) => {
          if (++calls === 2) throw new AppError('rate_limited', 'Too many wrong passwords; try again later')
          return ctx.services.pins.setPin(userId, pin, password)
        },
      } as unknown as typeof ctx.services.pins
      const failure = await seed({ services: { ...ctx.services, pins }, by: testActor(ctx.services) }, options).catch((error: unknown) => error)
      expect(failure).toBeInstanceOf(SeedError)
      const error = failure as SeedError
      expect(error.step).toBe('setting the PIN of mid_2')
      expect((error.cause as AppError).code).toBe('rate_limited')
      expect(error.created.gameId).toMatch(/^gam_/)
      expect(error.created.users).toHaveLength(2)
      expect(error.created.tournamentIds).toEqual([])
    } finally {
      await ctx.close()
    }
  })
})

test('with 3 players: no third-place match (it needs two semi-finals), and a Swiss bye for the lowest seed', async () => {
  const ctx = await createTestApp()
  try {
    const result = await seed({ services: ctx.services, by: testActor(ctx.services) }, { ...parseSeedOptions({ prefix: 'three' }), players: 3 })
    const [se, de, rr, swiss] = result.tournaments
    expect(result.tournaments.map((t) => [t.format, t.status])).toEqual([
      ['single_elimination', 'running'],
      ['double_elimination', 'running'],
      ['round_robin', 'running'],
      ['swiss', 'running'],
    ])
    expect(se!.options).toEqual({})
    expect(se!.matches.some((m) => m.bracket === 'third_place')).toBe(false)
    expect(de!.matches.filter((m) => m.bracket === 'losers')).toHaveLength(1)
    expect(rr!.matches).toHaveLength(3)
    const seedOf = new Map(swiss!.participants.map((p) => [p.id, p.seed]))
    expect(swiss!.matches.map((m) => [m.status, seedOf.get(m.slot1ParticipantId!), m.slot2ParticipantId && seedOf.get(m.slot2ParticipantId)])).toEqual([
      ['running', 1, 2],
      ['decided', 3, null],
    ])
  } finally {
    await ctx.close()
  }
})
