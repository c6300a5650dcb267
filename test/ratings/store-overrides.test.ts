// The ratings store is written once (src/db/stores/ratings.ts); SQLite's
// subclass (src/db/sqlite/stores/ratings.ts) compiles the statements of a
// rated decision once per connection, for the claim path's sake. An override
// may be faster; it may not answer or write differently. Here each override
// and the query written once run on the same rows and must agree.
import { afterAll, describe, expect } from 'bun:test'
import { RatingsQueries } from '../../src/db/stores/ratings'
import type { QueryScope } from '../../src/db/stores/scope'
import type { NewRatingChange, RatingRecord, RatingsStore } from '../../src/modules/ratings/store'
import { testOnEngine } from '../helpers/engine'
import { createArenaApp, createGame, players, playOut, startedTournament } from '../helpers/arena'

const ctx = await createArenaApp()
afterAll(() => ctx.close())

/** The query written once, on the scope the engine's store runs on. */
function writtenOnce(store: RatingsStore): RatingsQueries {
  const scope = (store as unknown as { scope: QueryScope }).scope
  expect(scope.db).toBeDefined()
  return new RatingsQueries(scope)
}

const at = (s: number) => new Date(Date.UTC(2026, 10, 1) + s * 1000)

function row(gameId: string, userId: string, seasonId: string, n: number, decays: boolean): RatingRecord {
  return {
    gameId,
    userId,
    seasonId,
    rating: 1500 + n * 12.345678901,
    deviation: 350 - n * 3.21,
    volatility: 0.06 - n * 1e-7,
    matches: n,
    seq: n,
    lastRatedAt: at(n),
    boardDisplay: 800 + n * 1.5,
    boardDecayAt: decays ? at(n + 604800) : null,
    historyId: null,
    updatedAt: at(n + 1),
  }
}

function change(gameId: string, userId: string, seasonId: string, seq: number, matchId: string | null): NewRatingChange {
  return {
    gameId,
    userId,
    seq,
    seasonId,
    kind: matchId === null ? 'season_reset' : 'match',
    matchId,
    opponentUserId: matchId === null ? null : `usr_opponent_${seq}`,
    outcome: matchId === null ? null : seq % 2 === 0 ? 'loss' : 'win',
    ratingBefore: 1500.5 + seq,
    deviationBefore: 300.25,
    volatilityBefore: 0.0600001,
    ratingAfter: 1510.125 + seq,
    deviationAfter: 290.5,
    volatilityAfter: 0.0599999,
    createdAt: at(seq),
  }
}

describe('the ratings store: each engine override agrees with the query written once', () => {
  testOnEngine('sqlite', "SQLite's compiled reads of a rated decision: the game's settings and current season, a pair's rows", async () => {
    const { game, gameKey } = await createGame(ctx, 'Overrides read')
    const people = await players(ctx, 3)
    const t = await startedTournament(ctx, game.id, people.slice(0, 2))
    const final = t.matches[0]!
    await playOut(ctx, game.id, gameKey, t, people, final, final.slot1ParticipantId!)

    const engine = ctx.services.storage.read.ratings
    const once = writtenOnce(engine)
    expect(engine.constructor.name).not.toBe(RatingsQueries.name)
    for (const id of [game.id, 'no-such-game']) expect(await engine.ratingContext(id)).toEqual(await once.ratingContext(id))
    expect((await engine.ratingContext(game.id))?.seasonId).toStartWith('ssn_')

    const [a, b, c] = people.map((p) => p.userId) as [string, string, string]
    for (const ids of [[a, b], [b, a], [a, c], [c, 'nobody'], [a], [a, b, c], []]) {
      const got = await engine.lockRatings(game.id, ids)
      expect(got).toEqual(await once.lockRatings(game.id, ids))
      expect(got.map((r) => r.userId)).toEqual([...got.map((r) => r.userId)].sort())
    }
    expect((await engine.lockRatings(game.id, [b, a])).map((r) => r.userId)).toEqual([a, b].sort())
  })

  testOnEngine('sqlite', "SQLite's compiled writes leave the rows the query written once leaves", async () => {
    const mine = (await createGame(ctx, 'Overrides engine')).game.id
    const theirs = (await createGame(ctx, 'Overrides once')).game.id
    const [a, b] = (await players(ctx, 2)).map((p) => p.userId) as [string, string]
    const read = ctx.services.storage.read.ratings
    const seasonOf = async (gameId: string) => (await read.ratingContext(gameId))!.seasonId
    const [seasonMine, seasonTheirs] = [await seasonOf(mine), await seasonOf(theirs)]
    // A match the history rows can name.
    const { game: matchGame } = await createGame(ctx, 'Overrides match')
    const t = await startedTournament(ctx, matchGame.id, [{ userId: a }, { userId: b }])
    const matchId = t.matches[0]!.id

    const write = (store: RatingsStore, gameId: string, seasonId: string, step: number) =>
      step === 0
        ? store.ensureRatings([row(gameId, a, seasonId, 0, true), row(gameId, b, seasonId, 0, false)])
        : step === 1
          ? // Again: a row already there stays as it is.
            store.ensureRatings([row(gameId, a, seasonId, 5, false)])
          : step === 2
            ? store.saveRatings([row(gameId, a, seasonId, 1, false), row(gameId, b, seasonId, 2, true)])
            : store.recordUpdates([
                { rating: row(gameId, a, seasonId, 3, false), change: change(gameId, a, seasonId, 1, matchId) },
                { rating: row(gameId, b, seasonId, 4, true), change: change(gameId, b, seasonId, 2, null) },
              ])
    for (let step = 0; step < 4; step++) {
      await ctx.services.storage.write(async (tx) => {
        await write(tx.ratings, mine, seasonMine, step)
        await write(writtenOnce(tx.ratings), theirs, seasonTheirs, step)
      })
    }
    const once = writtenOnce(read)
    // The history rows are read by following each chain back (the engine's walk, the same SQL on both), their ids set aside.
    const history = async (gameId: string) =>
      [...(await read.historyOf(gameId, a, 0, 10)), ...(await read.historyOf(gameId, b, 0, 10))].map(({ id, previousId, ...h }) => ({ ...h, gameId: '', seasonId: '', first: previousId === null, id }))
    const rows = async (gameId: string) => {
      const ids = new Map((await history(gameId)).map((h) => [h.userId, h.id]))
      return (await once.lockRatings(gameId, [a, b])).map((r) => ({ ...r, gameId: '', seasonId: '', pointsAtItsRow: r.historyId === ids.get(r.userId), historyId: null as number | null }))
    }
    expect(await rows(mine)).toEqual(await rows(theirs))
    expect(await rows(mine)).toEqual([{ ...row('', a, '', 3, false), pointsAtItsRow: true }, { ...row('', b, '', 4, true), pointsAtItsRow: true }].sort((x, y) => x.userId.localeCompare(y.userId)))
    const strip = async (gameId: string) => (await history(gameId)).map(({ id, ...h }) => h)
    expect(await strip(mine)).toEqual(await strip(theirs))
    expect(await strip(mine)).toEqual([{ ...change('', a, '', 1, matchId), first: true }, { ...change('', b, '', 2, null), first: true }])
  })
})
