// Player routes of matchmaking (contract §16): a game's queues and the
// caller's ticket in one, a match's view and its ready check, challenges.
// The operators' routes (queues, cancelling a match) are admin-routes.ts.
import { Elysia, t } from 'elysia'
import { authGuard } from '../../plugins/auth'
import { BEARER, BEARER_SECURITY, errors, INVALID, JSON_BODY, STORAGE } from '../../plugins/openapi'
import type { AuthService } from '../auth/service'
import type { ChallengesService } from './challenges'
import { Challenge, CreateChallengeBody, MatchView, Queue, Ticket } from './model'
import type { MatchmakingService } from './service'

const GameParams = t.Object({ gameId: t.String({ minLength: 1, maxLength: 64 }) })
const QueueParams = t.Object({ gameId: t.String({ minLength: 1, maxLength: 64 }), name: t.String({ minLength: 1, maxLength: 64 }) })
const IdParams = t.Object({ id: t.String({ minLength: 1, maxLength: 64 }) })
const NOT_FOUND = { 404: ['not_found'] } as const
const tags = ['matchmaking']

export const QueuesResponse = t.Object({ queues: t.Array(Queue) })
export const TicketResponse = t.Object({ ticket: Ticket })
export const MatchViewResponse = t.Object({ match: MatchView })
export const ChallengeResponse = t.Object({ challenge: Challenge })
export const ChallengesResponse = t.Object({ challenges: t.Array(Challenge, { description: 'newest first, at most 100' }) })

export function matchmakingModule(auth: AuthService, matchmaking: MatchmakingService, challenges: ChallengesService) {
  return new Elysia({ name: 'arena/matchmaking', prefix: '/api/v1' })
    .use(authGuard(auth))
    .get('/games/:gameId/queues', async ({ params }) => await matchmaking.queues(params.gameId, false), {
      auth: true,
      params: GameParams,
      response: { 200: QueuesResponse, ...errors(BEARER, INVALID, NOT_FOUND, STORAGE) },
      detail: { tags, summary: 'The game\'s open queues', security: BEARER_SECURITY },
    })
    .post(
      '/games/:gameId/queues/:name/tickets',
      async ({ params, set, auth: { user } }) => {
        set.status = 201
        return await matchmaking.join(user.id, params.gameId, params.name)
      },
      {
        auth: true,
        params: QueueParams,
        response: { 201: TicketResponse, ...errors(BEARER, JSON_BODY, NOT_FOUND, { 409: ['ticket_open'], 422: ['insufficient_funds'] }, STORAGE) },
        detail: { tags, summary: 'Join a queue: one open ticket per player and game; a staked queue needs the stake in the wallet', security: BEARER_SECURITY },
      },
    )
    .get('/games/:gameId/queues/:name/tickets/current', async ({ params, auth: { user } }) => await matchmaking.current(user.id, params.gameId, params.name), {
      auth: true,
      params: QueueParams,
      response: { 200: TicketResponse, ...errors(BEARER, INVALID, NOT_FOUND, STORAGE) },
      detail: { tags, summary: 'The caller\'s open ticket in the queue, with its window now', security: BEARER_SECURITY },
    })
    .delete('/games/:gameId/queues/:name/tickets/current', async ({ params, auth: { user } }) => await matchmaking.leave(user.id, params.gameId, params.name), {
      auth: true,
      params: QueueParams,
      response: { 200: TicketResponse, ...errors(BEARER, INVALID, NOT_FOUND, STORAGE) },
      detail: { tags, summary: 'Leave the queue (the caller\'s open ticket in it is closed)', security: BEARER_SECURITY },
    })
    .get('/matches/:id', async ({ params, auth: { user } }) => await matchmaking.match(params.id, user.id), {
      auth: true,
      params: IdParams,
      response: { 200: MatchViewResponse, ...errors(BEARER, INVALID, NOT_FOUND, STORAGE) },
      detail: { tags, summary: 'A match the caller plays in: its kind, stake, players (with the participant ids claims name), status and decision', security: BEARER_SECURITY },
    })
    .post('/matches/:id/ready', async ({ params, auth: { user } }) => await matchmaking.ready(params.id, user.id), {
      auth: true,
      params: IdParams,
      response: { 200: MatchViewResponse, ...errors(BEARER, JSON_BODY, NOT_FOUND, { 409: ['ready_check_over', 'match_not_waiting'] }, STORAGE) },
      detail: { tags, summary: 'Confirm a match a queue found; once both players have, it runs', security: BEARER_SECURITY },
    })
    .post(
      '/games/:gameId/challenges',
      async ({ params, body, set, auth: { user } }) => {
        set.status = 201
        return await challenges.create(user.id, params.gameId, body)
      },
      {
        auth: true,
        params: GameParams,
        body: CreateChallengeBody,
        response: { 201: ChallengeResponse, ...errors(BEARER, JSON_BODY, NOT_FOUND, { 409: ['conflict'], 422: ['insufficient_funds'] }, STORAGE) },
        detail: { tags, summary: 'Challenge a named player (username or user id), with an optional stake; it expires after expiresInS (default 300)', security: BEARER_SECURITY },
      },
    )
    .get('/me/challenges', async ({ query, auth: { user } }) => await challenges.mine(user.id, query.status === 'open'), {
      auth: true,
      query: t.Object({ status: t.Optional(t.Union([t.Literal('open'), t.Literal('all')], { description: '`open` for open ones only; default all' })) }),
      response: { 200: ChallengesResponse, ...errors(BEARER, INVALID, STORAGE) },
      detail: { tags, summary: 'The caller\'s challenges, made and received, newest first', security: BEARER_SECURITY },
    })
    .get('/challenges/:id', async ({ params, auth: { user } }) => await challenges.get(params.id, user.id), {
      auth: true,
      params: IdParams,
      response: { 200: ChallengeResponse, ...errors(BEARER, INVALID, NOT_FOUND, STORAGE) },
      detail: { tags, summary: 'A challenge the caller made or received', security: BEARER_SECURITY },
    })
    .post('/challenges/:id/accept', async ({ params, auth: { user } }) => await challenges.accept(params.id, user.id), {
      auth: true,
      params: IdParams,
      response: { 200: ChallengeResponse, ...errors(BEARER, JSON_BODY, NOT_FOUND, { 403: ['forbidden'], 409: ['challenge_closed', 'challenge_unfunded'], 422: ['insufficient_funds'] }, STORAGE) },
      detail: { tags, summary: 'Accept a challenge (the opponent): the match is made at once and runs, both stakes in escrow', security: BEARER_SECURITY },
    })
    .post('/challenges/:id/decline', async ({ params, auth: { user } }) => await challenges.decline(params.id, user.id), {
      auth: true,
      params: IdParams,
      response: { 200: ChallengeResponse, ...errors(BEARER, JSON_BODY, NOT_FOUND, { 403: ['forbidden'], 409: ['challenge_closed'] }, STORAGE) },
      detail: { tags, summary: 'Decline a challenge (the opponent)', security: BEARER_SECURITY },
    })
    .post('/challenges/:id/cancel', async ({ params, auth: { user } }) => await challenges.cancel(params.id, user.id), {
      auth: true,
      params: IdParams,
      response: { 200: ChallengeResponse, ...errors(BEARER, JSON_BODY, NOT_FOUND, { 403: ['forbidden'], 409: ['challenge_closed'] }, STORAGE) },
      detail: { tags, summary: 'Withdraw a challenge (the challenger) while it is open', security: BEARER_SECURITY },
    })
}
