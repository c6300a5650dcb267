// Glicko-2, exactly as Mark Glickman's "Example of the Glicko-2 system"
// (Boston University, November 30, 2013; glicko.net/glicko/glicko2.pdf)
// describes it: steps 1–8, the new volatility by the Illinois algorithm of
// step 5.1–5.5 with ε = 0.000001. Pure: no storage, no clock, no imports.
//
// Written here rather than taken from npm: the `glicko2` packages model a
// mutable ranking of players updated in shared rating periods, which we do not
// have (a match is its own period, ratings are values we store), and the
// algorithm is about a hundred lines.
//
// What must stay true:
// - the inputs are never mutated; every result is a fresh object;
// - a result's numbers are finite and its deviation is never above
//   MAX_DEVIATION (a deviation above it on input comes back capped);
// - rateMatch(a, b, s) is [x, y] exactly when rateMatch(b, a, 1 − s) is [y, x]
//   (each side is computed from the ratings both had before the match);
// - invalid numbers (non-finite, deviation, volatility or tau ≤ 0) throw a
//   plain Error: callers never pass them, so one is a bug to surface.

/** A player's rating on the Glicko scale (1500 / 350 / 0.06 to start). */
export interface Glicko {
  rating: number
  deviation: number
  volatility: number
}

export const INITIAL: Readonly<Glicko> = Object.freeze({ rating: 1500, deviation: 350, volatility: 0.06 })

export const MAX_DEVIATION = 350

/** 1 a win, 0.5 a draw, 0 a loss (for the player rated). */
export type Score = 0 | 0.5 | 1

export interface Game {
  opponent: Glicko
  score: Score
}

/** Glicko scale to Glicko-2 scale: μ = (r − 1500) / 173.7178, φ = RD / 173.7178 (step 2). */
const SCALE = 173.7178
const CENTRE = 1500
/** The convergence tolerance of step 5. */
const EPSILON = 0.000001
/** Step 5's loops end in a few dozen steps: this many is a bug, better an Error than a hung process. */
const MAX_ITERATIONS = 1000

function check(what: string, p: Glicko): void {
  if (!Number.isFinite(p.rating)) throw new Error(`glicko2: ${what} rating is not finite (${p.rating})`)
  if (!Number.isFinite(p.deviation) || p.deviation <= 0) {
    throw new Error(`glicko2: ${what} deviation must be finite and > 0 (${p.deviation})`)
  }
  if (!Number.isFinite(p.volatility) || p.volatility <= 0) {
    throw new Error(`glicko2: ${what} volatility must be finite and > 0 (${p.volatility})`)
  }
}

function checkTau(tau: number): void {
  if (!Number.isFinite(tau) || tau <= 0) throw new Error(`glicko2: tau must be finite and > 0 (${tau})`)
}

function checkScore(score: number): void {
  if (score !== 0 && score !== 0.5 && score !== 1) throw new Error(`glicko2: a score is 0, 0.5 or 1 (${score})`)
}

/** Step 3's g(φ). */
function g(phi: number): number {
  return 1 / Math.sqrt(1 + (3 * phi * phi) / (Math.PI * Math.PI))
}

/**
 * Step 3's E(μ, μj, φj), the expected score against opponent j, with its
 * complement 1 − E computed on its own for v: 1 − E of a heavy favourite would
 * round to 0 some 6,400 points apart, make v infinite and step 5 run on NaN.
 */
function expected(mu: number, muJ: number, gJ: number): { e: number; rest: number } {
  const x = gJ * (mu - muJ)
  return { e: 1 / (1 + Math.exp(-x)), rest: 1 / (1 + Math.exp(x)) }
}

/** Step 5: the new volatility σ′ by the Illinois algorithm. */
function newVolatility(phi: number, sigma: number, v: number, delta: number, tau: number): number {
  const a = Math.log(sigma * sigma)
  const phi2 = phi * phi
  const delta2 = delta * delta
  const tau2 = tau * tau
  // 5.1
  const f = (x: number): number => {
    const ex = Math.exp(x)
    const d = phi2 + v + ex
    return (ex * (delta2 - phi2 - v - ex)) / (2 * d * d) - (x - a) / tau2
  }
  // 5.2
  let A = a
  let B: number
  if (delta2 > phi2 + v) {
    B = Math.log(delta2 - phi2 - v)
  } else {
    let k = 1
    while (f(a - k * tau) < 0) {
      if (++k > MAX_ITERATIONS) throw new Error('glicko2: no lower bracket for the volatility')
    }
    B = a - k * tau
  }
  // 5.3
  let fA = f(A)
  let fB = f(B)
  // 5.4
  let iterations = 0
  while (Math.abs(B - A) > EPSILON) {
    if (++iterations > MAX_ITERATIONS) throw new Error('glicko2: the volatility iteration did not converge')
    const C = A + ((A - B) * fA) / (fB - fA)
    const fC = f(C)
    if (fC * fB <= 0) {
      A = B
      fA = fB
    } else {
      fA = fA / 2
    }
    B = C
    fB = fC
  }
  // 5.5
  return Math.exp(A / 2)
}

function finite(p: Glicko): Glicko {
  if (!Number.isFinite(p.rating) || !Number.isFinite(p.deviation) || !Number.isFinite(p.volatility)) {
    // Only ratings absurdly far apart (over 100,000 points: 1 − Ej underflows) get here.
    throw new Error(`glicko2: the result is not finite (${p.rating} / ${p.deviation} / ${p.volatility})`)
  }
  return p
}

/**
 * One rating period with these games (Glickman steps 1–8); tau the system
 * constant (0.2–1.2 typical, > 0). With no games, the deviation grows as for
 * one idle period. Deviation never above MAX_DEVIATION.
 */
export function ratePeriod(player: Glicko, games: readonly Game[], tau: number): Glicko {
  check('the player', player)
  checkTau(tau)
  for (const game of games) {
    check('an opponent', game.opponent)
    checkScore(game.score)
  }
  // Step 2.
  const mu = (player.rating - CENTRE) / SCALE
  const phi = player.deviation / SCALE
  const sigma = player.volatility
  if (games.length === 0) {
    // Step 6 without games: only the deviation grows; rating and volatility stay.
    return idle(player, 1)
  }
  // Steps 3 and 4: v, and the sum Σ g(φj)(sj − Ej) that both Δ and μ′ use.
  let information = 0
  let improvement = 0
  for (const { opponent, score } of games) {
    const gJ = g(opponent.deviation / SCALE)
    const { e, rest } = expected(mu, (opponent.rating - CENTRE) / SCALE, gJ)
    information += gJ * gJ * e * rest
    improvement += gJ * (score - e)
  }
  const v = 1 / information
  const delta = v * improvement
  // Step 5.
  const sigmaNew = newVolatility(phi, sigma, v, delta, tau)
  // Step 6.
  const phiStar = Math.sqrt(phi * phi + sigmaNew * sigmaNew)
  // Step 7.
  const phiNew = 1 / Math.sqrt(1 / (phiStar * phiStar) + 1 / v)
  // Step 7's μ′ = μ + φ′² Σ g(φj)(sj − Ej) and step 8's r′ = 173.7178 μ′ + 1500,
  // written as r′ = r + 173.7178 φ′² Σ…: the same number, but a period with no
  // surprise (Σ = 0) gives back r exactly rather than r after a round trip
  // through μ, and a win can never lower r by a rounding.
  return finite({
    rating: player.rating + SCALE * phiNew * phiNew * improvement,
    // The cap (ours, not the paper's) is on the deviation reported: the rating
    // above moved by the paper's φ′.
    deviation: Math.min(SCALE * phiNew, MAX_DEVIATION),
    volatility: sigmaNew,
  })
}

/**
 * One match as its own rating period for both players: [a', b'] from the
 * ratings both had before it. scoreA is a's score (b's is 1 − scoreA).
 */
export function rateMatch(a: Glicko, b: Glicko, scoreA: Score, tau: number): [Glicko, Glicko] {
  checkScore(scoreA)
  const scoreB = (1 - scoreA) as Score
  return [ratePeriod(a, [{ opponent: b, score: scoreA }], tau), ratePeriod(b, [{ opponent: a, score: scoreB }], tau)]
}

/**
 * `periods` (a whole number ≥ 0) rating periods without games:
 * φ' = sqrt(φ² + periods·σ²) on the Glicko-2 scale, capped at MAX_DEVIATION;
 * rating and volatility unchanged.
 */
export function idle(player: Glicko, periods: number): Glicko {
  check('the player', player)
  if (!Number.isSafeInteger(periods) || periods < 0) {
    throw new Error(`glicko2: idle periods must be a whole number >= 0 (${periods})`)
  }
  // The same formula with both sides times 173.7178, so that no periods give
  // back the deviation itself (sqrt(d²) is d exactly; d / 173.7178 · 173.7178 need not be).
  const d = player.deviation
  const s = SCALE * player.volatility
  return {
    rating: player.rating,
    deviation: Math.min(Math.sqrt(d * d + periods * s * s), MAX_DEVIATION),
    volatility: player.volatility,
  }
}

/** The conservative display rating: rating − 2 × deviation. */
export function displayOf(player: Glicko): number {
  return player.rating - 2 * player.deviation
}
