// The account export (contract §8, GET /me/export): one JSON document with
// everything arena keeps about the user that the user may see: the profile,
// every auth session, the matches they were seated in, every posting on their
// wallet, their withdrawals, the security events they reported, and their
// ratings with their history in every game they were rated in. Never a
// hash, a token or a key: each part is a view made for this document.
//
// Each part is read on its own (committed state, no one snapshot across
// modules): a change committing while the export runs may show in one part
// and not yet in another, as it would in two requests.
import type { Storage } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import { toIso } from '../../shared/clock'
import { viewsOf } from './identities'
import { AppError } from '../../shared/errors'
import type { MatchesService } from '../matches/service'
import type { RatingsService } from '../ratings/service'
import type { SecurityEventLog } from '../security/event-log'
import type { WalletService } from '../wallet/service'
import type { WithdrawalService } from '../wallet/withdrawals'
import type { AccountExport as AccountExportDocument } from './model'
import { toUser } from './service'

export interface AccountExportDeps {
  storage: Storage
  clock: Clock
  matches: MatchesService
  wallet: WalletService
  withdrawals: WithdrawalService
  securityLog: SecurityEventLog
  ratings: RatingsService
}

const iso = (date: Date | null) => (date === null ? null : toIso(date))

export class AccountExport {
  constructor(private readonly deps: AccountExportDeps) {}

  async exportOf(userId: string): Promise<AccountExportDocument> {
    const { storage, clock } = this.deps
    const exportedAt = toIso(clock.now())
    const account = await storage.read.auth.userById(userId)
    // The bearer was checked: only an account deleted this very moment gets here.
    if (!account || account.deletedAt !== null) throw new AppError('unauthorized', 'This account no longer exists')
    const [identities, sessions, matches, ledger, withdrawals, securityEvents, ratings] = await Promise.all([
      storage.read.auth.identitiesOf(userId),
      storage.read.auth.sessionsOf(userId),
      this.deps.matches.playedBy(userId),
      this.deps.wallet.statement(userId),
      this.deps.withdrawals.listOf(userId),
      this.deps.securityLog.reportedBy(userId),
      this.deps.ratings.exportOf(userId),
    ])
    return {
      exportedAt,
      user: { ...toUser(account), emailVerifiedAt: iso(account.emailVerifiedAt) },
      identities: viewsOf(account, identities),
      sessions: sessions.map((s) => ({
        id: s.id,
        createdAt: toIso(s.createdAt),
        lastUsedAt: toIso(s.lastUsedAt),
        expiresAt: toIso(s.expiresAt),
        userAgent: s.userAgent,
        revokedAt: iso(s.revokedAt),
        revokedReason: s.revokedReason,
      })),
      matches,
      ledger,
      withdrawals,
      securityEvents,
      ratings,
    }
  }
}
