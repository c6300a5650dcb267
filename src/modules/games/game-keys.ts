// Game keys (contract §2): each game's `x-game-key`, issued at the game's
// creation and at a rotation, stored only as its SHA-256, checked in constant
// time on every /game-sdk/{gameId} call; and the wrong keys, counted per game
// to report a key-guessing burst (issue 33, defect 3). What must stay true of
// the counter, whatever a caller sends:
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
import type { Storage } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import { constantTimeEqual, randomToken, sha256Hex } from '../../shared/crypto'
import { AppError } from '../../shared/errors'
import type { SecurityEventInput } from '../security/event-log'
import type { GamesStore } from './store'

const GAME_KEY_PREFIX = 'agk_'

/** A new game key (shown once) and the hash that is all arena keeps of it. */
export function issueGameKey(): { gameKey: string; keyHash: string } {
  const gameKey = GAME_KEY_PREFIX + randomToken(32)
  return { gameKey, keyHash: sha256Hex(gameKey) }
}

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

export interface GameKeysDeps {
  storage: Storage
  clock: Clock
  onSecurityEvent?: (event: SecurityEventInput) => void
}

/** The x-game-key check of every /game-sdk/{gameId} call, and its wrong-key counter. */
export class GameKeys {
  /** Wrong keys per existing game, bounded (BadKeyTracker): a made-up game id never enters it. */
  private readonly badKeys = new BadKeyTracker()

  constructor(private readonly deps: GameKeysDeps) {}

  /** How many games the wrong-key counter holds now (bounded by MAX_TRACKED_GAMES; tests read it). */
  get badKeyGamesTracked(): number {
    return this.badKeys.size
  }

  private noteBadKey(gameId: string): void {
    const burst = this.badKeys.note(gameId, this.deps.clock.now().getTime())
    if (burst) this.deps.onSecurityEvent?.({ userId: null, source: 'server', kind: 'INVALID_GAME_KEY_BURST', level: 'WARN', details: { ...burst } })
  }

  /**
   * The x-game-key check of every /game-sdk/{gameId} call. An unknown game and
   * a wrong key are the same 403, compared in constant time. The session and
   * claim paths check it inside their unit of work, on the key hash they read
   * with the rest of what they decide from (check): a read on the read
   * connection right after a commit finds that connection's page cache
   * invalidated by the commit, and cost a sixth of a session issue. Read on
   * every call, never cached: a rotated key is refused at the next request.
   */
  async verify(gameId: string, presented: string | null, games: GamesStore = this.deps.storage.read.games): Promise<void> {
    this.check(gameId, presented, await games.keyHashOf(gameId))
  }

  /** verify against a key hash the caller read itself in its unit of work (null: no such game), e.g. with the rest of a claim's reads. */
  check(gameId: string, presented: string | null, keyHash: string | null): void {
    const presentedHash = sha256Hex(presented ?? '')
    const ok = constantTimeEqual(presentedHash, keyHash ?? sha256Hex(`no-game:${gameId}`))
    if (keyHash === null || !presented || !ok) {
      // Only a game that exists is counted: the URL's id is any text a caller chose.
      if (keyHash !== null) this.noteBadKey(gameId)
      throw new AppError('invalid_game_key', 'Missing or invalid x-game-key for this game')
    }
  }
}
