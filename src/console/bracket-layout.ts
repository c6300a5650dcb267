// Where each match of an elimination bracket goes in the console's picture of
// it (src/console/pages/bracket-svg.tsx draws it). Pure: matches in, boxes
// and connector lines out, in SVG user units, so the layout is tested without
// rendering anything.
//
// The layout: one column per round, left to right. The winners bracket on
// top, the losers bracket (double elimination) below it, the third-place
// match (single elimination) below the winners bracket in the final's
// column, the grand final (and its reset) in columns right of both. Within a
// column a match sits level with the middle of the matches that feed it
// (the same-bracket matches whose nextMatchId is it), so a tree reads as a
// tree; a match nothing in its own bracket feeds (round 1, a losers match fed
// only by drops from the winners bracket) takes the next free row. Matches of
// a column never overlap: one that would is pushed down. Lines join each
// match to its nextMatchId (where the winner goes); where the loser goes
// (loserNextMatchId) is named in the match table, not drawn, so the picture
// stays readable.
import { allFormats } from '../modules/games/formats/engines'

export type LayoutBracket = 'winners' | 'losers' | 'grand_final' | 'third_place'

/** What the layout needs of a match (a subset of the API's Match). */
export interface LayoutMatch {
  id: string
  bracket: string
  round: number
  position: number
  nextMatchId: string | null
}

export interface PlacedMatch<M extends LayoutMatch = LayoutMatch> {
  match: M
  x: number
  y: number
}

export interface SectionLabel {
  bracket: LayoutBracket
  text: string
  x: number
  y: number
}

export interface Connector {
  from: string
  to: string
  /** An elbow: out of the right edge of `from`, across, into the left edge of `to`. */
  points: [number, number][]
}

export interface BracketLayout<M extends LayoutMatch = LayoutMatch> {
  width: number
  height: number
  boxes: PlacedMatch<M>[]
  labels: SectionLabel[]
  connectors: Connector[]
}

export const BOX_WIDTH = 176
export const BOX_HEIGHT = 52
/** Horizontal room between two columns, where the connectors bend. */
export const COLUMN_GAP = 36
/** Vertical room between two rows of one column. */
export const ROW_GAP = 22
/** Room above a section for its title and round labels. */
export const SECTION_HEAD = 44
/** Room between two stacked sections. */
export const SECTION_GAP = 24
const MARGIN = 8

const SECTION_TITLES: Record<LayoutBracket, string> = {
  winners: 'Winners bracket',
  losers: 'Losers bracket',
  third_place: 'Third place',
  grand_final: 'Grand final',
}

/** The brackets of the formats that play a bracket (formats/engine.ts, `plays`): the ones this layout draws. */
const ELIMINATION_BRACKETS = new Set<string>(allFormats().flatMap((f) => (f.plays === 'bracket' ? f.brackets : [])))

/** Whether a tournament's matches form a bracket this layout draws (single and double elimination). */
export function isDrawable(matches: readonly LayoutMatch[]): boolean {
  return matches.length > 0 && matches.every((m) => ELIMINATION_BRACKETS.has(m.bracket))
}

const byPlace = (a: LayoutMatch, b: LayoutMatch) => a.round - b.round || a.position - b.position

/** The column's x for a column index. */
function columnX(column: number): number {
  return MARGIN + column * (BOX_WIDTH + COLUMN_GAP)
}

/**
 * Places one bracket's matches in columns by round from `firstColumn`, rows
 * from `top`; answers the bottom edge. `ys` receives each match's y.
 */
function placeSection(matches: readonly LayoutMatch[], feeders: Map<string, LayoutMatch[]>, top: number, firstColumn: number, xs: Map<string, number>, ys: Map<string, number>): number {
  const rounds = [...new Set(matches.map((m) => m.round))].sort((a, b) => a - b)
  let bottom = top
  rounds.forEach((round, column) => {
    let nextFree = top
    for (const match of matches.filter((m) => m.round === round).sort(byPlace)) {
      const fed = (feeders.get(match.id) ?? []).filter((f) => f.bracket === match.bracket && ys.has(f.id))
      const wanted = fed.length > 0 ? fed.reduce((sum, f) => sum + ys.get(f.id)!, 0) / fed.length : nextFree
      const y = Math.max(wanted, nextFree)
      xs.set(match.id, columnX(firstColumn + column))
      ys.set(match.id, y)
      nextFree = y + BOX_HEIGHT + ROW_GAP
      bottom = Math.max(bottom, y + BOX_HEIGHT)
    }
  })
  return bottom
}

/** The picture's layout for an elimination tournament's matches (any order). */
export function layoutBracket<M extends LayoutMatch>(matches: readonly M[]): BracketLayout<M> {
  const feeders = new Map<string, LayoutMatch[]>()
  for (const m of matches) {
    if (m.nextMatchId === null) continue
    const list = feeders.get(m.nextMatchId) ?? []
    list.push(m)
    feeders.set(m.nextMatchId, list)
  }
  const of = (bracket: LayoutBracket) => matches.filter((m) => m.bracket === bracket)
  const winners = of('winners')
  const losers = of('losers')
  const thirdPlace = of('third_place')
  const grandFinal = of('grand_final').sort(byPlace)
  const columnsOf = (ms: readonly LayoutMatch[]) => new Set(ms.map((m) => m.round)).size

  const xs = new Map<string, number>()
  const ys = new Map<string, number>()
  const labels: SectionLabel[] = []
  let cursor = MARGIN

  const section = (bracket: LayoutBracket, ms: readonly LayoutMatch[], firstColumn: number) => {
    if (ms.length === 0) return
    labels.push({ bracket, text: SECTION_TITLES[bracket], x: columnX(firstColumn), y: cursor + 16 })
    cursor = placeSection(ms, feeders, cursor + SECTION_HEAD, firstColumn, xs, ys) + SECTION_GAP
  }
  section('winners', winners, 0)
  // The third-place match sits in the final's column, under the winners bracket.
  section('third_place', thirdPlace, Math.max(0, columnsOf(winners) - 1))
  section('losers', losers, 0)

  // The grand final: right of both brackets, level with the middle of the two champions' matches.
  const firstGrandColumn = Math.max(columnsOf(winners), columnsOf(losers))
  if (grandFinal.length > 0) {
    const gfTop = MARGIN + SECTION_HEAD
    labels.push({ bracket: 'grand_final', text: SECTION_TITLES.grand_final, x: columnX(firstGrandColumn), y: MARGIN + 16 })
    const bottom = placeSection(grandFinal, feeders, gfTop, firstGrandColumn, xs, ys)
    // Cross-bracket feeders (the two champions) decide round 1's height.
    const firstRound = Math.min(...grandFinal.map((m) => m.round))
    // A reset (round 2) follows the first final on its level, whether or not the first links to it.
    let previous: LayoutMatch | null = null
    for (const m of grandFinal) {
      const fed = (feeders.get(m.id) ?? []).filter((f) => ys.has(f.id))
      if (fed.length > 0 && m.round === firstRound) ys.set(m.id, fed.reduce((sum, f) => sum + ys.get(f.id)!, 0) / fed.length)
      else if (previous !== null) ys.set(m.id, ys.get(previous.id)!)
      previous = m
    }
    cursor = Math.max(cursor, bottom + SECTION_GAP)
  }

  const boxes: PlacedMatch<M>[] = [...winners, ...thirdPlace, ...losers, ...grandFinal].map((match) => ({ match: match as M, x: xs.get(match.id)!, y: ys.get(match.id)! }))
  const connectors: Connector[] = []
  for (const box of boxes) {
    const next = box.match.nextMatchId
    if (next === null || !xs.has(next)) continue
    const fromX = box.x + BOX_WIDTH
    const fromY = box.y + BOX_HEIGHT / 2
    const toX = xs.get(next)!
    const toY = ys.get(next)! + BOX_HEIGHT / 2
    const bendX = toX - COLUMN_GAP / 2
    connectors.push({ from: box.match.id, to: next, points: [[fromX, fromY], [bendX, fromY], [bendX, toY], [toX, toY]] })
  }
  const width = Math.max(...boxes.map((b) => b.x + BOX_WIDTH), 0) + MARGIN
  const height = Math.max(...boxes.map((b) => b.y + BOX_HEIGHT), cursor - SECTION_GAP) + MARGIN
  return { width, height, boxes, labels, connectors }
}
