// Ratings, leaderboards and seasons of a game (`arena.ratings`): the signed-in
// player's Glicko-2 rating and its history, a season's leaderboard a page at
// a time, the game's seasons (to find a past season's id). An unknown game,
// or a season of another game, is ApiError 404 `not_found`; a cursor the
// server did not give, 400 or 422 (`validation_failed`).
import type { Auth } from './auth.js'
import { readJson } from './transport.js'
import type { Leaderboard, MyRating, RatingHistoryPage, Season } from './types.js'
import type { PageOptions } from './wallet.js'

export interface LeaderboardOptions extends PageOptions {
  /** A season id of the game (see `seasons()`); absent, the current season. A scheduled season's board is empty. */
  season?: string
}

export interface RatingsClient {
  /** The signed-in player's rating in the game this season, inactivity applied: 1500/350/0.06, provisional, before their first rated match. */
  me(gameId: string): Promise<MyRating>
  /** One page of the signed-in player's rating changes in the game, oldest first; pass its `cursor` as `after` for the next (null at the end). */
  history(gameId: string, options?: PageOptions): Promise<RatingHistoryPage>
  /**
   * One page of a season's leaderboard, highest `display` first; pass its
   * `cursor` as `after` for the next (null at the end). A page never repeats
   * or skips a player whose rating did not move between the two requests.
   */
  leaderboard(gameId: string, options?: LeaderboardOptions): Promise<Leaderboard>
  /** The game's seasons, scheduled, current and ended. */
  seasons(gameId: string): Promise<Season[]>
}

export function ratingsClient(auth: Auth): RatingsClient {
  const game = (gameId: string) => `/api/v1/games/${encodeURIComponent(gameId)}`
  const get = async <T>(path: string, query: Record<string, string | undefined> = {}): Promise<T> => readJson<T>(await auth.send({ method: 'GET', path, query }))
  const limit = (options: PageOptions) => (options.limit === undefined ? undefined : String(options.limit))
  return {
    me: (gameId) => get<MyRating>(`${game(gameId)}/ratings/me`),
    history: (gameId, options = {}) => get<RatingHistoryPage>(`${game(gameId)}/ratings/history`, { after: options.after, limit: limit(options) }),
    leaderboard: (gameId, options = {}) => get<Leaderboard>(`${game(gameId)}/leaderboard`, { season: options.season, after: options.after, limit: limit(options) }),
    seasons: async (gameId) => (await get<{ seasons: Season[] }>(`${game(gameId)}/seasons`)).seasons,
  }
}
