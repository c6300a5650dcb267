// Three whole tournaments with a fixed outcome script and the final standings
// worked out by hand (issue 19's end-to-end example): double elimination of
// 13, round robin of 6, Swiss of 16. Players are p1..pn in seed order. A test
// through HTTP can replay a script (each entry: the match of these two
// players that is open now, and its result) and compare the table.
import type { StandingRow } from '../../src/modules/games/formats/engines'
import type { ScriptEntry } from './formats'

/** A row of the final table: the engine's (and the tournament object's) standing, players named p1..pn. */
export type ExpectedRow = StandingRow

export interface FormatExample {
  format: 'double_elimination' | 'round_robin' | 'swiss'
  players: number
  options: { grandFinal?: 'simple' | 'reset'; rounds?: number }
  script: ScriptEntry[]
  standings: ExpectedRow[]
}

const e = (a: string, b: string, result: string): ScriptEntry => ({ players: [a, b], result })
const row = (rank: number, participantId: string, wins: number, draws: number, losses: number): ExpectedRow => ({
  participantId,
  rank,
  wins,
  draws,
  losses,
  points: 3 * wins + draws,
})

/**
 * Double elimination of 13 (grand final with reset). Winners round 1: byes
 * to p1 p2 p3; the losers bracket (see double-elimination.ts):
 * L1 p8-p13; L2 p5-p6, p10-p2, p11-p12, p8-p9; L3 p6-p2, p11-p9; L4 p2-p4,
 * p9-p7; L5 p4-p7; L6 p4-p1. Standings: the champion, the grand-final loser,
 * then by the losers round each went out in (later first), then seed. Byes
 * are no wins.
 */
export const doubleElimination13: FormatExample = {
  format: 'double_elimination',
  players: 13,
  options: { grandFinal: 'reset' },
  script: [
    // Winners round 1
    e('p8', 'p9', 'p9'),
    e('p4', 'p13', 'p4'),
    e('p5', 'p12', 'p12'),
    e('p7', 'p10', 'p7'),
    e('p6', 'p11', 'p6'),
    // Winners round 2
    e('p1', 'p9', 'p1'),
    e('p4', 'p12', 'p4'),
    e('p2', 'p7', 'p7'),
    e('p3', 'p6', 'p3'),
    // Losers round 1 (the losers of p8-p9 and p4-p13)
    e('p8', 'p13', 'p8'),
    // Losers round 2: round-1 losers against round-2 losers
    e('p5', 'p6', 'p6'),
    e('p10', 'p2', 'p2'),
    e('p11', 'p12', 'p11'),
    e('p8', 'p9', 'p9'),
    // Winners semi-finals
    e('p1', 'p4', 'p1'),
    e('p7', 'p3', 'p3'),
    // Losers rounds 3, 4, 5
    e('p6', 'p2', 'p2'),
    e('p11', 'p9', 'p9'),
    e('p2', 'p4', 'p4'),
    e('p9', 'p7', 'p7'),
    e('p4', 'p7', 'p4'),
    // Winners final, losers final, grand final and its reset
    e('p1', 'p3', 'p3'),
    e('p4', 'p1', 'p1'),
    e('p3', 'p1', 'p1'),
    e('p3', 'p1', 'p3'),
  ],
  standings: [
    row(1, 'p3', 4, 0, 1), // champion: beat p6 p7 p1, lost grand final 1, won the reset
    row(2, 'p1', 4, 0, 2), // lost the winners final and the reset
    row(3, 'p4', 4, 0, 2), // out in losers round 6
    row(4, 'p7', 3, 0, 2), // losers round 5
    row(5, 'p2', 2, 0, 2), // losers round 4, seed 2
    row(6, 'p9', 3, 0, 2), // losers round 4, seed 9
    row(7, 'p6', 2, 0, 2), // losers round 3
    row(8, 'p11', 1, 0, 2),
    row(9, 'p5', 0, 0, 2), // losers round 2, by seed: p5 p8 p10 p12
    row(10, 'p8', 1, 0, 2),
    row(11, 'p10', 0, 0, 2),
    row(12, 'p12', 1, 0, 2),
    row(13, 'p13', 0, 0, 2), // losers round 1
  ],
}

/**
 * Round robin of 6 (circle schedule: see round-robin.ts). Points 3/1/0; p5
 * and p1 tie on 10 and p5 beat p1 (head-to-head), so p5 ranks above the
 * better seed.
 */
export const roundRobin6: FormatExample = {
  format: 'round_robin',
  players: 6,
  options: {},
  script: [
    e('p1', 'p6', 'p1'),
    e('p2', 'p5', 'p5'),
    e('p3', 'p4', 'p4'),
    e('p5', 'p1', 'p5'),
    e('p4', 'p6', 'p4'),
    e('p2', 'p3', 'p2'),
    e('p1', 'p4', 'p1'),
    e('p3', 'p5', 'draw'),
    e('p2', 'p6', 'p2'),
    e('p3', 'p1', 'p1'),
    e('p2', 'p4', 'p4'),
    e('p5', 'p6', 'p5'),
    e('p1', 'p2', 'draw'),
    e('p3', 'p6', 'p6'),
    e('p4', 'p5', 'p4'),
  ],
  standings: [
    row(1, 'p4', 4, 0, 1), // 12
    row(2, 'p5', 3, 1, 1), // 10, beat p1
    row(3, 'p1', 3, 1, 1), // 10
    row(4, 'p2', 2, 1, 2), // 7
    row(5, 'p6', 1, 0, 4), // 3
    row(6, 'p3', 0, 1, 4), // 1
  ],
}

/**
 * Swiss of 16, 4 rounds (the default ⌈log2 16⌉). Pairings worked out by hand
 * from the rule in swiss.ts (by points then seed; each from the top meets the
 * next player not met yet):
 * R1 1-9 2-10 3-11 4-12 5-13 6-14 7-15 8-16;
 * R2 1-2 3-4 5-6 7-16 8-15 9-10 11-12 13-14;
 * R3 1-4 5-16 2-3 6-9 12-13 10-15 7-8 11-14 (p15 has met p7 and p8);
 * R4 1-16 2-4 5-9 12-15 7-13 3-6 8-14 10-11.
 * Standings: points, then Buchholz (opponents' final points), then seed.
 */
export const swiss16: FormatExample = {
  format: 'swiss',
  players: 16,
  options: {},
  script: [
    e('p1', 'p9', 'p1'),
    e('p2', 'p10', 'p2'),
    e('p3', 'p11', 'p3'),
    e('p4', 'p12', 'p4'),
    e('p5', 'p13', 'p5'),
    e('p6', 'p14', 'p6'),
    e('p7', 'p15', 'draw'),
    e('p8', 'p16', 'p16'),

    e('p1', 'p2', 'p1'),
    e('p3', 'p4', 'p4'),
    e('p5', 'p6', 'p5'),
    e('p7', 'p16', 'p16'),
    e('p8', 'p15', 'draw'),
    e('p9', 'p10', 'p9'),
    e('p11', 'p12', 'p12'),
    e('p13', 'p14', 'p13'),

    e('p1', 'p4', 'p1'),
    e('p5', 'p16', 'p16'),
    e('p2', 'p3', 'p2'),
    e('p6', 'p9', 'p9'),
    e('p12', 'p13', 'draw'),
    e('p10', 'p15', 'p15'),
    e('p7', 'p8', 'p7'),
    e('p11', 'p14', 'p14'),

    e('p1', 'p16', 'p16'),
    e('p2', 'p4', 'p2'),
    e('p5', 'p9', 'p5'),
    e('p12', 'p15', 'draw'),
    e('p7', 'p13', 'p7'),
    e('p3', 'p6', 'p3'),
    e('p8', 'p14', 'p8'),
    e('p10', 'p11', 'p10'),
  ],
  standings: [
    row(1, 'p16', 4, 0, 0), // 12 points, Buchholz 29
    row(2, 'p1', 3, 0, 1), // 9, Buchholz 33
    row(3, 'p5', 3, 0, 1), // 9, 25
    row(4, 'p2', 3, 0, 1), // 9, 24
    row(5, 'p7', 2, 1, 1), // 7
    row(6, 'p4', 2, 0, 2), // 6, 29
    row(7, 'p9', 2, 0, 2), // 6, 24
    row(8, 'p15', 1, 3, 0), // 6, 19
    row(9, 'p3', 2, 0, 2), // 6, 18
    row(10, 'p12', 1, 2, 1), // 5
    row(11, 'p8', 1, 1, 2), // 4, 28
    row(12, 'p13', 1, 1, 2), // 4, 24
    row(13, 'p6', 1, 0, 3), // 3, 24
    row(14, 'p10', 1, 0, 3), // 3, 21
    row(15, 'p14', 1, 0, 3), // 3, 11
    row(16, 'p11', 0, 0, 4), // 0
  ],
}

/** The Swiss example's pairings by round, as worked out above (slot 1 the better seed). */
export const swiss16Pairings: string[][] = [
  ['p1-p9', 'p2-p10', 'p3-p11', 'p4-p12', 'p5-p13', 'p6-p14', 'p7-p15', 'p8-p16'],
  ['p1-p2', 'p3-p4', 'p5-p6', 'p7-p16', 'p8-p15', 'p9-p10', 'p11-p12', 'p13-p14'],
  ['p1-p4', 'p5-p16', 'p2-p3', 'p6-p9', 'p12-p13', 'p10-p15', 'p7-p8', 'p11-p14'],
  ['p1-p16', 'p2-p4', 'p5-p9', 'p12-p15', 'p7-p13', 'p3-p6', 'p8-p14', 'p10-p11'],
]

export const formatExamples = [doubleElimination13, roundRobin6, swiss16] as const
