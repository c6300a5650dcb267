// Drives a format engine (src/modules/games/formats/engine.ts) the way the
// services will: store a decision, ask what follows, apply the step; repeat
// until the tournament is finished. Used by the format tests, and reusable by
// an end-to-end test that plays the same scripts through HTTP.
import { applyStep, type EngineMatch, type FormatContext, type FormatEngine } from '../../src/modules/games/formats/engines'

/** A result: the winner's id, or null for a draw (round robin and Swiss only). */
export type Result = string | null

export interface Played {
  matches: EngineMatch[]
  /** Keys in the order they were decided by the driver (not byes or walkovers). */
  order: string[]
  /** How many decisions the driver made. */
  steps: number
}

/** Stores `result` on match `key` and applies what follows. */
export function decide(engine: FormatEngine, ctx: FormatContext, matches: readonly EngineMatch[], key: string, result: Result): { matches: EngineMatch[]; finished: boolean } {
  const decided = matches.map((m) =>
    m.key === key ? { ...m, status: 'decided' as const, winner: result, outcome: result === null ? ('DRAW' as const) : ('WIN' as const), decidedBy: 'played' as const } : m,
  )
  const step = engine.afterDecision(ctx, decided, key)
  return { matches: applyStep(decided, step), finished: step.finished }
}

/**
 * Plays a whole tournament: `pick` chooses which running match is decided
 * next (by index into the running list), `result` decides it. Fails if the
 * tournament stalls (nothing running, not finished) or runs away.
 */
export function playOut(
  engine: FormatEngine,
  ctx: FormatContext,
  pick: (running: EngineMatch[]) => number,
  result: (m: EngineMatch) => Result,
): Played {
  let matches = engine.start(ctx)
  const order: string[] = []
  let steps = 0
  while (!engine.isFinished(ctx, matches)) {
    const running = matches.filter((m) => m.status === 'running')
    if (running.length === 0) throw new Error(`${engine.name} of ${ctx.participants.length}: stalled with nothing running`)
    if (++steps > 10_000) throw new Error('runaway tournament')
    const m = running[pick(running)]!
    order.push(m.key)
    matches = decide(engine, ctx, matches, m.key, result(m)).matches
  }
  return { matches, order, steps }
}

/** Plays matches in a fixed script: each entry names a match by its two players and says who wins (or `draw`). */
export interface ScriptEntry {
  /** The two players, either order. */
  players: [string, string]
  /** The winner, or 'draw'. */
  result: string
}

/**
 * Plays `script` in order, each entry deciding the running match of those two
 * players; checks after the last one that the tournament is finished.
 */
export function playScript(engine: FormatEngine, ctx: FormatContext, script: readonly ScriptEntry[]): EngineMatch[] {
  let matches = engine.start(ctx)
  for (const [i, entry] of script.entries()) {
    const [a, b] = entry.players
    const m = matches.find((x) => x.status === 'running' && ((x.slot1 === a && x.slot2 === b) || (x.slot1 === b && x.slot2 === a)))
    if (!m) throw new Error(`script entry ${i}: no running match of ${a} and ${b}; running: ${matches.filter((x) => x.status === 'running').map((x) => `${x.key} ${x.slot1}-${x.slot2}`).join(', ')}`)
    matches = decide(engine, ctx, matches, m.key, entry.result === 'draw' ? null : entry.result).matches
  }
  if (!engine.isFinished(ctx, matches)) throw new Error(`script over, tournament not finished; running: ${matches.filter((x) => x.status === 'running').map((x) => `${x.key} ${x.slot1}-${x.slot2}`).join(', ')}`)
  return matches
}

/** Participants p1..pn (seed order). */
export function seeds(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `p${i + 1}`)
}
