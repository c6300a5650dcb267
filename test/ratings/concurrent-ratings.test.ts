// Concurrent rated decisions (contract §15, issue 38) on two instances of one
// database (two SQLite connections to one file, or two PostgreSQL pools):
// - every player of a game in a match of each of four round robins (the same
//   six players, seeded in a different order in each, so two decisions often
//   share both players, in either slot order), each round's deciding claims
//   sent at once, alternately to each instance: nothing lost;
// - corrections of two tournaments' matches racing the decisions of the same
//   players in the two others: each applied once, no deadlock;
// - a season started by its job on one instance while decisions run on the
//   other: on PostgreSQL the rating rows are held (by the test's own
//   connection) until the job and a decision both wait on them, so both read
//   them at once and only the row locks keep the chains whole.
// Afterwards (test/helpers/rating-chains.ts) each player's history is one
// chain, the stored ratings are the chains' ends, and the whole history
// replays through the pure Glicko-2 module in one serial order. On
// PostgreSQL, no unit of work deadlocked (a deadlock is retried and leaves
// only the server's log line, which the tests count).
//
// What does the work on PostgreSQL: every rated decision appends its
// match.decided events first, which takes the outbox lock (held to the
// commit), so decisions take turns there; a correction appends before it
// rates too. The season job appends nothing: it and the decisions meet on
// the players' rows, locked FOR UPDATE in user id order.
//
// The seedings and the results come from the seed printed at the start
// (ARENA_TEST_SEED replays them; which decision wins each lock is the
// machine's).
import { afterAll, describe, expect, test } from 'bun:test'
import postgres from 'postgres'
import { onEngine } from '../helpers/app'
import { postJson } from '../helpers/app'
import { admin, createGame, players, startedTournament, twoInstances, type Player, type TournamentView } from '../helpers/arena'
import type { Score } from '../../src/modules/ratings/glicko2'
import { checkChains, deadlocksLogged, decideAllAtOnce, ratingRows } from '../helpers/rating-chains'
import { chooseSeed, seededRandom, shuffleWith } from '../helpers/seed'
import { waitFor } from '../helpers/wait'
import { postgresConnectOptions } from '../helpers/postgres'

const SEED = chooseSeed('ARENA_TEST_SEED', 'concurrent ratings')
const TOURNAMENTS = 4
const PLAYERS = 6
const { one, two } = await twoInstances()

/** A game and its six players in TOURNAMENTS started round robins, each seeded in its own order. */
async function roundRobins(random: () => number): Promise<{ game: { id: string; gameKey: string }; people: Player[]; tournaments: TournamentView[] }> {
  const { game, gameKey } = await createGame(one)
  const people = await players(one, PLAYERS)
  const tournaments: TournamentView[] = []
  for (let k = 0; k < TOURNAMENTS; k++) tournaments.push(await startedTournament(k % 2 === 0 ? one : two, game.id, shuffleWith(random, people), { format: 'round_robin' }))
  return { game: { id: game.id, gameKey }, people, tournaments }
}

let client: postgres.Sql | undefined
afterAll(async () => {
  await client?.end({ timeout: 1 })
})
/** A connection of the test's own to the instances' database (PostgreSQL runs): not one the instances could be waiting for. */
function own(): postgres.Sql {
  if (!client) {
    const { url, path } = postgresConnectOptions(one.config.databaseUrl!)
    client = postgres(url, { path, max: 2, onnotice: () => {} })
  }
  return client
}

/** Holds every rating row of the game (FOR SHARE, in a transaction of the test's own) until released. */
async function holdRatings(gameId: string): Promise<{ release(): Promise<void> }> {
  let release!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  let held!: () => void
  const holding = new Promise<void>((resolve) => (held = resolve))
  const done = own().begin(async (tx) => {
    await tx`SELECT 1 FROM ratings WHERE game_id = ${gameId} FOR SHARE`
    held()
    await released
  })
  await Promise.race([holding, done])
  return {
    async release() {
      release()
      await done
    },
  }
}

/** Connections of the instances' database waiting on a row lock (a row's holder or its tuple). */
async function rowLockWaiters(): Promise<number> {
  const [row] = await own()<{ n: number }[]>`
    SELECT count(*)::int AS n FROM pg_stat_activity
    WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event IN ('transactionid', 'tuple')`
  return row!.n
}

const PER_PLAYER = TOURNAMENTS * (PLAYERS - 1)
/** Matches of one round robin. */
const MATCHES = (PLAYERS * (PLAYERS - 1)) / 2

/** Deadlocks the PostgreSQL server logged for the instances' database (none on SQLite: one writer). */
async function deadlocksSoFar(app: typeof one): Promise<number> {
  return onEngine('postgres') ? await deadlocksLogged(app.config.databaseUrl!) : 0
}

describe('concurrent rated decisions on two instances', () => {
  test('a player in a match of each of four round robins, all decided at once: one chain per player that replays, nothing lost', async () => {
    const random = seededRandom(SEED, 1)
    const { game, people, tournaments } = await roundRobins(random)
    const deadlocks = await deadlocksSoFar(one)

    const { decided, answers } = await decideAllAtOnce([one, two], game, people, tournaments, random)
    expect(decided).toHaveLength((TOURNAMENTS * PLAYERS * (PLAYERS - 1)) / 2)
    // Each tournament's last decision finishes it.
    expect(answers.map((a) => [a.status, (a.body as { decision: string }).decision].join(' ')).sort()).toEqual(
      [...Array<string>(decided.length - TOURNAMENTS).fill('200 game_advance'), ...Array<string>(TOURNAMENTS).fill('200 game_advance_pending_finalization')].sort(),
    )

    const rows = await ratingRows(one.peek, game.id)
    const order = checkChains({ ...rows, decided, tau: 0.5 })
    expect(order).toHaveLength(decided.length)
    expect(rows.ratings.map((r) => [r.matches, r.seq])).toEqual(people.map(() => [PER_PLAYER, PER_PLAYER]))
    // What the service answers is the chain's end.
    for (const person of people) {
      const last = rows.history.filter((r) => r.userId === person.userId).at(-1)!
      const { rating } = await two.services.ratings.mine(game.id, person.userId)
      expect(rating).toMatchObject({ rating: Number(last.ratingAfter.toFixed(2)), deviation: Number(last.deviationAfter.toFixed(2)), matches: PER_PLAYER })
    }
    expect(await deadlocksSoFar(one)).toBe(deadlocks)
  }, 30_000)

  test('corrections racing decisions of the same players in other tournaments: every correction and decision applied once, in one serial order, no deadlock', async () => {
    const random = seededRandom(SEED, 2)
    const { game, people, tournaments } = await roundRobins(random)
    const deadlocks = await deadlocksSoFar(one)
    // Two tournaments played out; then the other two are decided a round at a
    // time while the same round of the first two is corrected (the other
    // player wins; a draw goes to slot 1), alternately on each instance. A
    // correction and a decision of one tournament take turns on its row; of
    // different ones, they meet only on the players' ratings.
    const played = await decideAllAtOnce([one, two], game, people, tournaments.slice(0, 2), random)
    const corrected: { matchId: string; scoreA: Score }[] = []
    const corrections: number[] = []
    const { decided, answers } = await decideAllAtOnce([one, two], game, people, tournaments.slice(2), random, {
      alongside: (round) =>
        Promise.all(
        played.decided
          .filter(({ m }) => m.round === round)
          .map(async ({ m, matchId, scoreA }, i) => {
            corrected.push({ matchId, scoreA: scoreA === 1 ? 0 : 1 })
            const winner = scoreA === 1 ? m.slot2ParticipantId! : m.slot1ParticipantId!
            const res = await (i % 2 === 0 ? two : one).handle(postJson(`/api/v1/admin/matches/${matchId}/correct`, { winnerParticipantId: winner, reason: 'race' }, admin))
            corrections.push(res.status)
          }),
        ),
    })
    expect([...played.answers, ...answers].map((a) => a.status)).toEqual(Array<number>(TOURNAMENTS * MATCHES).fill(200))
    expect(corrections).toEqual(Array<number>(2 * MATCHES).fill(200))

    const rows = await ratingRows(one.peek, game.id)
    checkChains({ ...rows, decided: [...played.decided, ...decided], corrected, tau: 0.5 })
    // A correction keeps the count of rated matches.
    expect(rows.ratings.map((r) => r.matches)).toEqual(people.map(() => PER_PLAYER))
    expect(await deadlocksSoFar(one)).toBe(deadlocks)
  }, 30_000)

  test('a season started by its job on one instance while decisions run on the other: every chain unbroken, every row in one season', async () => {
    const random = seededRandom(SEED, 3)
    const { game, people, tournaments } = await roundRobins(random)
    const deadlocks = await deadlocksSoFar(one)
    let seasonId = ''
    let gate: { release(): Promise<void> } | undefined
    // Everyone has a rating from round 1 on; the new season starts (instance
    // two's job worker) while round 3 is decided (claims on instance one). On
    // PostgreSQL the game's rating rows are held (FOR SHARE, by a connection
    // of the test) from before round 3's claims until the job and a decision
    // both wait on them: both then read them at once, and only their locks
    // make one compute from what the other committed.
    const { decided } = await decideAllAtOnce([one], game, people, tournaments, random, {
      before: async (round) => {
        if (round === 2) {
          const startsAt = new Date(one.clock.now().getTime() + 60_000)
          const res = await two.handle(postJson(`/api/v1/admin/games/${game.id}/seasons`, { name: 'Season 2', startsAt: startsAt.toISOString(), reset: 'soft' }, admin))
          expect(res.status).toBe(201)
          seasonId = ((await res.json()) as { season: { id: string } }).season.id
        }
        if (round === 3) {
          // The jobs due so far (the earlier tests' finalizations) out of the way: the season's is the one job due in round 3.
          await two.runJobs()
          one.clock.advance(60_000)
          two.clock.advance(60_000)
          if (onEngine('postgres')) gate = await holdRatings(game.id)
        }
      },
      alongside: async (round) => {
        if (round !== 3) return
        const job = two.runJobs()
        if (gate) {
          await waitFor('the season job and a decision waiting on the rating rows', async () => ((await rowLockWaiters()) >= 2 ? true : undefined))
          await gate.release()
        }
        expect(await job).toBe(1)
      },
    })
    const rows = await ratingRows(one.peek, game.id)
    checkChains({ ...rows, decided, tau: 0.5, resets: new Map([[seasonId, 'soft']]) })
    // Each player: one reset, every row before it in the first season, it and every row after in the new one.
    for (const person of people) {
      const chain = rows.history.filter((r) => r.userId === person.userId)
      const reset = chain.findIndex((r) => r.kind === 'season_reset')
      expect(chain.filter((r) => r.kind === 'season_reset')).toHaveLength(1)
      expect(new Set(chain.slice(0, reset).map((r) => r.seasonId)).size).toBe(1)
      expect(chain.slice(reset).every((r) => r.seasonId === seasonId)).toBe(true)
      expect(chain[0]!.seasonId).not.toBe(seasonId)
    }
    expect((await one.services.ratings.seasons(game.id)).seasons.find((s) => s.id === seasonId)).toMatchObject({ status: 'current' })
    expect(await deadlocksSoFar(one)).toBe(deadlocks)
  }, 30_000)
})
