import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import { instant } from './columns'
import { MAIL_STATUSES } from '../../modules/mail/store'

// The mail outbox (contract §8). A mail is queued in the same transaction as
// the change that sends it (a verification code, a reset code), so it exists
// exactly when that change committed; the delivery loop sends it over SMTP
// and marks it sent, retrying with back-off. Without SMTP in `local` it is
// `kept`: the dev mailbox (GET /admin/dev/mail, `arena mail list`).
export const mailOutbox = sqliteTable(
  'mail_outbox',
  {
    id: text('id').primaryKey(),
    /** The user it was sent for; deleting the account deletes its mail. */
    userId: text('user_id'),
    toAddress: text('to_address').notNull(),
    /** Lower-cased `to_address`, for the dev mailbox's lookup. */
    toKey: text('to_key').notNull(),
    /** What it is (`verify_email`, `reset_password`): for logs and the dev mailbox, never for delivery. */
    kind: text('kind').notNull(),
    subject: text('subject').notNull(),
    textBody: text('text_body').notNull(),
    htmlBody: text('html_body').notNull(),
    status: text('status', { enum: MAIL_STATUSES }).notNull(),
    attempts: integer('attempts').notNull(),
    nextAttemptAt: instant('next_attempt_at').notNull(),
    lastError: text('last_error'),
    createdAt: instant('created_at').notNull(),
    sentAt: instant('sent_at'),
  },
  (table) => [index('mail_outbox_due').on(table.status, table.nextAttemptAt), index('mail_outbox_to').on(table.toKey), index('mail_outbox_user').on(table.userId)],
)
