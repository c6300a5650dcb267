// Round robin through the format engine: the circle schedule (everyone meets
// everyone once, nobody twice in a round, one player resting a round for an
// odd count), draws as results, live standings: points (3/1/0), head-to-head
// among the tied, wins, seed.
import { describe, expect, test } from 'bun:test'
import { circleSchedule } from '../../../src/modules/games/formats/round-robin'
import { applyStep, engineOf, type EngineMatch, type FormatContext } from '../../../src/modules/games/formats/engines'
import { decide, playScript, seeds } from '../../helpers/formats'

const rr = engineOf('round_robin')
const ctxOf = (n: number): FormatContext => ({ participants: seeds(n), options: {} })
const pairs = (ms: EngineMatch[]) => ms.map((m) => `${m.key} ${m.slot1}-${m.slot2}`)

describe('round robin engine: schedule', () => {
  test('3 players: three rounds, one resting each (no match for the rest), all playable at once', () => {
    const ms = rr.start(ctxOf(3))
    expect(pairs(ms)).toEqual(['round_robin:1:1 p2-p3', 'round_robin:2:1 p3-p1', 'round_robin:3:1 p1-p2'])
    expect(ms.every((m) => m.status === 'running')).toBe(true)
  })

  test('4 players: three rounds of two', () => {
    expect(pairs(rr.start(ctxOf(4)))).toEqual([
      'round_robin:1:1 p1-p4',
      'round_robin:1:2 p2-p3',
      'round_robin:2:1 p3-p1',
      'round_robin:2:2 p2-p4',
      'round_robin:3:1 p1-p2',
      'round_robin:3:2 p3-p4',
    ])
  })

  test('6 players: five rounds of three', () => {
    const ms = rr.start(ctxOf(6))
    expect([1, 2, 3, 4, 5].map((r) => ms.filter((m) => m.round === r).length)).toEqual([3, 3, 3, 3, 3])
  })

  test('every count 2..64: each pair exactly once, nobody twice in a round, n − 1 (even) or n (odd) rounds', () => {
    for (let n = 2; n <= 64; n++) {
      const schedule = circleSchedule(n)
      expect(schedule.length).toBe(n % 2 === 0 ? n - 1 : n)
      const seen = new Set<string>()
      for (const round of schedule) {
        const inRound = round.flat()
        expect(new Set(inRound).size).toBe(inRound.length)
        expect(round.length).toBe(Math.floor(n / 2))
        for (const [a, b] of round) {
          const key = [a, b].sort((x, y) => x - y).join(' ')
          expect(seen.has(key)).toBe(false)
          seen.add(key)
        }
      }
      expect(seen.size).toBe((n * (n - 1)) / 2)
    }
  })
})

describe('round robin engine: results and standings', () => {
  test('4 players by hand: a draw is a result; p1 and p2 tie on points and p1 won their match', () => {
    const ctx = ctxOf(4)
    const ms = playScript(rr, ctx, [
      { players: ['p1', 'p4'], result: 'p1' },
      { players: ['p2', 'p3'], result: 'p2' },
      { players: ['p3', 'p1'], result: 'p3' },
      { players: ['p2', 'p4'], result: 'p2' },
      { players: ['p1', 'p2'], result: 'p1' },
      { players: ['p3', 'p4'], result: 'draw' },
    ])
    expect(rr.standings(ctx, ms)).toEqual([
      { participantId: 'p1', rank: 1, wins: 2, draws: 0, losses: 1, points: 6 },
      { participantId: 'p2', rank: 2, wins: 2, draws: 0, losses: 1, points: 6 },
      { participantId: 'p3', rank: 3, wins: 1, draws: 1, losses: 1, points: 4 },
      { participantId: 'p4', rank: 4, wins: 0, draws: 1, losses: 2, points: 1 },
    ])
  })

  test('a three-way tie on points and head-to-head goes to wins, then seed', () => {
    const ctx = ctxOf(3)
    // Each beats one: 3 points each, head-to-head 3 each, wins 1 each: seed decides.
    const ms = playScript(rr, ctx, [
      { players: ['p2', 'p3'], result: 'p3' },
      { players: ['p3', 'p1'], result: 'p1' },
      { players: ['p1', 'p2'], result: 'p2' },
    ])
    expect(rr.standings(ctx, ms).map((r) => [r.participantId, r.points])).toEqual([
      ['p1', 3],
      ['p2', 3],
      ['p3', 3],
    ])
  })

  test('standings are live: before any result everyone has 0 and the order is by seed', () => {
    const ctx = ctxOf(4)
    let ms = rr.start(ctx)
    expect(rr.standings(ctx, ms).map((r) => r.participantId)).toEqual(['p1', 'p2', 'p3', 'p4'])
    ms = decide(rr, ctx, ms, 'round_robin:1:1', 'p4').matches
    expect(rr.standings(ctx, ms).map((r) => [r.participantId, r.points])).toEqual([
      ['p4', 3],
      ['p1', 0], // no points, no wins: seed, whatever was played
      ['p2', 0],
      ['p3', 0],
    ])
  })

  test('disqualification: every remaining match of the player is a walkover; played ones stand', () => {
    const base = ctxOf(4)
    let ms = rr.start(base)
    ms = decide(rr, base, ms, 'round_robin:1:1', 'p1').matches
    const ctx = { ...base, disqualified: ['p1'] }
    const step = rr.disqualify(ctx, ms, 'p1')
    expect(step.decided).toEqual([
      { key: 'round_robin:2:1', winner: 'p3', decidedBy: 'walkover' },
      { key: 'round_robin:3:1', winner: 'p2', decidedBy: 'walkover' },
    ])
    ms = applyStep(ms, step)
    expect(rr.standings(ctx, ms).find((r) => r.participantId === 'p1')).toMatchObject({ wins: 1, losses: 2 })
  })

  test('a correction is always in time (nothing is fed) and may turn a win into a draw', () => {
    const ctx = ctxOf(3)
    let ms = rr.start(ctx)
    ms = decide(rr, ctx, ms, 'round_robin:1:1', 'p2').matches
    const step = rr.correct(ctx, ms, 'round_robin:1:1', null)
    expect(step).toEqual({ removed: [], created: [], fills: [], decided: [], opened: [], finished: false })
  })
})
