// The game SDK surface (contract §2) and the player's own matches.
import { Elysia, t, type Static } from 'elysia'
import { AppError } from '../../shared/errors'
import { authGuard } from '../../plugins/auth'
import { BEARER, BEARER_SECURITY, errors, JSON_BODY, routeHeaders, STORAGE } from '../../plugins/openapi'
import type { AuthService } from '../auth/service'
import { ClaimBody, DecisionResponse, GameIdParams, GameSessionResponse, MyMatch, SessionBody } from './model'
import type { ClaimInput, MatchesService } from './service'

// Required, but answered by the service (403, 401), not by validation: see routeHeaders.
const SessionHeaders = routeHeaders('x-game-key')
const ResultHeaders = routeHeaders('x-game-key', 'x-session-token')

/** WIN names a winner, DRAW does not: checked here, where the schema cannot say it. */
function toClaim(body: Static<typeof ClaimBody>): ClaimInput {
  const score = body.score ? { score: body.score } : {}
  if (body.outcome === 'WIN') {
    if (!body.winnerParticipantId) {
      throw new AppError('validation_failed', 'Request failed validation', {
        details: [{ path: 'body/winnerParticipantId', message: 'Required when outcome is WIN' }],
      })
    }
    return { outcome: 'WIN', winnerParticipantId: body.winnerParticipantId, ...score }
  }
  if (body.winnerParticipantId !== undefined) {
    throw new AppError('validation_failed', 'Request failed validation', {
      details: [{ path: 'body/winnerParticipantId', message: 'Not allowed when outcome is DRAW' }],
    })
  }
  return { outcome: 'DRAW', ...score }
}

export function matchesModule(auth: AuthService, matchService: MatchesService) {
  return new Elysia({ name: 'arena/matches', prefix: '/api/v1' })
    .use(authGuard(auth))
    .post(
      '/game-sdk/:gameId/sessions',
      // Answered once the session is durable (one storage.write, group-committed on SQLite).
      async ({ params, body, request, auth: { user }, set }) => {
        set.status = 201
        return await matchService.issueSession({
          userId: user.id,
          gameId: params.gameId,
          gameKey: request.headers.get('x-game-key'),
          matchId: body.matchId,
        })
      },
      {
        auth: true,
        params: GameIdParams,
        headers: SessionHeaders.schema,
        body: SessionBody,
        response: {
          201: GameSessionResponse,
          ...errors(JSON_BODY, BEARER, { 403: ['invalid_game_key', 'not_a_participant'], 404: ['not_found'], 409: ['match_not_running', 'already_claimed'] }, STORAGE),
        },
        detail: { tags: ['game-sdk'], summary: 'Issue a single-use match session for the caller', security: BEARER_SECURITY, parameters: SessionHeaders.parameters },
      },
    )
    .post(
      '/game-sdk/:gameId/results',
      // Answered once the claim and its decision are durable (group commit).
      ({ params, body, request, auth: { user } }) =>
        matchService.submitResult({
          userId: user.id,
          gameId: params.gameId,
          gameKey: request.headers.get('x-game-key'),
          sessionToken: request.headers.get('x-session-token'),
          claim: toClaim(body),
        }),
      {
        auth: true,
        params: GameIdParams,
        headers: ResultHeaders.schema,
        body: ClaimBody,
        response: {
          200: DecisionResponse,
          ...errors(JSON_BODY, BEARER, { 401: ['session_token_invalid'], 403: ['invalid_game_key', 'account_banned', 'server_results_only'], 409: ['match_not_running', 'already_claimed'] }, STORAGE),
        },
        detail: {
          tags: ['game-sdk'],
          summary: 'Submit the caller\'s result claim; consumes the session token',
          security: BEARER_SECURITY,
          parameters: ResultHeaders.parameters,
        },
      },
    )
    .get('/me/matches', async ({ auth: { user } }) => ({ matches: await matchService.myMatches(user.id) }), {
      auth: true,
      response: { 200: t.Object({ matches: t.Array(MyMatch) }), ...errors(BEARER, STORAGE) },
      detail: { tags: ['matches'], summary: 'The caller\'s open matches', security: BEARER_SECURITY },
    })
}
