// Account deletion (contract §8), by the user (POST /me/delete, with the
// password) or by an operator (POST /admin/users/{id}/delete, with a reason).
//
// Deleting is erasing in place, in one unit of work: the user row keeps its
// id (the ledger, withdrawals, tournament seats and the security log name it)
// and loses everything of the person: email, username, password hash (see
// AuthStore.eraseUser), the PIN hash, its lock and PIN sessions, every auth
// session, the mail sent to them, and the login-throttle counters keyed by
// the old email or username. Money cannot be deleted: while the wallet holds
// any balance or a withdrawal is still being signed, the answer is 409
// balance_not_empty and nothing changes.
import { closeMatchmaking } from '../matchmaking/service'
import type { Storage, Transaction, WriteOptions } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import { toIso } from '../../shared/clock'
import { AppError } from '../../shared/errors'
import type { SecurityEventInput } from '../security/event-log'
import type { Actor } from '../audit/log'
import type { AccountPasswords } from './account-passwords'
import { holdingsOf } from '../wallet/holdings'
import { userSubject } from './known-places'
import { accountCodeKeys, accountKey } from './throttle'

export interface AccountDeletionDeps {
  storage: Storage
  clock: Clock
  /** The account's password and its login throttle (./account-passwords.ts). */
  passwords: AccountPasswords
  onSecurityEvent?: (event: SecurityEventInput) => void
}

/**
 * Every read the deletion decides on is covered by the user's lock, which
 * every credit takes: the unit of work may run on row locks (WriteOptions).
 */
const DELETION_WRITE: WriteOptions = { rowLocks: true }

/** Who asked: the user themself, or an operator with a reason (and the operator, recorded in the audit log). */
type Requester = { by: 'user' } | { by: 'operator'; reason: string; actor: Actor }

export class AccountDeletion {
  constructor(private readonly deps: AccountDeletionDeps) {}

  /**
   * The user deletes their own account. The password is asked again, and a
   * wrong one counts against the account like a failed login (403
   * invalid_credentials: a 401 would read as an expired bearer, which a
   * client refreshes and replays).
   */
  async deleteOwn(userId: string, password: string | undefined): Promise<{ deletedAt: string }> {
    // An account without a password identity (contract §13: a guest, or one
    // that signs in only with a provider) has nothing to ask again: its bearer
    // is all it has. One with a password gives it.
    const account = await this.deps.storage.read.auth.userById(userId)
    if (account?.passwordHash === null) return this.erase(userId, { by: 'user' })
    if (password === undefined) {
      throw new AppError('validation_failed', 'Request failed validation', { details: [{ path: 'body/password', message: 'Required: the account has a password' }] })
    }
    // The slow hash runs before the unit of work, never inside it.
    if (!(await this.deps.passwords.confirm(userId, password)).matched) {
      throw new AppError('invalid_credentials', 'The password is not right', { status: 403 })
    }
    return this.erase(userId, { by: 'user' })
  }

  /** An operator deletes the account: the same rules, no password. */
  deleteByOperator(userId: string, reason: string, by: Actor): Promise<{ deletedAt: string }> {
    return this.erase(userId, { by: 'operator', reason, actor: by })
  }

  private async erase(userId: string, requester: Requester): Promise<{ deletedAt: string }> {
    const { storage, clock } = this.deps
    return storage.write(async (tx) => {
      const now = clock.now()
      // First, the one rule a credit takes too (lockUserForCredit): no credit
      // lands from here to the commit, and one under way commits before the
      // reads below. They read the latest commit (READ COMMITTED on
      // PostgreSQL, `rowLocks`), so a prize or a refund that committed while
      // this waited is seen and refuses the deletion; a SERIALIZABLE
      // snapshot taken before the wait would miss a job's READ COMMITTED
      // credit (docs/decisions.md, "A deleted account holds no money").
      await tx.wallet.lockUserForDeletion(userId)
      const account = await tx.auth.userById(userId)
      if (!account) throw new AppError('not_found', 'No such user')
      if (account.deletedAt !== null) throw new AppError('conflict', 'The account was deleted already')
      // A withdrawal only takes money out; one racing the deletion is
      // committed and pending when seen here, or its debit is.
      const holdings = await holdingsOf(tx.wallet, userId)
      if (!holdings.empty) {
        throw new AppError('balance_not_empty', 'The wallet still holds funds or a withdrawal is pending: withdraw everything first')
      }
      await tx.auth.eraseUser(userId, now)
      await tx.security.erasePin(userId)
      await tx.mail.deleteForUser(userId)
      await forgetThrottleCounters(tx, userId, account.email === null ? [account.username] : [account.email, account.username])
      // Where it signed in from (hashes of addresses and device tokens): personal data, and of no use now.
      await tx.auth.forgetPlaces(userSubject(userId))
      // Waiting in no queue, challenging and challenged by no one (contract §16): an open ticket closes, an open challenge is cancelled.
      await closeMatchmaking(tx, userId, now)
      const deletedAt = toIso(now)
      await tx.events.append({ userId, topic: 'account', type: 'account.deleted', data: { deletedAt } }, now)
      // The record names the account by id only: its email and username are what this erases.
      if (requester.by === 'operator') await requester.actor.record(tx, { action: 'user.delete', target: userId, reason: requester.reason })
      tx.afterCommit(() =>
        this.deps.onSecurityEvent?.({
          userId,
          source: 'server',
          kind: 'ACCOUNT_DELETED',
          level: 'WARN',
          details: requester.by === 'user' ? { by: 'user' } : { by: 'operator', reason: requester.reason },
        }),
      )
      return { deletedAt }
    }, DELETION_WRITE)
  }
}

/**
 * The account's login-throttle counters: its own, and those of its old email
 * and username typed as identifiers (counted under `identifier:<text>` while
 * they named no account, e.g. before registering): their keys hold the text.
 */
async function forgetThrottleCounters(tx: Transaction, userId: string, identifiers: string[]): Promise<void> {
  const keys = [
    accountKey(userId, ''),
    ...identifiers.map((identifier) => accountKey(undefined, identifier)),
    // The mailed-code counters name the user and the address too.
    accountCodeKeys.resend(userId),
    ...identifiers.filter((identifier) => identifier.includes('@')).map((email) => accountCodeKeys.forgotEmail(email)),
  ]
  for (const key of keys) {
    await tx.auth.deleteThrottleCounter(key)
  }
}
