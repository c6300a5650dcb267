// Time comes from a Clock so tests can move it; services never call Date.now() themselves.

export interface Clock {
  now(): Date
}

export const systemClock: Clock = { now: () => new Date() }

/** A clock that only moves when told to, for tests of expiry and lockout. */
export class ManualClock implements Clock {
  #ms: number
  constructor(start: Date | string = '2026-01-01T00:00:00.000Z') {
    this.#ms = new Date(start).getTime()
  }
  now(): Date {
    return new Date(this.#ms)
  }
  advance(ms: number): void {
    this.#ms += ms
  }
  set(at: Date | string): void {
    this.#ms = new Date(at).getTime()
  }
}

/** ISO-8601 UTC with milliseconds, the only timestamp form on the wire (contract §0). */
export function toIso(date: Date | number): string {
  return new Date(date).toISOString()
}
