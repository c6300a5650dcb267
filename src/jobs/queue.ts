// Durable jobs: enqueued inside the unit of work that makes them necessary
// (`tx.jobs.enqueue(kind, payload, now)`), so the work exists exactly when its
// cause committed. These are the kinds there are; handlers.ts says what each does.
export const JOB_KINDS = { finalizeTournament: 'finalize_tournament', startTournament: 'start_tournament', settleMatchDeadline: 'settle_match_deadline', releaseWithdrawal: 'release_withdrawal', startSeason: 'start_season', readyCheck: 'ready_check' } as const
export type JobKind = (typeof JOB_KINDS)[keyof typeof JOB_KINDS]
