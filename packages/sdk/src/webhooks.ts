// The webhooks arena sends the studio's own backend: each
// type's `data`, and the body every delivery carries. Written out here, as
// the server declares it, so that the package needs nothing of the server;
// the arena repository's tests fail when the two disagree. A backend that
// receives deliveries verifies them with any Standard Webhooks library first,
// then narrows the parsed body by its type:
//
//   const payload = JSON.parse(body) as WebhookPayload
//   if (payload.type === 'match.decided') grant(payload.data.winnerUserId)

/**
 * Webhook type → its `data`. Amounts are decimal strings, instants ISO 8601,
 * as everywhere on the wire.
 */
export interface WebhookCatalogue {
  /** An account was created, by any way of signing in: `provider` the identity it was created with (`password`, `device` for a guest, `steam`, `oidc:<name>`). */
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
  /** An integrity signal held a winner's payout for an operator's review: stake winnings (`stake`) or a prize (`prize`). */
  'payout.held': { holdId: string; userId: string; kind: 'stake' | 'prize'; amount: string; asset: string; matchId: string; tournamentId: string | null; signals: string[] }
  /** A player asked to withdraw (the debit is made); `status` what the withdrawal became. */
  'withdrawal.requested': { withdrawalId: string; userId: string; amount: string; asset: string; destinationAddress: string; status: 'pending_signature' | 'awaiting_approval' | 'held' }
  /** Custody signed a withdrawal: `signature` (base58 Ed25519) is what the chain is sent. */
  'withdrawal.signed': { withdrawalId: string; userId: string; amount: string; asset: string; destinationAddress: string; signature: string }
  /** Custody refused a withdrawal: it failed for good and its amount went back to the player. */
  'withdrawal.failed': { withdrawalId: string; userId: string; amount: string; asset: string; reason: string }
  /** An operator rejected a withdrawal and its amount went back to the player. */
  'withdrawal.rejected': { withdrawalId: string; userId: string; amount: string; asset: string; reason: string }
  /** A player's rating in a game moved, one per player: a rated match was decided (`match`) or its result corrected (`correction`). `change` the rating's move (2 decimals). */
  'rating.updated': { userId: string; gameId: string; seasonId: string; matchId: string; reason: 'match' | 'correction'; change: number; rating: number; deviation: number; display: number; provisional: boolean }
}

export type WebhookType = keyof WebhookCatalogue

/** A delivery's body: `{ type, timestamp, data }`, a union discriminated by `type` (one type when `K` is given). */
export type WebhookPayload<K extends WebhookType = WebhookType> = K extends WebhookType ? { type: K; timestamp: string; data: WebhookCatalogue[K] } : never
