// Whether a user may still act (contract §8): the answer a banned user gets
// everywhere, and the check a unit of work acting for a user makes. Apart
// from the ban service (./bans.ts) so that the auth service can use it too.
import { toIso } from '../../shared/clock'
import { AppError } from '../../shared/errors'
import { banInForce, type AuthStore, type UserBan, type UserStanding } from './store'

/** The answer to anything a banned user tries: 403, saying until when, with `error.until` beside the message. */
export function bannedError(ban: UserBan): AppError {
  const until = ban.until === null ? null : toIso(ban.until)
  const message = until === null ? 'This account is banned until an operator lifts the ban' : `This account is banned until ${until}`
  return new AppError('account_banned', message, { until })
}

/**
 * Refuses a user who may no longer act: 403 account_banned while a ban is in
 * force, 401 once the account is deleted. For a unit of work that acts for a
 * user (pass `tx.auth`): it reads the user's row the way a ban cannot race
 * (AuthStore.standing), so a session that outlived the ban by a moment still
 * cannot claim or withdraw.
 */
export async function assertMayAct(store: AuthStore, userId: string, now: Date): Promise<void> {
  assertStandingMayAct(await store.standing(userId), now)
}

/** Whether a user of this standing may act now: the account exists and no ban is in force (null: no such user). */
export function standingMayAct(standing: UserStanding | null, now: Date): boolean {
  return standing !== null && standing.deletedAt === null && !banInForce(standing.ban, now)
}

/** assertMayAct on a standing the caller read in its unit of work (null: no such user). */
export function assertStandingMayAct(standing: UserStanding | null, now: Date): void {
  if (standing === null || standing.deletedAt !== null) throw new AppError('unauthorized', 'This account no longer exists')
  if (banInForce(standing.ban, now)) throw bannedError(standing.ban!)
}
