// Compile-time half of the SDK's event-type drift check (the runtime half is
// event-types.test.ts): the SDK's EventCatalogue, written out in
// packages/sdk/src/types.ts so that the package needs nothing of the server,
// must be exactly the server's (src/modules/events/catalogue.ts), and a
// KnownEvent exactly what the server appends, as a PlaneEvent delivers it.
// `tsc --noEmit` fails on this file when they disagree. Not a test file: bun
// never runs it, tsc checks it.
import type * as Sdk from '../../packages/sdk/src/types'
import type * as Catalogue from '../../src/modules/events/catalogue'
import type { OutboxEvent } from '../../src/modules/events/store'

/** Exact type equality (not mere assignability: an extra optional field on one side counts). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
/** Fails to compile unless the argument is `true`; the alias names the pair in tsc's message. */
type Same<T extends true> = T

/** What the wire carries of an event, member by member of a union. */
type Wire<E> = E extends { topic: unknown; type: unknown; data: unknown } ? { topic: E['topic']; type: E['type']; data: E['data'] } : never

export type EventTypes = [
  Same<Equal<Sdk.EventCatalogue, Catalogue.EventCatalogue>>,
  Same<Equal<Sdk.EventType, Catalogue.EventType>>,
  Same<Equal<Sdk.EventData<'match.decided'>, Catalogue.EventData<'match.decided'>>>,
  Same<Equal<Sdk.EventData<'rating.updated'>, Catalogue.EventData<'rating.updated'>>>,
  Same<Equal<Sdk.EventData<'match.found'>, Catalogue.EventData<'match.found'>>>,
  Same<Equal<Sdk.EventData<'match.cancelled'>, Catalogue.EventData<'match.cancelled'>>>,
  Same<Equal<Sdk.EventData<'challenge.received'>, Catalogue.EventData<'challenge.received'>>>,
  Same<Equal<Wire<Sdk.KnownEvent<'match.ready' | 'ticket.cancelled' | 'challenge.cancelled'>>, Wire<OutboxEvent<'match.ready' | 'ticket.cancelled' | 'challenge.cancelled'>>>>,
  // A known event is what the outbox stores, plus its id and time.
  Same<Equal<Wire<Sdk.KnownEvent>, Wire<OutboxEvent>>>,
  Same<Equal<Wire<Sdk.KnownEvent<'wallet.credited' | 'session.login'>>, Wire<OutboxEvent<'wallet.credited' | 'session.login'>>>>,
  // ... and one of the PlaneEvents a poll answers.
  Same<Equal<Sdk.KnownEvent extends Sdk.PlaneEvent ? true : false, true>>,
  Same<Equal<Sdk.KnownEvent['type'] extends Sdk.PlaneEvent['type'] ? true : false, true>>,
]
