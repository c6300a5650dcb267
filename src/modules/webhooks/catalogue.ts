// The webhook catalogue (contract §18): the studio-facing facts arena sends to
// the studio's own backend, and the data each carries. Unlike the player
// events (src/modules/events/catalogue.ts), which are addressed to one player
// and filed under a topic, these are about the platform: one `match.decided`
// per match (not one per participant), with the ids a backend joins on.
// It is the one list of them:
// - publishing is typed by it (WebhookEvent below): a type not listed here or
//   data of another shape does not compile;
// - POST/PATCH /admin/webhooks accept exactly these names (WEBHOOK_TYPES);
// - docs/webhooks.md documents every type with an example body
//   (test/webhooks/catalogue.test.ts);
// - the client SDK mirrors it as WebhookCatalogue in packages/sdk/src/webhooks.ts.
// Change them together. Plain TypeScript with no imports.

/**
 * Webhook type → its `data`. Amounts are decimal strings, instants ISO 8601,
 * as everywhere on the wire. Write the data as type literals (the drift tests
 * read this declaration as it is written).
 */
export interface WebhookCatalogue {
  /** An account was created, by any sign-in of contract §13 (`method`). */
  'user.created': { userId: string; username: string; method: 'password' | 'guest' | 'oidc' | 'steam' }
  /** An operator banned an account; `until` null: for good. */
  'user.banned': { userId: string; reason: string; until: string | null }
  /** A match was decided. `winnerUserId` null on a DRAW; `reason`: how it was decided (claims, server_result, operator, deadline, bye, no_show, disqualified). */
  'match.decided': {
    matchId: string
    gameId: string
    tournamentId: string | null
    outcome: 'WIN' | 'DRAW'
    winnerParticipantId: string | null
    winnerUserId: string | null
    reason: string
  }
  /** A match went to dispute: an operator must resolve it. */
  'match.disputed': { matchId: string; gameId: string; tournamentId: string | null; reason: string }
  /** A tournament finished and its prizes (if any) were paid or held. */
  'tournament.completed': { tournamentId: string; gameId: string; winnerParticipantId: string | null; winnerUserId: string | null }
  /** An integrity signal held a winner's payout for an operator's review (contract §17). */
  'payout.held': { holdId: string; userId: string; kind: 'stake' | 'prize'; amount: string; asset: string; matchId: string; tournamentId: string | null; signals: string[] }
  /** A player asked to withdraw; `status` what the withdrawal became (pending_signature, awaiting_approval or held). */
  'withdrawal.requested': { withdrawalId: string; userId: string; amount: string; asset: string; status: string }
  /** Custody signed a withdrawal. */
  'withdrawal.signed': { withdrawalId: string; userId: string; amount: string; asset: string }
  /** A withdrawal failed for good and its amount went back to the player. */
  'withdrawal.failed': { withdrawalId: string; userId: string; reason: string }
  /** An operator rejected a withdrawal and its amount went back to the player. */
  'withdrawal.rejected': { withdrawalId: string; userId: string; reason: string }
  /** A player's rating in a game moved (contract §15). */
  'rating.updated': { userId: string; gameId: string; seasonId: string; matchId: string; reason: 'match' | 'correction'; change: number; rating: number; deviation: number; display: number; provisional: boolean }
}

export type WebhookType = keyof WebhookCatalogue

/** Every webhook type, in the catalogue's order: what an endpoint may subscribe to. */
export const WEBHOOK_TYPES = [
  'user.created',
  'user.banned',
  'match.decided',
  'match.disputed',
  'tournament.completed',
  'payout.held',
  'withdrawal.requested',
  'withdrawal.signed',
  'withdrawal.failed',
  'withdrawal.rejected',
  'rating.updated',
] as const satisfies readonly WebhookType[]

// Every type listed once above (a missing one fails to compile here).
type Missing = Exclude<WebhookType, (typeof WEBHOOK_TYPES)[number]>
export const EVERY_WEBHOOK_TYPE_LISTED: Missing extends never ? true : Missing = true

/** A fact to publish, typed by the catalogue: a union discriminated by `type`. */
export type WebhookEvent<K extends WebhookType = WebhookType> = K extends WebhookType ? { type: K; data: WebhookCatalogue[K] } : never
