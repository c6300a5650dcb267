// The mail outbox (src/modules/mail/store.ts), on either engine: the same
// queries on both, nothing on a hot path (a mail is queued by the write that
// causes it and sent by the delivery loop).
import { and, asc, desc, eq, inArray, lt, lte, sql } from 'drizzle-orm'
import { ERASED_BODIES, type MailMessage, type MailStore, type NewMail } from '../../modules/mail/store'
import { Queries } from './scope'

export class MailQueries extends Queries implements MailStore {
  async enqueue(mail: NewMail): Promise<void> {
    await this.db.insert(this.t.mailOutbox).values({ ...mail, toKey: mail.toAddress.toLowerCase(), attempts: 0, lastError: null, sentAt: null })
  }

  async due(now: Date, limit: number): Promise<MailMessage[]> {
    const { mailOutbox } = this.t
    return this.db
      .select()
      .from(mailOutbox)
      .where(and(eq(mailOutbox.status, 'queued'), lte(mailOutbox.nextAttemptAt, now)))
      .orderBy(asc(mailOutbox.nextAttemptAt), asc(mailOutbox.id))
      .limit(limit)
  }

  async markSent(id: string, now: Date): Promise<boolean> {
    const { mailOutbox } = this.t
    const changed = await this.db
      .update(mailOutbox)
      .set({ status: 'sent', sentAt: now, attempts: sql`${mailOutbox.attempts} + 1`, lastError: null, ...ERASED_BODIES })
      .where(and(eq(mailOutbox.id, id), eq(mailOutbox.status, 'queued')))
      .returning({ id: mailOutbox.id })
    return changed.length > 0
  }

  async markAttemptFailed(id: string, failure: { error: string; nextAttemptAt: Date; giveUp: boolean }): Promise<void> {
    const { mailOutbox } = this.t
    await this.db
      .update(mailOutbox)
      .set({
        status: failure.giveUp ? 'failed' : 'queued',
        attempts: sql`${mailOutbox.attempts} + 1`,
        lastError: failure.error,
        nextAttemptAt: failure.nextAttemptAt,
        ...(failure.giveUp ? ERASED_BODIES : {}),
      })
      .where(and(eq(mailOutbox.id, id), eq(mailOutbox.status, 'queued')))
  }

  async toAddress(toKey: string, limit: number): Promise<MailMessage[]> {
    const { mailOutbox } = this.t
    return this.db.select().from(mailOutbox).where(eq(mailOutbox.toKey, toKey)).orderBy(desc(mailOutbox.createdAt), desc(mailOutbox.id)).limit(limit)
  }

  async recent(limit: number): Promise<MailMessage[]> {
    const { mailOutbox } = this.t
    return this.db.select().from(mailOutbox).orderBy(desc(mailOutbox.createdAt), desc(mailOutbox.id)).limit(limit)
  }

  async deleteForUser(userId: string): Promise<number> {
    const { mailOutbox } = this.t
    const deleted = await this.db.delete(mailOutbox).where(eq(mailOutbox.userId, userId)).returning({ id: mailOutbox.id })
    return deleted.length
  }

  async prune(cutoff: Date): Promise<number> {
    const { mailOutbox } = this.t
    const deleted = await this.db
      .delete(mailOutbox)
      .where(and(inArray(mailOutbox.status, ['sent', 'failed', 'kept']), lt(mailOutbox.createdAt, cutoff)))
      .returning({ id: mailOutbox.id })
    return deleted.length
  }
}
