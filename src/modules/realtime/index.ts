// The event plane over a WebSocket (contract §14): a ticket for a bearer,
// then the upgrade that spends it. The socket protocol is in ./socket.ts and
// ./protocol.ts; docs/api.md "Realtime" describes it for any client.
import { Elysia, t } from 'elysia'
import { authGuard } from '../../plugins/auth'
import { BEARER, BEARER_SECURITY, errors, INVALID, JSON_BODY, optionalBody, STORAGE } from '../../plugins/openapi'
import { EmptyBody } from '../../shared/models'
import { AppError } from '../../shared/errors'
import type { AuthService } from '../auth/service'
import type { SocketHub } from './hub'
import { SocketQuery, SocketTicketResponse, TICKET_TTL_S } from './protocol'
import type { SocketTickets } from './tickets'

function badTicket(): AppError {
  return new AppError('unauthorized', 'The ticket is unknown, used, expired or its session ended: mint a new one (POST /api/v1/events/socket-ticket)')
}

export function realtimeModule(auth: AuthService, tickets: SocketTickets, hub: SocketHub) {
  return new Elysia({ name: 'arena/realtime', prefix: '/api/v1' })
    .use(authGuard(auth))
    .post('/events/socket-ticket', ({ auth: { session } }) => tickets.mint({ userId: session.userId, sessionId: session.id }), {
      auth: true,
      ...optionalBody(EmptyBody),
      response: { 200: SocketTicketResponse, ...errors(JSON_BODY, BEARER, STORAGE) },
      detail: {
        tags: ['events'],
        summary: `A ticket to open one event socket (GET /events/socket): usable once, for ${TICKET_TTL_S} s, bound to the caller's session`,
        security: BEARER_SECURITY,
      },
    })
    .get(
      '/events/socket',
      async ({ query, request, server }) => {
        // Checked before the ticket is spent: a plain GET must not burn it.
        if (request.headers.get('upgrade')?.toLowerCase() !== 'websocket' || server === null) {
          throw new AppError('bad_request', 'This is a WebSocket endpoint: connect with a WebSocket client (Upgrade: websocket)')
        }
        const holder = await tickets.spend(query.ticket)
        if (holder === null) throw badTicket()
        if (!server.upgrade(request, { data: hub.handlersFor(holder) })) {
          throw new AppError('bad_request', 'Not a valid WebSocket upgrade (Sec-WebSocket-Key and Sec-WebSocket-Version 13 are needed)')
        }
        // Upgraded: Bun answers 101 itself and ignores what is returned here;
        // its status is what the request log and /metrics record.
        return new Response(null, { status: 101 })
      },
      {
        query: SocketQuery,
        response: { 101: t.Void({ description: 'Switching Protocols: the socket is open (docs/api.md "Realtime")' }), ...errors({ 400: ['bad_request'] }, BEARER, INVALID, STORAGE) },
        detail: {
          tags: ['events'],
          summary: 'Upgrades to a WebSocket carrying the caller\'s events (docs/api.md "Realtime"); the ticket from POST /events/socket-ticket is the credential',
        },
      },
    )
}
