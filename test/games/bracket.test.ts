// Invariant: planSingleElimination(n) yields a power-of-two bracket in which every
// seed 1..n appears exactly once in round 1, byes go to the top size - n seeds, no
// round-1 match is empty on both sides, every winner has exactly one place to go,
// every later match is fed by exactly two matches (slots 1 and 2), and the top 2^k
// seeds cannot meet before the round in which 2^k participants remain.
import { describe, expect, test } from 'bun:test'
import {
  MAX_PARTICIPANTS,
  MIN_PARTICIPANTS,
  planSingleElimination,
  type BracketPlan,
  type PlannedMatch,
} from '../../src/modules/games/bracket'

const key = (round: number, position: number) => `${round}:${position}`

function roundOne(plan: BracketPlan): PlannedMatch[] {
  return plan.matches.filter((m) => m.round === 1)
}

function matchCountsPerRound(plan: BracketPlan): number[] {
  const counts: number[] = []
  for (let round = 1; round <= plan.rounds; round++) {
    counts.push(plan.matches.filter((m) => m.round === round).length)
  }
  return counts
}

/** Seeds that get a bye, ascending. */
function byeSeeds(plan: BracketPlan): number[] {
  return roundOne(plan)
    .filter((m) => m.bye)
    .map((m) => m.slot1Seed ?? m.slot2Seed)
    .filter((seed): seed is number => seed !== null)
    .sort((a, b) => a - b)
}

function pairing(plan: BracketPlan): Array<[number | null, number | null]> {
  return roundOne(plan).map((m) => [m.slot1Seed, m.slot2Seed])
}

/** Checks next pointers and feeders; returns nothing, fails via expect. */
function expectWellWired(plan: BracketPlan): void {
  const byKey = new Map(plan.matches.map((m) => [key(m.round, m.position), m]))
  expect(byKey.size).toBe(plan.matches.length)

  const feeders = new Map<string, Array<1 | 2>>()
  for (const m of plan.matches) {
    if (m.round === plan.rounds) {
      expect(m.next).toBeNull()
      continue
    }
    expect(m.next).not.toBeNull()
    if (m.next === null) continue
    expect(m.next.round).toBe(m.round + 1)
    const target = key(m.next.round, m.next.position)
    expect(byKey.has(target)).toBe(true)
    feeders.set(target, [...(feeders.get(target) ?? []), m.next.slot])
  }

  for (const m of plan.matches) {
    const slots = feeders.get(key(m.round, m.position)) ?? []
    if (m.round === 1) {
      expect(slots).toEqual([])
    } else {
      expect([...slots].sort()).toEqual([1, 2])
    }
  }
}

/**
 * For each seed, the keys of the matches it passes through on its way to the
 * final, found by walking the plan's own next pointers. Two seeds can first meet
 * in the round where their paths first share a match.
 */
function seedPaths(plan: BracketPlan): Map<number, string[]> {
  const byKey = new Map(plan.matches.map((m) => [key(m.round, m.position), m]))
  const paths = new Map<number, string[]>()
  for (const first of roundOne(plan)) {
    const path: string[] = []
    let m: PlannedMatch | undefined = first
    while (m !== undefined) {
      path.push(key(m.round, m.position))
      m = m.next === null ? undefined : byKey.get(key(m.next.round, m.next.position))
    }
    if (path.length !== plan.rounds) throw new Error(`path from ${key(first.round, first.position)} does not reach the final`)
    for (const seed of [first.slot1Seed, first.slot2Seed]) {
      if (seed !== null) paths.set(seed, path)
    }
  }
  return paths
}

function meetingRound(paths: Map<number, string[]>, a: number, b: number): number {
  const pa = paths.get(a)
  const pb = paths.get(b)
  if (pa === undefined || pb === undefined) throw new Error(`seed ${a} or ${b} not in round 1`)
  const index = pa.findIndex((k, i) => pb[i] === k)
  if (index === -1) throw new Error(`seeds ${a} and ${b} never meet`)
  return index + 1
}

interface Row {
  n: number
  size: number
  rounds: number
  perRound: number[]
  byes: number[]
  round1?: Array<[number | null, number | null]>
}

const rows: Row[] = [
  { n: 2, size: 2, rounds: 1, perRound: [1], byes: [], round1: [[1, 2]] },
  { n: 3, size: 4, rounds: 2, perRound: [2, 1], byes: [1], round1: [[1, null], [2, 3]] },
  {
    n: 5,
    size: 8,
    rounds: 3,
    perRound: [4, 2, 1],
    byes: [1, 2, 3],
    round1: [[1, null], [4, 5], [2, null], [3, null]],
  },
  {
    n: 8,
    size: 8,
    rounds: 3,
    perRound: [4, 2, 1],
    byes: [],
    round1: [[1, 8], [4, 5], [2, 7], [3, 6]],
  },
  { n: 13, size: 16, rounds: 4, perRound: [8, 4, 2, 1], byes: [1, 2, 3] },
  { n: 64, size: 64, rounds: 6, perRound: [32, 16, 8, 4, 2, 1], byes: [] },
]

describe('planSingleElimination: table', () => {
  for (const row of rows) {
    describe(`${row.n} participants`, () => {
      const plan = planSingleElimination(row.n)

      test('size, rounds and matches per round', () => {
        expect(plan.size).toBe(row.size)
        expect(plan.rounds).toBe(row.rounds)
        expect(matchCountsPerRound(plan)).toEqual(row.perRound)
        expect(plan.matches.length).toBe(row.size - 1)
      })

      test('matches are listed round by round, position ascending', () => {
        const expected = row.perRound.flatMap((count, i) =>
          Array.from({ length: count }, (_, p) => key(i + 1, p + 1)),
        )
        expect(plan.matches.map((m) => key(m.round, m.position))).toEqual(expected)
      })

      test('byes go to the expected seeds', () => {
        expect(byeSeeds(plan)).toEqual(row.byes)
      })

      if (row.round1 !== undefined) {
        const round1 = row.round1
        test('exact round-1 pairing', () => {
          expect(pairing(plan)).toEqual(round1)
        })
      }

      test('only round 1 carries seeds or byes', () => {
        for (const m of plan.matches.filter((x) => x.round > 1)) {
          expect(m).toMatchObject({ slot1Seed: null, slot2Seed: null, bye: false })
        }
      })

      test('every non-final match feeds an existing match; later matches have feeders in slots 1 and 2', () => {
        expectWellWired(plan)
      })
    })
  }

  test('winner of round r position p goes to round r+1 position ceil(p/2), slot 1 if p is odd', () => {
    const plan = planSingleElimination(8)
    const nexts = plan.matches.map((m) => [key(m.round, m.position), m.next])
    expect(nexts).toEqual([
      ['1:1', { round: 2, position: 1, slot: 1 }],
      ['1:2', { round: 2, position: 1, slot: 2 }],
      ['1:3', { round: 2, position: 2, slot: 1 }],
      ['1:4', { round: 2, position: 2, slot: 2 }],
      ['2:1', { round: 3, position: 1, slot: 1 }],
      ['2:2', { round: 3, position: 1, slot: 2 }],
      ['3:1', null],
    ])
  })

  test('1024 participants: full bracket of 10 rounds, no byes, one final', () => {
    const plan = planSingleElimination(1024)
    expect(plan.size).toBe(1024)
    expect(plan.rounds).toBe(10)
    expect(plan.matches.length).toBe(1023)
    expect(matchCountsPerRound(plan)).toEqual([512, 256, 128, 64, 32, 16, 8, 4, 2, 1])
    expect(byeSeeds(plan)).toEqual([])
    expect(plan.matches.filter((m) => m.next === null)).toEqual([
      { round: 10, position: 1, slot1Seed: null, slot2Seed: null, next: null, bye: false },
    ])
    expectWellWired(plan)
  })
})

describe('planSingleElimination: invalid counts', () => {
  const invalid = [0, 1, 1025, 2.5, -2, Number.NaN, Number.POSITIVE_INFINITY]
  for (const n of invalid) {
    test(`${n} throws a RangeError`, () => {
      expect(() => planSingleElimination(n)).toThrow(RangeError)
    })
  }

  test('the bounds are 2 and 1024, and the bounds themselves are accepted', () => {
    expect([MIN_PARTICIPANTS, MAX_PARTICIPANTS]).toEqual([2, 1024])
    expect(planSingleElimination(2).size).toBe(2)
    expect(planSingleElimination(1024).size).toBe(1024)
  })
})

describe('planSingleElimination: every count from 2 to 1024', () => {
  test('byes = size - n, no double-empty match, seeds 1..n once each, byes to the top seeds', () => {
    for (let n = MIN_PARTICIPANTS; n <= MAX_PARTICIPANTS; n++) {
      const plan = planSingleElimination(n)
      const first = roundOne(plan)

      expect(plan.size).toBeGreaterThanOrEqual(n)
      expect(plan.size / 2).toBeLessThan(n)
      expect(2 ** plan.rounds).toBe(plan.size)
      expect(first.length).toBe(plan.size / 2)

      const byes = first.filter((m) => m.bye)
      expect(byes.length).toBe(plan.size - n)
      expect(first.filter((m) => m.slot1Seed === null && m.slot2Seed === null)).toEqual([])
      // bye must mean exactly one participant, and no match with one participant may be unmarked
      for (const m of first) {
        expect(m.bye).toBe((m.slot1Seed === null) !== (m.slot2Seed === null))
      }

      const seeds = first
        .flatMap((m) => [m.slot1Seed, m.slot2Seed])
        .filter((s): s is number => s !== null)
        .sort((a, b) => a - b)
      expect(seeds).toEqual(Array.from({ length: n }, (_, i) => i + 1))

      expect(byeSeeds(plan)).toEqual(Array.from({ length: plan.size - n }, (_, i) => i + 1))
    }
  })

  test('the top 2^k seeds cannot meet before the round with 2^k participants left', () => {
    // One full bracket per size is enough: seeding depends only on size, byes only remove seeds.
    for (let size = 2; size <= MAX_PARTICIPANTS; size *= 2) {
      const plan = planSingleElimination(size)
      const paths = seedPaths(plan)
      for (let b = 2; b <= size; b++) {
        const earliest = plan.rounds - Math.ceil(Math.log2(b)) + 1
        for (let a = 1; a < b; a++) {
          const round = meetingRound(paths, a, b)
          if (round < earliest) {
            throw new Error(`size ${size}: seeds ${a} and ${b} meet in round ${round}, expected >= ${earliest}`)
          }
        }
      }
      if (size >= 4) {
        expect(meetingRound(paths, 1, 2)).toBe(plan.rounds)
        expect(meetingRound(paths, 1, 4)).toBe(plan.rounds - 1)
      }
    }
  })
})
