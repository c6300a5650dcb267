// What each job kind does. Handlers run inside the worker's unit of work.
import type { Clock } from '../shared/clock'
import { finalizeTournament } from '../modules/games/finalize'
import { startRegistered } from '../modules/games/start'
import { settleMatchDeadline } from '../modules/matches/deadlines'
import { startSeason } from '../modules/ratings/seasons'
import { expireReadyCheck } from '../modules/matchmaking/service'
import type { WithdrawalService } from '../modules/wallet/withdrawals'
import type { JobHandler } from './worker'
import type { IntegrityPolicy } from '../modules/integrity/signals'
import { JOB_KINDS, type JobKind } from './queue'

export function jobHandlers(clock: Clock, services: { withdrawals: WithdrawalService; integrity: IntegrityPolicy }): Record<JobKind, JobHandler> {
  return {
    [JOB_KINDS.finalizeTournament]: (tx, payload) => finalizeTournament(tx, clock, String(payload.tournamentId)),
    // Due at the tournament's startsAt; does nothing when an operator started it first. A prize pool still short then cancels it.
    [JOB_KINDS.startTournament]: async (tx, payload) => {
      await startRegistered(tx, clock, String(payload.tournamentId), 'cancel')
    },
    [JOB_KINDS.settleMatchDeadline]: (tx, payload) => settleMatchDeadline(tx, clock, String(payload.matchId), Number(payload.deadline), services),
    // Due at a held withdrawal's hold end: moves it to pending_signature and
    // signs it once that commits; does nothing when it is no longer held.
    [JOB_KINDS.releaseWithdrawal]: (tx, payload) => services.withdrawals.release(tx, String(payload.withdrawalId)),
    // Due at the season's startsAt: ends the current season (its final board written), resets every rating; nothing once started.
    [JOB_KINDS.startSeason]: (tx, payload) => startSeason(tx, String(payload.seasonId), clock.now()),
    // Due at a found match's readyBy: cancels it unless both players confirmed (contract §16).
    [JOB_KINDS.readyCheck]: (tx, payload) => expireReadyCheck(tx, clock, String(payload.matchId)),
  }
}
