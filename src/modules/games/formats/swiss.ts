// Swiss through the format engine (engine.ts). `rounds` rounds (default
// ⌈log2 n⌉, at most n − 1); a round is paired once the one before it is
// complete.
// - Round 1: the top half by seed meets the bottom half (1 v n/2+1, 2 v n/2+2, …).
// - Later rounds: players in order of points (win 3, draw 1, loss 0), then
//   seed; each, from the top, meets the next player they have not met yet
//   (a backtracking search over the choices of the bye, bounded by a budget:
//   with the default rounds it always finds a pairing without a rematch; past
//   its budget, near n − 1 rounds, it pairs top-down, each with the next player
//   not met yet where there is one).
// - An odd count: the lowest-placed player who has not had a bye yet gets one
//   (a match with one player, decided at once, a win: 3 points).
// - A drawn match is a result.
// - Standings are live: points, then Buchholz (the sum of the points of the
//   opponents met in matches, a bye counting none), then seed.
// - A disqualified player forfeits the current match and is paired no more.
import { Type } from '@sinclair/typebox'
import {
  CorrectionTooLate,
  Work,
  checkParticipants,
  newMatch,
  pointsOf,
  rowsInOrder,
  tally,
  type EngineMatch,
  type FormatContext,
  type FormatEngine,
  stepOf,
} from './engine'
import { checkResult, correctScored } from './round-robin'

export function swissRounds(ctx: FormatContext): number {
  const n = ctx.participants.length
  const rounds = ctx.options.rounds ?? Math.ceil(Math.log2(n))
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > n - 1) throw new RangeError(`Swiss of ${n} players: rounds must be an integer from 1 to ${n - 1}, got ${rounds}`)
  return rounds
}

/**
 * Search steps a round's pairing may take before it gives up avoiding every
 * rematch. Never reached with the default rounds up to 64 players (tested);
 * reached when the rounds come near n − 1, where no rematch-free pairing may
 * be left.
 */
const SEARCH_BUDGET = 20_000

/** Pairs players 0..count−1 (count even; lower index = higher placed) so no pair has met; null when none is found within the budget. */
function pairWithoutRematch(count: number, met: (a: number, b: number) => boolean, budget: { left: number }): [number, number][] | null {
  const paired = new Array<boolean>(count).fill(false)
  const out: [number, number][] = []
  const search = (): boolean => {
    const i = paired.indexOf(false)
    if (i < 0) return true
    paired[i] = true
    for (let j = i + 1; j < count; j++) {
      if (paired[j] || met(i, j)) continue
      if (--budget.left < 0) return false
      paired[j] = true
      out.push([i, j])
      if (search()) return true
      out.pop()
      paired[j] = false
    }
    paired[i] = false
    return false
  }
  return search() ? out : null
}

/** Top-down: each unpaired player, from the top, meets the next one not met yet, or else the next one. */
function pairGreedily(count: number, met: (a: number, b: number) => boolean): [number, number][] {
  const paired = new Array<boolean>(count).fill(false)
  const out: [number, number][] = []
  for (let i = 0; i < count; i++) {
    if (paired[i]) continue
    paired[i] = true
    let j = -1
    for (let k = i + 1; k < count; k++) if (!paired[k] && (j < 0 || (!met(i, k) && met(i, j)))) j = k
    paired[j] = true
    out.push([i, j])
  }
  return out
}

function roundOf(matches: Iterable<EngineMatch>, round: number): EngineMatch[] {
  return [...matches].filter((m) => m.round === round)
}

function lastRound(matches: Iterable<EngineMatch>): number {
  let r = 0
  for (const m of matches) r = Math.max(r, m.round)
  return r
}

/** Creates round `round`'s matches in `work`: pairs, then the bye. */
function pairRound(work: Work, round: number): void {
  const ctx = work.ctx
  const seed = new Map(ctx.participants.map((p, i) => [p, i]))
  const active = ctx.participants.filter((p) => !work.isDisqualified(p))
  if (active.length < 2) return
  const matches = work.all()
  const t = tally(ctx.participants, matches, true)
  const order = [...active].sort((a, b) => pointsOf(t.get(b)!) - pointsOf(t.get(a)!) || seed.get(a)! - seed.get(b)!)
  const hadBye = new Set(matches.filter((m) => m.decidedBy === 'bye').map((m) => m.winner!))
  const opponents = new Map<string, Set<string>>(active.map((p) => [p, new Set()]))
  for (const m of matches) {
    if (m.slot1 === null || m.slot2 === null) continue
    opponents.get(m.slot1)?.add(m.slot2)
    opponents.get(m.slot2)?.add(m.slot1)
  }

  let pairs: [string, string][] | null = null
  let bye: string | null = null
  if (round === 1) {
    const playing = order.length % 2 === 1 ? order.slice(0, -1) : order
    bye = order.length % 2 === 1 ? order.at(-1)! : null
    const half = playing.length / 2
    pairs = playing.slice(0, half).map((p, i) => [p, playing[half + i]!])
  } else {
    // The bye: only to players without one while there are any (a second bye is worse than a rematch).
    const withoutBye = order.filter((p) => !hadBye.has(p))
    const candidates = order.length % 2 === 0 ? [null] : [...(withoutBye.length > 0 ? withoutBye : order)].reverse()
    const budget = { left: SEARCH_BUDGET }
    const attempt = (c: string | null, search: boolean): [string, string][] | null => {
      const rest = order.filter((p) => p !== c)
      const met = (i: number, j: number) => opponents.get(rest[i]!)!.has(rest[j]!)
      const found = search ? pairWithoutRematch(rest.length, met, budget) : pairGreedily(rest.length, met)
      return found && found.map(([i, j]) => [rest[i]!, rest[j]!])
    }
    for (const c of candidates) {
      pairs = attempt(c, true)
      if (pairs) {
        bye = c
        break
      }
      if (budget.left < 0) break
    }
    if (!pairs) {
      // No rematch-free pairing found: the preferred bye, then as few rematches as a top-down pass makes.
      bye = candidates[0] ?? null
      pairs = attempt(bye, false)!
    }
  }
  pairs.forEach(([a, b], i) => {
    // The better seed in slot 1.
    const [s1, s2] = seed.get(a)! < seed.get(b)! ? [a, b] : [b, a]
    work.create(newMatch('swiss', round, i + 1, s1, s2))
  })
  if (bye !== null) {
    const m = newMatch('swiss', round, pairs.length + 1, bye, null)
    work.create(m)
    work.decide(m, bye, 'bye')
  }
}

function onDecided(work: Work, m: EngineMatch): void {
  checkResult(m)
  const rounds = swissRounds(work.ctx)
  if (m.round >= rounds || lastRound(work.byKey.values()) !== m.round) return
  if (roundOf(work.byKey.values(), m.round).every((x) => x.status === 'decided')) pairRound(work, m.round + 1)
}

/** Its own creation options (the API's TournamentOptions). */
const swissOptions = {
  rounds: Type.Optional(Type.Integer({ minimum: 1, maximum: 1023, description: 'Swiss: rounds to play, at most players − 1 (default ⌈log2 players⌉)' })),
}

export const swissEngine: FormatEngine<'swiss', readonly ['swiss'], typeof swissOptions> = {
  name: 'swiss',
  label: 'Swiss',
  brackets: ['swiss'],
  plays: 'paired-rounds',
  drawsAreResults: true,
  // A round is paired once the one before is complete, and a match feeds nothing.
  afterDecisionNeeds: 'all-decided',
  options: swissOptions,
  optionProblems(options, players) {
    return options.rounds !== undefined && options.rounds > players - 1 ? [{ path: 'body/options/rounds', message: `At most ${players - 1} rounds for ${players} players` }] : []
  },
  // A registration that filled less than asked for plays as many rounds as its players allow.
  fitOptions(options, players) {
    return options.rounds !== undefined && options.rounds > players - 1 ? { ...options, rounds: Math.max(1, players - 1) } : options
  },

  start(ctx) {
    checkParticipants(ctx)
    swissRounds(ctx)
    const work = new Work(ctx, [], onDecided)
    pairRound(work, 1)
    return work.all()
  },

  afterDecision(ctx, matches, decidedKey) {
    return stepOf(swissEngine, ctx, matches, onDecided, (work) => {
      work.follow(work.get(decidedKey))
    })
  },

  disqualify(ctx, matches, participantId) {
    return stepOf(swissEngine, ctx, matches, onDecided, (work) => {
      work.forfeitAll(participantId)
    })
  },

  correct(ctx, matches, key, winner) {
    return stepOf(swissEngine, ctx, matches, onDecided, (work) => {
      const m = work.get(key)
      const later = work.all().filter((x) => x.round > m.round)
      const played = later.find((x) => x.status === 'decided' && x.decidedBy !== 'bye')
      if (played) throw new CorrectionTooLate(key, played.key)
      // The next round was paired on the old result: it is paired again.
      for (const x of later) work.remove(x.key)
      correctScored(work, key, winner)
      onDecided(work, work.get(key))
    })
  },

  isFinished(ctx, matches) {
    if (matches.some((m) => m.status !== 'decided')) return false
    const active = ctx.participants.length - new Set(ctx.disqualified ?? []).size
    return lastRound(matches) >= swissRounds(ctx) || active < 2
  },

  standings(ctx, matches) {
    const t = tally(ctx.participants, matches, true)
    const seed = new Map(ctx.participants.map((p, i) => [p, i]))
    const points = (p: string) => pointsOf(t.get(p)!)
    const buchholz = buchholzOf(ctx, matches)
    const ordered = [...ctx.participants].sort((a, b) => points(b) - points(a) || buchholz.get(b)! - buchholz.get(a)! || seed.get(a)! - seed.get(b)!)
    return rowsInOrder(ordered, t)
  },
}

/** Buchholz of each participant, as the standings compute it (for tests and views). */
export function buchholzOf(ctx: FormatContext, matches: readonly EngineMatch[]): Map<string, number> {
  const t = tally(ctx.participants, matches, true)
  const out = new Map(ctx.participants.map((p) => [p, 0]))
  for (const m of matches) {
    if (m.slot1 === null || m.slot2 === null || m.status !== 'decided') continue
    out.set(m.slot1, out.get(m.slot1)! + pointsOf(t.get(m.slot2)!))
    out.set(m.slot2, out.get(m.slot2)! + pointsOf(t.get(m.slot1)!))
  }
  return out
}
