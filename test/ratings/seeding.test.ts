// Ratings beyond the matches (contract §15, docs/ratings.md): a tournament
// seeded by rating (`seeding: "rating"`: display rating in the game at the
// start, inactivity applied, 800 for the never rated, ties in join order),
// the tournament option `rated` (a boolean, taken by every format, shown on
// the tournament), and an account with ratings deleted. Ratings come from
// real rated matches played through the claim routes. On SQLite and, with
// ARENA_TEST_ENGINE=postgres, on PostgreSQL.
import { afterAll, describe, expect, test } from 'bun:test'
import { postJson, req } from '../helpers/app'
import { admin, createArenaApp, createGame, players, playOut, startedTournament, tournament, type Player, type TournamentView } from '../helpers/arena'
import { login } from '../helpers/auth'
import { deleteUser } from '../helpers/accounts'
import { storedRating } from '../helpers/ratings'
import { FORMAT_NAMES } from '../../src/modules/games/formats/engines'

const ctx = await createArenaApp()
afterAll(() => ctx.close())

const WEEK_MS = 604_800_000
// One "minute" of a registration's schedule: short, so that access tokens (15 min) outlive it.
const MIN = 6_000
const at = (msFromNow: number) => new Date(ctx.clock.now().getTime() + msFromNow).toISOString()
const bearer = (p: Player) => ({ authorization: `Bearer ${p.tokens.accessToken}` })

/** `winner` beats `loser` in a two-player cup of the game: one rated match, decided by both players' claims. */
async function beat(gameId: string, gameKey: string, winner: Player, loser: Player): Promise<void> {
  const cup = await startedTournament(ctx, gameId, [winner, loser])
  const final = cup.matches.find((m) => m.status === 'running')!
  const seat = cup.participants.find((p) => p.userId === winner.userId)!.id
  await playOut(ctx, gameId, gameKey, cup, [winner, loser], final, seat)
}

/** A single elimination seeded by rating; `people` join in this order; started by its job. Answers it started. */
async function seededByRating(gameId: string, people: Player[]): Promise<TournamentView> {
  const res = await ctx.handle(
    postJson(
      '/api/v1/admin/tournaments',
      { gameId, name: 'Rated Open', format: 'single_elimination', registration: { closesAt: at(50 * MIN), maxPlayers: 8 }, startsAt: at(60 * MIN), seeding: 'rating' },
      admin,
    ),
  )
  expect(res.status).toBe(201)
  const { tournament: created } = (await res.json()) as { tournament: TournamentView }
  expect(created.registration).toMatchObject({ seeding: 'rating', seed: null })
  for (const p of people) expect((await ctx.handle(postJson(`/api/v1/tournaments/${created.id}/registration`, {}, bearer(p)))).status).toBe(201)
  ctx.clock.set(created.registration!.startsAt)
  expect(await ctx.runJobs()).toBeGreaterThanOrEqual(1)
  const started = await tournament(ctx, created.id)
  expect(started.status).toBe('running')
  expect(started.registration).toMatchObject({ seeding: 'rating', seed: null })
  return started
}

/** The players' usernames in seed order (top seed first). */
function seedOrderOf(t: TournamentView, people: Player[]): string[] {
  return [...t.participants].sort((a, b) => a.seed - b.seed).map((p) => people.find((x) => x.userId === p.userId)!.username)
}

describe('seeding: "rating"', () => {
  test('the highest display rating seeds first; the never rated sit at 800 (above a player rated lower), ties in join order', async () => {
    const { game, gameKey } = await createGame(ctx, 'Seeded Duel')
    const [winner, loser, freshOne, freshTwo] = await players(ctx, 4)
    // The winner climbs above 800 (1500 − 2 × 350), the loser falls below it.
    await beat(game.id, gameKey, winner!, loser!)
    const display = async (p: Player) => (await ctx.services.ratings.mine(game.id, p.userId)).rating.display
    expect(await display(winner!)).toBeGreaterThan(800)
    expect(await display(loser!)).toBeLessThan(800)
    expect(await display(freshOne!)).toBe(800)

    // They join lowest first: the join order is not the rating order.
    const joined = [loser!, freshOne!, winner!, freshTwo!]
    const t = await seededByRating(game.id, joined)
    expect(seedOrderOf(t, joined)).toEqual([winner!.username, freshOne!.username, freshTwo!.username, loser!.username])
    // The bracket follows the seeds: 1 v 4 and 2 v 3.
    const firstRound = t.matches.filter((m) => m.round === 1).map((m) => [m.slot1ParticipantId, m.slot2ParticipantId].map((id) => t.participants.find((p) => p.id === id)!.seed).sort())
    expect(firstRound.sort()).toEqual([
      [1, 4],
      [2, 3],
    ])
  })

  test('ratings are read as of the start: a rating idle for whole inactivity periods seeds below the same rating earned since', async () => {
    const { game, gameKey } = await createGame(ctx, 'Idle Duel')
    const [early, late, rivalOne, rivalTwo] = await players(ctx, 4)
    await beat(game.id, gameKey, early!, rivalOne!)
    // Three inactivity periods later (a week each by default) the other wins the same match from the same start.
    ctx.clock.advance(3 * WEEK_MS)
    for (const p of [late!, rivalTwo!, early!]) p.tokens = await login(ctx, p.username)
    await beat(game.id, gameKey, late!, rivalTwo!)
    // As stored they are equal; the earlier one's deviation has grown since (computed on read).
    const stored = async (p: Player) => {
      const row = (await storedRating(ctx, game.id, p.userId))!
      return [row.rating, row.deviation, row.volatility]
    }
    expect(await stored(early!)).toEqual(await stored(late!))
    const [earlyView, lateView] = await Promise.all([early!, late!].map(async (p) => (await ctx.services.ratings.mine(game.id, p.userId)).rating))
    expect(earlyView!.display).toBeLessThan(lateView!.display)

    // The earlier one joins first: only the inactivity puts the later one on top.
    const t = await seededByRating(game.id, [early!, late!])
    expect(seedOrderOf(t, [early!, late!])).toEqual([late!.username, early!.username])
  })
})

describe('the tournament option `rated`', () => {
  test('a boolean, or 422', async () => {
    const { game } = await createGame(ctx, 'Option Duel')
    const people = await players(ctx, 2)
    for (const rated of ['no', 0, null]) {
      const res = await ctx.handle(
        postJson('/api/v1/admin/tournaments', { gameId: game.id, name: 'Cup', format: 'round_robin', participants: people.map((p) => p.userId), options: { rated } }, admin),
      )
      expect(res.status).toBe(422)
      const { error } = (await res.json()) as { error: { code: string; status: number; details: { path: string }[] } }
      expect(error).toMatchObject({ code: 'validation_failed', status: 422 })
      expect(error.details.map((d) => d.path)).toContain('body/options/rated')
    }
  })

  test('taken by every format, for a draft and a registration alike, and shown on the tournament', async () => {
    const { game } = await createGame(ctx, 'Every Format Duel')
    const people = await players(ctx, 4)
    for (const format of FORMAT_NAMES) {
      for (const rated of [false, true]) {
        const res = await ctx.handle(postJson('/api/v1/admin/tournaments', { gameId: game.id, name: 'Cup', format, participants: people.map((p) => p.userId), options: { rated } }, admin))
        expect(res.status).toBe(201)
        const { tournament: created } = (await res.json()) as { tournament: TournamentView }
        expect(created.options).toEqual({ rated })
        expect((await tournament(ctx, created.id)).options).toEqual({ rated })
      }
    }
    const open = await ctx.handle(
      postJson('/api/v1/admin/tournaments', { gameId: game.id, name: 'Open', format: 'swiss', registration: { closesAt: at(50 * MIN), maxPlayers: 8 }, startsAt: at(60 * MIN), options: { rated: false } }, admin),
    )
    expect(open.status).toBe(201)
    const { tournament: listed } = (await open.json()) as { tournament: TournamentView }
    const shown = await ctx.handle(req(`/api/v1/tournaments/${listed.id}`, { headers: bearer(people[0]!) }))
    expect(shown.status).toBe(200)
    expect(((await shown.json()) as { tournament: TournamentView }).tournament.options).toEqual({ rated: false })
  })
})

describe('deleting an account with ratings', () => {
  test('the deletion goes through; its rating and history stay (as the ledger does), for the opponents\' chains', async () => {
    const { game, gameKey } = await createGame(ctx, 'Deleted Duel')
    const [gone, stays] = await players(ctx, 2)
    await beat(game.id, gameKey, gone!, stays!)
    const deleted = await deleteUser(ctx, gone!.userId)
    expect(deleted.status).toBe(200)
    expect(await storedRating(ctx, game.id, gone!.userId)).toMatchObject({ matches: 1, seq: 1 })
    const history = await ctx.storage.read.ratings.historyOf(game.id, stays!.userId, 0, 10)
    expect(history.map((h) => [h.kind, h.opponentUserId])).toEqual([['match', gone!.userId]])
  })
})
