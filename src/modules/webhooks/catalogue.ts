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
  /** An account was created, by any sign-in of contract §13: `provider` the identity it was created with (`password`, `device` for a guest, `steam`, `oidc:<name>`). */
  'user.created': { userId: string; username: string; provider: string }
  /** An operator banned an account (a ban in force replaced counts again); `until` null: until an operator lifts it. */
  'user.banned': { userId: string; reason: string; until: string | null }
  /**
   * A match was decided, once per match (a correction publishes nothing here). `winnerParticipantId` and `winnerUserId` null on a DRAW;
   * `players` the match's seats (one for a bye); `reason` how it was decided: both players' claims agreed, a game server's signed result,
   * an operator's resolve, a no-show at the deadline, a bye, or the opponent's disqualification.
   */
  'match.decided': {
    matchId: string
    gameId: string
    tournamentId: string | null
    outcome: 'WIN' | 'DRAW'
    winnerParticipantId: string | null
    winnerUserId: string | null
    players: { participantId: string; userId: string }[]
    reason: 'claims_agree' | 'server_result' | 'operator_resolved' | 'no_show' | 'bye' | 'disqualified'
  }
  /** A match went to dispute: an operator must resolve it. */
  'match.disputed': { matchId: string; gameId: string; tournamentId: string | null; reason: 'claims_conflict' | 'winner_not_in_match' | 'deadline_passed' }
  /** A tournament completed: its standings are final and its prizes paid (or held, see `payout.held`). */
  'tournament.completed': { tournamentId: string; gameId: string; winnerParticipantId: string | null; winnerUserId: string | null }
  /** An integrity signal held a winner's payout for an operator's review (contract §17): stake winnings (`stake`) or a prize (`prize`). */
  'payout.held': { holdId: string; userId: string; kind: 'stake' | 'prize'; amount: string; asset: string; matchId: string; tournamentId: string | null; signals: string[] }
  /** A player asked to withdraw (the debit is made); `status` what the withdrawal became. */
  'withdrawal.requested': { withdrawalId: string; userId: string; amount: string; asset: string; destinationAddress: string; status: 'pending_signature' | 'awaiting_approval' | 'held' }
  /** Custody signed a withdrawal: `signature` (base58 Ed25519) is what the chain is sent. */
  'withdrawal.signed': { withdrawalId: string; userId: string; amount: string; asset: string; destinationAddress: string; signature: string }
  /** Custody refused a withdrawal: it failed for good and its amount went back to the player. */
  'withdrawal.failed': { withdrawalId: string; userId: string; amount: string; asset: string; reason: string }
  /** An operator rejected a withdrawal and its amount went back to the player. */
  'withdrawal.rejected': { withdrawalId: string; userId: string; amount: string; asset: string; reason: string }
  /** A player's rating in a game moved (contract §15), one per player: a rated match was decided (`match`) or its result corrected (`correction`). `change` the rating's move (2 decimals). */
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
