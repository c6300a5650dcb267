// The wrong-key counter (BadKeyTracker in src/modules/games/game-keys.ts) as a pure structure:
// its size never passes MAX_TRACKED_GAMES, a game reports one burst a window,
// all games together MAX_BURST_EVENTS_PER_WINDOW, and an event carries at most
// GAME_ID_MAX characters of an id. The HTTP side (made-up ids never reach it)
// is test/security/game-key-guessing-memory.test.ts.
import { expect, test } from 'bun:test'
import { BAD_KEY_BURST, BAD_KEY_WINDOW_MS, BadKeyTracker, GAME_ID_MAX, MAX_BURST_EVENTS_PER_WINDOW, MAX_TRACKED_GAMES } from '../../src/modules/games/game-keys'

test('the counter holds at most MAX_TRACKED_GAMES games: past it the least recently seen goes first', () => {
  const tracker = new BadKeyTracker()
  for (let i = 0; i < MAX_TRACKED_GAMES * 3; i++) {
    tracker.note(`gam_${i}`, 1_000)
    expect(tracker.size).toBeLessThanOrEqual(MAX_TRACKED_GAMES)
  }
  expect(tracker.size).toBe(MAX_TRACKED_GAMES)
  // gam_0 was evicted long ago: counting it again starts from one (its burst needs BAD_KEY_BURST more).
  const counts: (object | null)[] = []
  for (let i = 0; i < BAD_KEY_BURST; i++) counts.push(tracker.note('gam_0', 2_000))
  expect(counts.slice(0, -1).every((c) => c === null)).toBe(true)
  expect(counts.at(-1)).toMatchObject({ gameId: 'gam_0', failures: BAD_KEY_BURST })
})

test('a game reports one burst a window; the next window counts again', () => {
  const tracker = new BadKeyTracker()
  const reported = (from: number, n: number) => Array.from({ length: n }, (_, i) => tracker.note('gam_a', from + i)).filter((b) => b !== null)
  expect(reported(0, 100)).toEqual([{ gameId: 'gam_a', failures: BAD_KEY_BURST, windowS: BAD_KEY_WINDOW_MS / 1000 }])
  expect(reported(BAD_KEY_WINDOW_MS, 100)).toHaveLength(1)
  expect(reported(BAD_KEY_WINDOW_MS * 2, BAD_KEY_BURST - 1)).toHaveLength(0)
})

test('all games together report at most the global cap a window; the next event says how many were held back', () => {
  const tracker = new BadKeyTracker()
  const burst = (game: string, at: number) => Array.from({ length: BAD_KEY_BURST }, () => tracker.note(game, at)).filter((b) => b !== null)
  const first = Array.from({ length: MAX_BURST_EVENTS_PER_WINDOW + 7 }, (_, i) => burst(`gam_${i}`, 10)).flat()
  expect(first).toHaveLength(MAX_BURST_EVENTS_PER_WINDOW)
  expect(first.every((b) => b.suppressedBursts === undefined)).toBe(true)
  const next = burst('gam_0', 10 + BAD_KEY_WINDOW_MS)
  expect(next).toEqual([{ gameId: 'gam_0', failures: BAD_KEY_BURST, windowS: BAD_KEY_WINDOW_MS / 1000, suppressedBursts: 7 }])
  expect(burst('gam_1', 10 + BAD_KEY_WINDOW_MS)[0]!.suppressedBursts).toBeUndefined()
})

test('an event carries at most GAME_ID_MAX characters of the id', () => {
  const tracker = new BadKeyTracker()
  const long = 'g'.repeat(GAME_ID_MAX * 4)
  const events = Array.from({ length: BAD_KEY_BURST }, () => tracker.note(long, 0)).filter((b) => b !== null)
  expect(events[0]!.gameId).toBe('g'.repeat(GAME_ID_MAX))
})
