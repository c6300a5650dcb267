import { index, integer, pgTable, text } from 'drizzle-orm/pg-core'
import { timestampMs } from './columns'

export const users = pgTable('users', {
  id: text('id').primaryKey(),
  email: text('email').notNull(),
  /** Lower-cased email: uniqueness is case-insensitive (contract §1). */
  emailKey: text('email_key').notNull().unique(),
  username: text('username').notNull(),
  /** Lower-cased username, for the same reason. */
  usernameKey: text('username_key').notNull().unique(),
  passwordHash: text('password_hash').notNull(),
  country: text('country').notNull(),
  createdAt: timestampMs('created_at').notNull(),
})

// One row per login. Access tokens carry its id (`sid`), and every
// authenticated request checks it is still live, so revoking it ends its
// tokens at once.
export const authSessions = pgTable(
  'auth_sessions',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: timestampMs('created_at').notNull(),
    lastUsedAt: timestampMs('last_used_at').notNull(),
    /** Absolute end of the session: refresh tokens never outlive it. */
    expiresAt: timestampMs('expires_at').notNull(),
    userAgent: text('user_agent'),
    revokedAt: timestampMs('revoked_at'),
    revokedReason: text('revoked_reason', { enum: ['logout', 'logout_all', 'refresh_token_reused'] }),
  },
  (table) => [index('auth_sessions_user').on(table.userId)],
)

// Every refresh token ever issued for a session, by hash. A spent one that is
// presented again is a replay: the row is kept so it can be recognised.
export const refreshTokens = pgTable(
  'refresh_tokens',
  {
    tokenHash: text('token_hash').primaryKey(),
    sessionId: text('session_id')
      .notNull()
      .references(() => authSessions.id, { onDelete: 'cascade' }),
    issuedAt: timestampMs('issued_at').notNull(),
    spentAt: timestampMs('spent_at'),
  },
  (table) => [index('refresh_tokens_session').on(table.sessionId)],
)

// Failed-login counters, per identifier and per client address, in the
// database so a restart does not reset them.
export const loginThrottle = pgTable('login_throttle', {
  /** `identifier:<lower-cased identifier>` or `address:<ip>`. */
  key: text('key').primaryKey(),
  failures: integer('failures').notNull(),
  windowStartedAt: timestampMs('window_started_at').notNull(),
  blockedUntil: timestampMs('blocked_until'),
})
