// The wire types of arena's public API (a running server documents it at
// /openapi), written out here so that the package stands alone: nothing of the
// server (TypeBox, Elysia) is needed to type-check an app that uses it. They
// mirror the server's TypeBox models field for field; the arena repository's
// tests fail, under `tsc` and `bun test`, when the two disagree. Change both
// sides together.

/** An access token pair and the user it belongs to (login and rotation). */
export interface TokenResponse {
  accessToken: string
  refreshToken: string
  /** Seconds until the access token expires. */
  expiresIn: number
  tokenType: 'Bearer'
  user: User
}

export interface User {
  id: string
  /** Null for an account without a password identity (a guest, or one that signs in only with a provider). */
  email: string | null
  username: string
  country: string
  /** ISO-8601 UTC. */
  createdAt: string
  /** Whether the user entered the code mailed to `email`. */
  emailVerified: boolean
  /** The providers the account signs in with, in the order they were linked: `password`, `device`, `steam`, `oidc:<name>`. */
  identities: string[]
}

/** The answer of a sign-in that may create the account (guest, OpenID Connect, Steam, a web sign-in's exchange): the login shape and `created`. */
export interface SignInResponse {
  accessToken: string
  refreshToken: string
  /** Seconds until the access token expires. */
  expiresIn: number
  tokenType: 'Bearer'
  user: User
  /** Whether this sign-in created the account. */
  created: boolean
}

/** What the SDK's sign-ins resolve to (the tokens are kept by the client, like `login`'s). */
export interface SignInResult {
  user: User
  /** Whether this sign-in created the account (only ever with `create`). */
  created: boolean
}

/** `auth.loginAsGuest()`: the sign-in and the device secret it used. */
export interface GuestSignIn extends SignInResult {
  /** The secret that signs this device in: keep it (like the refresh token) and pass it back next time; lost, the guest account is lost. */
  deviceSecret: string
}

/** A device-code sign-in started (`auth.startDeviceCode()`, RFC 8628): show `userCode` and `verificationUri`, then poll. */
export interface DeviceCode {
  /** The device keeps this secret and polls with it; never shown. */
  deviceCode: string
  /** The code to show the player, `XXXX-XXXX`. */
  userCode: string
  /** The page the player opens in a browser and types the code on. */
  verificationUri: string
  /** The same page with the code filled in (for a QR code or a link). */
  verificationUriComplete: string
  /** Seconds the code waits for the player. */
  expiresIn: number
  /** Seconds to wait between polls. */
  interval: number
}

/** How many sessions a logout (or revoking one session) ended. */
export interface LogoutResult {
  revoked: number
}

/** A request the server took; what follows (a mail) happens later. */
export interface Accepted {
  accepted: true
}

/** How many sessions a password change (the other ones) or reset (all of them) ended. */
export interface SessionsEnded {
  revoked: number
}

/** One of the user's live auth sessions (`auth.sessions()`): where they are logged in. */
export interface Session {
  id: string
  createdAt: string
  /** Updated at most once a minute. */
  lastUsedAt: string
  /** The login's User-Agent (at most 256 characters), or null. */
  userAgent: string | null
  /** The session of this client's token. */
  current: boolean
}

/** Why a session ended. */
export type RevokeReason = 'logout' | 'logout_all' | 'logout_others' | 'revoked' | 'refresh_token_reused' | 'password_changed' | 'password_reset' | 'banned' | 'superseded'

/** The answer to `auth.deleteAccount()`. */
export interface AccountDeleted {
  deleted: true
  deletedAt: string
}

/** The user as the export shows it: with when the email was verified. */
export interface ExportedUser {
  id: string
  email: string | null
  username: string
  country: string
  createdAt: string
  emailVerified: boolean
  emailVerifiedAt: string | null
  identities: string[]
}

/** A way the account signs in (GET /me/identities). */
export interface Identity {
  /** `password`, `device`, `steam` or `oidc:<name>`. */
  provider: string
  /** The provider's id of the player (the SteamID, the ID token's `sub`); absent for `password` and `device`. */
  subject?: string
  /** The password identity's address, or the one the provider gave. */
  email?: string
  linkedAt: string
}

/**
 * Everything arena keeps about the user (`arena.exportAccount()`, GET
 * /me/export): never a hash, a token or a key.
 */
export interface AccountExport {
  exportedAt: string
  user: ExportedUser
  /** Every way the account signs in. */
  identities: Identity[]
  /** Every auth session, live or ended, newest first. */
  sessions: {
    id: string
    createdAt: string
    lastUsedAt: string
    expiresAt: string
    userAgent: string | null
    revokedAt: string | null
    revokedReason: RevokeReason | null
  }[]
  /** Every match the user was seated in. */
  matches: {
    matchId: string
    kind: MatchKind
    tournamentId: string | null
    tournamentName: string | null
    gameId: string
    bracket: BracketKind
    round: number
    position: number
    status: 'waiting' | 'running' | 'disputed' | 'decided' | 'cancelled'
    /** The user's seat in the tournament. */
    participantId: string
    opponentParticipantId: string | null
    /** Null until decided, and for a draw. */
    winnerParticipantId: string | null
    /** Once decided (a bye is won; `drawn` only in round robin and Swiss); null before. */
    result: 'won' | 'lost' | 'drawn' | null
    decidedAt: string | null
  }[]
  /** Every posting on the user's wallet, oldest first. */
  ledger: {
    transactionId: string
    kind: 'credit' | 'withdrawal' | 'reversal' | 'adjustment' | 'entry_fee' | 'entry_fee_refund' | 'prize' | 'stake' | 'stake_payout' | 'stake_refund'
    /** `credit:<reference>` for an operator credit, `adjustment:<reference>` for an operator adjustment, `entry_fee:<participantId>` / `entry_fee_refund:<participantId>` for a tournament's fee and its refund, `prize:<tournamentId>:<rank>` for a prize, `stake:<matchId>:<userId>`, `stake_payout:<matchId>` and `stake_refund:<matchId>:<userId>` for a match's stake, its payout and its refund; null otherwise. */
    reference: string | null
    asset: string
    /** Signed decimal string: positive credits the wallet, negative debits it. */
    amount: string
    createdAt: string
  }[]
  /** Oldest first. */
  withdrawals: Withdrawal[]
  /** The events the user reported (`purchases` integrity reports, POST /security/events), oldest first. */
  securityEvents: {
    id: string
    kind: string
    level: IntegrityLevel
    details: Record<string, unknown>
    occurredAt: string
    receivedAt: string
  }[]
  /** The user's rating in each game they were rated in, by game id. */
  ratings: {
    gameId: string
    /** The season the rating is of (the current one). */
    seasonId: string
    rating: RatingView
    /** Every change of this rating in the game, every season, oldest first. */
    history: RatingChange[]
  }[]
}

/** How a tournament is played: single or double elimination, round robin, Swiss. */
export type FormatName = 'single_elimination' | 'double_elimination' | 'round_robin' | 'swiss'

/**
 * The part of the tournament a match belongs to: `winners` for every
 * single-elimination match but the third-place one; `winners`, `losers` and
 * `grand_final` in double elimination; `round_robin` and `swiss` for every
 * match of those formats.
 */
export type BracketKind = 'winners' | 'losers' | 'grand_final' | 'third_place' | 'round_robin' | 'swiss'

export interface Match {
  id: string
  bracket: BracketKind
  /** From 1, within its bracket. */
  round: number
  position: number
  /** `cancelled`: its tournament was cancelled before it was decided. */
  status: 'waiting' | 'running' | 'disputed' | 'decided' | 'cancelled'
  slot1ParticipantId: string | null
  slot2ParticipantId: string | null
  /** Null until decided, and for a draw. */
  winnerParticipantId: string | null
  /** Once decided: `DRAW` only in round robin and Swiss; null before. */
  outcome: 'WIN' | 'DRAW' | null
  /** Where the winner goes. */
  nextMatchId: string | null
  /** Where the loser goes: the losers bracket (double elimination) or the third-place match. */
  loserNextMatchId: string | null
  /** ISO time at which the match, if still running, is settled (`no_show` or `deadline_passed`); null: no deadline, or not running yet. */
  deadline: string | null
}

/** A tournament's creation options. */
export interface TournamentOptions {
  /** Whether its results move the players' ratings in the game; absent: true. */
  rated?: boolean
  /** Seconds a match may run before it is settled; absent: no deadline. */
  matchDeadlineS?: number
  /** Single elimination: the semi-final losers play for third place (4 or more players). */
  thirdPlaceMatch?: boolean
  /** Double elimination (default `reset`): a second grand final when the losers-bracket champion wins the first. */
  grandFinal?: 'simple' | 'reset'
  /** Swiss: rounds to play, at most players − 1 (default ⌈log2 players⌉). */
  rounds?: number
}

/** One row of a tournament's standings. */
export interface Standing {
  participantId: string
  /** 1..n, distinct: ties are broken by each format's own tie-breaks. */
  rank: number
  wins: number
  draws: number
  losses: number
  /** Win 3, draw 1, loss 0. */
  points: number
}

export type TournamentStatus = 'draft' | 'registration' | 'running' | 'finalizing' | 'completed' | 'cancelled'

/** How players sign up (`registration` of a tournament); null for one an operator created with its participants. */
export interface Registration {
  /** Joining is possible until then (exclusive). */
  closesAt: string
  maxPlayers: number
  /** Registrants who did not check in within [opensAt, closesAt) are dropped at the start. */
  checkIn: { opensAt: string; closesAt: string } | null
  /** When it starts by itself. */
  startsAt: string
  /** `registration`: seeds in join order; `random`: a shuffle reproducible from `seed`; `rating`: by display rating in the game at the start, ties in join order. */
  seeding: 'registration' | 'random' | 'rating'
  /** The random seeding's seed, once the tournament started; null before and for `registration` seeding. */
  seed: string | null
}

export interface Tournament {
  id: string
  gameId: string
  name: string
  format: FormatName
  status: TournamentStatus
  participants: {
    id: string
    userId: string
    /** The bracket seed (1 = top); before the start of a registration, the registrant's number in join order. */
    seed: number
    /** Null for a participant the operator listed. */
    registeredAt: string | null
    checkedInAt: string | null
    /** When an operator disqualified them. */
    disqualifiedAt: string | null
  }[]
  matches: Match[]
  /** Live for round robin and Swiss; for the elimination formats empty until nothing is left to play (from `finalizing` on). */
  standings: Standing[]
  winnerParticipantId: string | null
  registration: Registration | null
  options: TournamentOptions
  /** What registering takes from the wallet into the tournament's escrow (refunded on leaving before the start, on being dropped at it, on cancellation); null: free. */
  entryFee: string | null
  /** Prizes by final rank, rank 1 first, paid at completion. */
  prizes: string[]
}

/** A tournament in a list (`tournaments()`). */
export interface TournamentSummary {
  id: string
  gameId: string
  name: string
  format: FormatName
  status: TournamentStatus
  /** Registrants so far while in registration. */
  participantCount: number
  registration: Registration | null
  /** What registering costs; null: free. */
  entryFee: string | null
  /** Prizes by final rank, rank 1 first. */
  prizes: string[]
  createdAt: string
  startedAt: string | null
}

/** A page of tournaments. */
export interface TournamentsPage {
  tournaments: TournamentSummary[]
  /** Pass as `after` for the next page; null at the end. */
  cursor: string | null
}

/** The signed-in player's seat in a tournament they registered for (`register()`, `checkIn()`). */
export interface RegistrationView {
  tournamentId: string
  participantId: string
  registeredAt: string
  checkedInAt: string | null
}

/** What made a match: a tournament's bracket, a queue's matcher, a challenge accepted. */
export type MatchKind = 'tournament' | 'queue' | 'challenge'

/** One of the signed-in player's open matches (`myMatches()`). */
export interface MyMatch {
  matchId: string
  /** What made it: a tournament's bracket, a queue's matcher, a challenge accepted. */
  kind: MatchKind
  /** Null for a queue's or a challenge's match. */
  tournamentId: string | null
  tournamentName: string | null
  gameId: string
  bracket: BracketKind
  round: number
  position: number
  status: 'waiting' | 'running' | 'disputed'
  participantId: string
  slot: 1 | 2
  opponent: { participantId: string; userId: string; username: string } | null
}

/**
 * A player's Glicko-2 rating in a game (`ratings.me()`, each leaderboard
 * entry, the `rating.updated` event), inactivity applied as of the answer.
 */
export interface RatingView {
  /** 2 decimals; 1500 to start. */
  rating: number
  /** Rating deviation (2 decimals): 350 to start, shrinks with play, grows with inactivity (up to 350). */
  deviation: number
  /** 6 decimals; 0.06 to start. */
  volatility: number
  /** rating − 2 × deviation (2 decimals): what the leaderboard ranks by. */
  display: number
  /** Fewer than 10 rated matches this season. */
  provisional: boolean
  /** Rated matches this season. */
  matches: number
}

/** A season of a game's ratings (`ratings.seasons()`); every game has a current one. */
export interface Season {
  id: string
  gameId: string
  /** 1 for the season a game is created with. */
  number: number
  name: string
  /** How the season's start resets every rating: `soft` half-way to 1500 (deviation at least 200), `hard` back to 1500/350/0.06. */
  reset: 'soft' | 'hard'
  status: 'scheduled' | 'current' | 'ended'
  startsAt: string
  startedAt: string | null
  endedAt: string | null
  createdAt: string
}

/** One row of a leaderboard. */
export interface LeaderboardEntry {
  /** 1 the top; distinct, ties broken by user id (descending). */
  rank: number
  userId: string
  /** Null in a past season's board for an account deleted since. */
  username: string | null
  rating: RatingView
}

/** A page of a season's leaderboard (`ratings.leaderboard()`), by `display`, highest first. */
export interface Leaderboard {
  season: Season
  entries: LeaderboardEntry[]
  /** Pass as `after` for the next page; null at the end. */
  cursor: string | null
}

/** One move of the signed-in player's rating (`ratings.history()`). */
export interface RatingChange {
  /** 1, 2, 3… per player and game, without a gap. */
  seq: number
  kind: 'match' | 'correction' | 'season_reset'
  seasonId: string
  matchId: string | null
  opponentUserId: string | null
  /** The player's result (as corrected, for a correction); null for a season reset. */
  outcome: 'win' | 'loss' | 'draw' | null
  /** Just before the update, inactivity applied. */
  before: { rating: number; deviation: number; volatility: number }
  after: { rating: number; deviation: number; volatility: number }
  createdAt: string
}

/** A page of a player's rating history, oldest first. */
export interface RatingHistoryPage {
  history: RatingChange[]
  /** Pass as `after` for the next page; null at the end. */
  cursor: string | null
}

/** The signed-in player's rating in a game (`ratings.me()`): the initial, provisional one before their first rated match. */
export interface MyRating {
  rating: RatingView
  /** The current season. */
  seasonId: string
}

/** A queue's rating window: two tickets are paired when their displays are within both windows. */
export interface QueueWindow {
  /** Half-width of a new ticket's window, in display points. */
  initial: number
  /** How much the half-width grows each second waited. */
  widenPerSecond: number
  /** The largest half-width; at least `initial`. */
  max: number
}

/** What an agreed draw does in a queue: `replay` (default) plays it again; `result` decides the match (stakes refunded). */
export type DrawRule = 'replay' | 'result'

/** A game's queue (`queues.list()`): players join it and are paired by rating. */
export interface Queue {
  id: string
  gameId: string
  /** Unique among the game's open queues: what `join`, `current` and `leave` name. */
  name: string
  /** Its matches update ratings. */
  rated: boolean
  /** What each player puts in (a decimal string); null: no stake. */
  stake: string | null
  /** The house's share of the pot, a decimal fraction (`"0.05"`). */
  rake: string
  window: QueueWindow
  /** Seconds both players have to confirm a match found (`matches.ready()`). */
  readyCheckS: number
  /** Seconds to play once ready; null: no deadline. */
  matchDeadlineS: number | null
  /** Two players are not paired again within this many seconds of their last match. */
  rematchCooldownS: number
  draws: DrawRule
  createdAt: string
  updatedAt: string
  /** When an operator closed it; null while open. */
  closedAt: string | null
}

/** Why a ticket was closed. */
export type TicketCloseReason = 'left' | 'matched' | 'ready_timeout' | 'insufficient_funds' | 'queue_closed' | 'account_closed'

/** The signed-in player's place in a queue (`queues.join()`, `current()`, `leave()`): one open ticket per player and game. */
export interface Ticket {
  id: string
  gameId: string
  /** The queue's name. */
  queue: string
  status: 'open' | 'matched' | 'cancelled'
  /** The rating display the window is centred on (the player's when they joined). */
  display: number
  /** The window's half-width now. */
  window: number
  /** The place in line (kept when the other player failed a ready check). */
  waitingSince: string
  /** The match it made. */
  matchId: string | null
  createdAt: string
  closedAt: string | null
  closeReason: TicketCloseReason | null
}

/** A seat of a match (`MatchView.players`). */
export interface MatchPlayer {
  /** The seat: what claims and sessions name. */
  participantId: string
  userId: string
  username: string
  slot: 1 | 2
  /** Confirmed the ready check (true once the match runs). */
  ready: boolean
}

/** What a file attached to a disputed match may be (`matches.attachEvidence()`): its bytes must prove it. */
export type EvidenceType = 'image/png' | 'image/jpeg' | 'video/webm' | 'text/plain' | 'application/json'

/** A file attached to a disputed match, as the server stored it. */
export interface Evidence {
  id: string
  /** Hex SHA-256 of the bytes. */
  sha256: string
  type: EvidenceType
  /** Bytes. */
  size: number
  createdAt: string
}

/** A match the signed-in player plays in (`matches.get()`, `matches.ready()`): a tournament's, a queue's or a challenge's. */
export interface MatchView {
  id: string
  kind: MatchKind
  gameId: string
  /** Null for a queue's or a challenge's match. */
  tournamentId: string | null
  /** The queue that made it. */
  queue: string | null
  /** The challenge that made it. */
  challengeId: string | null
  /** `waiting`: a queue's match in its ready check; `cancelled`: the ready check failed, or an operator cancelled it (stakes refunded). */
  status: 'waiting' | 'running' | 'disputed' | 'decided' | 'cancelled'
  rated: boolean
  /** What each player put in; null: none. */
  stake: string | null
  /** The house's share of the pot. */
  rake: string
  players: MatchPlayer[]
  /** The ready check ends then (a match found, waiting for both players); null otherwise. */
  readyBy: string | null
  deadline: string | null
  createdAt: string | null
  decision: {
    outcome: 'WIN' | 'DRAW'
    winnerParticipantId: string | null
    decidedBy: 'played' | 'bye' | 'walkover'
    decidedAt: string
  } | null
}

/** A challenge to a named player (`challenges.*`), made or received by the signed-in player. */
export interface Challenge {
  id: string
  gameId: string
  challenger: { userId: string; username: string }
  opponent: { userId: string; username: string }
  /** What each player puts in once accepted; null: none. */
  stake: string | null
  /** Read as `expired` once past `expiresAt`. */
  status: 'open' | 'accepted' | 'declined' | 'expired' | 'cancelled'
  expiresAt: string
  /** The match its acceptance made. */
  matchId: string | null
  createdAt: string
  closedAt: string | null
}

/** A single-use match session (`game.openSession()`). */
export interface GameSession {
  sessionId: string
  /** Single use: sent as x-session-token with the result. */
  token: string
  expiresAt: string
  context: {
    /** Null for a queue's or a challenge's match. */
    tournamentId: string | null
    matchId: string
    participantId: string
    slot: 1 | 2
  }
}

/** A result claim: a win names the winner's participant id; a draw names no one. */
export type Claim =
  | { outcome: 'WIN'; winnerParticipantId: string; score?: Record<string, unknown> }
  | { outcome: 'DRAW'; score?: Record<string, unknown> }

/** The arbiter's answer to a claim. */
export interface Decision {
  decision: 'pending' | 'replay' | 'game_advance' | 'game_advance_pending_finalization' | 'dispute'
  reason: string
  matchId: string
  /** Null for a queue's or a challenge's match. */
  tournamentId: string | null
  /** With a `game_advance…` decision: `DRAW` is a result in round robin and Swiss. */
  outcome?: 'WIN' | 'DRAW'
  /** With a `game_advance…` decision that is a win. */
  winnerParticipantId?: string
  /** The match the winner moves to, when there is one. */
  nextMatchId?: string
}

export type IntegrityLevel = 'SAFE' | 'WARN' | 'COMPROMISED'

export interface Withdrawal {
  id: string
  /**
   * `awaiting_approval`: above the operator's approval threshold, waiting for
   * an operator; `held`: the first withdrawal to this address, signed when
   * `releasesAt` comes; `pending_signature`: being signed; `signed`, `failed`
   * (custody refused it) and `rejected` (an operator did) are final, the last
   * two with the funds returned.
   */
  status: 'awaiting_approval' | 'held' | 'pending_signature' | 'signed' | 'failed' | 'rejected'
  /** Decimal string. */
  amount: string
  asset: string
  destinationAddress: string
  idempotencyKey: string
  /** Base58 Ed25519 signature over the canonical withdrawal message. */
  signature?: string
  /** Why custody refused it, once `failed`. */
  failureReason?: string
  /** Why it is not signed yet, while `awaiting_approval` (approval_required) or `held` (new_destination). */
  reason?: 'approval_required' | 'new_destination'
  /** When its new-destination hold ends (ISO 8601), while it waits with one. */
  releasesAt?: string
  /** The operator's reason, once `rejected`. */
  rejectionReason?: string
  createdAt: string
}

/** A page of the signed-in player's withdrawals (`wallet.withdrawals()`), oldest first. */
export interface WithdrawalsPage {
  withdrawals: Withdrawal[]
  /** Pass as `after` for the next page; null at the end. */
  cursor: string | null
}

/** What a movement of the wallet was; `withdrawal_reversal` gives back a withdrawal custody refused or an operator rejected. */
export type TransactionKind = 'credit' | 'adjustment' | 'withdrawal' | 'withdrawal_reversal' | 'entry_fee' | 'entry_fee_refund' | 'prize' | 'stake' | 'stake_payout' | 'stake_refund'

/** One movement of the signed-in player's wallet (`wallet.transactions()`). */
export interface WalletTransaction {
  /** The movement (`ltx_…`). */
  id: string
  kind: TransactionKind
  /** Signed decimal string: positive credits the wallet, negative debits it. */
  amount: string
  /** Decimal string: the balance right after this movement. */
  balanceAfter: string
  /** The operator's reference of a credit or adjustment; the withdrawal id of a withdrawal and its reversal; the tournament id of an entry fee, its refund and a prize; the match id of a stake, its payout and its refund. */
  reference: string | null
  createdAt: string
}

/** A page of the wallet's movements, oldest first. */
export interface TransactionsPage {
  transactions: WalletTransaction[]
  /** Pass as `after` to read on; with no movements it stays where you were. */
  cursor: string
  /** Your payouts held for an operator's review (integrity signals), oldest first, on every page: not movements; one released shows up as a movement. */
  held: HeldPayout[]
}

/** A payout of yours held for an operator's review: released, it is paid as a movement (`stake_payout` or `prize`); voided, it is not. */
export interface HeldPayout {
  holdId: string
  kind: 'stake_payout' | 'prize'
  /** What you are paid if it is released (decimal string). */
  amount: string
  asset: string
  matchId: string
  tournamentId: string | null
  heldAt: string
}

export interface PinSessionResponse {
  sessionId: string
  sessionToken: string
  expiresAt: string
  maxAttempts: number
}

/** The answer to a PIN verify: a wrong PIN is `valid: false`, not an error. */
export interface PinVerifyResponse {
  valid: boolean
  locked: boolean
  /** Consecutive failures; 0 after a valid PIN. */
  attempt: number
  /** The withdrawal the valid PIN authorized. */
  withdrawal?: Withdrawal
}

export interface Wallet {
  asset: string
  /** Decimal string. */
  balance: string
  /** Base58 Ed25519 public key of the 2-of-3 custody key. */
  address: string
}

/**
 * One event of the event plane, for the signed-in user, as the server sends
 * it. The server may add event types: narrow with `isEvent(event, type)` to a
 * KnownEvent, whose `data` is typed.
 */
export interface PlaneEvent {
  id: string
  /** One of the EventTopic values. */
  topic: string
  /** e.g. `wallet.credited`, `match.decided`, `tournament.completed`: an EventType, or one this SDK does not know yet. */
  type: string
  data: Record<string, unknown>
  createdAt: string
}

/** One page of GET /api/v1/events: the events after the cursor asked for, oldest first, and the cursor to ask after next. */
export interface EventsPage {
  events: PlaneEvent[]
  /** Opaque. */
  cursor: string
}

/** The topics of the event plane (GET /api/v1/events). */
export type EventTopic = 'session' | 'account' | 'wallet' | 'status'

/** `POST /api/v1/events/socket-ticket`: opens one socket, once, within `expiresIn` seconds. */
export interface SocketTicketResponse {
  ticket: string
  /** seconds */
  expiresIn: number
}

/** The one message a client sends on the event socket (`events.connect` sends it for you). */
export interface SubscribeMessage {
  type: 'subscribe'
  /** A cursor: replay what came after it first. */
  after?: string
  /** 1 to 4 distinct topics; absent: all of them. */
  topics?: EventTopic[]
}

/** What the server sends on the event socket. */
export type ServerFrame = { type: 'events'; events: PlaneEvent[]; cursor: string } | { type: 'ping' } | { type: 'error'; error: { code: string; message: string } }

/**
 * The event types the server sends: each type's topic and the data its events
 * carry. Amounts and balances are decimal strings. It mirrors the server's
 * event catalogue entry for entry; the arena repository's tests fail when the
 * two disagree.
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

  // Topic `account`: the account itself.
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
  /** A way to sign in was added: `password`, `device`, `steam` or `oidc:<name>`. */
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
  /** A payout kept in escrow for an operator's review (integrity signals): stake winnings or a prize; `amount` is what a release pays. */
  'wallet.payout_held': { topic: 'wallet'; data: { holdId: string; kind: 'stake' | 'prize'; amount: string; asset: string; matchId: string; tournamentId: string | null } }
  /** An operator released a held payout: it is paid as decided. */
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
   * A queue paired the recipient: confirm with `matches.ready(matchId)` before `readyBy`, or the match is
   * cancelled and the ticket of whoever did not confirm is closed (the other keeps their place in line).
   */
  'match.found': { topic: 'status'; data: { matchId: string; gameId: string; queue: string; readyBy: string; stake: string | null } }
  /** A match without a tournament was cancelled (its stakes refunded): `ready_timeout` (someone did not confirm in time) or `operator` (with its reason). */
  'match.cancelled': { topic: 'status'; data: { matchId: string; gameId: string; reason: 'ready_timeout' | 'operator'; detail?: string } }
  /** The recipient's ticket was closed without a match: they did not confirm a ready check, could not pay the stake when paired, or the queue closed. */
  'ticket.cancelled': { topic: 'status'; data: { ticketId: string; gameId: string; queue: string; reason: 'ready_timeout' | 'insufficient_funds' | 'queue_closed' } }
  /** To the opponent: a player challenged them. */
  'challenge.received': { topic: 'status'; data: { challengeId: string; gameId: string; challengerId: string; challengerUsername: string; stake: string | null; expiresAt: string } }
  /** To the challenger: the opponent accepted; the match runs now. */
  'challenge.accepted': { topic: 'status'; data: { challengeId: string; gameId: string; matchId: string } }
  /** To the challenger (declined, expired) or the opponent (cancelled by the challenger, expired): the challenge is over without a match. */
  'challenge.declined': { topic: 'status'; data: { challengeId: string; gameId: string } }
  'challenge.expired': { topic: 'status'; data: { challengeId: string; gameId: string } }
  'challenge.cancelled': { topic: 'status'; data: { challengeId: string; gameId: string; reason: 'withdrawn' | 'challenger_unfunded' | 'account_closed' } }
  /**
   * The recipient's rating in a game moved: a rated match was decided (`match`) or its result corrected (`correction`).
   * `change`: the rating's move (2 decimals); `rating`: the rating as it is now, as `ratings.me()` answers it.
   */
  'rating.updated': {
    topic: 'status'
    data: { gameId: string; seasonId: string; matchId: string; reason: 'match' | 'correction'; change: number; rating: RatingView }
  }
}

/** The event types this SDK knows. */
export type EventType = keyof EventCatalogue

/** The `data` of an event of type K. */
export type EventData<K extends EventType> = EventCatalogue[K]['data']

/**
 * An event of a known type: a union discriminated by `type`, each member with
 * its topic and typed `data` (`KnownEvent<'wallet.credited'>` is that one
 * member). Get one from a PlaneEvent with `isEvent`.
 */
export type KnownEvent<K extends EventType = EventType> = K extends EventType
  ? { id: string; topic: EventCatalogue[K]['topic']; type: K; data: EventCatalogue[K]['data']; createdAt: string }
  : never

export interface ErrorDetail {
  path: string
  message: string
}

/** The error envelope every error answer of arena carries. */
export interface ErrorEnvelope {
  error: {
    code: string
    message: string
    status: number
    details?: ErrorDetail[]
    /** `account_banned`: when the ban ends (ISO-8601), null until an operator lifts it. */
    until?: string | null
  }
}

/** The environments a client may talk to: the same paths behind different base URLs. */
export type Environment = 'local' | 'sandbox' | 'staging' | 'production'

/** The tokens the client holds; handed to `onTokens` so an app can persist them. */
export interface Tokens {
  accessToken: string
  refreshToken?: string
  /** Epoch ms when the access token expires, when the server said so (login, rotation). */
  expiresAt?: number
}

/** `fetch` or anything with its signature (a test double, a fetch with a proxy agent). */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>
