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
