// A stored rating as players see it (contract §15): inactivity applied on
// read (each whole `inactivityPeriodS` since it last counted grows the
// deviation by Glicko-2's step for a period without games, capped at 350),
// the conservative `display`, `provisional` under 10 rated matches this
// season; and where the row sits on the leaderboard. Pure.
import { displayOf, idle, INITIAL, MAX_DEVIATION, type Glicko } from './glicko2'
import type { RatingView } from './model'
import type { RatingConfig, RatingRecord } from './store'

export type { RatingView }

/** Fewer rated matches than this in the season: provisional. */
export const PROVISIONAL_UNDER = 10

/** Whole inactivity periods from `since` to `now`. */
export function idlePeriods(since: Date, periodS: number, now: Date): number {
  const elapsed = now.getTime() - since.getTime()
  return elapsed <= 0 ? 0 : Math.floor(elapsed / (periodS * 1000))
}

export function storedGlicko(record: Pick<RatingRecord, 'rating' | 'deviation' | 'volatility'>): Glicko {
  return { rating: record.rating, deviation: record.deviation, volatility: record.volatility }
}

/** The rating as of `now`: the stored one, with the deviation grown for each whole idle period. */
export function effectiveGlicko(record: Pick<RatingRecord, 'rating' | 'deviation' | 'volatility' | 'lastRatedAt'>, config: RatingConfig, now: Date): Glicko {
  return idle(storedGlicko(record), idlePeriods(record.lastRatedAt, config.inactivityPeriodS, now))
}

const round = (value: number, digits: number) => Number(value.toFixed(digits))

/** The API's view of `glicko` with `matches` this season: rating, deviation and display to 2 decimals, volatility to 6. */
export function viewOf(glicko: Glicko, matches: number): RatingView {
  return {
    rating: round(glicko.rating, 2),
    deviation: round(glicko.deviation, 2),
    volatility: round(glicko.volatility, 6),
    display: round(displayOf(glicko), 2),
    provisional: matches < PROVISIONAL_UNDER,
    matches,
  }
}

/** A player never rated in the game. */
export function unratedView(): RatingView {
  return viewOf(INITIAL, 0)
}

/**
 * Where a row sits on the leaderboard at `now`: its display with the idle
 * periods so far applied, and when the next period ends (null once the
 * deviation is at its cap: nothing more changes). The sweep moves it then.
 */
export function boardPlace(record: Pick<RatingRecord, 'rating' | 'deviation' | 'volatility' | 'lastRatedAt'>, config: RatingConfig, now: Date): { boardDisplay: number; boardDecayAt: Date | null } {
  const periods = idlePeriods(record.lastRatedAt, config.inactivityPeriodS, now)
  const current = idle(storedGlicko(record), periods)
  const capped = current.deviation >= MAX_DEVIATION
  return {
    boardDisplay: displayOf(current),
    boardDecayAt: capped ? null : new Date(record.lastRatedAt.getTime() + (periods + 1) * config.inactivityPeriodS * 1000),
  }
}

/** A player's row before their first rated match in the game (seq 0: no history yet). */
export function INITIAL_ROW(now: Date): Omit<RatingRecord, 'gameId' | 'userId' | 'seasonId'> {
  return {
    ...INITIAL,
    matches: 0,
    seq: 0,
    lastRatedAt: now,
    boardDisplay: displayOf(INITIAL),
    boardDecayAt: null,
    historyId: null,
    updatedAt: now,
  }
}
