// Invariant: wrong game keys cost the server bounded memory and bounded
// security-event rows, whatever game ids a caller makes up. A made-up game id
// never enters the wrong-key counter and never writes a security event; a real
// game under a key-guessing burst writes at most one INVALID_GAME_KEY_BURST a
// window, all games together at most MAX_BURST_EVENTS_PER_WINDOW a window, and
// no event carries text the caller chose (issue 33, defect 3).
import { afterAll, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { BAD_KEY_BURST, BAD_KEY_WINDOW_MS, MAX_BURST_EVENTS_PER_WINDOW } from '../../src/modules/games/game-keys'
import { postJson } from '../helpers/app'
import { createArenaApp, createGame, players } from '../helpers/arena'

const ctx = await createArenaApp({}, { securityLogOptions: { capacity: 100_000, batchSize: 1000, flushMs: 60_000 } })
afterAll(() => ctx.close())
const { securityEvents } = ctx.peek.tables

const SEED = Number(process.env.ARENA_TEST_SEED ?? Date.now() % 2 ** 31)
console.log(`game-key-guessing-memory seed ${SEED} (ARENA_TEST_SEED replays it)`)

/** mulberry32: a small seeded generator, so a failing run can be replayed. */
function random(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-'
function madeUpId(next: () => number): string {
  const length = 1 + Math.floor(next() * 64)
  let id = ''
  for (let i = 0; i < length; i++) id += ALPHABET[Math.floor(next() * ALPHABET.length)]
  return id
}

const bursts = async () => {
  await ctx.services.securityLog.flush()
  return await ctx.peek.db.select().from(securityEvents).where(eq(securityEvents.kind, 'INVALID_GAME_KEY_BURST'))
}

test('20,000 wrong keys on made-up game ids leave the counter empty and write no security event', async () => {
  const [p] = await players(ctx, 1)
  const bearer = { authorization: `Bearer ${p!.tokens.accessToken}` }
  const next = random(SEED)
  const statuses = new Map<number, number>()
  const guess = (i: number) => {
    const gameId = encodeURIComponent(madeUpId(next))
    return i % 2 === 0
      ? ctx.handle(postJson(`/api/v1/game-sdk/${gameId}/sessions`, { matchId: 'mat_x' }, { ...bearer, 'x-game-key': `agk_guess_${i}` }))
      : ctx.handle(postJson(`/api/v1/game-sdk/${gameId}/results`, { outcome: 'WIN', winnerParticipantId: 'par_x' }, { ...bearer, 'x-game-key': `agk_guess_${i}`, 'x-session-token': 'gst_x' }))
  }
  // 20 at a time, as a flooding client would; the clock moves a second every 1,000.
  for (let i = 0; i < 20_000; i += 20) {
    const batch = await Promise.all(Array.from({ length: 20 }, (_, j) => guess(i + j)))
    for (const res of batch) statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
    if (i % 1000 === 0) ctx.clock.advance(1000)
  }
  // Every request was refused as a wrong key: no 2xx, no 500.
  expect(Object.fromEntries(statuses)).toEqual({ 403: 20_000 })
  expect(ctx.services.gameKeys.badKeyGamesTracked).toBe(0)
  expect(await bursts()).toEqual([])
}, 180_000)

test('a real game under a key-guessing burst writes one event a window, naming only its id', async () => {
  const { game } = await createGame(ctx, 'Probed')
  const [p] = await players(ctx, 1)
  const before = (await bursts()).length
  for (let window = 0; window < 3; window++) {
    for (let i = 0; i < 200; i++) {
      const res = await ctx.handle(postJson(`/api/v1/game-sdk/${game.id}/sessions`, { matchId: 'mat_x' }, { authorization: `Bearer ${p!.tokens.accessToken}`, 'x-game-key': `agk_${'x'.repeat(200)}_${i}` }))
      expect(res.status).toBe(403)
    }
    ctx.clock.advance(BAD_KEY_WINDOW_MS)
  }
  const rows = (await bursts()).slice(before)
  expect(rows.length).toBe(3)
  for (const row of rows) expect(row.details).toEqual({ gameId: game.id, failures: BAD_KEY_BURST, windowS: BAD_KEY_WINDOW_MS / 1000 })
  expect(ctx.services.gameKeys.badKeyGamesTracked).toBeLessThanOrEqual(1)
}, 60_000)

test('bursts on many games at once write at most the global cap a window; the next event counts the rest', async () => {
  ctx.clock.advance(BAD_KEY_WINDOW_MS)
  const games = []
  for (let i = 0; i < MAX_BURST_EVENTS_PER_WINDOW + 5; i++) games.push((await createGame(ctx, `Probed ${i}`)).game)
  const [p] = await players(ctx, 1)
  const guess = (gameId: string, i: number) => ctx.handle(postJson(`/api/v1/game-sdk/${gameId}/sessions`, { matchId: 'mat_x' }, { authorization: `Bearer ${p!.tokens.accessToken}`, 'x-game-key': `agk_guess_${i}` }))
  const before = (await bursts()).length
  for (const game of games) for (let i = 0; i < BAD_KEY_BURST * 3; i++) expect((await guess(game.id, i)).status).toBe(403)
  const inWindow = (await bursts()).slice(before)
  expect(inWindow.length).toBe(MAX_BURST_EVENTS_PER_WINDOW)
  // These games, and at most the one of the test before (its window passed; pruned when the counter is full).
  expect(ctx.services.gameKeys.badKeyGamesTracked).toBeGreaterThanOrEqual(games.length)
  expect(ctx.services.gameKeys.badKeyGamesTracked).toBeLessThanOrEqual(games.length + 1)

  ctx.clock.advance(BAD_KEY_WINDOW_MS)
  for (let i = 0; i < BAD_KEY_BURST; i++) expect((await guess(games[0]!.id, i)).status).toBe(403)
  const after = (await bursts()).slice(before + inWindow.length)
  expect(after.length).toBe(1)
  expect(after[0]!.details).toEqual({ gameId: games[0]!.id, failures: BAD_KEY_BURST, windowS: BAD_KEY_WINDOW_MS / 1000, suppressedBursts: 5 })
}, 60_000)
