// Wrong game keys, counted per game to report a key-guessing burst (issue 33,
// defect 3). What must stay true, whatever a caller sends:
// - only games that exist are counted: the caller of `note` has read the game,
//   and a made-up id in the URL never reaches this structure;
// - the structure holds at most MAX_TRACKED_GAMES entries, each for at most one
//   window: the least recently seen game goes first, and an entry whose window
//   has passed is dropped when next seen or when the map is full;
// - at most one INVALID_GAME_KEY_BURST per game per window, and at most
//   MAX_BURST_EVENTS_PER_WINDOW for all games together (the rest are counted
//   and the next event that goes says how many were held back), so a flood
//   cannot fill the permanent security-event chain;
// - an event names the game by its id, cut to GAME_ID_MAX characters: no
//   caller's text goes into the chain.

/** Wrong keys for one game within a window that count as a burst worth a security event. */
export const BAD_KEY_BURST = 5
export const BAD_KEY_WINDOW_MS = 60_000
/** The most games counted at once (far above any studio's number of games). */
export const MAX_TRACKED_GAMES = 1024
/** The most burst events for all games together within one window. */
export const MAX_BURST_EVENTS_PER_WINDOW = 10
/** The longest game id an event carries (ids arena issues are shorter). */
export const GAME_ID_MAX = 64

export interface BadKeyBurst {
  gameId: string
  failures: number
  windowS: number
  /** Bursts of other games (or this one) not reported since the last event that went: the global cap held them back. */
  suppressedBursts?: number
}

export class BadKeyTracker {
  private readonly games = new Map<string, { windowStart: number; count: number }>()
  private globalWindowStart = Number.NEGATIVE_INFINITY
  private globalEvents = 0
  private suppressed = 0

  /** How many games are counted now (tests and metrics read it). */
  get size(): number {
    return this.games.size
  }

  /**
   * One wrong key for an existing game at `now` (ms); the burst to report, if
   * this failure makes one and the global cap lets it go, else null.
   */
  note(gameId: string, now: number): BadKeyBurst | null {
    const entry = this.games.get(gameId)
    const current = entry && now - entry.windowStart < BAD_KEY_WINDOW_MS ? entry : { windowStart: now, count: 0 }
    current.count++
    // Deleted and set again: the Map's order is least recently seen first.
    this.games.delete(gameId)
    this.games.set(gameId, current)
    this.evict(now)
    if (current.count !== BAD_KEY_BURST) return null
    if (now - this.globalWindowStart >= BAD_KEY_WINDOW_MS) {
      this.globalWindowStart = now
      this.globalEvents = 0
    }
    if (this.globalEvents >= MAX_BURST_EVENTS_PER_WINDOW) {
      this.suppressed++
      return null
    }
    this.globalEvents++
    const burst: BadKeyBurst = { gameId: gameId.slice(0, GAME_ID_MAX), failures: current.count, windowS: BAD_KEY_WINDOW_MS / 1000 }
    if (this.suppressed > 0) {
      burst.suppressedBursts = this.suppressed
      this.suppressed = 0
    }
    return burst
  }

  /** Over the cap: first the entries whose window has passed, then the least recently seen. */
  private evict(now: number): void {
    if (this.games.size <= MAX_TRACKED_GAMES) return
    for (const [id, e] of this.games) {
      if (now - e.windowStart >= BAD_KEY_WINDOW_MS) this.games.delete(id)
    }
    for (const id of this.games.keys()) {
      if (this.games.size <= MAX_TRACKED_GAMES) break
      this.games.delete(id)
    }
  }
}
