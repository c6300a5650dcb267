// The registry of formats: one line per format engine (engine.ts). Everything
// the rest of the code knows of formats comes from here: the names the API,
// the database, the CLI and the console list (FORMAT_NAMES, BRACKETS), the
// creation options (FORMAT_OPTIONS) and each format's own answers (engineOf).
// No file outside this folder names a format (test/games/formats/ownership.test.ts).
import { doubleEliminationEngine } from './double-elimination'
import { singleEliminationEngine } from './elimination'
import type { FormatEngine } from './engine'
import { roundRobinEngine } from './round-robin'
import { swissEngine } from './swiss'

export type { DecidedBy, EngineMatch, FormatContext, FormatEngine, FormatOptions, OptionProblem, SlotRef, StandingRow, Step } from './engine'
export { CorrectionTooLate, POINTS, applyStep, matchKey } from './engine'

/** Every format, in the order they are listed; the first is the one the CLI and the console offer first. */
const FORMATS = [singleEliminationEngine, doubleEliminationEngine, roundRobinEngine, swissEngine] as const

export type FormatName = (typeof FORMATS)[number]['name']
/** The part of a tournament a match belongs to: the brackets of every format. */
export type BracketKind = (typeof FORMATS)[number]['brackets'][number]

type NonEmpty<T> = readonly [T, ...T[]]

/** The names as a tuple type, for a schema's union of literals (whose static type needs the tuple). */
type NamesOf<T extends readonly FormatEngine[]> = T extends readonly [infer H extends FormatEngine, ...infer R extends readonly FormatEngine[]] ? [H['name'], ...NamesOf<R>] : []
export type FormatNameTuple = NamesOf<typeof FORMATS>
type BracketsOf<T extends readonly FormatEngine[]> = T extends readonly [infer H extends FormatEngine, ...infer R extends readonly FormatEngine[]] ? [...H['brackets'], ...BracketsOf<R>] : []
/** Every format's brackets as a tuple type (a bracket two formats share is in it twice; BRACKETS holds it once), for a schema's union of literals. */
export type BracketTuple = BracketsOf<typeof FORMATS>

/** The formats' names, in the registry's order (the API's enum, the database's). */
export const FORMAT_NAMES = FORMATS.map((f) => f.name) as unknown as NonEmpty<FormatName>

/** Every format's brackets, each once, in the registry's order and each format's own (so a tournament's brackets sort in the order it plays them). */
export const BRACKETS = [...new Set(FORMATS.flatMap((f): readonly BracketKind[] => f.brackets))] as unknown as NonEmpty<BracketKind>

/** The first format: the CLI's default and the console's preselected one. */
export const DEFAULT_FORMAT: FormatName = FORMATS[0].name

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never

/** Every format's own creation options, as TypeBox properties (the API's TournamentOptions spreads them). */
export const FORMAT_OPTIONS = Object.assign({}, ...FORMATS.map((f) => f.options)) as UnionToIntersection<(typeof FORMATS)[number]['options']>

export type FormatOptionName = keyof typeof FORMAT_OPTIONS

const BY_NAME = new Map<string, FormatEngine>(FORMATS.map((f) => [f.name, f]))

export function engineOf(name: FormatName): FormatEngine {
  return BY_NAME.get(name)!
}

/** Whether `name` is a format's name (a CLI flag, a form field). */
export function isFormatName(name: string): name is FormatName {
  return BY_NAME.has(name)
}

/** Every format engine, in the registry's order. */
export function allFormats(): readonly FormatEngine[] {
  return FORMATS
}

/** The format whose own option `option` is. */
export function ownerOf(option: FormatOptionName): FormatEngine {
  return FORMATS.find((f) => option in f.options)!
}

/** How operators call format `name` (its label); the name itself for one no longer registered. */
export function labelOf(name: string): string {
  return BY_NAME.get(name)?.label ?? name
}
