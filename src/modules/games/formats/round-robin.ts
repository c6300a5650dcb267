// Round robin through the format engine (engine.ts): every pair meets once.
// The schedule is made at the start by the circle method: n − 1 rounds for an
// even count, n rounds for an odd one (each round one player rests: the bye of
// round robin is a round without a match, no win). Every match is playable
// from the start (the rounds are the schedule, not a gate). A drawn match is a
// result. Standings are live: points (win 3, draw 1, loss 0), then the points
// among the players tied on points (head-to-head), then wins, then seed.
import {
  POINTS,
  Work,
  checkParticipants,
  emptyStep,
  newMatch,
  rowsInOrder,
  tally,
  type EngineMatch,
  type FormatContext,
  type FormatEngine,
  stepOf,
} from './engine'

/** The circle method: the first player stays, the others rotate one place a round. Pairs of seed indexes, by round. */
export function circleSchedule(n: number): [number, number][][] {
  const ring: (number | null)[] = Array.from({ length: n }, (_, i) => i)
  if (n % 2 === 1) ring.push(null)
  const m = ring.length
  const rounds: [number, number][][] = []
  for (let r = 0; r < m - 1; r++) {
    const pairs: [number, number][] = []
    for (let i = 0; i < m / 2; i++) {
      const a = ring[i]!
      const b = ring[m - 1 - i]!
      if (a === null || b === null) continue
      // The better seed in slot 1, except that the fixed player alternates sides.
      pairs.push(i === 0 && r % 2 === 1 ? [Math.max(a, b), Math.min(a, b)] : [Math.min(a, b), Math.max(a, b)])
    }
    rounds.push(pairs)
    // Rotate all but the first: the last comes to position 1.
    ring.splice(1, 0, ring.pop()!)
  }
  return rounds
}

export function checkResult(m: EngineMatch): void {
  if (m.status === 'decided' && m.outcome === 'DRAW' && m.winner !== null) throw new Error(`a drawn match has no winner (${m.key})`)
}

export function correctScored(work: Work, key: string, winner: string | null): EngineMatch {
  const m = work.get(key)
  if (m.status !== 'decided' || m.decidedBy === 'bye') throw new Error(`match ${key} is not a decided, played match`)
  if (winner !== null && winner !== m.slot1 && winner !== m.slot2) throw new Error(`${winner} does not play in ${key}`)
  Object.assign(m, { winner, outcome: winner === null ? 'DRAW' : 'WIN', decidedBy: 'played' })
  return m
}

/**
 * Orders `players` by points, then by the points earned in matches among
 * players with the same points (head-to-head), then wins, then seed.
 */
export function roundRobinOrder(ctx: FormatContext, matches: readonly EngineMatch[]): string[] {
  const t = tally(ctx.participants, matches, false)
  const seed = new Map(ctx.participants.map((p, i) => [p, i]))
  const points = (p: string) => t.get(p)!.wins * POINTS.win + t.get(p)!.draws * POINTS.draw
  const groups = new Map<number, string[]>()
  for (const p of ctx.participants) groups.set(points(p), [...(groups.get(points(p)) ?? []), p])
  const headToHead = new Map<string, number>()
  for (const group of groups.values()) {
    const inGroup = new Set(group)
    for (const m of matches) {
      if (m.status !== 'decided' || m.slot1 === null || m.slot2 === null) continue
      if (!inGroup.has(m.slot1) || !inGroup.has(m.slot2)) continue
      if (m.outcome === 'DRAW') {
        headToHead.set(m.slot1, (headToHead.get(m.slot1) ?? 0) + POINTS.draw)
        headToHead.set(m.slot2, (headToHead.get(m.slot2) ?? 0) + POINTS.draw)
      } else if (m.winner) headToHead.set(m.winner, (headToHead.get(m.winner) ?? 0) + POINTS.win)
    }
  }
  return [...ctx.participants].sort(
    (a, b) =>
      points(b) - points(a) ||
      (headToHead.get(b) ?? 0) - (headToHead.get(a) ?? 0) ||
      t.get(b)!.wins - t.get(a)!.wins ||
      seed.get(a)! - seed.get(b)!,
  )
}

/**
 * The largest round robin: every pair plays, so n players are n(n − 1)/2
 * matches, all stored at the start and read by every decision; 128 players
 * are 8,128 matches (a league, not an open event: Swiss is for those).
 */
export const MAX_PLAYERS = 128

/** It has no creation options of its own. */
const roundRobinOptions = {}

export const roundRobinEngine: FormatEngine<'round_robin', readonly ['round_robin'], typeof roundRobinOptions> = {
  name: 'round_robin',
  label: 'Round robin',
  brackets: ['round_robin'],
  plays: 'all-pairs',
  drawsAreResults: true,
  // Nothing follows a result but the finish: read everything once nothing is left.
  afterDecisionNeeds: 'all-decided',
  maxPlayers: {
    limit: MAX_PLAYERS,
    problem: `A round robin takes at most ${MAX_PLAYERS} players (every pair plays: ${(MAX_PLAYERS * (MAX_PLAYERS - 1)) / 2} matches)`,
  },
  options: roundRobinOptions,

  start(ctx) {
    checkParticipants(ctx)
    const work = new Work(ctx, [], () => {})
    circleSchedule(ctx.participants.length).forEach((pairs, r) =>
      pairs.forEach(([a, b], i) => work.create(newMatch('round_robin', r + 1, i + 1, ctx.participants[a]!, ctx.participants[b]!))),
    )
    return work.all()
  },

  afterDecision(ctx, matches, decidedKey) {
    // Nothing follows from a round-robin result but, at the end, the finish.
    const m = matches.find((x) => x.key === decidedKey)
    if (!m) throw new Error(`no match ${decidedKey}`)
    checkResult(m)
    return { ...emptyStep(), finished: roundRobinEngine.isFinished(ctx, matches) }
  },

  disqualify(ctx, matches, participantId) {
    return stepOf(roundRobinEngine, ctx, matches, () => {}, (work) => {
      work.forfeitAll(participantId)
    })
  },

  correct(ctx, matches, key, winner) {
    // Nothing is fed by a round-robin match: a correction is always in time.
    return stepOf(roundRobinEngine, ctx, matches, () => {}, (work) => {
      correctScored(work, key, winner)
    })
  },

  isFinished(_ctx, matches) {
    return matches.every((m) => m.status === 'decided')
  },

  standings(ctx, matches) {
    return rowsInOrder(roundRobinOrder(ctx, matches), tally(ctx.participants, matches, false))
  },
}
