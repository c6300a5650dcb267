// GET /api/v1/events: the caller's own events, long-polled (contract §4).
import { Elysia } from 'elysia'
import { EventsPage, EventsQuery } from './model'
import { authGuard } from '../../plugins/auth'
import { BEARER, BEARER_SECURITY, errors, INVALID, STORAGE } from '../../plugins/openapi'
import type { AuthService } from '../auth/service'
import type { EventsService } from './service'

export function eventsModule(auth: AuthService, events: EventsService) {
  return new Elysia({ name: 'arena/events', prefix: '/api/v1' })
    .use(authGuard(auth))
    .get(
      '/events',
      ({ query, request, auth: { user } }) =>
        events.poll({ userId: user.id, after: query.after, waitS: query.wait ?? 0, topics: query.topics, signal: request.signal }),
      {
        auth: true,
        query: EventsQuery,
        response: { 200: EventsPage, ...errors(BEARER, INVALID, STORAGE) },
        detail: { tags: ['events'], summary: 'The caller\'s events after a cursor, oldest first; waits up to `wait` s for new ones', security: BEARER_SECURITY },
      },
    )
}
