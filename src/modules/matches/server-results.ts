// POST /game-servers/{gameId}/results (contract §17): a game's dedicated
// server reports a match's result, signed with its Ed25519 key in
// x-arena-signature. No bearer and no game key: the signature is the
// credential, verified over the exact bytes the body arrived as (rawBody,
// src/plugins/json-body.ts) and the path as sent, query included. The rules:
// MatchesService.submitServerResult; the key checks: games/game-servers.ts.
import { Elysia, t, type Static } from 'elysia'
import { rawBody } from '../../plugins/json-body'
import { errors, JSON_BODY, routeHeaders, STORAGE } from '../../plugins/openapi'
import { AppError } from '../../shared/errors'
import { SIGNATURE_HEADER } from '../games/game-servers'
import { DecisionResponse, GameIdParams } from './model'
import type { MatchesService, ServerResultInput } from './service'

const SignatureHeaders = routeHeaders('x-arena-signature')

export const ServerResultBody = t.Object(
  {
    matchId: t.String({ minLength: 1, maxLength: 64 }),
    outcome: t.Union([t.Literal('WIN'), t.Literal('DRAW')]),
    winnerParticipantId: t.Optional(t.String({ minLength: 1, maxLength: 64, description: 'required with WIN, refused with DRAW' })),
    score: t.Optional(t.Record(t.String(), t.Unknown(), { description: 'accepted and signed with the rest; not compared, not stored' })),
  },
  { $id: 'ServerResultBody' },
)

/** WIN names a winner, DRAW does not (as a player's claim: matches/index.ts). */
function toResult(body: Static<typeof ServerResultBody>): ServerResultInput {
  const invalid = (message: string) => new AppError('validation_failed', 'Request failed validation', { details: [{ path: 'body/winnerParticipantId', message }] })
  const score = body.score ? { score: body.score } : {}
  if (body.outcome === 'WIN') {
    if (!body.winnerParticipantId) throw invalid('Required when outcome is WIN')
    return { matchId: body.matchId, outcome: 'WIN', winnerParticipantId: body.winnerParticipantId, ...score }
  }
  if (body.winnerParticipantId !== undefined) throw invalid('Not allowed when outcome is DRAW')
  return { matchId: body.matchId, outcome: 'DRAW', ...score }
}

/** The path of a request as sent, query included (`http://host/a/b?q` → `/a/b?q`). */
function pathAsSent(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  return start === -1 ? '/' : url.slice(start)
}

export function serverResultsModule(matches: MatchesService) {
  return new Elysia({ name: 'arena/server-results', prefix: '/api/v1' }).post(
    '/game-servers/:gameId/results',
    ({ params, body, request }) =>
      matches.submitServerResult({
        gameId: params.gameId,
        signature: request.headers.get(SIGNATURE_HEADER),
        method: request.method,
        path: pathAsSent(request.url),
        body: rawBody(request) ?? new Uint8Array(0),
        result: toResult(body),
      }),
    {
      params: GameIdParams,
      headers: SignatureHeaders.schema,
      body: ServerResultBody,
      response: {
        200: DecisionResponse,
        ...errors(JSON_BODY, { 401: ['invalid_signature'], 403: ['server_results_disabled'], 404: ['not_found'], 409: ['signature_reused', 'match_not_running'] }, STORAGE),
      },
      detail: {
        tags: ['game-servers'],
        summary: 'A game server reports a match\'s result, signed with its key (no bearer, no game key); decides the match at once',
        parameters: SignatureHeaders.parameters,
      },
    },
  )
}
