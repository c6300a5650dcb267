// Swiss through the format engine: round 1 top half against bottom half, later
// rounds by points then seed without rematches, a bye (a win) for an odd count
// to the lowest-placed player without one, draws as results, standings by
// points, Buchholz, seed.
import { describe, expect, test } from 'bun:test'
import { buchholzOf } from '../../../src/modules/games/formats/swiss'
import { CorrectionTooLate, applyStep, engineOf, type EngineMatch, type FormatContext } from '../../../src/modules/games/formats/engines'
import { decide, playOut, playScript, seeds } from '../../helpers/formats'
import { seededRandom } from '../../helpers/seed'

const swiss = engineOf('swiss')
const ctxOf = (n: number, rounds?: number): FormatContext => ({ participants: seeds(n), options: rounds === undefined ? {} : { rounds } })
const pairs = (ms: EngineMatch[], round: number) =>
  ms.filter((m) => m.round === round).map((m) => `${m.slot1}-${m.slot2 ?? 'bye'}${m.status === 'decided' ? ' ' + m.decidedBy : ''}`)

describe('swiss engine: pairing', () => {
  test('4 players, 2 rounds: 1v3 2v4, then the winners meet and the losers meet', () => {
    const ctx = ctxOf(4)
    let ms = swiss.start(ctx)
    expect(pairs(ms, 1)).toEqual(['p1-p3', 'p2-p4'])
    ms = decide(swiss, ctx, ms, 'swiss:1:1', 'p1').matches
    expect(ms.some((m) => m.round === 2)).toBe(false) // paired only once round 1 is complete
    const last = decide(swiss, ctx, ms, 'swiss:1:2', 'p4')
    expect(pairs(last.matches, 2)).toEqual(['p1-p4', 'p2-p3'])
    expect(last.finished).toBe(false)
  })

  test('7 players, 3 rounds: round 1 1v4 2v5 3v6 and a bye to 7; byes go to the lowest-placed without one', () => {
    const ctx = ctxOf(7)
    let ms = swiss.start(ctx)
    expect(pairs(ms, 1)).toEqual(['p1-p4', 'p2-p5', 'p3-p6', 'p7-bye bye'])
    for (const [key, w] of [['swiss:1:1', 'p1'], ['swiss:1:2', 'p2'], ['swiss:1:3', 'p3']] as const) ms = decide(swiss, ctx, ms, key, w).matches
    // Points: p1 p2 p3 p7 3, p4 p5 p6 0. Order p1 p2 p3 p7 p4 p5 p6: p6 is lowest and has no bye.
    expect(pairs(ms, 2)).toEqual(['p1-p2', 'p3-p7', 'p4-p5', 'p6-bye bye'])
    for (const [key, w] of [['swiss:2:1', 'p1'], ['swiss:2:2', 'p7'], ['swiss:2:3', 'p5']] as const) ms = decide(swiss, ctx, ms, key, w).matches
    // Points: p1 6, p7 6, p2 3, p3 3, p5 3, p6 3, p4 0: p4 gets the bye. p1-p7, p2-p3, p5-p6.
    expect(pairs(ms, 3)).toEqual(['p1-p7', 'p2-p3', 'p5-p6', 'p4-bye bye'])
  })

  test('a rematch the top-down pairing would make is avoided by the search', () => {
    // 4 players, 3 rounds: round 1 p1-p3 p2-p4; round 2 p1-p2 p3-p4 (winners p1, p2 then p1, p3).
    const ctx = ctxOf(4, 3)
    const ms = playScript(swiss, ctx, [
      { players: ['p1', 'p3'], result: 'p1' },
      { players: ['p2', 'p4'], result: 'p2' },
      { players: ['p1', 'p2'], result: 'p1' },
      { players: ['p3', 'p4'], result: 'p3' },
      // Order p1 6, p2 3, p3 3, p4 0: top-down would be p1-p2 (met); the search gives p1-p4, p2-p3.
      { players: ['p1', 'p4'], result: 'p4' },
      { players: ['p2', 'p3'], result: 'draw' },
    ])
    expect(pairs(ms, 3)).toEqual(['p1-p4 played', 'p2-p3 played'])
    // Points: p1 W W L 6, p2 W L D 4, p3 L W D 4, p4 L L W 3. Buchholz: p1 4+4+3, p2 3+6+4, p3 6+3+4, p4 4+4+6.
    // p2 and p3 tie on points and Buchholz: seed.
    expect(swiss.standings(ctx, ms).map((r) => [r.participantId, r.rank, r.points, buchholzOf(ctx, ms).get(r.participantId)])).toEqual([
      ['p1', 1, 6, 11],
      ['p2', 2, 4, 13],
      ['p3', 3, 4, 13],
      ['p4', 4, 3, 14],
    ])
  })

  test('rounds must be 1..n − 1', () => {
    expect(() => swiss.start(ctxOf(4, 4))).toThrow(RangeError)
    expect(() => swiss.start(ctxOf(4, 0))).toThrow(RangeError)
    expect(swiss.start(ctxOf(2)).length).toBe(1)
  })
})

describe('swiss engine: disqualification and correction', () => {
  test('a disqualified player forfeits the current match and is not paired again', () => {
    const base = ctxOf(4)
    const ctx = { ...base, disqualified: ['p3'] }
    let ms = swiss.start(base)
    ms = decide(swiss, base, ms, 'swiss:1:2', 'p2').matches
    const step = swiss.disqualify(ctx, ms, 'p3')
    expect(step.decided).toEqual([{ key: 'swiss:1:1', winner: 'p1', decidedBy: 'walkover' }])
    ms = applyStep(ms, step)
    // Three left: p1 p2 3 points, p4 0: p4 has the bye, p1-p2.
    expect(pairs(ms, 2)).toEqual(['p1-p2', 'p4-bye bye'])
  })

  test('a correction re-pairs the next round while none of it is played; too late after', () => {
    const ctx = ctxOf(4)
    let ms = swiss.start(ctx)
    ms = decide(swiss, ctx, ms, 'swiss:1:1', 'p1').matches
    ms = decide(swiss, ctx, ms, 'swiss:1:2', 'p2').matches
    expect(pairs(ms, 2)).toEqual(['p1-p2', 'p3-p4'])
    const step = swiss.correct(ctx, ms, 'swiss:1:2', 'p4')
    expect(step.removed).toEqual(['swiss:2:1', 'swiss:2:2'])
    ms = applyStep(ms.map((m) => (m.key === 'swiss:1:2' ? { ...m, winner: 'p4' } : m)), step)
    expect(pairs(ms, 2)).toEqual(['p1-p4', 'p2-p3'])
    ms = decide(swiss, ctx, ms, 'swiss:2:1', 'p1').matches
    expect(() => swiss.correct(ctx, ms, 'swiss:1:1', 'p3')).toThrow(CorrectionTooLate)
  })
})

describe('swiss engine: default rounds never rematch', () => {
  test('every count 2..64, eight fixed random plays each (draws included)', () => {
    for (let n = 2; n <= 64; n++) {
      for (let play = 0; play < 8; play++) {
        const random = seededRandom(19, n, play)
        const ctx = ctxOf(n)
        const { matches } = playOut(swiss, ctx, (running) => Math.floor(random() * running.length), (m) => (random() < 0.2 ? null : random() < 0.5 ? m.slot1 : m.slot2))
        const pairs = matches.filter((m) => m.slot2 !== null).map((m) => [m.slot1, m.slot2].sort().join(' '))
        expect({ n, play, rematches: pairs.length - new Set(pairs).size }).toEqual({ n, play, rematches: 0 })
        expect(Math.max(...matches.map((m) => m.round))).toBe(Math.ceil(Math.log2(n)))
      }
    }
  })
})
