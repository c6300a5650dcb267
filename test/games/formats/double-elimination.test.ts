// Double elimination through the format engine: the winners bracket of
// single elimination, a losers bracket without byes (so the winners-round-1
// byes are the only ones and nobody gets two), the grand final with or
// without its reset, standings by exit stage then seed.
import { describe, expect, test } from 'bun:test'
import { CorrectionTooLate, applyStep, engineOf, type EngineMatch, type FormatContext } from '../../../src/modules/games/formats/engines'
import { decide, playScript, seeds } from '../../helpers/formats'

const de = engineOf('double_elimination')
const ctxOf = (n: number, grandFinal?: 'simple' | 'reset'): FormatContext => ({ participants: seeds(n), options: grandFinal ? { grandFinal } : {} })
const link = (r: EngineMatch['next']) => (r ? `${r.key}/${r.slot}` : '-')
const shape = (ms: EngineMatch[]) => ms.map((m) => `${m.key} ${m.slot1 ?? '-'} ${m.slot2 ?? '-'} ${m.status} → ${link(m.next)} ↓ ${link(m.loserNext)}`)

describe('double elimination engine: start', () => {
  test('4 players: the full bracket', () => {
    expect(shape(de.start(ctxOf(4)))).toEqual([
      'winners:1:1 p1 p4 running → winners:2:1/1 ↓ losers:1:1/1',
      'winners:1:2 p2 p3 running → winners:2:1/2 ↓ losers:1:1/2',
      'winners:2:1 - - waiting → grand_final:1:1/1 ↓ losers:2:1/2',
      'losers:1:1 - - waiting → losers:2:1/1 ↓ -',
      'losers:2:1 - - waiting → grand_final:1:1/2 ↓ -',
      'grand_final:1:1 - - waiting → - ↓ -',
    ])
  })

  test('5 players: byes to seeds 1-3, and the losers bracket has no bye (a round-2 loser who had a bye plays in later)', () => {
    expect(shape(de.start(ctxOf(5)))).toEqual([
      'winners:1:1 p1 - decided → winners:2:1/1 ↓ -',
      'winners:1:2 p4 p5 running → winners:2:1/2 ↓ losers:2:1/1',
      'winners:1:3 p2 - decided → winners:2:2/1 ↓ -',
      'winners:1:4 p3 - decided → winners:2:2/2 ↓ -',
      'winners:2:1 p1 - waiting → winners:3:1/1 ↓ losers:2:1/2',
      'winners:2:2 p2 p3 running → winners:3:1/2 ↓ losers:3:1/1',
      'winners:3:1 - - waiting → grand_final:1:1/1 ↓ losers:4:1/2',
      'losers:2:1 - - waiting → losers:3:1/2 ↓ -',
      'losers:3:1 - - waiting → losers:4:1/1 ↓ -',
      'losers:4:1 - - waiting → grand_final:1:1/2 ↓ -',
      'grand_final:1:1 - - waiting → - ↓ -',
    ])
  })

  test('8 players: losers rounds of 2, 2, 1, 1; round-2 losers cross', () => {
    const ms = de.start(ctxOf(8))
    const losers = ms.filter((m) => m.bracket === 'losers')
    expect([1, 2, 3, 4].map((r) => losers.filter((m) => m.round === r).length)).toEqual([2, 2, 1, 1])
    const w2 = ms.filter((m) => m.bracket === 'winners' && m.round === 2).map((m) => link(m.loserNext))
    expect(w2).toEqual(['losers:2:2/2', 'losers:2:1/2'])
    expect(ms.filter((m) => m.bracket === 'winners' && m.round === 1).map((m) => link(m.loserNext))).toEqual([
      'losers:1:1/1',
      'losers:1:1/2',
      'losers:1:2/1',
      'losers:1:2/2',
    ])
  })

  test('every count 2..64: a power-of-two winners bracket (byes included), n − 2 losers matches, one grand final; no losers match is fed by a bye', () => {
    for (let n = 2; n <= 64; n++) {
      const ms = de.start(ctxOf(n))
      const size = 2 ** Math.ceil(Math.log2(n))
      expect(ms.filter((m) => m.bracket === 'winners').length).toBe(size - 1)
      expect(ms.filter((m) => m.bracket === 'losers').length).toBe(n - 2)
      expect(ms.filter((m) => m.bracket === 'grand_final').length).toBe(1)
      // Every losers/grand-final slot has exactly one feeder.
      const feeds = new Map<string, number>()
      for (const m of ms) for (const r of [m.next, m.loserNext]) if (r) feeds.set(link(r), (feeds.get(link(r)) ?? 0) + 1)
      for (const m of ms.filter((x) => x.bracket !== 'winners' || x.round > 1)) {
        for (const slot of [1, 2] as const) expect({ m: m.key, slot, feeds: feeds.get(`${m.key}/${slot}`) }).toEqual({ m: m.key, slot, feeds: 1 })
      }
      for (const m of ms.filter((x) => x.decidedBy === 'bye')) expect(m.loserNext).toBeNull()
    }
  })
})

describe('double elimination engine: grand final', () => {
  const toGrandFinal = [
    { players: ['p1', 'p4'] as [string, string], result: 'p1' },
    { players: ['p2', 'p3'] as [string, string], result: 'p3' },
    { players: ['p4', 'p2'] as [string, string], result: 'p2' },
    { players: ['p1', 'p3'] as [string, string], result: 'p1' },
    { players: ['p2', 'p3'] as [string, string], result: 'p2' },
  ]

  test('4 players, reset: the losers-bracket champion wins the first grand final, the reset decides; by hand', () => {
    const ctx = ctxOf(4)
    const ms = playScript(de, ctx, [...toGrandFinal, { players: ['p1', 'p2'], result: 'p2' }, { players: ['p1', 'p2'], result: 'p1' }])
    expect(ms.filter((m) => m.bracket === 'grand_final').map((m) => [m.key, m.winner])).toEqual([
      ['grand_final:1:1', 'p2'],
      ['grand_final:2:1', 'p1'],
    ])
    expect(de.standings(ctx, ms)).toEqual([
      { participantId: 'p1', rank: 1, wins: 3, draws: 0, losses: 1, points: 9 },
      { participantId: 'p2', rank: 2, wins: 3, draws: 0, losses: 2, points: 9 },
      { participantId: 'p3', rank: 3, wins: 1, draws: 0, losses: 2, points: 3 },
      { participantId: 'p4', rank: 4, wins: 0, draws: 0, losses: 2, points: 0 },
    ])
  })

  test('reset: the winners-bracket champion winning the first grand final finishes it', () => {
    const ctx = ctxOf(4)
    const ms = playScript(de, ctx, [...toGrandFinal, { players: ['p1', 'p2'], result: 'p1' }])
    expect(ms.some((m) => m.key === 'grand_final:2:1')).toBe(false)
    expect(de.standings(ctx, ms).map((r) => r.participantId)).toEqual(['p1', 'p2', 'p3', 'p4'])
  })

  test('simple: one grand final whoever wins it', () => {
    const ctx = ctxOf(4, 'simple')
    const ms = playScript(de, ctx, [...toGrandFinal, { players: ['p1', 'p2'], result: 'p2' }])
    expect(ms.some((m) => m.key === 'grand_final:2:1')).toBe(false)
    expect(de.standings(ctx, ms).map((r) => [r.participantId, r.losses])).toEqual([
      ['p2', 1],
      ['p1', 1],
      ['p3', 2],
      ['p4', 2],
    ])
  })

  test('2 players: the winners final loser goes straight to the grand final', () => {
    const ctx = ctxOf(2)
    const ms = playScript(de, ctx, [
      { players: ['p1', 'p2'], result: 'p2' },
      { players: ['p1', 'p2'], result: 'p1' },
      { players: ['p1', 'p2'], result: 'p1' },
    ])
    expect(de.standings(ctx, ms).map((r) => [r.participantId, r.wins, r.losses])).toEqual([
      ['p1', 2, 1],
      ['p2', 1, 2],
    ])
  })

  test('a correction of the first grand final creates or removes the reset while it is unplayed', () => {
    const ctx = ctxOf(4)
    let ms = playScript(de, ctx, [...toGrandFinal, { players: ['p1', 'p2'], result: 'p1' }])
    const toLosersChampion = de.correct(ctx, ms, 'grand_final:1:1', 'p2')
    expect(toLosersChampion.created.map((m) => [m.key, m.slot1, m.slot2, m.status])).toEqual([['grand_final:2:1', 'p1', 'p2', 'running']])
    expect(toLosersChampion.finished).toBe(false)
    ms = applyStep(ms.map((m) => (m.key === 'grand_final:1:1' ? { ...m, winner: 'p2' } : m)), toLosersChampion)
    const back = de.correct(ctx, ms, 'grand_final:1:1', 'p1')
    expect(back.removed).toEqual(['grand_final:2:1'])
    expect(back.finished).toBe(true)
    ms = decide(de, ctx, ms, 'grand_final:2:1', 'p1').matches
    expect(() => de.correct(ctx, ms, 'grand_final:1:1', 'p1')).toThrow(CorrectionTooLate)
  })
})

describe('double elimination engine: disqualification', () => {
  test('a player disqualified in the winners bracket forfeits there, drops, and forfeits the losers match when it opens', () => {
    const base = ctxOf(4)
    const ctx = { ...base, disqualified: ['p4'] }
    let ms = de.start(base)
    const step = de.disqualify(ctx, ms, 'p4')
    expect(step.decided).toEqual([{ key: 'winners:1:1', winner: 'p1', decidedBy: 'walkover' }])
    expect(step.fills).toEqual([
      { key: 'winners:2:1', slot: 1, participantId: 'p1' },
      { key: 'losers:1:1', slot: 1, participantId: 'p4' },
    ])
    ms = applyStep(ms, step)
    ms = decide(de, ctx, ms, 'winners:1:2', 'p2').matches
    expect(ms.find((m) => m.key === 'losers:1:1')).toMatchObject({ status: 'decided', winner: 'p3', decidedBy: 'walkover' })
    expect(ms.find((m) => m.key === 'losers:2:1')!.slot1).toBe('p3')
  })
})
