// Player routes of ratings (contract §15): a game's leaderboard (the current
// season's, live, or an ended one's final board), the caller's own rating and
// its history, and the game's seasons (so a client finds past seasons' ids).
// The operators' routes (settings, seasons) are in ../admin.
import { Elysia, t } from 'elysia'
import { authGuard } from '../../plugins/auth'
import { BEARER, BEARER_SECURITY, errors, INVALID, STORAGE } from '../../plugins/openapi'
import type { AuthService } from '../auth/service'
import { HistoryQuery, Leaderboard, LeaderboardQuery, RatingHistoryPage, RatingView, Season } from './model'
import type { RatingsService } from './service'
import { invalid } from '../games/registration'

const GameParams = t.Object({ gameId: t.String({ minLength: 1, maxLength: 64 }) })
const NOT_FOUND = { 404: ['not_found'] } as const
const tags = ['ratings']

export const MyRatingResponse = t.Object({ rating: RatingView, seasonId: t.String({ description: 'the game\'s current season' }) })
export const SeasonsResponse = t.Object({ seasons: t.Array(Season, { description: 'newest first' }) })

/** `limit` is a whole number (the query schema's Numeric takes 1.5; a database's LIMIT does not). */
export function wholeLimit<Q extends { limit?: number }>(query: Q): Q {
  if (query.limit !== undefined && !Number.isInteger(query.limit)) throw invalid([{ path: 'query/limit', message: 'Expected a whole number' }])
  return query
}

export function ratingsModule(auth: AuthService, ratings: RatingsService) {
  return new Elysia({ name: 'arena/ratings', prefix: '/api/v1' })
    .use(authGuard(auth))
    .get('/games/:gameId/leaderboard', async ({ params, query }) => await ratings.leaderboard(params.gameId, wholeLimit(query)), {
      auth: true,
      params: GameParams,
      query: LeaderboardQuery,
      response: { 200: Leaderboard, ...errors(BEARER, INVALID, NOT_FOUND, STORAGE) },
      detail: {
        tags,
        summary: 'A season\'s leaderboard, ranked by display (rating − 2 × deviation), paged: the current season live, an ended one as it ended, a scheduled one empty',
        security: BEARER_SECURITY,
      },
    })
    .get('/games/:gameId/ratings/me', async ({ params, auth: { user } }) => await ratings.mine(params.gameId, user.id), {
      auth: true,
      params: GameParams,
      response: { 200: MyRatingResponse, ...errors(BEARER, INVALID, NOT_FOUND, STORAGE) },
      detail: { tags, summary: 'The caller\'s rating in the game now (the start values before their first rated match)', security: BEARER_SECURITY },
    })
    .get('/games/:gameId/ratings/history', async ({ params, query, auth: { user } }) => await ratings.history(params.gameId, user.id, wholeLimit(query)), {
      auth: true,
      params: GameParams,
      query: HistoryQuery,
      response: { 200: RatingHistoryPage, ...errors(BEARER, INVALID, NOT_FOUND, STORAGE) },
      detail: { tags, summary: 'The caller\'s own rating changes in the game, oldest first, paged', security: BEARER_SECURITY },
    })
    .get('/games/:gameId/seasons', async ({ params }) => await ratings.seasons(params.gameId), {
      auth: true,
      params: GameParams,
      response: { 200: SeasonsResponse, ...errors(BEARER, INVALID, NOT_FOUND, STORAGE) },
      detail: { tags, summary: 'The game\'s seasons, newest first: scheduled, current and ended', security: BEARER_SECURITY },
    })
}
