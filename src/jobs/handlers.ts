// What each job kind does. Handlers run inside the worker's unit of work.
import type { Clock } from '../shared/clock'
import { finalizeTournament } from '../modules/games/finalize'
import type { JobHandler } from './worker'
import { JOB_KINDS, type JobKind } from './queue'

export function jobHandlers(clock: Clock): Record<JobKind, JobHandler> {
  return {
    [JOB_KINDS.finalizeTournament]: (tx, payload) => finalizeTournament(tx, clock, String(payload.tournamentId)),
  }
}
