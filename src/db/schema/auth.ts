import { index, integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import { instant } from './columns'
import { ACCOUNT_CODE_PURPOSES, REVOKE_REASONS } from '../../modules/auth/store'

export const users = sqliteTable('users', {
  id: text('id').primaryKey(),
  /** Null for an account without a password identity (contract §13). */
  email: text('email'),
  /** Lower-cased email: uniqueness is case-insensitive (contract §1). Null with `email`. */
  emailKey: text('email_key').unique(),
  username: text('username').notNull(),
  /** Lower-cased username, for the same reason. */
  usernameKey: text('username_key').notNull().unique(),
  /** Null for an account without a password identity (a guest, or one that signs in only with a provider: contract §13). */
  passwordHash: text('password_hash'),
  /**
   * The providers the account signs in with, in the order they were linked,
   * comma-separated (`password`, `device`, `steam`, `oidc:<name>`: names
   * never hold a comma). What `user.identities` shows (contract §13), kept in
   * the unit of work that links or unlinks, so the lookup behind every request
   * reads it with the profile; the identities themselves are in `identities`
   * (and the password one is these columns).
   */
  identityProviders: text('identity_providers').notNull().default('password'),
  /** When the password identity was linked to an account that began without one; null: since `created_at`. */
  passwordLinkedAt: instant('password_linked_at'),
  country: text('country').notNull(),
  createdAt: instant('created_at').notNull(),
  /** When the user entered the code mailed to `email` (contract §8); null until then. */
  emailVerifiedAt: instant('email_verified_at'),
  /** Banned from then (contract §8): sessions ended, logins refused until `banned_until` (null: until unbanned). */
  bannedAt: instant('banned_at'),
  bannedUntil: instant('banned_until'),
  banReason: text('ban_reason'),
  /** Deleted (contract §8): personal columns erased, the row kept for the ledger that names it. */
  deletedAt: instant('deleted_at'),
})

// One row per login. Access tokens carry its id (`sid`), and every
// authenticated request checks it is still live, so revoking it ends its
// tokens at once.
export const authSessions = sqliteTable(
  'auth_sessions',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: instant('created_at').notNull(),
    lastUsedAt: instant('last_used_at').notNull(),
    /** Absolute end of the session: refresh tokens never outlive it. */
    expiresAt: instant('expires_at').notNull(),
    userAgent: text('user_agent'),
    revokedAt: instant('revoked_at'),
    revokedReason: text('revoked_reason', { enum: REVOKE_REASONS }),
  },
  (table) => [index('auth_sessions_user').on(table.userId)],
)

// Every refresh token ever issued for a session, by hash. A spent one that is
// presented again is a replay: the row is kept so it can be recognised.
export const refreshTokens = sqliteTable(
  'refresh_tokens',
  {
    tokenHash: text('token_hash').primaryKey(),
    sessionId: text('session_id')
      .notNull()
      .references(() => authSessions.id, { onDelete: 'cascade' }),
    issuedAt: instant('issued_at').notNull(),
    spentAt: instant('spent_at'),
  },
  (table) => [index('refresh_tokens_session').on(table.sessionId)],
)

// Failed-login counters, per identifier and per client address, in the
// database so a restart does not reset them.
export const loginThrottle = sqliteTable('login_throttle', {
  /** `identifier:<lower-cased identifier>` or `address:<ip>`. */
  key: text('key').primaryKey(),
  failures: integer('failures').notNull(),
  windowStartedAt: instant('window_started_at').notNull(),
  blockedUntil: instant('blocked_until'),
})

// Where a player or an operator signed in before (docs/decisions.md, "Known
// sign-in places"): a client address, or a device token the client keeps
// (only its SHA-256). A sign-in from a known place counts on a counter of its
// own, so strangers failing on the name elsewhere cannot lock the owner out.
// Written only by a successful sign-in; at most KNOWN_PLACES.perKind rows per
// subject and kind (older ones replaced), ignored and pruned after
// KNOWN_PLACES.ttlMs.
export const knownSignInPlaces = sqliteTable(
  'known_sign_in_places',
  {
    /** `user:<id>` or `operator:<id>`. */
    subject: text('subject').notNull(),
    /** `address` or `device`. */
    kind: text('kind', { enum: ['address', 'device'] }).notNull(),
    /** SHA-256 (hex) of the address or of the device token. */
    placeHash: text('place_hash').notNull(),
    lastSeenAt: instant('last_seen_at').notNull(),
  },
  (table) => [primaryKey({ columns: [table.subject, table.placeHash] }), index('known_sign_in_places_last_seen').on(table.lastSeenAt)],
)

// One-time codes mailed to a user (contract §8): the email-verification code
// and the password-reset code, one live code per purpose (a new one replaces
// the old). Only a hash is kept; a code is deleted when used, and killed after
// five wrong tries.
export const accountCodes = sqliteTable(
  'account_codes',
  {
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    purpose: text('purpose', { enum: ACCOUNT_CODE_PURPOSES }).notNull(),
    codeHash: text('code_hash').notNull(),
    /** Wrong codes tried against this one. */
    failures: integer('failures').notNull(),
    createdAt: instant('created_at').notNull(),
    expiresAt: instant('expires_at').notNull(),
  },
  (table) => [primaryKey({ columns: [table.userId, table.purpose] })],
)
