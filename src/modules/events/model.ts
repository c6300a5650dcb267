// TypeBox models of the event plane (mirrored by the client SDK, checked by test/sdk/wire-types.*).
import { t, type Static } from 'elysia'

export const EventsQuery = t.Object({
  after: t.Optional(t.String({ maxLength: 64, description: 'the cursor of the previous page (opaque)' })),
  wait: t.Optional(t.Numeric({ minimum: 0, maximum: 30, description: 'seconds to wait for a new event' })),
  topics: t.Optional(t.String({ maxLength: 64, description: 'comma list of session, wallet, status' })),
})

export const PlaneEvent = t.Object(
  { id: t.String(), topic: t.String(), type: t.String(), data: t.Record(t.String(), t.Unknown()), createdAt: t.String() },
  { $id: 'PlaneEvent' },
)
export type PlaneEvent = Static<typeof PlaneEvent>

export const EventsPage = t.Object({ events: t.Array(PlaneEvent), cursor: t.String() })
export type EventsPage = Static<typeof EventsPage>
