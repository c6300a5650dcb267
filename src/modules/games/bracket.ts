/**
 * Single-elimination bracket planner. Pure: it only decides the shape of the
 * bracket (who meets whom in round 1, where each winner goes next); storing
 * matches and resolving byes is the caller's job.
 *
 * Invariants every plan keeps:
 * - size is the smallest power of two >= the participant count, rounds = log2(size).
 * - Standard seeding: the top 2^k seeds sit in different sub-brackets, so they
 *   cannot meet before the round in which 2^k participants remain (1 and 2 only
 *   in the final, 1-4 no earlier than the semi-finals, and so on).
 * - Absent seeds (> participant count) are always paired with the top seeds, so
 *   byes go to seeds 1..size-count and no round-1 match is empty on both sides.
 */

export interface PlannedMatch {
  round: number            // 1 = first round, rounds = final
  position: number         // 1-based position within its round, top to bottom
  /** Seeds (1-based indexes into the seeded participant list) in the two slots. Only round 1 has seeds; later rounds are null until winners arrive. A round-1 slot whose seed does not exist (a bye) is null. */
  slot1Seed: number | null
  slot2Seed: number | null
  /** Where the winner goes; null for the final. */
  next: { round: number; position: number; slot: 1 | 2 } | null
  /** True for a round-1 match that has exactly one participant: resolved at tournament start. */
  bye: boolean
}

export interface BracketPlan { size: number; rounds: number; matches: PlannedMatch[] }

export const MIN_PARTICIPANTS = 2
export const MAX_PARTICIPANTS = 1024

/**
 * Seeds in bracket order for a bracket of `count` slots (a power of two), built
 * by repeatedly splitting every seed s into the pair (s, doubled + 1 - s). Each
 * pair sums to the same total, which is what keeps the top seeds apart.
 */
function seedOrder(count: number): number[] {
  let order = [1]
  while (order.length < count) {
    const doubled = order.length * 2
    order = order.flatMap((seed) => [seed, doubled + 1 - seed])
  }
  return order
}

export function planSingleElimination(participantCount: number): BracketPlan {
  if (
    !Number.isInteger(participantCount) ||
    participantCount < MIN_PARTICIPANTS ||
    participantCount > MAX_PARTICIPANTS
  ) {
    throw new RangeError(
      `participantCount must be an integer from ${MIN_PARTICIPANTS} to ${MAX_PARTICIPANTS}, got ${participantCount}`,
    )
  }

  let size = 1
  let rounds = 0
  while (size < participantCount) {
    size *= 2
    rounds += 1
  }

  // Round-1 pairs are the last split of the seed order: seed s meets size + 1 - s.
  // Because participantCount > size / 2, an absent seed's partner is always a
  // present top seed, which is why a double-empty match cannot happen.
  const firstRoundPairs = seedOrder(size / 2).map((seed) => [seed, size + 1 - seed] as const)
  const present = (seed: number): number | null => (seed <= participantCount ? seed : null)

  const matches: PlannedMatch[] = []
  for (let round = 1; round <= rounds; round++) {
    const matchCount = size / 2 ** round
    for (let position = 1; position <= matchCount; position++) {
      const next: PlannedMatch['next'] =
        round === rounds
          ? null
          : { round: round + 1, position: Math.ceil(position / 2), slot: position % 2 === 1 ? 1 : 2 }

      if (round === 1) {
        const pair = firstRoundPairs[position - 1]
        if (pair === undefined) throw new Error(`no round-1 pair at position ${position}`)
        const slot1Seed = present(pair[0])
        const slot2Seed = present(pair[1])
        matches.push({ round, position, slot1Seed, slot2Seed, next, bye: (slot1Seed === null) !== (slot2Seed === null) })
      } else {
        matches.push({ round, position, slot1Seed: null, slot2Seed: null, next, bye: false })
      }
    }
  }

  return { size, rounds, matches }
}
