// The mail outbox on SQLite (src/modules/mail/store.ts).
import { and, asc, desc, eq, inArray, lt, lte, sql } from 'drizzle-orm'
import { mailOutbox } from '../../schema'
import { ERASED_BODIES, type MailMessage, type MailStore, type NewMail } from '../../../modules/mail/store'
import type { SqliteScope } from '../storage'

export class SqliteMailStore implements MailStore {
  constructor(private readonly scope: SqliteScope) {}

  private get db() {
    return this.scope.handle.db
  }

  async enqueue(mail: NewMail): Promise<void> {
    this.db
      .insert(mailOutbox)
      .values({ ...mail, toKey: mail.toAddress.toLowerCase(), attempts: 0, lastError: null, sentAt: null })
      .run()
  }

  async due(now: Date, limit: number): Promise<MailMessage[]> {
    return this.db
      .select()
      .from(mailOutbox)
      .where(and(eq(mailOutbox.status, 'queued'), lte(mailOutbox.nextAttemptAt, now)))
      .orderBy(asc(mailOutbox.nextAttemptAt), asc(mailOutbox.id))
      .limit(limit)
      .all()
  }

  async markSent(id: string, now: Date): Promise<boolean> {
    const changed = this.db
      .update(mailOutbox)
      .set({ status: 'sent', sentAt: now, attempts: sql`${mailOutbox.attempts} + 1`, lastError: null, ...ERASED_BODIES })
      .where(and(eq(mailOutbox.id, id), eq(mailOutbox.status, 'queued')))
      .returning({ id: mailOutbox.id })
      .all()
    return changed.length > 0
  }

  async markAttemptFailed(id: string, failure: { error: string; nextAttemptAt: Date; giveUp: boolean }): Promise<void> {
    this.db
      .update(mailOutbox)
      .set({
        status: failure.giveUp ? 'failed' : 'queued',
        attempts: sql`${mailOutbox.attempts} + 1`,
        lastError: failure.error,
        nextAttemptAt: failure.nextAttemptAt,
        ...(failure.giveUp ? ERASED_BODIES : {}),
      })
      .where(and(eq(mailOutbox.id, id), eq(mailOutbox.status, 'queued')))
      .run()
  }

  async toAddress(toKey: string, limit: number): Promise<MailMessage[]> {
    return this.db.select().from(mailOutbox).where(eq(mailOutbox.toKey, toKey)).orderBy(desc(mailOutbox.createdAt), desc(mailOutbox.id)).limit(limit).all()
  }

  async recent(limit: number): Promise<MailMessage[]> {
    return this.db.select().from(mailOutbox).orderBy(desc(mailOutbox.createdAt), desc(mailOutbox.id)).limit(limit).all()
  }

  async deleteForUser(userId: string): Promise<number> {
    return this.db.delete(mailOutbox).where(eq(mailOutbox.userId, userId)).returning({ id: mailOutbox.id }).all().length
  }

  async prune(cutoff: Date): Promise<number> {
    return this.db
      .delete(mailOutbox)
      .where(and(inArray(mailOutbox.status, ['sent', 'failed', 'kept']), lt(mailOutbox.createdAt, cutoff)))
      .returning({ id: mailOutbox.id })
      .all().length
  }
}
