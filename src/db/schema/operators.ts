import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { flag, instant, int64, json, serial } from './columns'

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
    passwordOneTime: flag('password_one_time').notNull(),
    totpSecretSealed: text('totp_secret_sealed'),
    totpEnabledAt: instant('totp_enabled_at'),
    /** The last TOTP time step accepted: a code is never accepted twice. */
    totpLastStep: int64('totp_last_step'),
    disabledAt: instant('disabled_at'),
    createdAt: instant('created_at').notNull(),
    updatedAt: instant('updated_at').notNull(),
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
    createdAt: instant('created_at').notNull(),
    lastSeenAt: instant('last_seen_at').notNull(),
    expiresAt: instant('expires_at').notNull(),
    revokedAt: instant('revoked_at'),
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
    seq: serial('seq'),
    id: text('id').notNull().unique(),
    at: instant('at').notNull(),
    operatorId: text('operator_id'),
    operatorName: text('operator_name').notNull(),
    role: text('role', { enum: OPERATOR_ROLES }).notNull(),
    /** Where it came from: 'api', 'console' or 'cli'. */
    via: text('via', { enum: ['api', 'console', 'cli'] }).notNull(),
    action: text('action').notNull(),
    target: text('target'),
    reason: text('reason'),
    requestId: text('request_id'),
    details: json<Record<string, unknown>>('details').notNull(),
    prevHash: text('prev_hash').notNull(),
    hash: text('hash').notNull(),
  },
  (table) => [index('audit_log_operator').on(table.operatorId)],
)

/** The newest link of the audit chain (one row, id 1): a cut tail no longer matches it, and on PostgreSQL appends lock it. */
export const auditHead = sqliteTable('audit_head', {
  id: integer('id').primaryKey(),
  seq: int64('seq').notNull(),
  hash: text('hash').notNull(),
})
