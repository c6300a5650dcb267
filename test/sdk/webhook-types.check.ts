// Compile-time half of the SDK's webhook-type drift check (the runtime half is
// webhook-types.test.ts): the SDK's WebhookCatalogue, written out in
// packages/sdk/src/webhooks.ts so that the package needs nothing of the
// server, must be exactly the server's (src/modules/webhooks/catalogue.ts),
// and a WebhookPayload exactly the body the server publishes. `tsc --noEmit`
// fails on this file when they disagree. Not a test file: bun never runs it,
// tsc checks it.
import type * as Sdk from '@arena/sdk'
import type * as Catalogue from '../../src/modules/webhooks/catalogue'

/** Exact type equality (not mere assignability: an extra optional field on one side counts). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
/** Fails to compile unless the argument is `true`; the alias names the pair in tsc's message. */
type Same<T extends true> = T

/** The body webhookBody (src/modules/webhooks/publish.ts) writes for an event: its type and data, and the time. */
type Body<E> = E extends { type: unknown; data: unknown } ? { type: E['type']; timestamp: string; data: E['data'] } : never

export type WebhookTypes = [
  Same<Equal<Sdk.WebhookCatalogue, Catalogue.WebhookCatalogue>>,
  Same<Equal<Sdk.WebhookType, Catalogue.WebhookType>>,
  Same<Equal<Sdk.WebhookType, (typeof Catalogue.WEBHOOK_TYPES)[number]>>,
  Same<Equal<Sdk.WebhookPayload, Body<Catalogue.WebhookEvent>>>,
  Same<Equal<Sdk.WebhookPayload<'match.decided'>, Body<Catalogue.WebhookEvent<'match.decided'>>>>,
  Same<Equal<Sdk.WebhookPayload<'rating.updated' | 'user.created'>, Body<Catalogue.WebhookEvent<'rating.updated' | 'user.created'>>>>,
]
