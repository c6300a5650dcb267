// Property tests of every format engine: random participant counts (2..64),
// random options, random outcomes (draws too where they are results), the
// matches decided in a random order by a driver that repeatedly decides any
// playable match, sometimes a random player disqualified on the way. Each run
// must finish, and:
// - nobody is in two matches of one round of one bracket;
// - every player plays the right number of matches (single elimination: one
//   loss each but the champion's; double elimination: two losses each but the
//   champion's, one or none, and the simple grand final's loser, one; round
//   robin: n − 1; Swiss: `rounds`, a bye included, at most one bye each);
// - double elimination: the only byes are in winners round 1, one per player;
// - Swiss with the default rounds and nobody disqualified: no rematch; at
//   most one bye each while some player has had none;
// - the standings are a total order (ranks 1..n, each participant once),
//   their wins/draws/losses/points recount from the matches, and the order
//   follows the documented tie-breaks (recomputed here independently).
// The seed is printed; ARENA_FORMATS_SEED replays it, ARENA_FORMATS_RUNS sets
// the runs per property.
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { applyStep, engineOf, type EngineMatch, type FormatContext, type FormatName } from '../../../src/modules/games/formats/engines'
import { chooseSeed, seededRandom } from '../../helpers/seed'
import { decide, seeds } from '../../helpers/formats'

const SEED = chooseSeed('ARENA_FORMATS_SEED', 'format properties')
const RUNS = Number(process.env.ARENA_FORMATS_RUNS || 100)
const params = { numRuns: RUNS, seed: SEED, endOnFailure: true, includeErrorInReport: true }
const TIMEOUT = 120_000

interface Run {
  ctx: FormatContext
  matches: EngineMatch[]
  /** When each disqualified player was disqualified: the index into `decisions`. */
  dqAt: Map<string, number>
  /** Every match decided by the driver, in order. */
  decisions: string[]
}

/** Plays a whole tournament, choosing from `random`; disqualifies `dq` players at random moments. */
function play(name: FormatName, n: number, options: FormatContext['options'], streamSeed: number, dq: number, drawRate: number): Run {
  const engine = engineOf(name)
  const random = seededRandom(SEED, streamSeed)
  let ctx: FormatContext = { participants: seeds(n), options, disqualified: [] }
  let matches = engine.start(ctx)
  const dqAt = new Map<string, number>()
  const decisions: string[] = []
  const scored = name === 'round_robin' || name === 'swiss'
  let guard = 0
  while (!engine.isFinished(ctx, matches)) {
    if (++guard > 5000) throw new Error('runaway')
    if (dqAt.size < dq && random() < 0.05) {
      const active = ctx.participants.filter((p) => !dqAt.has(p))
      const p = active[Math.floor(random() * active.length)]!
      dqAt.set(p, decisions.length)
      ctx = { ...ctx, disqualified: [...dqAt.keys()] }
      matches = applyStep(matches, engine.disqualify(ctx, matches, p))
      continue
    }
    const running = matches.filter((m) => m.status === 'running')
    if (running.length === 0) throw new Error(`${name} of ${n}: stalled`)
    const m = running[Math.floor(random() * running.length)]!
    const result = scored && random() < drawRate ? null : random() < 0.5 ? m.slot1! : m.slot2!
    decisions.push(m.key)
    matches = decide(engine, ctx, matches, m.key, result).matches
  }
  return { ctx, matches, dqAt, decisions }
}

function recount(ctx: FormatContext, matches: readonly EngineMatch[], byeIsWin: boolean) {
  const t = new Map(ctx.participants.map((p) => [p, { wins: 0, draws: 0, losses: 0 }]))
  for (const m of matches) {
    if (m.status !== 'decided') continue
    if (m.slot1 === null || m.slot2 === null) {
      if (byeIsWin) t.get(m.winner!)!.wins++
      continue
    }
    if (m.outcome === 'DRAW') {
      t.get(m.slot1)!.draws++
      t.get(m.slot2)!.draws++
    } else {
      t.get(m.winner!)!.wins++
      t.get(m.winner === m.slot1 ? m.slot2 : m.slot1)!.losses++
    }
  }
  return t
}

/** Common checks; returns the recount. */
function checkCommon(name: FormatName, run: Run, byeIsWin: boolean) {
  const { ctx, matches } = run
  const engine = engineOf(name)
  expect(matches.every((m) => m.status === 'decided')).toBe(true)
  // Nobody twice in a round of a bracket.
  const seen = new Set<string>()
  for (const m of matches) {
    for (const p of [m.slot1, m.slot2]) {
      if (p === null) continue
      const k = `${m.bracket}:${m.round}:${p}`
      if (seen.has(k)) throw new Error(`${p} plays twice in ${m.bracket} round ${m.round}`)
      seen.add(k)
    }
  }
  // A disqualified player wins nothing played after the disqualification (walkovers go against them).
  for (const m of matches) {
    if (m.decidedBy === 'walkover' && m.winner !== null) expect(run.dqAt.has(m.winner) && !run.dqAt.has(m.slot1 === m.winner ? m.slot2! : m.slot1!)).toBe(false)
  }
  const table = engine.standings(ctx, matches)
  expect(table.map((r) => r.rank)).toEqual(ctx.participants.map((_, i) => i + 1))
  expect(new Set(table.map((r) => r.participantId)).size).toBe(ctx.participants.length)
  const t = recount(ctx, matches, byeIsWin)
  for (const r of table) {
    const c = t.get(r.participantId)!
    expect({ p: r.participantId, wins: r.wins, draws: r.draws, losses: r.losses, points: r.points }).toEqual({
      p: r.participantId,
      ...c,
      points: 3 * c.wins + c.draws,
    })
  }
  return { table, t }
}

const seedOf = (ctx: FormatContext) => new Map(ctx.participants.map((p, i) => [p, i]))

/** Ranks strictly follow the keys (compared lexicographically, greater first). */
function expectOrderedBy(table: { participantId: string }[], key: (p: string) => number[]): void {
  for (let i = 1; i < table.length; i++) {
    const a = key(table[i - 1]!.participantId)
    const b = key(table[i]!.participantId)
    const diff = a.map((x, j) => x - b[j]!).find((d) => d !== 0) ?? 0
    if (!(diff > 0)) throw new Error(`rank ${i} ${table[i - 1]!.participantId} ${a} is not above ${table[i]!.participantId} ${b}`)
  }
}

const count = fc.integer({ min: 2, max: 64 })
const stream = fc.integer({ min: 0, max: 2 ** 30 })
const dqs = fc.constantFrom(0, 0, 1, 2)

describe(`format engines, random tournaments played out (${RUNS} runs each, seed ${SEED})`, () => {
  test('single elimination: one loss each but the champion, third place from the semi-final losers, standings by exit stage then seed', () => {
    fc.assert(
      fc.property(count, fc.boolean(), stream, dqs, (n, thirdPlaceMatch, s, dq) => {
        const run = play('single_elimination', n, { thirdPlaceMatch }, s, dq, 0)
        const { table, t } = checkCommon('single_elimination', run, false)
        const third = run.matches.find((m) => m.bracket === 'third_place')
        expect(Boolean(third)).toBe(thirdPlaceMatch && n >= 4)
        const final = run.matches.find((m) => m.bracket === 'winners' && m.next === null)!
        expect(table[0]!.participantId).toBe(final.winner!)
        for (const p of run.ctx.participants) {
          const inThird = third && (third.slot1 === p || third.slot2 === p)
          expect(t.get(p)!.losses).toBe(p === final.winner ? 0 : inThird && third.winner !== p ? 2 : 1)
        }
        const seed = seedOf(run.ctx)
        const roundLost = (p: string) => Math.max(0, ...run.matches.filter((m) => m.bracket === 'winners' && m.status === 'decided' && m.winner !== p && (m.slot1 === p || m.slot2 === p)).map((m) => m.round))
        const stage = (p: string) =>
          p === final.winner ? 100 : roundLost(p) === final.round ? 99 : third && p === third.winner ? 98 : third && (third.slot1 === p || third.slot2 === p) ? 97 : roundLost(p)
        expectOrderedBy(table, (p) => [stage(p), -seed.get(p)!])
      }),
      params,
    )
  }, TIMEOUT)

  test('double elimination: at most two losses, nobody out before two, byes only in winners round 1 and one each, one champion', () => {
    fc.assert(
      fc.property(count, fc.constantFrom('simple' as const, 'reset' as const), stream, dqs, (n, grandFinal, s, dq) => {
        const run = play('double_elimination', n, { grandFinal }, s, dq, 0)
        const { table, t } = checkCommon('double_elimination', run, false)
        const gf1 = run.matches.find((m) => m.key === 'grand_final:1:1')!
        const gf2 = run.matches.find((m) => m.key === 'grand_final:2:1')
        const final = gf2 ?? gf1
        const champion = final.winner!
        expect(table[0]!.participantId).toBe(champion)
        // A walkover in the first grand final (its winners champion disqualified) needs no reset.
        const resetDue = grandFinal === 'reset' && gf1.winner === gf1.slot2 && gf1.decidedBy === 'played'
        expect(Boolean(gf2)).toBe(resetDue)
        const byes = run.matches.filter((m) => m.decidedBy === 'bye')
        expect(byes.every((m) => m.bracket === 'winners' && m.round === 1)).toBe(true)
        expect(new Set(byes.map((m) => m.winner)).size).toBe(byes.length)
        for (const m of run.matches) if (m.bracket !== 'winners' || m.round > 1) expect(m.slot1 !== null && m.slot2 !== null).toBe(true)
        for (const p of run.ctx.participants) {
          const losses = t.get(p)!.losses
          if (p === champion) expect(losses).toBeLessThanOrEqual(1)
          else if (p === gf1.slot1 && !gf2) expect(losses).toBe(1) // the winners champion lost the one grand final
          else expect(losses).toBe(2)
        }
        const seed = seedOf(run.ctx)
        const losersRound = (p: string) => Math.max(0, ...run.matches.filter((m) => m.bracket === 'losers' && m.winner !== p && (m.slot1 === p || m.slot2 === p)).map((m) => m.round))
        const stage = (p: string) => (p === champion ? 1000 : p === final.slot1 || p === final.slot2 ? 999 : losersRound(p))
        expectOrderedBy(table, (p) => [stage(p), -seed.get(p)!])
      }),
      params,
    )
  }, TIMEOUT)

  test('round robin: everyone plays n − 1, each pair once, standings by points, head-to-head, wins, seed', () => {
    fc.assert(
      fc.property(count, stream, dqs, fc.constantFrom(0, 0.2, 0.6), (n, s, dq, drawRate) => {
        const run = play('round_robin', n, {}, s, dq, drawRate)
        const { table, t } = checkCommon('round_robin', run, false)
        const pairs = new Set(run.matches.map((m) => [m.slot1, m.slot2].sort().join(' ')))
        expect(pairs.size).toBe((n * (n - 1)) / 2)
        expect(run.matches.length).toBe((n * (n - 1)) / 2)
        for (const p of run.ctx.participants) {
          const c = t.get(p)!
          expect(c.wins + c.draws + c.losses).toBe(n - 1)
        }
        const points = (p: string) => 3 * t.get(p)!.wins + t.get(p)!.draws
        const h2h = (p: string) => {
          let sum = 0
          for (const m of run.matches) {
            if (m.slot1 !== p && m.slot2 !== p) continue
            const other = m.slot1 === p ? m.slot2! : m.slot1!
            if (points(other) !== points(p)) continue
            sum += m.outcome === 'DRAW' ? 1 : m.winner === p ? 3 : 0
          }
          return sum
        }
        const seed = seedOf(run.ctx)
        expectOrderedBy(table, (p) => [points(p), h2h(p), t.get(p)!.wins, -seed.get(p)!])
      }),
      params,
    )
  }, TIMEOUT)

  test('swiss: `rounds` matches each (a bye included, at most one), no rematch with the default rounds, standings by points, Buchholz, seed', () => {
    fc.assert(
      fc.property(count, fc.option(fc.integer({ min: 1, max: 63 }), { nil: undefined }), stream, dqs, fc.constantFrom(0, 0.2, 0.6), (n, askRounds, s, dq, drawRate) => {
        const rounds = askRounds === undefined ? Math.ceil(Math.log2(n)) : Math.min(askRounds, n - 1)
        const run = play('swiss', n, askRounds === undefined ? {} : { rounds }, s, dq, drawRate)
        const { table, t } = checkCommon('swiss', run, true)
        const byes = new Map<string, number>()
        for (const m of run.matches) if (m.decidedBy === 'bye') byes.set(m.winner!, (byes.get(m.winner!) ?? 0) + 1)
        for (const p of run.ctx.participants) {
          const played = run.matches.filter((m) => m.slot1 === p || m.slot2 === p).length
          if (run.dqAt.size === 0) expect({ p, played }).toEqual({ p, played: rounds })
          else expect(played).toBeLessThanOrEqual(rounds)
          // One bye each while there are fewer rounds than players left to give one to.
          if (rounds <= n - run.dqAt.size - 1) expect(byes.get(p) ?? 0).toBeLessThanOrEqual(1)
        }
        if (askRounds === undefined && run.dqAt.size === 0) {
          const pairs = run.matches.filter((m) => m.slot2 !== null).map((m) => [m.slot1, m.slot2].sort().join(' '))
          expect(new Set(pairs).size).toBe(pairs.length)
        }
        const points = (p: string) => 3 * t.get(p)!.wins + t.get(p)!.draws
        const buchholz = (p: string) =>
          run.matches.filter((m) => m.slot2 !== null && (m.slot1 === p || m.slot2 === p)).reduce((sum, m) => sum + points(m.slot1 === p ? m.slot2! : m.slot1!), 0)
        const seed = seedOf(run.ctx)
        expectOrderedBy(table, (p) => [points(p), buchholz(p), -seed.get(p)!])
      }),
      params,
    )
  }, TIMEOUT)
})

describe('format engines: who may play', () => {
  for (const name of ['single_elimination', 'double_elimination', 'round_robin', 'swiss'] as const) {
    test(`${name}: fewer than 2, more than 1024 or a participant twice is a RangeError`, () => {
      const engine = engineOf(name)
      for (const participants of [[], ['p1'], ['p1', 'p1'], seeds(1025)]) {
        expect(() => engine.start({ participants, options: {} })).toThrow(RangeError)
      }
    })
  }
})
