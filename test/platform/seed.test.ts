// `arena seed` (and `npm run seed`): one command makes a game, funded players
// with a PIN and a started tournament, on the configured database (the data
// dir's, or ARENA_DATABASE_URL's); the server then serves them (checked here
// through the real routes of an app on the same database).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { createTestApp, postJson, req, tempDir, testDatabaseEnv, type TestApp } from '../helpers/app'
import { run, SOURCE_COMMAND, type RunResult } from '../helpers/process'
import { someAddress } from '../helpers/purchases'
import { isCommonPin } from '../../src/modules/security/pin-rules'
import { AppError } from '../../src/shared/errors'
import { parseSeedOptions, randomPin, seed, SeedError, type SeedResult } from '../../src/cli/seed-command'
import { UsageError } from '../../src/cli/command'

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

  test('--json prints one line: the game, its key, the password and PIN, 4 funded players and a running tournament', () => {
    expect(first.code).toBe(0)
    expect(first.stderr).toBe('')
    expect(first.stdout.trim().split('\n')).toHaveLength(1)
    expect(Object.keys(seeded).sort()).toEqual(['game', 'gameKey', 'password', 'pin', 'players', 'tournament'])
    const prefix = seeded.players[0]!.username.replace(/_1$/, '')
    expect(prefix).toMatch(/^[a-z0-9]{4}$/)
    expect(seeded.game).toEqual({ id: expect.stringMatching(/^gam_/), name: `Local game ${prefix}`, createdAt: expect.any(String) })
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
    const t = seeded.tournament
    expect(t).toMatchObject({ gameId: seeded.game.id, name: `Local cup ${prefix}`, format: 'single_elimination', status: 'running', winnerParticipantId: null })
    expect(t.participants.map((p) => p.userId)).toEqual(seeded.players.map((p) => p.id))
    expect(t.matches.filter((m) => m.round === 1 && m.status === 'running')).toHaveLength(2)
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

    test('the player has a running first-round match in a running 4-player tournament', async () => {
      const mine = await ctx.handle(req('/api/v1/me/matches', { headers: bearer }))
      const { matches } = (await mine.json()) as { matches: { matchId: string; tournamentId: string; status: string; round: number; opponent: { username: string } | null }[] }
      expect(matches).toHaveLength(1)
      expect(matches[0]).toMatchObject({ tournamentId: seeded.tournament.id, status: 'running', round: 1, opponent: { username: seeded.players[3]!.username } })
      const res = await ctx.handle(req(`/api/v1/tournaments/${seeded.tournament.id}`, { headers: bearer }))
      const { tournament } = (await res.json()) as { tournament: SeedResult['tournament'] }
      expect(tournament.status).toBe('running')
      expect(tournament.participants).toHaveLength(4)
      expect(tournament.matches.filter((m) => m.round === 1 && m.status === 'running')).toHaveLength(2)
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
      expect(result.stderr).toContain('Usage: arena seed')
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
      const failure = await seed({ services: { ...ctx.services, pins } }, options).catch((error: unknown) => error)
      expect(failure).toBeInstanceOf(SeedError)
      const error = failure as SeedError
      expect(error.step).toBe('setting the PIN of mid_2')
      expect((error.cause as AppError).code).toBe('rate_limited')
      expect(error.created.gameId).toMatch(/^gam_/)
      expect(error.created.users).toHaveLength(2)
      expect(error.created.tournamentId).toBeUndefined()
    } finally {
      await ctx.close()
    }
  })
})
