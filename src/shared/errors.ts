// Errors are values with a code. Every failure a client can see is an AppError
// (or becomes one in plugins/errors.ts), and leaves the server as the envelope
// of contract §0: { error: { code, message, status, details? } }.

/** The codes of contract §0, by status. Modules add theirs here so the list stays one place. */
export const ERROR_CODES = {
  malformed_json: 400,
  bad_request: 400,
  /** RFC 8628 device-code polling (contract §13): not approved yet. */
  authorization_pending: 400,
  /** RFC 8628: polled faster than `interval`; the interval grows by 5 s. */
  slow_down: 400,
  /** RFC 8628: the device code lived past its lifetime, or was used. */
  expired_token: 400,
  /** RFC 8628: the player denied the device. */
  access_denied: 400,
  unauthorized: 401,
  invalid_credentials: 401,
  invalid_verification_code: 400,
  invalid_reset_code: 400,
  refresh_token_reused: 401,
  session_token_invalid: 401,
  /** A game server's result (contract §17): no, a malformed, an unknown server's, a disabled one's, another game's, a wrong or a stale (±60 s) x-arena-signature. */
  invalid_signature: 401,
  /** An operator enrolled in TOTP signed in without a code (contract §11). */
  totp_required: 401,
  /** An operator's TOTP code is wrong, or its time step was used already. */
  invalid_totp: 401,
  forbidden: 403,
  /** An operator's one-time password: the sign-in must set a new one (contract §11). */
  password_change_required: 403,
  invalid_game_key: 403,
  /** A game server's result for a game whose `results` is `claims` (contract §17). */
  server_results_disabled: 403,
  /** A player's claim for a game whose `results` is `server`: its game servers report results (contract §17). */
  server_results_only: 403,
  not_a_participant: 403,
  email_not_verified: 403,
  account_banned: 403,
  /** A Steam account with a VAC or publisher ban (contract §13). */
  platform_banned: 403,
  not_found: 404,
  operator_api_disabled: 404,
  method_not_allowed: 405,
  conflict: 409,
  username_taken: 409,
  email_taken: 409,
  /** The identity is linked to another account (contract §13): accounts are never merged. */
  identity_in_use: 409,
  /** Unlinking the only way left to sign in (contract §13). */
  last_identity: 409,
  /** A first sign-in whose verified email belongs to an existing account (contract §13): sign in and link instead. */
  account_exists: 409,
  already_claimed: 409,
  match_not_running: 409,
  /** A game server's signature accepted already (contract §17): each is accepted once. */
  signature_reused: 409,
  /** A game's 21st game server (contract §17): at most GAME_SERVER_LIMIT per game. */
  server_limit: 409,
  correction_too_late: 409,
  /** A correction naming a disqualified participant as the winner. */
  winner_disqualified: 409,
  // Matchmaking (contract §16).
  ticket_open: 409,
  queue_exists: 409,
  ready_check_over: 409,
  match_not_waiting: 409,
  challenge_closed: 409,
  challenge_unfunded: 409,
  /** An early start of a registration tournament while its check-in window has not ended. */
  check_in_open: 409,
  /** Evidence attached to a match that is not disputed (contract §17). */
  match_not_disputed: 409,
  /** A participant's sixth file on one match (contract §17: at most 5). */
  evidence_limit: 409,
  idempotency_key_reused: 409,
  balance_not_empty: 409,
  /** Disabling the last enabled admin operator. */
  last_admin: 409,
  withdrawal_not_awaiting_approval: 409,
  /** Rejecting a withdrawal custody has had (pending_signature, signed, failed): it can no longer be stopped. */
  withdrawal_signing_started: 409,
  /** Approving a withdrawal whose owner is banned (or deleted): lift the ban first, or reject it. */
  withdrawal_owner_banned: 409,
  /** Releasing or voiding a held payout that an operator decided already (contract §17). */
  payout_not_held: 409,
  /** A 21st webhook endpoint (contract §18): at most WEBHOOK_LIMIT. */
  webhook_limit: 409,
  /** Resending a delivery of a disabled webhook endpoint: enable it first. */
  webhook_disabled: 409,
  registration_closed: 409,
  registration_open: 409,
  tournament_full: 409,
  already_registered: 409,
  not_registered: 409,
  check_in_closed: 409,
  prize_pool_underfunded: 409,
  session_expired: 410,
  payload_too_large: 413,
  request_header_fields_too_large: 431,
  unsupported_media_type: 415,
  validation_failed: 422,
  /** An evidence file whose bytes are not of the type its content-type names. */
  evidence_type_mismatch: 422,
  insufficient_funds: 422,
  invalid_destination: 422,
  withdrawal_limit: 422,
  /** A webhook URL whose host resolves to a private, loopback or link-local address, or does not resolve (contract §18). */
  destination_not_allowed: 422,
  rate_limited: 429,
  pin_locked: 429,
  internal: 500,
  service_unavailable: 503,
  mail_not_configured: 503,
} as const

export type ErrorCode = keyof typeof ERROR_CODES

export interface ErrorDetail {
  path: string
  message: string
}

export interface ErrorEnvelope {
  error: {
    code: string
    message: string
    status: number
    details?: ErrorDetail[]
    /** A fact the client acts on, beside the message: `until` of an `account_banned` (ISO-8601, or null: until lifted). */
    until?: string | null
  }
}

export class AppError extends Error {
  readonly status: number
  readonly code: string
  readonly details?: ErrorDetail[]
  /** Extra response headers, e.g. Retry-After on a 429. */
  readonly headers?: Record<string, string>
  /** `error.until` of the envelope (account_banned). */
  readonly until?: string | null

  constructor(
    code: ErrorCode,
    message: string,
    options: { details?: ErrorDetail[]; headers?: Record<string, string>; status?: number; until?: string | null } = {},
  ) {
    super(message)
    this.name = 'AppError'
    this.code = code
    this.status = options.status ?? ERROR_CODES[code]
    if (options.details) this.details = options.details
    if (options.headers) this.headers = options.headers
    if (options.until !== undefined) this.until = options.until
  }

  toEnvelope(): ErrorEnvelope {
    const body = envelope(this.status, this.code, this.message, this.details)
    if (this.until !== undefined) body.error.until = this.until
    return body
  }
}

export function envelope(
  status: number,
  code: string,
  message: string,
  details?: ErrorDetail[],
): ErrorEnvelope {
  return details && details.length > 0
    ? { error: { code, message, status, details } }
    : { error: { code, message, status } }
}

/**
 * An error for a log line: `Name: message`, and the message of its cause when
 * it wraps one (a mapped storage error names the engine's own words: "database
 * or disk is full").
 */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : ''
  return `${error.name}: ${error.message}${cause}`
}
