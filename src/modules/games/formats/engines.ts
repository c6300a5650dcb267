// The format engines (engine.ts), by the name a tournament stores.
import { doubleEliminationEngine } from './double-elimination'
import { singleEliminationEngine } from './elimination'
import type { FormatEngine, FormatName } from './engine'
import { roundRobinEngine } from './round-robin'
import { swissEngine } from './swiss'

export type { BracketKind, DecidedBy, EngineMatch, FormatContext, FormatEngine, FormatName, FormatOptions, SlotRef, StandingRow, Step } from './engine'
export { CorrectionTooLate, POINTS, applyStep, matchKey } from './engine'

const ENGINES: Record<FormatName, FormatEngine> = {
  single_elimination: singleEliminationEngine,
  double_elimination: doubleEliminationEngine,
  round_robin: roundRobinEngine,
  swiss: swissEngine,
}

export function engineOf(name: FormatName): FormatEngine {
  return ENGINES[name]
}
