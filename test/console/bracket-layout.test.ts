// The bracket picture's layout (src/console/bracket-layout.ts), on brackets
// the real format engines plan: every match gets a box, no two boxes
// overlap, every winner's path is a line from a box to the box right of it,
// a match sits level with the middle of its feeders, and the sections go
// where the console shows them.
import { describe, expect, test } from 'bun:test'
import { engineOf } from '../../src/modules/games/formats/engines'
import type { FormatName } from '../../src/modules/games/formats/engine'
import { BOX_HEIGHT, BOX_WIDTH, isDrawable, layoutBracket, type LayoutMatch } from '../../src/console/bracket-layout'

function planned(format: FormatName, players: number, options: Record<string, unknown> = {}): LayoutMatch[] {
  const participants = Array.from({ length: players }, (_, i) => `p${i + 1}`)
  return engineOf(format)
    .start({ participants, options })
    .map((m) => ({ id: m.key, bracket: m.bracket, round: m.round, position: m.position, nextMatchId: m.next?.key ?? null }))
}

function overlaps(a: { x: number; y: number }, b: { x: number; y: number }): boolean {
  return a.x < b.x + BOX_WIDTH && b.x < a.x + BOX_WIDTH && a.y < b.y + BOX_HEIGHT && b.y < a.y + BOX_HEIGHT
}

const SHAPES: [FormatName, number, Record<string, unknown>][] = [
  ['single_elimination', 2, {}],
  ['single_elimination', 6, {}],
  ['single_elimination', 8, { thirdPlaceMatch: true }],
  ['single_elimination', 13, {}],
  ['double_elimination', 4, {}],
  ['double_elimination', 6, {}],
  ['double_elimination', 8, {}],
  ['double_elimination', 8, { grandFinal: 'simple' }],
  ['double_elimination', 11, {}],
  ['double_elimination', 32, {}],
]

describe('bracket layout', () => {
  for (const [format, players, options] of SHAPES) {
    test(`${format} of ${players} ${JSON.stringify(options)}: a box per match, none overlapping, a line per winner's path going right`, () => {
      const matches = planned(format, players, options)
      expect(isDrawable(matches)).toBe(true)
      const layout = layoutBracket(matches)
      expect(layout.boxes.map((b) => b.match.id).sort()).toEqual(matches.map((m) => m.id).sort())
      for (const [i, a] of layout.boxes.entries()) {
        expect(a.x).toBeGreaterThanOrEqual(0)
        expect(a.y).toBeGreaterThan(0)
        expect(a.x + BOX_WIDTH).toBeLessThanOrEqual(layout.width)
        expect(a.y + BOX_HEIGHT).toBeLessThanOrEqual(layout.height)
        for (const b of layout.boxes.slice(i + 1)) expect(overlaps(a, b)).toBe(false)
      }
      const withNext = matches.filter((m) => m.nextMatchId !== null)
      expect(layout.connectors.length).toBe(withNext.length)
      const at = new Map(layout.boxes.map((b) => [b.match.id, b]))
      for (const c of layout.connectors) {
        const [start, , , end] = c.points
        expect(start![0]).toBe(at.get(c.from)!.x + BOX_WIDTH)
        expect(end![0]).toBe(at.get(c.to)!.x)
        expect(end![0]).toBeGreaterThan(start![0])
        expect(end![1]).toBe(at.get(c.to)!.y + BOX_HEIGHT / 2)
      }
    })
  }

  test('single elimination of 8: a tree, each match level with the middle of its two feeders; the third-place match under the final', () => {
    const layout = layoutBracket(planned('single_elimination', 8, { thirdPlaceMatch: true }))
    const at = new Map(layout.boxes.map((b) => [b.match.id, b]))
    const y = (id: string) => at.get(id)!.y
    expect(y('winners:2:1')).toBe((y('winners:1:1') + y('winners:1:2')) / 2)
    expect(y('winners:3:1')).toBe((y('winners:2:1') + y('winners:2:2')) / 2)
    expect(new Set(['winners:1:1', 'winners:2:1', 'winners:3:1'].map((id) => at.get(id)!.x)).size).toBe(3)
    expect(at.get('third_place:3:1')!.x).toBe(at.get('winners:3:1')!.x)
    expect(y('third_place:3:1')).toBeGreaterThan(Math.max(...layout.boxes.filter((b) => b.match.bracket === 'winners').map((b) => b.y)))
    expect(layout.labels.map((l) => l.text)).toEqual(['Winners bracket', 'Third place'])
  })

  test('double elimination of 8: losers below winners, the grand final right of both, level between the two champions', () => {
    const matches = planned('double_elimination', 8)
    const layout = layoutBracket(matches)
    const boxes = (bracket: string) => layout.boxes.filter((b) => b.match.bracket === bracket)
    const lowestWinner = Math.max(...boxes('winners').map((b) => b.y + BOX_HEIGHT))
    for (const b of boxes('losers')) expect(b.y).toBeGreaterThan(lowestWinner)
    const rightmost = Math.max(...[...boxes('winners'), ...boxes('losers')].map((b) => b.x))
    const finals = boxes('grand_final').sort((a, b) => a.match.round - b.match.round)
    expect(finals.length).toBeGreaterThanOrEqual(1)
    for (const f of finals) expect(f.x).toBeGreaterThan(rightmost)
    const feeders = layout.boxes.filter((b) => b.match.nextMatchId === finals[0]!.match.id && b.match.bracket !== 'grand_final')
    expect(feeders.map((b) => b.match.bracket).sort()).toEqual(['losers', 'winners'])
    expect(finals[0]!.y).toBe((feeders[0]!.y + feeders[1]!.y) / 2)
    expect(layout.labels.map((l) => l.text)).toEqual(['Winners bracket', 'Losers bracket', 'Grand final'])
  })

  test('a grand final reset goes right of the first grand final, on its level, linked or not', () => {
    for (const linked of [true, false]) {
      const matches = planned('double_elimination', 4).map((m) => (m.bracket === 'grand_final' && linked ? { ...m, nextMatchId: 'grand_final:2:1' } : m))
      matches.push({ id: 'grand_final:2:1', bracket: 'grand_final', round: 2, position: 1, nextMatchId: null })
      const layout = layoutBracket(matches)
      const first = layout.boxes.find((b) => b.match.id === 'grand_final:1:1')!
      const reset = layout.boxes.find((b) => b.match.id === 'grand_final:2:1')!
      expect(reset.x).toBeGreaterThan(first.x)
      expect(reset.y).toBe(first.y)
      expect(layout.connectors.some((c) => c.from === 'grand_final:1:1' && c.to === 'grand_final:2:1')).toBe(linked)
    }
  })

  test('round robin and Swiss are not drawn (their picture is the standings table)', () => {
    expect(isDrawable(planned('round_robin', 4))).toBe(false)
    expect(isDrawable(planned('swiss', 8))).toBe(false)
    expect(isDrawable([])).toBe(false)
  })
})
