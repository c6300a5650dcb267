// The operator's view of users (contract §8): a search through every account,
// deleted ones included, and one user in full: the account, every session,
// the wallet, the ban and the ways it signs in (§13). Read only; bans,
// deletions and unlinking an identity are ./bans.ts, ./account-deletion.ts
// and ./identities.ts.
import type { Storage } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import { toIso } from '../../shared/clock'
import { AppError } from '../../shared/errors'
import { userIdByRef } from './user-ref'
import type { AdminUser } from '../admin/model'
import type { WalletService } from '../wallet/service'
import { viewsOf } from './identities'
import { toUser } from './service'
import { banInForce, type AuthSession, type UserAccount, type UserBan } from './store'

export const USERS_PAGE_DEFAULT = 50

export interface UserDirectoryDeps {
  storage: Storage
  clock: Clock
  wallet: WalletService
}

const iso = (date: Date | null) => (date === null ? null : toIso(date))

export function toBanView(ban: UserBan | null, now: Date) {
  return ban === null ? null : { reason: ban.reason, bannedAt: toIso(ban.bannedAt), until: iso(ban.until), inForce: banInForce(ban, now) }
}

function toAdminSession(session: AuthSession, now: Date) {
  return {
    id: session.id,
    createdAt: toIso(session.createdAt),
    lastUsedAt: toIso(session.lastUsedAt),
    expiresAt: toIso(session.expiresAt),
    userAgent: session.userAgent,
    revokedAt: iso(session.revokedAt),
    revokedReason: session.revokedReason,
    live: session.revokedAt === null && session.expiresAt.getTime() > now.getTime(),
  }
}

export class UserDirectory {
  constructor(private readonly deps: UserDirectoryDeps) {}

  /** userIdByRef, or 404 not_found when no user has that username. */
  async idOf(ref: string): Promise<string> {
    const id = await userIdByRef(this.deps.storage, ref)
    if (id === null) throw new AppError('not_found', 'No such user')
    return id
  }

  /** An account as operators see it: the public fields, its ban, its deletion. */
  view(account: UserAccount): AdminUser {
    return { ...toUser(account), ban: toBanView(account.ban, this.deps.clock.now()), deletedAt: iso(account.deletedAt) }
  }

  /**
   * Users in id order (creation order) after the cursor, at most `limit`;
   * with a `query`, those whose id is it or whose username or email contains
   * it. `cursor` is the last id of a full page (the next page may be empty),
   * null once a page comes back short.
   */
  async search(input: { query: string | null; after: string | null; limit: number }): Promise<{ users: AdminUser[]; cursor: string | null }> {
    const rows = await this.deps.storage.read.auth.searchUsers(input.query, input.after, input.limit)
    return { users: rows.map((row) => this.view(row)), cursor: rows.length === input.limit ? rows.at(-1)!.id : null }
  }

  async detail(userId: string) {
    const { storage, clock } = this.deps
    const account = await storage.read.auth.userById(userId)
    if (!account) throw new AppError('not_found', 'No such user')
    const [sessions, wallet, identities] = await Promise.all([storage.read.auth.sessionsOf(userId), this.deps.wallet.holdings(userId), storage.read.auth.identitiesOf(userId)])
    const now = clock.now()
    const user = this.view(account)
    // What GET /me/identities shows the player; a deleted account has none (deletion erased them).
    return { user, sessions: sessions.map((session) => toAdminSession(session, now)), wallet, ban: user.ban, identities: account.deletedAt === null ? viewsOf(account, identities) : [] }
  }
}
