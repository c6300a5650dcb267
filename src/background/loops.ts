// Background loops: work the server repeats on a timer (the job worker's
// poll, the pending-withdrawal resumer, hourly housekeeping). Each loop runs
// at start, then every `everyMs`; a tick while the previous one still runs is
// skipped; an error is logged and the next tick tries again; `stop` waits for
// the tick in progress, so nothing runs on a closed database.
//
// Each tick runs only while this runner holds the loop (`LoopLeases`): in one
// process that is always (the in-process leases below). Several instances on
// one database must share the leases (an advisory lock or a lease row), so
// that one runner at a time resumes withdrawals or prunes.
import { describeError } from '../shared/errors'
import type { Logger } from '../shared/logger'

export interface LoopLeases {
  /** Runs `work` if this runner may run the loop `name` now; resolves false (without running it) otherwise. */
  runExclusive(name: string, work: () => Promise<void>): Promise<boolean>
}

/** One process, one runner: a loop is held while its tick runs. */
export function inProcessLeases(): LoopLeases {
  const held = new Set<string>()
  return {
    async runExclusive(name, work) {
      if (held.has(name)) return false
      held.add(name)
      try {
        await work()
        return true
      } finally {
        held.delete(name)
      }
    },
  }
}

export interface Loop {
  /** Stops the timer and resolves once the tick in progress (if any) is over. */
  stop(): Promise<void>
}

export function startLoop(options: { name: string; everyMs: number; leases: LoopLeases; logger: Logger; tick: () => Promise<void> }): Loop {
  const { name, leases, logger } = options
  let running: Promise<void> | undefined
  let stopped = false
  const run = () => {
    if (stopped || running) return
    running = leases
      .runExclusive(name, options.tick)
      .then(
        () => {},
        (error: unknown) => logger.error(`${name} error`, { error: describeError(error) }),
      )
      .finally(() => {
        running = undefined
      })
  }
  run()
  const timer = setInterval(run, options.everyMs)
  return {
    async stop() {
      stopped = true
      clearInterval(timer)
      await running
    },
  }
}
