// Single elimination through the format engine: the same bracket as the
// planner the services use today (bracket.ts), the third-place match between
// the semi-final losers, standings by exit stage then seed, disqualification
// as walkovers, corrections while nothing fed is played.
import { describe, expect, test } from 'bun:test'
import { planSingleElimination } from '../../../src/modules/games/bracket'
import { CorrectionTooLate, applyStep, engineOf, type FormatContext } from '../../../src/modules/games/formats/engines'
import { decide, playScript, seeds } from '../../helpers/formats'

const se = engineOf('single_elimination')
const ctxOf = (n: number, thirdPlaceMatch = false): FormatContext => ({ participants: seeds(n), options: { thirdPlaceMatch } })
const brief = (ms: ReturnType<typeof se.start>) => ms.map((m) => `${m.key} ${m.slot1 ?? '-'} ${m.slot2 ?? '-'} ${m.status}${m.winner ? ' ' + m.winner : ''}`)

describe('single elimination engine: start', () => {
  test('4 players with a third-place match: two semi-finals running, the final and the third-place match waiting', () => {
    const ms = se.start(ctxOf(4, true))
    expect(brief(ms)).toEqual([
      'winners:1:1 p1 p4 running',
      'winners:1:2 p2 p3 running',
      'winners:2:1 - - waiting',
      'third_place:2:1 - - waiting',
    ])
    expect(ms.find((m) => m.key === 'winners:1:1')!.loserNext).toEqual({ key: 'third_place:2:1', slot: 1 })
    expect(ms.find((m) => m.key === 'winners:1:2')!.loserNext).toEqual({ key: 'third_place:2:1', slot: 2 })
  })

  test('5 players: byes to seeds 1-3, decided at the start and already placed', () => {
    expect(brief(se.start(ctxOf(5)))).toEqual([
      'winners:1:1 p1 - decided p1',
      'winners:1:2 p4 p5 running',
      'winners:1:3 p2 - decided p2',
      'winners:1:4 p3 - decided p3',
      'winners:2:1 p1 - waiting',
      'winners:2:2 p2 p3 running',
      'winners:3:1 - - waiting',
    ])
  })

  test('3 players: no third-place match even when asked (one semi-final is a bye)', () => {
    expect(se.start(ctxOf(3, true)).some((m) => m.bracket === 'third_place')).toBe(false)
  })

  test('the same bracket as planSingleElimination for every count 2..128', () => {
    for (let n = 2; n <= 128; n++) {
      const plan = planSingleElimination(n)
      const ms = se.start(ctxOf(n))
      expect(ms.map((m) => [m.round, m.position])).toEqual(plan.matches.map((m) => [m.round, m.position]))
      for (const [i, p] of plan.matches.entries()) {
        if (p.round !== 1) continue
        expect([ms[i]!.slot1, ms[i]!.slot2]).toEqual([p.slot1Seed === null ? null : `p${p.slot1Seed}`, p.slot2Seed === null ? null : `p${p.slot2Seed}`])
      }
    }
  })
})

describe('single elimination engine: play and standings', () => {
  test('4 players with a third-place match, by hand', () => {
    const ctx = ctxOf(4, true)
    const ms = playScript(se, ctx, [
      { players: ['p1', 'p4'], result: 'p1' },
      { players: ['p2', 'p3'], result: 'p3' },
      { players: ['p1', 'p3'], result: 'p3' },
      { players: ['p4', 'p2'], result: 'p2' },
    ])
    expect(se.standings(ctx, ms)).toEqual([
      { participantId: 'p3', rank: 1, wins: 2, draws: 0, losses: 0, points: 6 },
      { participantId: 'p1', rank: 2, wins: 1, draws: 0, losses: 1, points: 3 },
      { participantId: 'p2', rank: 3, wins: 1, draws: 0, losses: 1, points: 3 },
      { participantId: 'p4', rank: 4, wins: 0, draws: 0, losses: 2, points: 0 },
    ])
  })

  test('the final alone does not finish a tournament with a third-place match', () => {
    const ctx = ctxOf(4, true)
    let ms = se.start(ctx)
    ms = decide(se, ctx, ms, 'winners:1:1', 'p1').matches
    ms = decide(se, ctx, ms, 'winners:1:2', 'p2').matches
    const afterFinal = decide(se, ctx, ms, 'winners:2:1', 'p1')
    expect(afterFinal.finished).toBe(false)
    expect(se.standings(ctx, afterFinal.matches)).toEqual([])
    expect(decide(se, ctx, afterFinal.matches, 'third_place:2:1', 'p4').finished).toBe(true)
  })

  test('5 players: equal stages are broken by seed (ranks are distinct); byes are no wins', () => {
    const ctx = ctxOf(5)
    const ms = playScript(se, ctx, [
      { players: ['p4', 'p5'], result: 'p5' },
      { players: ['p2', 'p3'], result: 'p3' },
      { players: ['p1', 'p5'], result: 'p5' },
      { players: ['p5', 'p3'], result: 'p3' },
    ])
    expect(se.standings(ctx, ms).map((r) => [r.participantId, r.rank, r.wins, r.losses])).toEqual([
      ['p3', 1, 2, 0],
      ['p5', 2, 2, 1],
      ['p1', 3, 0, 1],
      ['p2', 4, 0, 1],
      ['p4', 5, 0, 1],
    ])
  })
})

describe('single elimination engine: disqualification and correction', () => {
  test('a disqualified player loses the running match by walkover, and the winner moves on', () => {
    const ctx = ctxOf(4)
    const ms = se.start(ctx)
    const step = se.disqualify({ ...ctx, disqualified: ['p4'] }, ms, 'p4')
    expect(step.decided).toEqual([{ key: 'winners:1:1', winner: 'p1', decidedBy: 'walkover' }])
    expect(step.fills).toEqual([{ key: 'winners:2:1', slot: 1, participantId: 'p1' }])
    expect(step.finished).toBe(false)
  })

  test('a disqualified player waiting for an opponent forfeits when the opponent arrives', () => {
    const base = ctxOf(5)
    const ctx = { ...base, disqualified: ['p1'] }
    let ms = se.start(base)
    const dq = se.disqualify(ctx, ms, 'p1')
    expect(dq.decided).toEqual([]) // p1 waits in round 2 with no opponent yet
    ms = applyStep(ms, dq)
    const after = decide(se, ctx, ms, 'winners:1:2', 'p4')
    expect(after.matches.find((m) => m.key === 'winners:2:1')).toMatchObject({ status: 'decided', winner: 'p4', decidedBy: 'walkover' })
    expect(after.matches.find((m) => m.key === 'winners:3:1')!.slot1).toBe('p4')
  })

  test('a correction moves the new winner into the next match while it is unplayed; too late once it is played', () => {
    const ctx = ctxOf(4, true)
    let ms = se.start(ctx)
    ms = decide(se, ctx, ms, 'winners:1:1', 'p1').matches
    const step = se.correct(ctx, ms, 'winners:1:1', 'p4')
    expect(step.fills).toEqual([
      { key: 'winners:2:1', slot: 1, participantId: 'p4' },
      { key: 'third_place:2:1', slot: 1, participantId: 'p1' },
    ])
    ms = decide(se, ctx, ms, 'winners:1:2', 'p2').matches
    ms = decide(se, ctx, ms, 'winners:2:1', 'p1').matches
    expect(() => se.correct(ctx, ms, 'winners:1:1', 'p4')).toThrow(CorrectionTooLate)
    // The third-place match is unplayed but the final is: still too late.
    expect(() => se.correct(ctx, ms, 'winners:1:2', 'p3')).toThrow(CorrectionTooLate)
  })
})
