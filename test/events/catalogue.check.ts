// Compile-time half of the catalogue checks (the runtime half is
// catalogue.test.ts): the outbox accepts exactly the events of
// src/modules/events/catalogue.ts. `tsc --noEmit` (the first step of
// `npm test`) fails on this file when an event below that must not compile
// does (its @ts-expect-error is then unused), or one that must compile does
// not. Not a test file: bun never runs it, tsc checks it.
import type { EventType } from '../../src/modules/events/catalogue'
import type { EventsStore, OutboxEvent } from '../../src/modules/events/store'

declare const store: EventsStore
declare const now: Date
declare const anyType: string

/** Exact type equality. */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
/** Fails to compile unless the argument is `true`. */
type Same<T extends true> = T

// The one way to append takes exactly the catalogue's events.
export type AppendTakesOutboxEvents = [Same<Equal<Parameters<EventsStore['append']>[0], OutboxEvent>>]

/** A helper generic in the event type, as the notifiers are: OutboxEvent<K> is an OutboxEvent. */
export async function appendOf<K extends EventType>(event: OutboxEvent<K>): Promise<string> {
  return store.append(event, now)
}

export async function events(): Promise<void> {
  // As the catalogue says: compiles.
  await store.append({ userId: 'usr_a', topic: 'session', type: 'session.login', data: { sessionId: 'ses_1', newDevice: true } }, now)
  await store.append({ userId: null, topic: 'status', type: 'match.decided', data: { tournamentId: 'trn_1', matchId: 'mtc_1', winnerParticipantId: 'prt_1', outcome: 'WIN' } }, now)
  await store.append({ userId: 'usr_a', topic: 'status', type: 'match.decided', data: { tournamentId: 'trn_1', matchId: 'mtc_1', winnerParticipantId: 'prt_1', outcome: 'WIN', reason: 'bye' } }, now)
  await appendOf({ userId: 'usr_a', topic: 'wallet', type: 'wallet.withdrawal_signed', data: { withdrawalId: 'wdr_1', signature: 'sig' } })

  // @ts-expect-error a session event filed under the wallet topic
  await store.append({ userId: 'usr_a', topic: 'wallet', type: 'session.login', data: { sessionId: 'ses_1' } }, now)
  // @ts-expect-error a type the catalogue does not list
  await store.append({ userId: 'usr_a', topic: 'wallet', type: 'wallet.credit', data: {} }, now)
  // @ts-expect-error a type that is any string
  await store.append({ userId: 'usr_a', topic: 'wallet', type: anyType, data: {} }, now)
  // @ts-expect-error a data field missing (balance)
  await store.append({ userId: 'usr_a', topic: 'wallet', type: 'wallet.credited', data: { asset: 'USDC', amount: '1', reference: 'r' } }, now)
  // @ts-expect-error a data field the type does not carry
  await store.append({ userId: 'usr_a', topic: 'session', type: 'session.login', data: { sessionId: 'ses_1', ip: '127.0.0.1' } }, now)
  // @ts-expect-error a data field of another type
  await store.append({ userId: 'usr_a', topic: 'status', type: 'match.ready', data: { tournamentId: 'trn_1', matchId: 'mtc_1', round: '1' } }, now)
  // @ts-expect-error a reason this type never carries
  await store.append({ userId: 'usr_a', topic: 'session', type: 'session.reuse_revoked', data: { sessionId: 'ses_1', reason: 'logout' } }, now)
  // @ts-expect-error the data of another type
  await appendOf<'tournament.started'>({ userId: 'usr_a', topic: 'status', type: 'tournament.started', data: { tournamentId: 'trn_1', matchId: 'mtc_1', round: 1 } })
}
