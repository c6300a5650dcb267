import { bigint, boolean, index, integer, json, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core'
import { timestampMs } from './columns'
import { OPERATOR_ROLES } from '../../schema/operators'

// The same tables as src/db/schema/operators.ts (read the comments there).
export const operators = pgTable(
  'operators',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    nameKey: text('name_key').notNull(),
    role: text('role', { enum: OPERATOR_ROLES }).notNull(),
    passwordHash: text('password_hash').notNull(),
    passwordOneTime: boolean('password_one_time').notNull(),
    totpSecretSealed: text('totp_secret_sealed'),
    totpEnabledAt: timestampMs('totp_enabled_at'),
    totpLastStep: bigint('totp_last_step', { mode: 'number' }),
    disabledAt: timestampMs('disabled_at'),
    createdAt: timestampMs('created_at').notNull(),
    updatedAt: timestampMs('updated_at').notNull(),
  },
  (table) => [uniqueIndex('operators_name_key').on(table.nameKey)],
)

export const operatorSessions = pgTable(
  'operator_sessions',
  {
    id: text('id').primaryKey(),
    operatorId: text('operator_id')
      .notNull()
      .references(() => operators.id),
    tokenHash: text('token_hash').notNull(),
    kind: text('kind', { enum: ['console', 'api'] }).notNull(),
    userAgent: text('user_agent'),
    ip: text('ip'),
    createdAt: timestampMs('created_at').notNull(),
    lastSeenAt: timestampMs('last_seen_at').notNull(),
    expiresAt: timestampMs('expires_at').notNull(),
    revokedAt: timestampMs('revoked_at'),
  },
  (table) => [uniqueIndex('operator_sessions_token').on(table.tokenHash), index('operator_sessions_operator').on(table.operatorId)],
)

export const auditLog = pgTable(
  'audit_log',
  {
    seq: bigint('seq', { mode: 'number' }).primaryKey().generatedByDefaultAsIdentity(),
    id: text('id').notNull().unique(),
    at: timestampMs('at').notNull(),
    operatorId: text('operator_id'),
    operatorName: text('operator_name').notNull(),
    role: text('role', { enum: OPERATOR_ROLES }).notNull(),
    via: text('via', { enum: ['api', 'console', 'cli'] }).notNull(),
    action: text('action').notNull(),
    target: text('target'),
    reason: text('reason'),
    requestId: text('request_id'),
    details: json('details').$type<Record<string, unknown>>().notNull(),
    prevHash: text('prev_hash').notNull(),
    hash: text('hash').notNull(),
  },
  (table) => [index('audit_log_operator').on(table.operatorId)],
)

export const auditHead = pgTable('audit_head', {
  id: integer('id').primaryKey(),
  seq: bigint('seq', { mode: 'number' }).notNull(),
  hash: text('hash').notNull(),
})
