// The event plane over a WebSocket (contract §14): what travels on the
// socket, in one place. The client SDK mirrors these types
// (packages/sdk/src/socket.ts; test/sdk/wire-types.* hold them together) and
// docs/api.md "Realtime" documents them for clients in other languages.
import { t, type Static } from 'elysia'
import { EVENT_TOPICS } from '../events/catalogue'
import type { PlaneEvent } from '../events/model'

/** Close codes the server sends, and why. */
export const CLOSE_CODES = {
  /** The session the ticket was minted for ended (logout, ban, password change or reset, deletion, expiry): sign in again. */
  sessionEnded: 4001,
  /** The reader did not take what was sent in time (ARENA_SOCKET_SLOW_S): reconnect and resume from the cursor. */
  slowConsumer: 4008,
  /** Too many sockets: the account's (ARENA_SOCKETS_PER_USER) or the instance's (ARENA_SOCKETS_MAX). */
  tooMany: 4029,
  /** The server is stopping: reconnect (another instance will take it) and resume from the cursor. */
  restart: 1012,
  /** The server could not read the events (the database unreachable): reconnect and resume from the cursor. */
  internalError: 1011,
  /** The client broke the protocol (a binary frame). */
  policy: 1008,
} as const
export type CloseCode = (typeof CLOSE_CODES)[keyof typeof CLOSE_CODES]

/** Seconds a ticket lives (contract §14). */
export const TICKET_TTL_S = 30
/** The server's `{ "type": "ping" }`, this often (contract §14). */
export const PING_INTERVAL_MS = 25_000
/** A client message (a subscribe) is at most this long; a longer one closes the socket (1009). */
export const MAX_CLIENT_MESSAGE_BYTES = 4096
/** Client messages answered per PING_INTERVAL_MS at most; more get an error frame and are ignored. */
export const CLIENT_MESSAGES_PER_INTERVAL = 50

export const SocketTicketResponse = t.Object({
  ticket: t.String({ description: 'opens one socket: `GET /api/v1/events/socket?ticket=…`, once, within `expiresIn` seconds' }),
  expiresIn: t.Integer({ description: 'seconds' }),
})

export const SocketQuery = t.Object({
  ticket: t.String({ maxLength: 128, description: 'from `POST /events/socket-ticket`: usable once, for 30 s' }),
})

/** The one message a client sends: what to hear, from where. */
export const SubscribeMessage = t.Object(
  {
    type: t.Literal('subscribe'),
    after: t.Optional(t.String({ maxLength: 64, description: 'a cursor: replay what came after it first' })),
    topics: t.Optional(t.Array(t.UnionEnum([...EVENT_TOPICS]), { minItems: 1, maxItems: EVENT_TOPICS.length, uniqueItems: true })),
  },
  { additionalProperties: false },
)
export type SubscribeMessage = Static<typeof SubscribeMessage>

/** What the server sends. */
export type ServerFrame =
  | { type: 'events'; events: PlaneEvent[]; cursor: string }
  | { type: 'ping' }
  | { type: 'error'; error: { code: string; message: string } }
