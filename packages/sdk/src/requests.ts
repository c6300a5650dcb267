// The bodies the SDK sends, mirroring the server's TypeBox models like the
// answers in types.ts (and checked against them the same way). Internal: the
// public methods take their own arguments and build these.

export interface LoginBody {
  /** E-mail or username. */
  identifier: string
  password: string
}

export interface RefreshBody {
  refreshToken: string
}

export interface LogoutBody {
  /** Every session of the user. */
  all?: boolean
  /** Every session of the user but this one (not with `all`). */
  others?: boolean
}

export interface DeleteAccountBody {
  /** The account password, to re-authenticate; not asked of an account without a password identity (a guest). */
  password?: string
}

/** POST /user/login/device: a guest's sign-in. */
export interface DeviceLoginBody {
  /** At least 128 random bits the client generated and keeps: 22–128 characters of A–Z, a–z, 0–9, _ and -. */
  deviceSecret: string
  /** Create a guest account when the secret is unknown. */
  create?: boolean
}

/** POST /user/login/oidc/{provider}: a native app's ID token. */
export interface IdTokenLoginBody {
  /** The ID token the provider's SDK gave the app (a JWT). */
  idToken: string
  /** The nonce the app asked the provider to put in the token; checked when given. */
  nonce?: string
  /** Create an account when the identity has none. */
  create?: boolean
}

/** POST /user/login/exchange: a web sign-in's one-time code. */
export interface ExchangeBody {
  /** The `code` of the redirect's fragment. */
  code: string
}

/** POST /user/login/steam. */
export interface SteamLoginBody {
  /** GetAuthTicketForWebApi's ticket, hex. */
  ticket: string
  /** Create an account when no account has this Steam identity. */
  create?: boolean
}

/** POST /auth/device-code/token: the device's poll. */
export interface DeviceTokenBody {
  deviceCode: string
}

/** PATCH /me. */
export interface UpdateProfileBody {
  /** 3 to 32 letters, digits or underscores. */
  username?: string
  /** ISO 3166-1 alpha-2. */
  country?: string
}

/**
 * POST /me/identities/{provider}: the body of that provider's sign-in —
 * `{ deviceSecret }`, `{ ticket }` (steam), `{ idToken, nonce? }`
 * (oidc:<name>) — or `{ email, password, username? }` for `password`.
 */
export interface LinkIdentityBody {
  deviceSecret?: string
  /** steam: the hex ticket from GetAuthTicketForWebApi. */
  ticket?: string
  /** oidc:<name>: the ID token. */
  idToken?: string
  nonce?: string
  email?: string
  password?: string
  username?: string
}

export interface VerifyEmailBody {
  /** The code as mailed (e.g. `7KQ2M-R9W4T`); any case, dash optional. */
  code: string
}

export interface ChangePasswordBody {
  currentPassword: string
  /** 8 to 128 characters. */
  newPassword: string
}

export interface ForgotPasswordBody {
  email: string
}

export interface ResetPasswordBody {
  email: string
  /** The code mailed by forgot. */
  code: string
  /** 8 to 128 characters. */
  newPassword: string
}

export interface SessionBody {
  matchId: string
}

export interface VerifyBody {
  pin: string
  /** Decimal string. */
  amount: string
  destinationAddress: string
  idempotencyKey: string
}

export interface SetPinBody {
  pin: string
  /** The account password, to re-authenticate. */
  password: string
}

export interface SecurityEventBody {
  /** UPPER_SNAKE, e.g. ENV_COMPROMISED. */
  kind: string
  level?: 'SAFE' | 'WARN' | 'COMPROMISED'
  details?: Record<string, unknown>
  occurredAt?: string
}

/** How many events the server accepted (false when it shed them under overload). */
export interface SecurityEventAccepted {
  accepted: boolean
}

/** POST /games/{gameId}/challenges. */
export interface CreateChallengeBody {
  /** A username or a user id. */
  opponent: string
  /** What each player puts in (a decimal amount); null or absent: none. */
  stake?: string | null
  /** 30 to 86 400; default 300. */
  expiresInS?: number
}
