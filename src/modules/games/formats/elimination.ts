// Single elimination through the format engine (engine.ts): the bracket of
// bracket.ts (byes to the top seeds), plus the optional third-place match
// between the semi-final losers. And the standings both elimination formats
// share: by the stage a player went out at, then by seed.
import { Type } from '@sinclair/typebox'
import { planSingleElimination } from '../bracket'
import {
  Work,
  checkParticipants,
  correctInBracket,
  loserOf,
  matchKey,
  newMatch,
  rowsInOrder,
  tally,
  type EngineMatch,
  type FormatContext,
  type FormatEngine,
  type StandingRow,
  stepOf,
} from './engine'

/** The elimination part of a bracket: single elimination's whole bracket, double elimination's winners bracket. */
export function winnersBracket(ctx: FormatContext, work: Work): { rounds: number; byes: EngineMatch[] } {
  const seeded = ctx.participants
  const plan = planSingleElimination(seeded.length)
  const byes: EngineMatch[] = []
  for (const p of plan.matches) {
    const m = newMatch(
      'winners',
      p.round,
      p.position,
      p.slot1Seed === null ? null : seeded[p.slot1Seed - 1]!,
      p.slot2Seed === null ? null : seeded[p.slot2Seed - 1]!,
    )
    m.next = p.next ? { key: matchKey('winners', p.next.round, p.next.position), slot: p.next.slot } : null
    work.create(m)
    if (p.bye) byes.push(m)
  }
  return { rounds: plan.rounds, byes }
}

export function decideByes(work: Work, byes: readonly EngineMatch[]): void {
  for (const m of byes) work.decide(m, (m.slot1 ?? m.slot2)!, 'bye')
}

/**
 * Elimination standings: `exit` gives each participant a number, higher for a
 * later exit (the champion highest); ties go to the better (lower) seed.
 */
export function eliminationStandings(ctx: FormatContext, matches: readonly EngineMatch[], exit: (p: string) => number): StandingRow[] {
  const seed = new Map(ctx.participants.map((p, i) => [p, i]))
  const ordered = [...ctx.participants].sort((a, b) => exit(b) - exit(a) || seed.get(a)! - seed.get(b)!)
  return rowsInOrder(ordered, tally(ctx.participants, matches, false))
}

/** The round of the last match each participant lost in `bracket`, from decided matches. */
export function lostIn(matches: readonly EngineMatch[], bracket: EngineMatch['bracket']): Map<string, number> {
  const out = new Map<string, number>()
  for (const m of matches) {
    if (m.bracket !== bracket) continue
    const loser = loserOf(m)
    if (loser !== null) out.set(loser, Math.max(out.get(loser) ?? 0, m.round))
  }
  return out
}

/** Its own creation options (the API's TournamentOptions). */
const singleEliminationOptions = {
  thirdPlaceMatch: Type.Optional(Type.Boolean({ description: 'single elimination: the semi-final losers play for third place (4 or more players)' })),
}

export const singleEliminationEngine: FormatEngine<'single_elimination', readonly ['winners', 'third_place'], typeof singleEliminationOptions> = {
  name: 'single_elimination',
  label: 'Single elimination',
  brackets: ['winners', 'third_place'],
  plays: 'bracket',
  drawsAreResults: false,
  afterDecisionNeeds: 'neighbours',
  options: singleEliminationOptions,

  start(ctx) {
    checkParticipants(ctx)
    const work = new Work(ctx, [], () => {})
    const { rounds, byes } = winnersBracket(ctx, work)
    if (ctx.options.thirdPlaceMatch && ctx.participants.length >= 4) {
      // The semi-finals are never byes from 4 players on (byes are in round 1 only, and round 1 is not the semi-final).
      const third = newMatch('third_place', rounds, 1, null, null)
      work.create(third)
      for (const semi of work.all().filter((m) => m.bracket === 'winners' && m.round === rounds - 1)) {
        semi.loserNext = { key: third.key, slot: semi.position === 1 ? 1 : 2 }
      }
    }
    decideByes(work, byes)
    return work.all()
  },

  afterDecision(ctx, matches, decidedKey) {
    return stepOf(singleEliminationEngine, ctx, matches, () => {}, (work) => {
      work.follow(work.get(decidedKey))
    })
  },

  disqualify(ctx, matches, participantId) {
    return stepOf(singleEliminationEngine, ctx, matches, () => {}, (work) => {
      work.forfeitAll(participantId)
    })
  },

  correct(ctx, matches, key, winner) {
    return stepOf(singleEliminationEngine, ctx, matches, () => {}, (work) => {
      correctInBracket(work, key, winner)
    })
  },

  isFinished(_ctx, matches) {
    const final = matches.find((m) => m.bracket === 'winners' && m.next === null)
    const third = matches.find((m) => m.bracket === 'third_place')
    return final?.status === 'decided' && (!third || third.status === 'decided')
  },

  standings(ctx, matches) {
    if (!singleEliminationEngine.isFinished(ctx, matches)) return []
    const final = matches.find((m) => m.bracket === 'winners' && m.next === null)!
    const third = matches.find((m) => m.bracket === 'third_place')
    const lost = lostIn(matches, 'winners')
    const exit = (p: string): number => {
      if (p === final.winner) return 1003
      if (p === loserOf(final)) return 1002
      if (third && p === third.winner) return 1001
      if (third && p === loserOf(third)) return 1000
      return lost.get(p) ?? 0
    }
    return eliminationStandings(ctx, matches, exit)
  },
}
