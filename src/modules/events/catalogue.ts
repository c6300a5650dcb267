// The event catalogue of the event plane (contract §4): every event type the
// server appends, the topic it is filed under and the data it carries. It is
// the one list of them:
// - the outbox is typed by it (OutboxEvent in ./store.ts): an event of a type
//   not listed here, filed under another topic, or with a data field missing,
//   extra or of another type does not compile;
// - docs/api.md "Event types" documents it, row for row (test/events/catalogue.test.ts);
// - the client SDK mirrors it as its own EventCatalogue in
//   packages/sdk/src/types.ts, written out there so that the package needs
//   nothing of the server (test/sdk/event-types.check.ts and .test.ts).
// Change them together. Plain TypeScript with no imports: the database
// schema, the stores, the models and the tests all read it.

/** The topics of the event plane (contract §4). */
export const EVENT_TOPICS = ['session', 'account', 'wallet', 'status'] as const
export type EventTopic = (typeof EVENT_TOPICS)[number]

/**
 * Event type → its topic and its `data`. Amounts and balances are decimal
 * strings, as everywhere on the wire. Write the data as type literals (not
 * named interfaces): the drift tests read this declaration as it is written.
 */
export interface EventCatalogue {
  // Topic `session`: the user's auth sessions.
  /** `newDevice`: the user had logged in before, but never from this user agent. */
  'session.login': { topic: 'session'; data: { sessionId: string; newDevice: boolean } }
  'session.refreshed': { topic: 'session'; data: { sessionId: string } }
  /** `reason`: the session's own logout, logout `all` or `others`, DELETE /me/sessions/{id} (`revoked`), a password change or reset, a ban, a login past the account's session bound (`superseded`). */
  'session.logout': {
    topic: 'session'
    data: { sessionId: string; reason: 'logout' | 'logout_all' | 'logout_others' | 'revoked' | 'password_changed' | 'password_reset' | 'banned' | 'superseded' }
  }
  'session.reuse_revoked': { topic: 'session'; data: { sessionId: string; reason: 'refresh_token_reused' } }

  // Topic `account`: the account itself (contract §8).
  /** A one-time code was mailed: the verification code (register, resend) or a reset code (forgot). */
  'account.code_sent': { topic: 'account'; data: { purpose: 'verify_email' | 'reset_password' } }
  'account.email_verified': { topic: 'account'; data: { verifiedAt: string } }
  /** `revoked`: how many other sessions the change ended. */
  'account.password_changed': { topic: 'account'; data: { revoked: number } }
  /** `revoked`: how many sessions the reset ended (all of them). */
  'account.password_reset': { topic: 'account'; data: { revoked: number } }
  /** `until` null: until an operator lifts it. */
  'account.banned': { topic: 'account'; data: { reason: string; until: string | null } }
  'account.unbanned': { topic: 'account'; data: { unbannedAt: string } }
  /** A finance operator lifted the PIN lock: the failures and the doubling are forgotten. */
  'account.pin_unlocked': { topic: 'account'; data: { unlockedAt: string } }
  'account.deleted': { topic: 'account'; data: { deletedAt: string } }
  /** A way to sign in was added (contract §13): `password`, `device`, `steam` or `oidc:<name>`. */
  'account.identity_linked': { topic: 'account'; data: { provider: string } }
  /** A way to sign in was taken away, by the user or (`byOperator`) an operator. */
  'account.identity_unlinked': { topic: 'account'; data: { provider: string; byOperator: boolean } }

  // Topic `wallet`.
  'wallet.credited': { topic: 'wallet'; data: { asset: string; amount: string; reference: string; balance: string } }
  /** An operator adjustment: `amount` signed (negative: taken from the wallet), `reason` the operator's. */
  'wallet.adjusted': { topic: 'wallet'; data: { asset: string; amount: string; reference: string; reason: string; balance: string } }
  'wallet.withdrawal_pending': { topic: 'wallet'; data: { withdrawalId: string; amount: string; asset: string } }
  'wallet.withdrawal_signed': { topic: 'wallet'; data: { withdrawalId: string; signature: string } }
  'wallet.withdrawal_failed': { topic: 'wallet'; data: { withdrawalId: string; reason: string } }
  'wallet.withdrawal_awaiting_approval': { topic: 'wallet'; data: { withdrawalId: string; releasesAt?: string } }
  'wallet.withdrawal_held': { topic: 'wallet'; data: { withdrawalId: string; releasesAt: string } }
  'wallet.withdrawal_approved': { topic: 'wallet'; data: { withdrawalId: string; status: 'pending_signature' | 'held'; releasesAt?: string } }
  'wallet.withdrawal_released': { topic: 'wallet'; data: { withdrawalId: string } }
  'wallet.withdrawal_rejected': { topic: 'wallet'; data: { withdrawalId: string; reason: string } }
  /** A payout kept in escrow for an operator's review (integrity signals, docs/integrity.md): stake winnings (`stake`) or a prize (`prize`); `amount` is what release pays. */
  'wallet.payout_held': { topic: 'wallet'; data: { holdId: string; kind: 'stake' | 'prize'; amount: string; asset: string; matchId: string; tournamentId: string | null } }
  /** An operator released a held payout: it is paid as decided (a movement on the wallet). */
  'wallet.payout_released': { topic: 'wallet'; data: { holdId: string; kind: 'stake' | 'prize'; amount: string; asset: string; matchId: string; tournamentId: string | null } }
  /** An operator voided a held payout: stake winnings go back as both players' stakes, a prize to the house. */
  'wallet.payout_voided': { topic: 'wallet'; data: { holdId: string; kind: 'stake' | 'prize'; amount: string; asset: string; matchId: string; tournamentId: string | null; reason: string } }

  // Topic `status`: tournament events go to every participant, match events
  // to the match's players only.
  'tournament.started': { topic: 'status'; data: { tournamentId: string } }
  /** To a registrant removed at the start: check-in was asked and they did not check in. */
  'tournament.dropped': { topic: 'status'; data: { tournamentId: string; reason: 'not_checked_in' } }
  'tournament.finalizing': { topic: 'status'; data: { tournamentId: string; winnerParticipantId: string } }
  /** `participantId` and `place` are the recipient's own: their rank in the final standings (1 the winner; distinct, ties broken per format). */
  'tournament.completed': { topic: 'status'; data: { tournamentId: string; winnerParticipantId: string | null; participantId: string; place: number | null } }
  /** The tournament was cancelled: by an operator (their `reason`; its undecided matches are `cancelled`), or at the start with fewer than two players left (`not_enough_players`) or its prize pool short of its prizes (`prize_pool_underfunded`). */
  'tournament.cancelled': { topic: 'status'; data: { tournamentId: string; reason: string } }
  /** To the disqualified player: their current match goes (or will go, once the opponent is known) to the opponent. */
  'tournament.disqualified': { topic: 'status'; data: { tournamentId: string; participantId: string; reason: string } }
  /** The match can be played now (a queue's: once both players confirmed the ready check). `tournamentId` null without a tournament. */
  'match.ready': { topic: 'status'; data: { tournamentId: string | null; matchId: string; round: number } }
  /**
   * `outcome` `DRAW` (round robin and Swiss) has no winner. `reason` absent when both players agreed (or an operator resolved it):
   * `bye`, `no_show` (the deadline passed with only the winner's claim), `disqualified` (the opponent was).
   */
  'match.decided': { topic: 'status'; data: { tournamentId: string | null; matchId: string; winnerParticipantId: string | null; outcome: 'WIN' | 'DRAW'; reason?: 'bye' | 'no_show' | 'disqualified' } }
  'match.replay': { topic: 'status'; data: { tournamentId: string | null; matchId: string; reason: 'mutual_draw' | 'server_draw' } }
  'match.disputed': { topic: 'status'; data: { tournamentId: string | null; matchId: string; reason: 'claims_conflict' | 'winner_not_in_match' | 'deadline_passed' } }
  /** An operator changed the decided result: `winnerParticipantId` moves on in place of `previousWinnerParticipantId` (null: it was a draw). */
  'match.corrected': { topic: 'status'; data: { tournamentId: string | null; matchId: string; winnerParticipantId: string; previousWinnerParticipantId: string | null; reason: string } }
  /**
   * A queue paired the recipient (contract §16): confirm with POST /matches/{matchId}/ready before `readyBy`, or the match is
   * cancelled and the ticket of whoever did not confirm is closed (the other keeps their place in line).
   */
  'match.found': { topic: 'status'; data: { matchId: string; gameId: string; queue: string; readyBy: string; stake: string | null } }
  /** A match without a tournament was cancelled (its stakes refunded): `ready_timeout` (someone did not confirm in time) or `operator` (with its reason). */
  'match.cancelled': { topic: 'status'; data: { matchId: string; gameId: string; reason: 'ready_timeout' | 'operator'; detail?: string } }
  /** The recipient's ticket was closed without a match: they did not confirm a ready check, could not pay the stake when paired, or the queue closed. */
  'ticket.cancelled': { topic: 'status'; data: { ticketId: string; gameId: string; queue: string; reason: 'ready_timeout' | 'insufficient_funds' | 'queue_closed' } }
  /** To the opponent: a player challenged them (contract §16). */
  'challenge.received': { topic: 'status'; data: { challengeId: string; gameId: string; challengerId: string; challengerUsername: string; stake: string | null; expiresAt: string } }
  /** To the challenger: the opponent accepted; the match runs now. */
  'challenge.accepted': { topic: 'status'; data: { challengeId: string; gameId: string; matchId: string } }
  /** To the challenger (declined, expired) or the opponent (cancelled by the challenger, expired): the challenge is over without a match. */
  'challenge.declined': { topic: 'status'; data: { challengeId: string; gameId: string } }
  'challenge.expired': { topic: 'status'; data: { challengeId: string; gameId: string } }
  'challenge.cancelled': { topic: 'status'; data: { challengeId: string; gameId: string; reason: 'withdrawn' | 'challenger_unfunded' | 'account_closed' } }
  /**
   * The recipient's rating in a game moved (contract §15): a rated match was decided (`match`) or its result corrected (`correction`).
   * `change`: the rating's move (2 decimals); `rating`: the rating as it is now, as GET /games/{gameId}/ratings/me shows it.
   */
  'rating.updated': {
    topic: 'status'
    data: {
      gameId: string
      seasonId: string
      matchId: string
      reason: 'match' | 'correction'
      change: number
      rating: { rating: number; deviation: number; volatility: number; display: number; provisional: boolean; matches: number }
    }
  }
}

export type EventType = keyof EventCatalogue
export type EventData<K extends EventType> = EventCatalogue[K]['data']

// Every entry is filed under a topic there is, and its data is a JSON object.
type Entries<T extends { [K in EventType]: { topic: EventTopic; data: Record<string, unknown> } }> = T
export type CheckedCatalogue = Entries<EventCatalogue>

/** Every event type with its topic, at run time: exactly EventCatalogue's keys (`satisfies` fails on one missing or extra). */
export const EVENT_TYPES = {
  'session.login': 'session',
  'session.refreshed': 'session',
  'session.logout': 'session',
  'session.reuse_revoked': 'session',
  'account.code_sent': 'account',
  'account.email_verified': 'account',
  'account.password_changed': 'account',
  'account.password_reset': 'account',
  'account.banned': 'account',
  'account.unbanned': 'account',
  'account.pin_unlocked': 'account',
  'account.deleted': 'account',
  'account.identity_linked': 'account',
  'account.identity_unlinked': 'account',
  'wallet.credited': 'wallet',
  'wallet.adjusted': 'wallet',
  'wallet.withdrawal_pending': 'wallet',
  'wallet.withdrawal_signed': 'wallet',
  'wallet.withdrawal_failed': 'wallet',
  'wallet.withdrawal_awaiting_approval': 'wallet',
  'wallet.withdrawal_held': 'wallet',
  'wallet.withdrawal_approved': 'wallet',
  'wallet.withdrawal_released': 'wallet',
  'wallet.withdrawal_rejected': 'wallet',
  'wallet.payout_held': 'wallet',
  'wallet.payout_released': 'wallet',
  'wallet.payout_voided': 'wallet',
  'tournament.started': 'status',
  'tournament.dropped': 'status',
  'tournament.finalizing': 'status',
  'tournament.completed': 'status',
  'tournament.cancelled': 'status',
  'tournament.disqualified': 'status',
  'match.ready': 'status',
  'match.decided': 'status',
  'match.replay': 'status',
  'match.disputed': 'status',
  'match.corrected': 'status',
  'match.found': 'status',
  'match.cancelled': 'status',
  'ticket.cancelled': 'status',
  'challenge.received': 'status',
  'challenge.accepted': 'status',
  'challenge.declined': 'status',
  'challenge.expired': 'status',
  'challenge.cancelled': 'status',
  'rating.updated': 'status',
} as const satisfies { [K in EventType]: EventCatalogue[K]['topic'] }
