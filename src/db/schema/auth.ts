import { index, integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import { ACCOUNT_CODE_PURPOSES, REVOKE_REASONS } from '../../modules/auth/store'

export const users = sqliteTable('users', {
  id: text('id').primaryKey(),
  email: text('email').notNull(),
  /** Lower-cased email: uniqueness is case-insensitive (contract §1). */
  emailKey: text('email_key').notNull().unique(),
  username: text('username').notNull(),
  /** Lower-cased username, for the same reason. */
  usernameKey: text('username_key').notNull().unique(),
  passwordHash: text('password_hash').notNull(),
  country: text('country').notNull(),
  createdAt: integer('created_at', { mode: 'timestamp_ms' }).notNull(),
  /** When the user entered the code mailed to `email` (contract §8); null until then. */
  emailVerifiedAt: integer('email_verified_at', { mode: 'timestamp_ms' }),
  /** Banned from then (contract §8): sessions ended, logins refused until `banned_until` (null: until unbanned). */
  bannedAt: integer('banned_at', { mode: 'timestamp_ms' }),
  bannedUntil: integer('banned_until', { mode: 'timestamp_ms' }),
  banReason: text('ban_reason'),
  /** Deleted (contract §8): personal columns erased, the row kept for the ledger that names it. */
  deletedAt: integer('deleted_at', { mode: 'timestamp_ms' }),
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
    createdAt: integer('created_at', { mode: 'timestamp_ms' }).notNull(),
    lastUsedAt: integer('last_used_at', { mode: 'timestamp_ms' }).notNull(),
    /** Absolute end of the session: refresh tokens never outlive it. */
    expiresAt: integer('expires_at', { mode: 'timestamp_ms' }).notNull(),
    userAgent: text('user_agent'),
    revokedAt: integer('revoked_at', { mode: 'timestamp_ms' }),
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
    issuedAt: integer('issued_at', { mode: 'timestamp_ms' }).notNull(),
    spentAt: integer('spent_at', { mode: 'timestamp_ms' }),
  },
  (table) => [index('refresh_tokens_session').on(table.sessionId)],
)

// Failed-login counters, per identifier and per client address, in the
// database so a restart does not reset them.
export const loginThrottle = sqliteTable('login_throttle', {
  /** `identifier:<lower-cased identifier>` or `address:<ip>`. */
  key: text('key').primaryKey(),
  failures: integer('failures').notNull(),
  windowStartedAt: integer('window_started_at', { mode: 'timestamp_ms' }).notNull(),
  blockedUntil: integer('blocked_until', { mode: 'timestamp_ms' }),
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
    lastSeenAt: integer('last_seen_at', { mode: 'timestamp_ms' }).notNull(),
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
    createdAt: integer('created_at', { mode: 'timestamp_ms' }).notNull(),
    expiresAt: integer('expires_at', { mode: 'timestamp_ms' }).notNull(),
  },
  (table) => [primaryKey({ columns: [table.userId, table.purpose] })],
)
