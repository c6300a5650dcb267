// The three hand-computed tournaments of test/helpers/format-examples.ts,
// played through the format engine: every script entry names a match that is
// open at that point, the tournament finishes on the last one, and the final
// standings are the table written out by hand.
import { describe, expect, test } from 'bun:test'
import { buchholzOf } from '../../../src/modules/games/formats/swiss'
import { engineOf } from '../../../src/modules/games/formats/engines'
import { formatExamples, swiss16, swiss16Pairings } from '../../helpers/format-examples'
import { playScript, seeds } from '../../helpers/formats'

describe('hand-computed tournaments', () => {
  for (const example of formatExamples) {
    test(`${example.format} of ${example.players}: the script plays out and the standings are the table by hand`, () => {
      const engine = engineOf(example.format)
      const ctx = { participants: seeds(example.players), options: example.options }
      const matches = playScript(engine, ctx, example.script)
      expect(matches.length).toBe(example.script.length + matches.filter((m) => m.decidedBy === 'bye').length)
      expect(engine.standings(ctx, matches)).toEqual(example.standings)
    })
  }

  test('swiss of 16: the pairings of every round and the Buchholz scores are the ones by hand', () => {
    const ctx = { participants: seeds(16), options: {} }
    const matches = playScript(engineOf('swiss'), ctx, swiss16.script)
    for (const [i, expected] of swiss16Pairings.entries()) {
      expect(matches.filter((m) => m.round === i + 1).map((m) => `${m.slot1}-${m.slot2}`)).toEqual(expected)
    }
    const b = buchholzOf(ctx, matches)
    expect(['p16', 'p1', 'p5', 'p2', 'p4', 'p9', 'p15', 'p3', 'p8', 'p13', 'p6', 'p10', 'p14'].map((p) => b.get(p))).toEqual([
      29, 33, 25, 24, 29, 24, 19, 18, 28, 24, 24, 21, 11,
    ])
  })
})
