// TRANSITIONAL (removed once every module appends through tx.events): pokes
// from the synchronous appendEvent reach every process-wide wake-up set.
import type { EventWakeups } from './wakeups'

const registered = new Set<EventWakeups>()

export function registerWakeups(wakeups: EventWakeups): void {
  registered.add(wakeups)
}

/** Called by appendEvent. setTimeout(0) runs after the synchronous transaction has ended. */
export function pokeUser(userId: string | null): void {
  if (!userId) return
  setTimeout(() => {
    for (const wakeups of registered) wakeups.wake(userId)
  }, 0)
}
