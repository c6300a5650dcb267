// Player routes of tournaments (contract §6 and §9): read one (the same
// object operators see), list them, and register, leave and check in.
import { Elysia, t } from 'elysia'
import { authGuard } from '../../plugins/auth'
import { BEARER, BEARER_SECURITY, errors, INVALID, JSON_BODY, STORAGE } from '../../plugins/openapi'
import type { AuthService } from '../auth/service'
import { RegistrationResponse, TournamentResponse, TournamentsPage, TournamentsQuery } from './model'
import type { TournamentRegistration } from './registration'
import type { GamesService } from './service'

const IdParams = t.Object({ id: t.String({ minLength: 1, maxLength: 64 }) })
/** Acting for the caller: a banned account is 403 account_banned (a deleted one is 401). */
const ACTS = { 403: ['account_banned'] } as const
const tags = ['tournaments']

export function gamesModule(auth: AuthService, games: GamesService, registration: TournamentRegistration) {
  return new Elysia({ name: 'arena/games', prefix: '/api/v1' })
    .use(authGuard(auth))
    .get('/tournaments', async ({ query }) => await games.listTournaments(query), {
      auth: true,
      query: TournamentsQuery,
      response: { 200: TournamentsPage, ...errors(BEARER, INVALID, STORAGE) },
      detail: { tags, summary: 'Tournaments, oldest first, by status (e.g. `registration` for the ones players may join)', security: BEARER_SECURITY },
    })
    .get('/tournaments/:id', async ({ params }) => ({ tournament: await games.getTournament(params.id) }), {
      auth: true,
      params: IdParams,
      response: { 200: TournamentResponse, ...errors(BEARER, INVALID, { 404: ['not_found'] }, STORAGE) },
      detail: { tags, summary: 'A tournament with its participants and bracket', security: BEARER_SECURITY },
    })
    .post(
      '/tournaments/:id/registration',
      async ({ params, auth: { user }, set }) => {
        set.status = 201
        return { registration: await registration.register(params.id, user.id) }
      },
      {
        auth: true,
        params: IdParams,
        response: {
          201: RegistrationResponse,
          ...errors(JSON_BODY, BEARER, ACTS, { 404: ['not_found'], 409: ['registration_closed', 'already_registered', 'tournament_full'], 422: ['insufficient_funds'] }, STORAGE),
        },
        detail: { tags, summary: 'Join a tournament that is open for registration', security: BEARER_SECURITY },
      },
    )
    .delete(
      '/tournaments/:id/registration',
      async ({ params, auth: { user } }) => {
        await registration.leave(params.id, user.id)
        return { left: true as const }
      },
      {
        auth: true,
        params: IdParams,
        response: { 200: t.Object({ left: t.Literal(true) }), ...errors(BEARER, INVALID, ACTS, { 404: ['not_found'], 409: ['registration_closed', 'not_registered'] }, STORAGE) },
        detail: { tags, summary: 'Leave a tournament before it starts', security: BEARER_SECURITY },
      },
    )
    .post('/tournaments/:id/check-in', async ({ params, auth: { user } }) => ({ registration: await registration.checkIn(params.id, user.id) }), {
      auth: true,
      params: IdParams,
      response: {
        200: RegistrationResponse,
        ...errors(JSON_BODY, BEARER, ACTS, { 404: ['not_found'], 409: ['registration_closed', 'not_registered', 'check_in_closed'] }, STORAGE),
      },
      detail: { tags, summary: 'Check in for a tournament, within its check-in window', security: BEARER_SECURITY },
    })
}
