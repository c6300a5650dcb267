// A signed-in user's password, asked again (PUT /security/pin, a password
// change, deleting the account): each check is a password guess like a
// login, so the login's per-account throttle applies (./throttle.ts), or a
// stolen bearer could guess freely.
import type { Storage } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import type { HashGate, HashTicket } from './hash-gate'
import { verifyAgainstDummy, verifyPassword } from './passwords'
import { accountKey, clearAttempts, LOGIN_LIMITS, rateLimited, recordAttempt, retryAfter } from './throttle'

export interface AccountPasswords {
  /**
   * Checks `password` against the account's. Counted like a login, in one
   * unit of work with the block check and BEFORE the slow hash, so guesses
   * sent in parallel cannot all be judged: the sixth sees the block. Throws
   * 429 rate_limited while blocked, 503 when the hash gate is full (nothing
   * counted). `hash`: the one it was checked against (null: no such account).
   */
  confirm(userId: string, password: string): Promise<{ matched: boolean; hash: string | null }>
}

/** The account's password and its login throttle, for the modules that ask for it again. */
export function accountPasswords(deps: { storage: Storage; clock: Clock; hashGate: HashGate }): AccountPasswords {
  const { storage, clock, hashGate } = deps
  return {
    confirm: async (userId, password) => {
      const account = accountKey(userId, '')
      hashGate.refuseIfFull()
      // As a login does (sign-in.ts): a place at the hash gate, the block
      // checked and the attempt counted in one unit of work, before the hash.
      let ticket: HashTicket | undefined
      let hash: string | null = null
      let blockedForS: number | null
      try {
        blockedForS = await storage.write(async (tx) => {
          ticket?.cancel()
          ticket = hashGate.admit()
          const now = clock.now()
          const blocked = await retryAfter(tx.auth, [account], now)
          if (blocked !== null) {
            ticket.cancel()
            return blocked
          }
          await recordAttempt(tx.auth, account, LOGIN_LIMITS.account, now)
          const user = await tx.auth.userById(userId)
          // A deleted account's hash is empty: nothing to check against.
          hash = user && user.deletedAt === null ? user.passwordHash : null
          return null
        })
      } catch (error) {
        ticket?.cancel()
        throw error
      }
      if (blockedForS !== null) throw rateLimited(blockedForS, 'Too many wrong passwords; try again later')
      const matched = hash !== null ? await verifyPassword(password, hash, ticket!) : await verifyAgainstDummy(password, ticket!)
      // Right: the count goes, as after a good login.
      if (matched) await storage.write((tx) => clearAttempts(tx.auth, account))
      return { matched, hash }
    },
  }
}
