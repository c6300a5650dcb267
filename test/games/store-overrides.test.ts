// The games store is written once (src/db/stores/games.ts, GamesQueries);
// each engine's subclass overrides a few of its methods for a measured reason:
// SQLite's statements compiled once per connection, PostgreSQL's one-statement
// seeding. An override may be faster; it may not answer differently. Here
// each override and the query written once run on the same rows, and must
// agree (order included where the interface promises one).
import { afterAll, describe, expect, test } from 'bun:test'
import { GamesQueries } from '../../src/db/stores/games'
import type { QueryScope } from '../../src/db/stores/scope'
import type { GamesStore, MatchRecord } from '../../src/modules/games/store'
import { postJson } from '../helpers/app'
import { testOnEngine } from '../helpers/engine'
import { admin, createArenaApp, createGame, players, playOut, type TournamentView } from '../helpers/arena'

const ctx = await createArenaApp()
afterAll(() => ctx.close())
const { game, gameKey } = await createGame(ctx)

/** The query written once, on the scope the engine's store runs on. */
function writtenOnce(store: GamesStore): GamesQueries {
  const scope = (store as unknown as { scope: QueryScope }).scope
  expect(scope.db).toBeDefined()
  return new GamesQueries(scope)
}

async function created(format: string, count: number) {
  const people = await players(ctx, count)
  const res = await ctx.handle(postJson('/api/v1/admin/tournaments', { gameId: game.id, name: 'Cup', format, participants: people.map((p) => p.userId) }, admin))
  expect(res.status).toBe(201)
  return { people, t: ((await res.json()) as { tournament: TournamentView }).tournament }
}

async function started(format: string, count: number) {
  const { people, t } = await created(format, count)
  const res = await ctx.handle(postJson(`/api/v1/admin/tournaments/${t.id}/start`, {}, admin))
  expect(res.status).toBe(200)
  return { people, t: ((await res.json()) as { tournament: TournamentView }).tournament }
}

const byId = (a: MatchRecord, b: MatchRecord) => a.id.localeCompare(b.id)

describe('the games store: each engine override agrees with the query written once', () => {
  testOnEngine('sqlite', "SQLite's compiled reads, on a double elimination with decided, running and waiting matches and a disqualified player", async () => {
    const { people, t } = await started('double_elimination', 5)
    // One match played (its winner and loser moved on), one player disqualified.
    const running = t.matches.find((m) => m.status === 'running')!
    await playOut(ctx, game.id, gameKey, t, people, running, running.slot1ParticipantId!)
    const cheat = t.participants.find((p) => p.seed === 5)!.id
    expect((await ctx.handle(postJson(`/api/v1/admin/tournaments/${t.id}/participants/${cheat}/disqualify`, { reason: 'aimbot' }, admin))).status).toBe(200)
    const clean = await started('single_elimination', 2)

    const engine = ctx.services.storage.read.games
    const once = writtenOnce(engine)
    expect(engine.constructor.name).not.toBe(GamesQueries.name)
    for (const id of [t.id, clean.t.id, 'no-such-tournament']) {
      expect(await engine.tournament(id)).toEqual(await once.tournament(id))
      expect(await engine.formatOf(id)).toEqual(await once.formatOf(id))
      expect(await engine.participantsOf(id)).toEqual(await once.participantsOf(id))
      expect(await engine.bracketOf(id)).toEqual(await once.bracketOf(id))
      expect(await engine.countUndecided(id)).toBe(await once.countUndecided(id))
      expect(await engine.hasDisqualified(id)).toBe(await once.hasDisqualified(id))
      expect((await engine.participantUserIds(id)).sort()).toEqual((await once.participantUserIds(id)).sort())
    }
    expect(await engine.hasDisqualified(t.id)).toBe(true)
    expect(await engine.countUndecided(t.id)).toBeGreaterThan(0)
    expect(await engine.keyHashOf(game.id)).toEqual(await once.keyHashOf(game.id))
    expect(await engine.keyHashOf('no-such-game')).toBeNull()

    // The matches around a decision: up to three ids, any of them unknown or none.
    const bracket = await once.bracketOf(t.id)
    expect(bracket.length).toBeGreaterThan(4)
    const ids = bracket.map((m) => m.id)
    for (const around of [[], [ids[0]!], [ids[1]!, ids[2]!], [ids[0]!, ids[3]!, ids[4]!], [ids[0]!, 'nothing', ids[ids.length - 1]!]]) {
      const got = (await engine.matchesAround(t.id, around)).sort(byId)
      expect(got).toEqual((await once.matchesAround(t.id, around)).sort(byId))
      for (const id of around.filter((x) => ids.includes(x))) expect(got.map((m) => m.id)).toContain(id)
    }

    // A match's players (one or two ids), and more than two.
    const seats = t.participants.map((p) => p.id)
    for (const some of [[], [seats[0]!], [seats[1]!, seats[2]!], seats, ['nobody']]) {
      expect((await engine.usersOfParticipants(some)).sort()).toEqual((await once.usersOfParticipants(some)).sort())
      const bySeat = (x: { participantId: string }, y: { participantId: string }) => x.participantId.localeCompare(y.participantId)
      expect((await engine.seatsOf(some)).sort(bySeat)).toEqual((await once.seatsOf(some)).sort(bySeat))
    }
    expect((await engine.seatsOf([seats[1]!, seats[2]!])).map((s) => s.participantId).sort()).toEqual([seats[1]!, seats[2]!].sort())
  })

  testOnEngine('sqlite', "SQLite's compiled finalizing write leaves the row the query written once leaves", async () => {
    const a = await started('single_elimination', 2)
    const b = await started('single_elimination', 2)
    await ctx.services.storage.write(async (tx) => {
      await tx.games.markFinalizing(a.t.id, a.t.participants[0]!.id)
      await writtenOnce(tx.games).markFinalizing(b.t.id, b.t.participants[0]!.id)
    })
    const [ra, rb] = [(await ctx.services.storage.read.games.tournament(a.t.id))!, (await ctx.services.storage.read.games.tournament(b.t.id))!]
    expect(ra.status).toBe('finalizing')
    expect({ ...ra, id: '', gameId: '', winnerParticipantId: ra.winnerParticipantId === a.t.participants[0]!.id }).toEqual({ ...rb, id: '', gameId: '', winnerParticipantId: rb.winnerParticipantId === b.t.participants[0]!.id })
  })

  test("seeding: the engine's assignSeeds and the query written once seed the same order", async () => {
    const a = await created('single_elimination', 6)
    const b = await created('single_elimination', 6)
    // Reversed, with the same shape in both: the participant listed k-th seeded 7 - k.
    const reversed = (t: TournamentView) => [...t.participants].sort((x, y) => y.seed - x.seed).map((p) => p.id)
    await ctx.services.storage.write(async (tx) => {
      await tx.games.assignSeeds(a.t.id, reversed(a.t))
      await writtenOnce(tx.games).assignSeeds(b.t.id, reversed(b.t))
    })
    const read = ctx.services.storage.read.games
    const order = async (t: TournamentView) => (await read.participantsOf(t.id)).map((p) => [p.seed, t.participants.find((q) => q.id === p.id)!.seed])
    expect(await order(a.t)).toEqual([[1, 6], [2, 5], [3, 4], [4, 3], [5, 2], [6, 1]])
    expect(await order(b.t)).toEqual(await order(a.t))
  })

  test('in a write, the tournament read a start decides from is the same row (PostgreSQL locks it)', async () => {
    const { t } = await started('single_elimination', 3)
    const outside = await ctx.services.storage.read.games.tournament(t.id)
    const inside = await ctx.services.storage.write(async (tx) => ({ engine: await tx.games.tournament(t.id), once: await writtenOnce(tx.games).tournament(t.id) }))
    expect(outside?.status).toBe('running')
    expect(inside.engine).toEqual(outside)
    expect(inside.once).toEqual(outside)
  })
})
