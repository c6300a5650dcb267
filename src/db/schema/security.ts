import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { amount, instant } from './columns'
import { users } from './auth'

export const userPins = sqliteTable('user_pins', {
  userId: text('user_id')
    .primaryKey()
    .references(() => users.id),
  /** argon2id, like passwords. */
  pinHash: text('pin_hash').notNull(),
  updatedAt: instant('updated_at').notNull(),
})

// PIN failures are counted per user, not per session, so minting new
// sessions never resets them (contract §3).
export const pinLocks = sqliteTable('pin_locks', {
  userId: text('user_id')
    .primaryKey()
    .references(() => users.id),
  /** Consecutive failures since the last success or lock. */
  failures: integer('failures').notNull(),
  /** Locks so far: each lasts twice as long as the one before. */
  locks: integer('locks').notNull(),
  lockedUntil: instant('locked_until'),
})

export const pinSessions = sqliteTable(
  'pin_sessions',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    tokenHash: text('token_hash').notNull(),
    expiresAt: instant('expires_at').notNull(),
    consumedAt: instant('consumed_at'),
    createdAt: instant('created_at').notNull(),
  },
  (table) => [index('pin_sessions_user').on(table.userId)],
)

export const WITHDRAWAL_STATUSES = ['awaiting_approval', 'held', 'pending_signature', 'signed', 'failed', 'rejected'] as const

export const withdrawals = sqliteTable(
  'withdrawals',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    asset: text('asset').notNull(),
    /** Minor units, decimal TEXT. */
    amount: amount('amount').notNull(),
    destinationAddress: text('destination_address').notNull(),
    idempotencyKey: text('idempotency_key').notNull(),
    status: text('status', { enum: WITHDRAWAL_STATUSES }).notNull(),
    /** base58 Ed25519 signature over the canonical withdrawal message. */
    signature: text('signature'),
    failureReason: text('failure_reason'),
    /** Why an operator rejected it, once `rejected`. */
    rejectionReason: text('rejection_reason'),
    /** When an operator approved it; null unless one did. */
    approvedAt: instant('approved_at'),
    /** The end of its new-destination hold; null when it has none. */
    holdUntil: instant('hold_until'),
    pinSessionId: text('pin_session_id').notNull(),
    createdAt: instant('created_at').notNull(),
    updatedAt: instant('updated_at').notNull(),
  },
  // withdrawals_created: the console's withdrawal history, newest first across every user, a page at a time.
  (table) => [uniqueIndex('withdrawals_user_key').on(table.userId, table.idempotencyKey), index('withdrawals_status').on(table.status), index('withdrawals_created').on(table.createdAt, table.id)],
)
