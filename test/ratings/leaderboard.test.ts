// Contract §15's live leaderboard, through the service on a real database:
// ~30 rated players (rows written straight in, plus two who play a real
// match); pages of 7 concatenate to the whole board in order (display, then
// user id, both descending) with ranks 1..n and no duplicates; a page
// sequence stays stable while other players' ratings change between
// requests (a row that did not move is neither repeated nor skipped);
// deleted accounts and players without a match this season are not listed.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createArenaApp, createGame, players, playOut, startedTournament, type Player } from '../helpers/arena'
import { registerUser } from '../helpers/auth'
import { deleteUser } from '../helpers/accounts'
import { RatingReference, seedRatings } from '../helpers/ratings'
import type { Glicko } from '../../src/modules/ratings/glicko2'
import type { Leaderboard } from '../../src/modules/ratings/model'
import { AppError } from '../../src/shared/errors'

const ctx = await createArenaApp()
afterAll(() => ctx.close())

let gameId: string
let gameKey: string
const reference = new RatingReference()
/** Two players with sessions, who play a real match between page requests: a newcomer at the bottom and the leader. */
let newcomer: Player
let leader: Player
let steady: string[] = []
let idle: string
let deleted: string

beforeAll(async () => {
  ;({ game: { id: gameId }, gameKey } = await createGame(ctx, 'Ladder'))
  ;[newcomer, leader] = (await players(ctx, 2)) as [Player, Player]
  const others = []
  for (let i = 0; i < 28; i++) others.push((await registerUser(ctx)).id)
  steady = others.slice(0, 26)
  ;[idle, deleted] = others.slice(26) as [string, string]
  const rows: { userId: string; glicko: Glicko; matches: number }[] = []
  // Displays 1500, 1485, ... 1125; the 13th and 14th alike (same display: ordered by user id, descending), at ranks 14 and 15: across the second page's end.
  for (const [i, userId] of steady.entries()) rows.push({ userId, glicko: { rating: 1600 - 15 * (i === 13 ? 12 : i), deviation: 50, volatility: 0.06 }, matches: 1 + (i % 12) })
  rows.push({ userId: leader.userId, glicko: { rating: 1900, deviation: 60, volatility: 0.06 }, matches: 20 })
  rows.push({ userId: newcomer.userId, glicko: { rating: 1500, deviation: 350, volatility: 0.06 }, matches: 1 })
  // Highest of all, then deleted; and one with no match this season.
  rows.push({ userId: deleted, glicko: { rating: 2500, deviation: 40, volatility: 0.06 }, matches: 30 })
  rows.push({ userId: idle, glicko: { rating: 2400, deviation: 40, volatility: 0.06 }, matches: 0 })
  await seedRatings(ctx, gameId, rows)
  for (const row of rows) reference.seed(row.userId, row.glicko, row.matches, ctx.clock.now())
  expect((await deleteUser(ctx, deleted)).status).toBe(200)
})

/** The board by the rule, without the deleted account (the reference knows nothing of accounts). */
const expectedBoard = () => reference.board(ctx.clock.now()).filter((row) => row.userId !== deleted)

async function page(after: string | null, limit = 7): Promise<Leaderboard> {
  return ctx.services.ratings.leaderboard(gameId, { limit, ...(after === null ? {} : { after }) })
}

describe('the live leaderboard', () => {
  test('pages of 7 concatenate to the whole board in order, ranks 1..n, no duplicates; deleted and match-less players not listed', async () => {
    const entries: Leaderboard['entries'] = []
    let cursor: string | null = null
    let pages = 0
    do {
      const p = await page(cursor)
      expect(p.entries.length).toBe(cursor === null || p.cursor !== null ? 7 : p.entries.length)
      entries.push(...p.entries)
      cursor = p.cursor
      pages++
    } while (cursor !== null)
    const want = expectedBoard()
    expect(want).toHaveLength(28)
    expect(pages).toBe(4)
    const now = ctx.clock.now()
    expect(entries.map((e) => [e.rank, e.userId, e.rating])).toEqual(want.map((row, i) => [i + 1, row.userId, reference.view(row.userId, now)]))
    expect(new Set(entries.map((e) => e.userId)).size).toBe(entries.length)
    expect(entries.map((e) => e.userId)).not.toContain(deleted)
    expect(entries.map((e) => e.userId)).not.toContain(idle)
    // The two alike: the higher user id first.
    const tied = [steady[12]!, steady[13]!].sort().reverse()
    const at = entries.findIndex((e) => tied.includes(e.userId))
    expect(entries.slice(at, at + 2).map((e) => [e.rank, e.userId])).toEqual([
      [14, tied[0]!],
      [15, tied[1]!],
    ])
    // Usernames come with the entries.
    expect(entries.find((e) => e.userId === leader.userId)!.username).toBe(leader.username)
    // One page of everything says the same.
    expect((await page(null, 100)).entries).toEqual(entries)
  })

  test('a cursor not of this board is refused (validation), never a 500', async () => {
    for (const after of ['garbage', Buffer.from('[1]').toString('base64url'), Buffer.from('{"rank":1}').toString('base64url')]) {
      const error = await page(after).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(AppError)
      expect((error as AppError).code).toBe('validation_failed')
    }
  })

  test('paging stays stable while ratings change between requests: rows that did not move are neither repeated nor skipped', async () => {
    const before = new Map(expectedBoard().map((row) => [row.userId, row.display]))
    const first = await page(null)
    const second = await page(first.cursor)
    const cursorDisplay = before.get(second.entries.at(-1)!.userId)!
    // Between requests: the newcomer (last on the board, after the cursor) beats the leader (on page 1) in a real match.
    const cup = await startedTournament(ctx, gameId, [newcomer, leader])
    const m = cup.matches[0]!
    const newcomerSlot = cup.participants.find((p) => p.userId === newcomer.userId)!.id
    await playOut(ctx, gameId, gameKey, cup, [newcomer, leader], m, newcomerSlot)
    const slot1User = cup.participants.find((p) => p.id === m.slot1ParticipantId)!.userId
    reference.match(m.id, slot1User, slot1User === newcomer.userId ? leader.userId : newcomer.userId, slot1User === newcomer.userId ? 1 : 0, ctx.clock.now())
    const after = new Map(expectedBoard().map((row) => [row.userId, row.display]))
    // The move crosses the cursor: from after it to before it (paging by offset would now repeat a row).
    expect(before.get(newcomer.userId)!).toBeLessThan(cursorDisplay)
    expect(after.get(newcomer.userId)!).toBeGreaterThan(cursorDisplay)

    const entries = [...first.entries, ...second.entries]
    let cursor = second.cursor
    while (cursor !== null) {
      const p = await page(cursor)
      entries.push(...p.entries)
      cursor = p.cursor
    }
    const moved = new Set([...before.keys()].filter((id) => before.get(id) !== after.get(id)))
    expect([...moved].sort()).toEqual([newcomer.userId, leader.userId].sort())
    // Every row that did not move exactly once, in board order; ranks run on without a gap.
    const still = entries.map((e) => e.userId).filter((id) => !moved.has(id))
    expect(still).toEqual(expectedBoard().map((row) => row.userId).filter((id) => !moved.has(id)))
    expect(entries.map((e) => e.rank)).toEqual(entries.map((_, i) => i + 1))
    // A fresh read is the board as it is now.
    const now = ctx.clock.now()
    expect((await page(null, 100)).entries.map((e) => [e.rank, e.userId, e.rating])).toEqual(expectedBoard().map((row, i) => [i + 1, row.userId, reference.view(row.userId, now)]))
  })
})
