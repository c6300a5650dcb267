// Player read of a tournament (contract §6: the same object operators see).
import { Elysia, t } from 'elysia'
import { authGuard } from '../../plugins/auth'
import { BEARER, BEARER_SECURITY, errors, INVALID, STORAGE } from '../../plugins/openapi'
import type { AuthService } from '../auth/service'
import { TournamentResponse } from './model'
import type { GamesService } from './service'

export function gamesModule(auth: AuthService, games: GamesService) {
  return new Elysia({ name: 'arena/games', prefix: '/api/v1' })
    .use(authGuard(auth))
    .get('/tournaments/:id', async ({ params }) => ({ tournament: await games.getTournament(params.id) }), {
      auth: true,
      params: t.Object({ id: t.String({ minLength: 1, maxLength: 64 }) }),
      response: { 200: TournamentResponse, ...errors(BEARER, INVALID, { 404: ['not_found'] }, STORAGE) },
      detail: { tags: ['tournaments'], summary: 'A tournament with its participants and bracket', security: BEARER_SECURITY },
    })
}
