// Changing the password while signed in (contract §8). The current password
// is asked again: a stolen bearer alone must not be enough to take the
// account over. Its check is a password guess like a login, so it is counted
// on the account's login throttle (as PUT /security/pin does), and every
// other session ends with the change.
import type { Storage } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import { AppError } from '../../shared/errors'
import type { AccountPasswords } from './account-passwords'
import type { SecurityEventInput } from '../security/event-log'
import { defaultHashGate, type HashGate } from './hash-gate'
import { assertPasswordLength, hashPassword } from './passwords'
import { revokeSessions, unauthorized } from './service'

export interface PasswordChangeDeps {
  storage: Storage
  clock: Clock
  /** The account's password and its login throttle (./account-passwords.ts). */
  passwords: AccountPasswords
  hashGate?: HashGate
  onSecurityEvent?: (event: SecurityEventInput) => void
}

export class PasswordChange {
  private readonly hashGate: HashGate

  constructor(private readonly deps: PasswordChangeDeps) {
    this.hashGate = deps.hashGate ?? defaultHashGate()
  }

  /** POST /user/password/change from the session `sessionId`; returns how many other sessions ended. */
  async change(input: { userId: string; sessionId: string; currentPassword: string; newPassword: string }): Promise<number> {
    const { storage, clock, passwords } = this.deps
    const { userId, sessionId } = input
    assertPasswordLength(input.newPassword, 'body/newPassword')

    // Both hashes run outside any unit of work, through the hash gate. Refused
    // there (503 + Retry-After): nothing judged or counted, nothing written.
    const { matched, hash: currentHash } = await passwords.confirm(userId, input.currentPassword)
    // 403, not the code's usual 401: the bearer is fine, the password is not.
    if (!matched) throw new AppError('invalid_credentials', 'The current password is wrong', { status: 403 })
    const passwordHash = await hashPassword(input.newPassword, this.hashGate)

    const outcome = await storage.write(async (tx) => {
      const now = clock.now()
      // Checked again in the write: a reset, or a change from another
      // session, may have ended this session while the hashes ran.
      const session = await tx.auth.session(sessionId)
      if (!session || session.userId !== userId || session.revokedAt !== null || session.expiresAt.getTime() <= now.getTime()) return 'session_ended' as const
      // The password checked above must still be the current one: of two
      // changes from one session at once, the second would otherwise undo the first.
      const user = await tx.auth.userById(userId)
      if (!user || user.passwordHash !== currentHash) return 'changed_meanwhile' as const
      await tx.auth.setPasswordHash(userId, passwordHash)
      // A reset code asked for before the change would still open the account.
      await tx.auth.deleteAccountCode(userId, 'reset_password')
      const others = (await tx.auth.liveSessions(userId, now)).filter((s) => s.id !== sessionId).map((s) => s.id)
      const revoked = await revokeSessions(tx, clock, userId, others, 'password_changed')
      await tx.events.append({ userId, topic: 'account', type: 'account.password_changed', data: { revoked } }, now)
      tx.afterCommit(() =>
        this.deps.onSecurityEvent?.({ userId, source: 'server', kind: 'PASSWORD_CHANGED', level: 'WARN', details: { sessionId, revoked } }),
      )
      return revoked
    })
    if (outcome === 'session_ended') throw unauthorized()
    if (outcome === 'changed_meanwhile') throw new AppError('conflict', 'The password was changed by another request meanwhile; try again with the current password')
    return outcome
  }
}
