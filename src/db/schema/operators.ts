import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'

import { OPERATOR_ROLES } from '../../modules/operators/roles'

export { OPERATOR_ROLES }

// Named operator accounts (contract §11). The password is argon2id like a
// player's; a password `arena operator create` or `reset-password` printed is
// one-time (`passwordOneTime`): the next sign-in must replace it. The TOTP
// secret is sealed (never stored in the clear); `totpEnabledAt` is set once
// the operator confirmed a code from it.
export const operators = sqliteTable(
  'operators',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    /** `name` lower-cased: names are unique whatever their case. */
    nameKey: text('name_key').notNull(),
    role: text('role', { enum: OPERATOR_ROLES }).notNull(),
    passwordHash: text('password_hash').notNull(),
    passwordOneTime: integer('password_one_time', { mode: 'boolean' }).notNull(),
    totpSecretSealed: text('totp_secret_sealed'),
    totpEnabledAt: integer('totp_enabled_at', { mode: 'timestamp_ms' }),
    /** The last TOTP time step accepted: a code is never accepted twice. */
    totpLastStep: integer('totp_last_step'),
    disabledAt: integer('disabled_at', { mode: 'timestamp_ms' }),
    createdAt: integer('created_at', { mode: 'timestamp_ms' }).notNull(),
    updatedAt: integer('updated_at', { mode: 'timestamp_ms' }).notNull(),
  },
  (table) => [uniqueIndex('operators_name_key').on(table.nameKey)],
)

// An operator's signed-in session: the console's cookie or an API bearer.
// Only the token's SHA-256 is stored; the CSRF token is derived from the
// session token, so it is never stored either.
export const operatorSessions = sqliteTable(
  'operator_sessions',
  {
    id: text('id').primaryKey(),
    operatorId: text('operator_id')
      .notNull()
      .references(() => operators.id),
    tokenHash: text('token_hash').notNull(),
    /** 'console' (a cookie) or 'api' (a bearer). */
    kind: text('kind', { enum: ['console', 'api'] }).notNull(),
    userAgent: text('user_agent'),
    ip: text('ip'),
    createdAt: integer('created_at', { mode: 'timestamp_ms' }).notNull(),
    lastSeenAt: integer('last_seen_at', { mode: 'timestamp_ms' }).notNull(),
    expiresAt: integer('expires_at', { mode: 'timestamp_ms' }).notNull(),
    revokedAt: integer('revoked_at', { mode: 'timestamp_ms' }),
  },
  (table) => [uniqueIndex('operator_sessions_token').on(table.tokenHash), index('operator_sessions_operator').on(table.operatorId)],
)

// The operator audit log (contract §11): every operator action, appended in
// the transaction of the action itself, each row HMAC-chained to the one
// before (`arena audit verify`). `operatorId` is null for the admin token
// (name `token`).
export const auditLog = sqliteTable(
  'audit_log',
  {
    seq: integer('seq').primaryKey({ autoIncrement: true }),
    id: text('id').notNull().unique(),
    at: integer('at', { mode: 'timestamp_ms' }).notNull(),
    operatorId: text('operator_id'),
    operatorName: text('operator_name').notNull(),
    role: text('role', { enum: OPERATOR_ROLES }).notNull(),
    /** Where it came from: 'api', 'console' or 'cli'. */
    via: text('via', { enum: ['api', 'console', 'cli'] }).notNull(),
    action: text('action').notNull(),
    target: text('target'),
    reason: text('reason'),
    requestId: text('request_id'),
    details: text('details', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
    prevHash: text('prev_hash').notNull(),
    hash: text('hash').notNull(),
  },
  (table) => [index('audit_log_operator').on(table.operatorId)],
)

/** The newest link of the audit chain (one row, id 1): a cut tail no longer matches it, and on PostgreSQL appends lock it. */
export const auditHead = sqliteTable('audit_head', {
  id: integer('id').primaryKey(),
  seq: integer('seq').notNull(),
  hash: text('hash').notNull(),
})
