// TypeBox models of the event plane (mirrored by the client SDK, checked by test/sdk/wire-types.*).
import { t, type Static } from 'elysia'
import { EVENT_TOPICS, EVENT_TYPES } from './catalogue'

export const EventsQuery = t.Object({
  after: t.Optional(t.String({ maxLength: 64, description: 'the cursor of the previous page (opaque)' })),
  wait: t.Optional(t.Numeric({ minimum: 0, maximum: 30, description: 'seconds to wait for a new event' })),
  topics: t.Optional(t.String({ maxLength: 64, description: `comma list of ${EVENT_TOPICS.join(', ')}` })),
})

// `type` and `data` stay open on the wire: a client must ignore types it does
// not know, and a poll delivers what was stored (up to 30 days old). The
// catalogue types what the server appends (OutboxEvent); here it only describes.
export const PlaneEvent = t.Object(
  {
    id: t.String(),
    topic: t.String({ description: `one of ${EVENT_TOPICS.join(', ')}` }),
    type: t.String({ description: `what happened: ${Object.keys(EVENT_TYPES).join(', ')}; more may be added, ignore the ones you do not know (docs/api.md "Event types")` }),
    data: t.Record(t.String(), t.Unknown(), { description: 'the fields of its type, as docs/api.md "Event types" lists them' }),
    createdAt: t.String(),
  },
  { $id: 'PlaneEvent' },
)
export type PlaneEvent = Static<typeof PlaneEvent>

export const EventsPage = t.Object({ events: t.Array(PlaneEvent), cursor: t.String() })
export type EventsPage = Static<typeof EventsPage>
