// Operator bans (contract §8). A ban is one unit of work: the ban columns of
// the user, every live session ended (reason `banned`, a session.logout each),
// the account.banned event; the security event follows the commit. From the
// commit on, the user's access tokens answer 401 on their next request (their
// sessions are revoked, and authenticate refuses a banned user's session
// besides), a login with the right password answers 403 account_banned, and
// what a session opened before the ban could still reach (a claim, a PIN
// verify) refuses inside its own unit of work (assertMayAct, ./standing.ts).
import type { Storage } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import { toIso } from '../../shared/clock'
import { AppError } from '../../shared/errors'
import type { SecurityEventInput } from '../security/event-log'
import type { Actor } from '../audit/log'
import { publishWebhook } from '../webhooks/publish'
import { revokeSessions } from './service'
import { banInForce, type UserAccount, type UserBan } from './store'

export interface BanServiceDeps {
  storage: Storage
  clock: Clock
  onSecurityEvent?: (event: SecurityEventInput) => void
}

function noSuchUser(): AppError {
  return new AppError('not_found', 'No such user')
}

function deleted(): AppError {
  return new AppError('conflict', 'The account was deleted')
}

export class BanService {
  constructor(private readonly deps: BanServiceDeps) {}

  /**
   * Bans the user until `until` (null: until an operator lifts it); a ban in
   * force is replaced. Returns the user as it now is.
   */
  ban(userId: string, input: { reason: string; until: Date | null }, by: Actor): Promise<UserAccount> {
    const { storage, clock } = this.deps
    return storage.write(async (tx) => {
      const now = clock.now()
      if (input.until !== null && input.until.getTime() <= now.getTime()) {
        throw new AppError('validation_failed', 'Request failed validation', { details: [{ path: 'body/until', message: 'Expected a time in the future' }] })
      }
      const account = await tx.auth.userById(userId)
      if (!account) throw noSuchUser()
      if (account.deletedAt !== null) throw deleted()
      const ban: UserBan = { bannedAt: now, until: input.until, reason: input.reason }
      await tx.auth.setBan(userId, ban)
      const live = await tx.auth.liveSessions(userId, now)
      const revoked = await revokeSessions(tx, clock, userId, live.map((session) => session.id), 'banned')
      const until = input.until === null ? null : toIso(input.until)
      await tx.events.append({ userId, topic: 'account', type: 'account.banned', data: { reason: input.reason, until } }, now)
      await publishWebhook(tx, { type: 'user.banned', data: { userId, reason: input.reason, until } }, now)
      // `replaced`: a ban in force was replaced by this one (a new reason or end), not a new ban.
      await by.record(tx, { action: 'user.ban', target: userId, reason: input.reason, details: { until, revokedSessions: revoked, replaced: account.ban !== null && banInForce(account.ban, now) } })
      tx.afterCommit(() =>
        this.deps.onSecurityEvent?.({ userId, source: 'server', kind: 'ACCOUNT_BANNED', level: 'WARN', details: { reason: input.reason, until, revokedSessions: revoked } }),
      )
      return { ...account, ban }
    })
  }

  /** Lifts the user's ban, in force or expired; a user with none is answered as it is and nothing is written. */
  unban(userId: string, by: Actor): Promise<UserAccount> {
    const { storage, clock } = this.deps
    return storage.write(async (tx) => {
      const account = await tx.auth.userById(userId)
      if (!account) throw noSuchUser()
      if (account.deletedAt !== null) throw deleted()
      if (account.ban === null) return account
      const now = clock.now()
      await tx.auth.setBan(userId, null)
      await tx.events.append({ userId, topic: 'account', type: 'account.unbanned', data: { unbannedAt: toIso(now) } }, now)
      const lifted = account.ban
      await by.record(tx, {
        action: 'user.unban',
        target: userId,
        details: { bannedAt: toIso(lifted.bannedAt), until: lifted.until === null ? null : toIso(lifted.until), banReason: lifted.reason, inForce: banInForce(lifted, now) },
      })
      tx.afterCommit(() =>
        this.deps.onSecurityEvent?.({
          userId,
          source: 'server',
          kind: 'ACCOUNT_UNBANNED',
          level: 'SAFE',
          details: { bannedAt: toIso(lifted.bannedAt), until: lifted.until === null ? null : toIso(lifted.until), inForce: banInForce(lifted, now) },
        }),
      )
      return { ...account, ban: null }
    })
  }
}
