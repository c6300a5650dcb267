// The claim path's shortcut (src/modules/games/progress.ts, advanceAfter):
// in single and double elimination with nobody disqualified, what follows a
// decision is computed from the decided match, the matches its winner and
// loser go to, and the matches that feed nothing (the final, the third-place
// match, the grand finals), with no participants in the context; the whole
// bracket is read only when the step says the tournament finished (for the
// standings). This checks the engines allow it: over random brackets
// (2..64 players, every option) and random decision orders and results, the
// step from that view equals the step from every match. The seed is printed;
// ARENA_FORMATS_SEED replays it.
import { expect, test } from 'bun:test'
import fc from 'fast-check'
import { applyStep, engineOf, type EngineMatch, type FormatContext, type FormatName, type Step } from '../../../src/modules/games/formats/engines'
import { chooseSeed } from '../../helpers/seed'
import { seeds } from '../../helpers/formats'

const SEED = chooseSeed('ARENA_FORMATS_SEED', 'around a decision')
const RUNS = Number(process.env.ARENA_FORMATS_RUNS || 100)

/** What matchesAround reads for a decision of `m`: itself, where its winner and loser go, and every match that feeds nothing. */
function around(matches: readonly EngineMatch[], m: EngineMatch): EngineMatch[] {
  const keys = new Set([m.key, m.next?.key, m.loserNext?.key])
  return matches.filter((x) => keys.has(x.key) || x.next === null)
}

const normal = (step: Step) => ({ ...step, fills: [...step.fills], created: [...step.created] })

const cases: { format: FormatName; options: FormatContext['options'] }[] = [
  { format: 'single_elimination', options: {} },
  { format: 'single_elimination', options: { thirdPlaceMatch: true } },
  { format: 'double_elimination', options: { grandFinal: 'reset' } },
  { format: 'double_elimination', options: { grandFinal: 'simple' } },
]

for (const { format, options } of cases) {
  test(`${format} ${JSON.stringify(options)}: the step from the matches around a decision is the step from all of them (seed ${SEED})`, () => {
    const engine = engineOf(format)
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 64 }), fc.infiniteStream(fc.tuple(fc.nat(), fc.boolean())), (n, choices) => {
        const ctx: FormatContext = { participants: seeds(n), options }
        const view: FormatContext = { participants: [], options }
        let matches = engine.start(ctx)
        const picks = choices[Symbol.iterator]()
        for (let guard = 0; !engine.isFinished(ctx, matches); guard++) {
          if (guard > 1000) throw new Error('runaway')
          const running = matches.filter((m) => m.status === 'running')
          const [pick, slot1Wins] = picks.next().value as [number, boolean]
          const m = running[pick % running.length]!
          const decidedMatch = { ...m, status: 'decided' as const, winner: slot1Wins ? m.slot1 : m.slot2, outcome: 'WIN' as const, decidedBy: 'played' as const }
          const decided = matches.map((x) => (x.key === m.key ? decidedMatch : x))
          const full = engine.afterDecision(ctx, decided, m.key)
          const partial = engine.afterDecision(view, around(decided, decidedMatch), m.key)
          expect(normal(partial)).toEqual(normal(full))
          matches = applyStep(decided, full)
        }
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    )
  }, 120_000)
}
