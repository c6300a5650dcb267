// Rated decisions across two instances of the compiled binary on one
// PostgreSQL database (contract §15, issue 38), over real HTTP:
// - the same six players in five round robins at once, every round's
//   deciding claims sent together, each match's two claims to different
//   instances: no claim answered other than 200 (no 5xx, no 503 from a
//   retry budget run out), no deadlock in the server's log (two decisions
//   sharing two players lock them in user id order), and the history is one
//   chain per player that replays through the pure Glicko-2 module in one
//   serial order (test/helpers/rating-chains.ts);
// - a season scheduled through A's admin route while decisions go to A
//   only, started by its durable job on instance B (A runs no jobs): every chain unbroken, one
//   reset row each, every row in exactly one season (the old one before the
//   reset, the new one from it on), decisions after the start in the new one.
// Whether the job's moment falls inside a burst is the machines' timing;
// test/ratings/concurrent-ratings.test.ts holds the job and a decision on
// the rows until both wait, in process.
//
// The seedings and the results come from the seed printed at the start
// (ARENA_TEST_SEED replays them, as far as the timing of real processes
// allows).
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { eq } from 'drizzle-orm'
import { drizzle } from 'drizzle-orm/postgres-js'
import postgres from 'postgres'
import * as postgresTables from '../../src/db/postgres/schema'
import type * as sqliteTables from '../../src/db/schema'
import type { Db } from '../../src/db/sqlite/connection'
import { onEngine, postJson, remote, tempDir, testDatabaseEnv, type Handler, type TestApp } from '../helpers/app'
import { admin, ADMIN_TOKEN, createGame, players, startedTournament, type Player, type TournamentView } from '../helpers/arena'
import { describeOnEngine } from '../helpers/engine'
import { postgresConnectOptions } from '../helpers/postgres'
import { BINARY, buildBinary, startServe, type ServerProcess } from '../helpers/process'
import { checkChains, deadlocksLogged, decideAllAtOnce, ratingRows } from '../helpers/rating-chains'
import { chooseSeed, seededRandom, shuffleWith } from '../helpers/seed'
import { waitFor } from '../helpers/wait'

const SEED = onEngine('postgres') ? chooseSeed('ARENA_TEST_SEED', 'ratings across instances') : 0
const JWT_SECRET = 'scale-ratings-signing-secret-0123456789abcdef'
const PLAYERS = 6
/** Tournaments decided at once: each player holds one open game session per tournament in a round (at most 5 per game). */
const TOURNAMENTS = 5

interface Instance {
  name: string
  server: ServerProcess
  http: Handler
}

let database: Record<string, string> = {}
const dataDirs: string[] = []
const servers: ServerProcess[] = []
let a: Instance
let b: Instance
let client: postgres.Sql
let peek: TestApp['peek']

async function startInstance(name: string, env: Record<string, string> = {}): Promise<Instance> {
  const dataDir = tempDir(`arena-ratings-${name}-`)
  dataDirs.push(dataDir)
  const server = await startServe([BINARY, 'serve'], { ...database, ARENA_DATA_DIR: dataDir, ARENA_JWT_SECRET: JWT_SECRET, ARENA_ADMIN_TOKEN: ADMIN_TOKEN, ...env }, { timeoutMs: 30_000 })
  servers.push(server)
  return { name, server, http: remote(() => server.url) }
}

/** A game and its players (signed up through A), in `count` started round robins, each seeded in its own order (through B). */
async function roundRobins(random: () => number, count: number, game?: { id: string; gameKey: string }, people?: Player[]): Promise<{ game: { id: string; gameKey: string }; people: Player[]; tournaments: TournamentView[] }> {
  let g = game
  if (g === undefined) {
    const created = await createGame(a.http)
    g = { id: created.game.id, gameKey: created.gameKey }
  }
  const who = people ?? (await players(a.http, PLAYERS))
  const tournaments: TournamentView[] = []
  for (let k = 0; k < count; k++) tournaments.push(await startedTournament(b.http, g.id, shuffleWith(random, who), { format: 'round_robin' }))
  return { game: g, people: who, tournaments }
}

/** Error lines either instance logged (a 5xx is logged as one). */
function errorLines(): Record<string, unknown>[] {
  return servers.flatMap((s) => s.lines.filter((line) => line.level === 'error' || line.level === 'fatal'))
}

afterAll(async () => {
  for (const server of servers) server.proc.kill('SIGKILL')
  await Promise.all(servers.map((server) => server.proc.exited))
  await client?.end({ timeout: 1 })
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true })
})

describeOnEngine('postgres', 'rated decisions across two instances of the binary', () => {
  beforeAll(async () => {
    await buildBinary()
    database = await testDatabaseEnv('postgres')
    // A runs no jobs: a season's start (and every finalization) is B's.
    ;[a, b] = await Promise.all([startInstance('a', { ARENA_JOBS_ENABLED: 'false' }), startInstance('b')])
    const { url, path } = postgresConnectOptions(database.ARENA_DATABASE_URL!)
    client = postgres(url, { path, max: 2, onnotice: () => {} })
    peek = { db: drizzle({ client }) as unknown as Db, tables: postgresTables as unknown as typeof sqliteTables }
  }, 120_000)

  test('one player in a match of each of five round robins, decided at once on both instances: all 200, no deadlock, one chain per player that replays', async () => {
    const random = seededRandom(SEED, 1)
    const deadlocks = await deadlocksLogged(database.ARENA_DATABASE_URL!)
    const { game, people, tournaments } = await roundRobins(random, TOURNAMENTS)
    const { decided, answers } = await decideAllAtOnce([a.http, b.http], game, people, tournaments, random)
    expect(decided).toHaveLength((TOURNAMENTS * PLAYERS * (PLAYERS - 1)) / 2)
    expect(answers.map((x) => x.status)).toEqual(decided.map(() => 200))

    const rows = await ratingRows(peek, game.id)
    expect(checkChains({ ...rows, decided, tau: 0.5 })).toHaveLength(decided.length)
    expect(rows.ratings.map((r) => [r.matches, r.seq])).toEqual(people.map(() => [TOURNAMENTS * (PLAYERS - 1), TOURNAMENTS * (PLAYERS - 1)]))
    expect(await deadlocksLogged(database.ARENA_DATABASE_URL!)).toBe(deadlocks)
    expect(errorLines()).toEqual([])
  }, 60_000)

  test('a season started by its job on B while decisions go to A: every chain unbroken, one reset each, every row in exactly one season', async () => {
    const random = seededRandom(SEED, 2)
    const deadlocks = await deadlocksLogged(database.ARENA_DATABASE_URL!)
    const { game, people, tournaments } = await roundRobins(random, 3)
    let seasonId = ''
    // Round 1 gives everyone a rating; the season is due a moment after round 2's claims go out.
    const before = await decideAllAtOnce([a.http], game, people, tournaments, random, {
      before: async (round) => {
        if (round !== 2) return
        const res = await a.http.handle(postJson(`/api/v1/admin/games/${game.id}/seasons`, { name: 'Season 2', startsAt: new Date(Date.now() + 300).toISOString(), reset: 'soft' }, admin))
        expect(res.status).toBe(201)
        seasonId = ((await res.json()) as { season: { id: string } }).season.id
      },
    })
    const seasonOf = async () => (await peek.db.select().from(peek.tables.seasons).where(eq(peek.tables.seasons.id, seasonId)))[0]
    await waitFor('the new season started by B', async () => ((await seasonOf())?.status === 'current' ? true : undefined), 15_000)
    // Decisions after the start: two more round robins of the same players.
    const more = await roundRobins(random, 2, game, people)
    const after = await decideAllAtOnce([a.http], game, people, more.tournaments, random)
    const answers = [...before.answers, ...after.answers]
    expect(answers.map((x) => x.status)).toEqual(answers.map(() => 200))

    const rows = await ratingRows(peek, game.id)
    checkChains({ ...rows, decided: [...before.decided, ...after.decided], tau: 0.5, resets: new Map([[seasonId, 'soft']]) })
    const first = rows.history.find((r) => r.kind === 'match')!.seasonId
    for (const person of people) {
      const chain = rows.history.filter((r) => r.userId === person.userId)
      const reset = chain.findIndex((r) => r.kind === 'season_reset')
      expect(chain.filter((r) => r.kind === 'season_reset')).toHaveLength(1)
      expect(chain.slice(0, reset).every((r) => r.seasonId === first)).toBe(true)
      expect(chain.slice(reset).every((r) => r.seasonId === seasonId)).toBe(true)
      // Every match of the later round robins is in the new season.
      const later = new Set(after.decided.map((m) => m.matchId))
      expect(chain.filter((r) => later.has(r.matchId ?? '')).every((r) => r.seasonId === seasonId)).toBe(true)
    }
    expect(first).not.toBe(seasonId)
    expect(await deadlocksLogged(database.ARENA_DATABASE_URL!)).toBe(deadlocks)
    expect(errorLines()).toEqual([])
  }, 60_000)
})
