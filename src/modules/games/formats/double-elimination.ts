// Double elimination through the format engine (engine.ts).
//
// The winners bracket is single elimination's (bracket.ts: byes in round 1 to
// the top seeds). Its losers drop into a losers bracket built at the start
// from the number of losers each winners round sends, so that the losers
// bracket has no byes at all: only winners round 1 has byes, one per top seed,
// and nobody gets two. (A fixed power-of-two losers bracket would give byes to
// the losers of byes-fed matches, who already had one.) The losers bracket:
// - its entrants are the losers of winners round w (round 1: only its played
//   matches), available at level 0 for round 1 and 2w − 3 after;
// - while there are more units (entrants or losers-bracket winners) than the
//   next winners round sends, the two lowest-level units play (play-in
//   matches; a losers-bracket match's round is one more than its units'
//   highest level);
// - from winners round 2 or 3 on the bracket is regular: the survivors meet
//   the round's losers one to one (crossed every other round, to put off
//   rematches), then the survivors meet each other, halving;
// - its champion meets the winners-bracket champion in the grand final; with
//   `grandFinal: reset` (the default) a second grand final is created when the
//   losers-bracket champion wins the first.
import { Type } from '@sinclair/typebox'
import {
  CorrectionTooLate,
  Work,
  checkParticipants,
  correctInBracket,
  loserOf,
  matchKey,
  newMatch,
  type EngineMatch,
  type FormatContext,
  type FormatEngine,
  stepOf,
} from './engine'
import { decideByes, eliminationStandings, lostIn, winnersBracket } from './elimination'

interface Unit {
  /** The match whose winner or loser this is. */
  src: string
  kind: 'winner' | 'loser'
  level: number
  /** May be a player who already had a bye (an entrant from a winners match fed by a bye). */
  byeFed: boolean
}

const GF1 = matchKey('grand_final', 1, 1)
const GF2 = matchKey('grand_final', 2, 1)

function onDecided(work: Work, m: EngineMatch): void {
  if (m.key !== GF1 || !needsReset(work.ctx, m, (p) => work.isDisqualified(p))) return
  if (work.byKey.has(GF2)) return
  const reset = newMatch('grand_final', 2, 1, m.slot1, m.slot2)
  work.create(reset)
}

function needsReset(ctx: FormatContext, gf1: EngineMatch, isOut: (p: string) => boolean): boolean {
  const loser = loserOf(gf1)
  return (ctx.options.grandFinal ?? 'reset') === 'reset' && gf1.status === 'decided' && gf1.winner === gf1.slot2 && loser !== null && !isOut(loser)
}

/** Its own creation options (the API's TournamentOptions). */
const doubleEliminationOptions = {
  grandFinal: Type.Optional(
    Type.Union([Type.Literal('simple'), Type.Literal('reset')], { description: 'double elimination (default `reset`): a second grand final when the losers-bracket champion wins the first' }),
  ),
}

export const doubleEliminationEngine: FormatEngine<'double_elimination', readonly ['winners', 'losers', 'grand_final'], typeof doubleEliminationOptions> = {
  name: 'double_elimination',
  label: 'Double elimination',
  brackets: ['winners', 'losers', 'grand_final'],
  plays: 'bracket',
  drawsAreResults: false,
  afterDecisionNeeds: 'neighbours',
  options: doubleEliminationOptions,

  start(ctx) {
    checkParticipants(ctx)
    const work = new Work(ctx, [], onDecided)
    const { rounds, byes } = winnersBracket(ctx, work)
    const winners = work.all()
    const roundOf = (r: number) => winners.filter((m) => m.round === r)
    const byeKeys = new Set(byes.map((m) => m.key))

    const positions = new Map<number, number>()
    const link = (u: Unit, ref: { key: string; slot: 1 | 2 }) => {
      const src = work.get(u.src)
      if (u.kind === 'winner') src.next = ref
      else src.loserNext = ref
    }
    const play = (a: Unit, b: Unit): Unit => {
      const round = Math.max(a.level, b.level) + 1
      const position = (positions.get(round) ?? 0) + 1
      positions.set(round, position)
      const m = newMatch('losers', round, position, null, null)
      work.create(m)
      link(a, { key: m.key, slot: 1 })
      link(b, { key: m.key, slot: 2 })
      return { src: m.key, kind: 'winner', level: round, byeFed: a.byeFed || b.byeFed }
    }
    /** Plays the two lowest-level units (earlier listed first among equals) until `target` are left. */
    const reduce = (units: Unit[], target: number): Unit[] => {
      let pool = [...units]
      while (pool.length > target) {
        pool.sort((a, b) => a.level - b.level)
        const [a, b, ...rest] = pool
        pool = [...rest, play(a!, b!)]
      }
      return pool
    }
    const halve = (units: Unit[]): Unit[] => {
      const out: Unit[] = []
      for (let i = 0; i < units.length; i += 2) out.push(play(units[i]!, units[i + 1]!))
      return out
    }
    const entrants = (w: number): Unit[] =>
      roundOf(w)
        .filter((m) => !byeKeys.has(m.key))
        .map((m) => ({
          src: m.key,
          kind: 'loser' as const,
          level: w === 1 ? 0 : 2 * w - 3,
          byeFed: w === 2 && winners.some((f) => f.next?.key === m.key && byeKeys.has(f.key)),
        }))

    let units = entrants(1)
    if (rounds >= 2) {
      const d2 = roundOf(2).length
      let from: number
      if (units.length >= d2) {
        units = reduce(units, d2)
        from = 2
      } else {
        // Fewer round-1 losers than round-2 losers: they play in with the round-2
        // losers, those who may have had a bye first (so they play, not wait).
        const second = entrants(2).sort((a, b) => Number(b.byeFed) - Number(a.byeFed))
        units = reduce([...units, ...second], d2)
        if (rounds > 2) units = halve(units)
        from = 3
      }
      for (let w = from; w <= rounds; w++) {
        const dropping = entrants(w)
        if (units.length !== dropping.length) throw new Error(`losers bracket: ${units.length} survivors for ${dropping.length} losers of round ${w}`)
        const crossed = w % 2 === 0 ? [...dropping].reverse() : dropping
        units = units.map((u, i) => play(u, crossed[i]!))
        if (w < rounds) units = halve(units)
      }
    }

    const gf = newMatch('grand_final', 1, 1, null, null)
    work.create(gf)
    work.get(matchKey('winners', rounds, 1)).next = { key: GF1, slot: 1 }
    link(units[0]!, { key: GF1, slot: 2 })
    decideByes(work, byes)
    return work.all()
  },

  afterDecision(ctx, matches, decidedKey) {
    return stepOf(doubleEliminationEngine, ctx, matches, onDecided, (work) => {
      work.follow(work.get(decidedKey))
    })
  },

  disqualify(ctx, matches, participantId) {
    return stepOf(doubleEliminationEngine, ctx, matches, onDecided, (work) => {
      work.forfeitAll(participantId)
    })
  },

  correct(ctx, matches, key, winner) {
    return stepOf(doubleEliminationEngine, ctx, matches, onDecided, (work) => {
      if (key === GF1) {
        const reset = work.byKey.get(GF2)
        if (reset?.status === 'decided') throw new CorrectionTooLate(key, GF2)
        correctInBracket(work, key, winner)
        if (reset && winner === reset.slot1) work.remove(GF2)
        onDecided(work, work.get(GF1))
      } else {
        correctInBracket(work, key, winner)
      }
    })
  },

  isFinished(ctx, matches) {
    const gf1 = matches.find((m) => m.key === GF1)
    if (!gf1 || gf1.status !== 'decided') return false
    const gf2 = matches.find((m) => m.key === GF2)
    if (gf2) return gf2.status === 'decided'
    const out = new Set(ctx.disqualified ?? [])
    return !needsReset(ctx, gf1, (p) => out.has(p))
  },

  standings(ctx, matches) {
    if (!doubleEliminationEngine.isFinished(ctx, matches)) return []
    const final = matches.find((m) => m.key === GF2) ?? matches.find((m) => m.key === GF1)!
    const lost = lostIn(matches, 'losers')
    const exit = (p: string): number => {
      if (p === final.winner) return 10_001
      if (p === loserOf(final)) return 10_000
      return lost.get(p) ?? 0
    }
    return eliminationStandings(ctx, matches, exit)
  },
}
