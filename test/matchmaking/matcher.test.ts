// The matcher (src/modules/matchmaking/matcher.ts), pure: table rows, a
// comparison with a naive O(n²) statement of the rule on random ticket sets,
// and a simulated queue (players join, are paired, play, rejoin) ticked every
// simulated second with its properties checked after every tick.
//
// What must stay true: a ticket's window is display ± (initial + widenPerSecond
// × seconds waited), at most ± max; a pair's displays lie in EACH other's
// window; never two tickets of one user, never two players within their
// rematch cooldown; oldest first, each taking the compatible ticket nearest in
// display (ties: the older, then id); so after a tick no two compatible
// tickets are left (maximal), the oldest ticket with a compatible partner is
// paired, and no ticket waits more than a tick past the moment it and another
// waiting ticket became compatible. The input's order does not matter.
import { describe, expect, test } from 'bun:test'
import { pairTickets, type QueueWindow, type WaitingTicket, windowOf } from '../../src/modules/matchmaking/matcher'
import { chooseSeed, seededRandom, shuffleWith } from '../helpers/seed'

// The simulations' and random sets' seed: printed here, replayed with MATCHER_SEED.
const SEED = chooseSeed('MATCHER_SEED', 'matcher properties')

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0)
const at = (seconds: number) => new Date(T0 + seconds * 1000)
const W: QueueWindow = { initial: 50, widenPerSecond: 5, max: 400 }

/** A ticket waiting since `waitedS` seconds before T0 + 1000 s (the tables' now). */
const NOW = at(1000)
function ticket(id: string, display: number, waitedS: number, userId = `usr_${id}`): WaitingTicket {
  return { id, userId, display, waitingSince: new Date(NOW.getTime() - waitedS * 1000) }
}
const ids = (pairs: Array<[WaitingTicket, WaitingTicket]>) => pairs.map(([a, b]) => [a.id, b.id])

// ------------------------------------------------------------ the reference

/** The rule as the contract states it, written apart from the module. */
function referenceWindow(window: QueueWindow, sinceMs: number, nowMs: number): number {
  const waitedS = nowMs > sinceMs ? (nowMs - sinceMs) / 1000 : 0
  const grown = window.initial + window.widenPerSecond * waitedS
  return grown < window.max ? grown : window.max
}

type Recent = (a: string, b: string) => boolean

function compatible(window: QueueWindow, nowMs: number, a: WaitingTicket, b: WaitingTicket, recent: Recent): boolean {
  if (a === b || a.userId === b.userId || recent(a.userId, b.userId)) return false
  const distance = Math.abs(a.display - b.display)
  return (
    distance <= referenceWindow(window, a.waitingSince.getTime(), nowMs) &&
    distance <= referenceWindow(window, b.waitingSince.getTime(), nowMs)
  )
}

const older = (a: WaitingTicket, b: WaitingTicket) =>
  a.waitingSince.getTime() - b.waitingSince.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

/** The greedy as stated, O(n²): oldest first, each takes the nearest compatible free ticket (ties: the older). */
function naivePairs(window: QueueWindow, now: Date, tickets: readonly WaitingTicket[], recent: Recent) {
  const byAge = [...tickets].sort(older)
  const taken = new Set<WaitingTicket>()
  const pairs: Array<[WaitingTicket, WaitingTicket]> = []
  for (const t of byAge) {
    if (taken.has(t)) continue
    let best: WaitingTicket | undefined
    for (const c of byAge) {
      if (taken.has(c) || !compatible(window, now.getTime(), t, c, recent)) continue
      const dc = Math.abs(c.display - t.display)
      const db = best === undefined ? Infinity : Math.abs(best.display - t.display)
      if (dc < db || (dc === db && older(c, best!) < 0)) best = c
    }
    if (best === undefined) continue
    taken.add(t).add(best)
    pairs.push([t, best])
  }
  return pairs
}

const never: Recent = () => false
const pairKey = (a: string, b: string) => (a < b ? `${a}|${b}` : `${b}|${a}`)

// ------------------------------------------------------------ tables

describe('windowOf', () => {
  test('initial at the start, widening by widenPerSecond, capped at max', () => {
    expect(windowOf(W, at(0), at(0))).toBe(50)
    expect(windowOf(W, at(0), at(1))).toBe(55)
    expect(windowOf(W, at(0), at(10.5))).toBe(102.5)
    expect(windowOf(W, at(0), at(70))).toBe(400) // 50 + 350: reaches max exactly
    expect(windowOf(W, at(0), at(71))).toBe(400)
    expect(windowOf(W, at(0), at(100_000))).toBe(400)
  })

  test('a clock behind waitingSince counts as 0 s; widenPerSecond 0 keeps initial', () => {
    expect(windowOf(W, at(10), at(3))).toBe(50)
    expect(windowOf({ initial: 30, widenPerSecond: 0, max: 400 }, at(0), at(500))).toBe(30)
  })
})

describe('pairTickets', () => {
  test('fewer than two tickets: no pairs', () => {
    expect(pairTickets({ now: NOW, window: W, tickets: [] })).toEqual([])
    expect(pairTickets({ now: NOW, window: W, tickets: [ticket('a', 1200, 99)] })).toEqual([])
  })

  test('two tickets in each other’s windows pair; one step outside, they do not', () => {
    // Both waited 10 s: windows of 100 each.
    expect(ids(pairTickets({ now: NOW, window: W, tickets: [ticket('a', 1000, 10), ticket('b', 1100, 10)] }))).toEqual([['a', 'b']])
    expect(pairTickets({ now: NOW, window: W, tickets: [ticket('a', 1000, 10), ticket('b', 1100.5, 10)] })).toEqual([])
    // Half a second later both windows reach 102.5.
    expect(ids(pairTickets({ now: at(1000.5), window: W, tickets: [ticket('a', 1000, 10), ticket('b', 1100.5, 10)] }))).toEqual([['a', 'b']])
  })

  test('asymmetric windows: an old wide ticket does not take a newcomer whose narrow window leaves it out', () => {
    const old = ticket('old', 1000, 60) // window 350
    // The newcomer (window 50) at 1200: inside the old ticket's window, but the old display is 200 outside its own.
    expect(pairTickets({ now: NOW, window: W, tickets: [old, ticket('new', 1200, 0)] })).toEqual([])
    // At 1040 each lies in the other's window.
    expect(ids(pairTickets({ now: NOW, window: W, tickets: [old, ticket('new', 1040, 0)] }))).toEqual([['old', 'new']])
    // The same newcomer at 1200 after 31 s (window 205): now it is.
    expect(ids(pairTickets({ now: NOW, window: W, tickets: [old, ticket('new', 1200, 31)] }))).toEqual([['old', 'new']])
  })

  test('a cooldown blocks the pair, and the ticket takes the next compatible one instead', () => {
    const a = ticket('a', 1000, 30)
    const near = ticket('near', 1010, 30)
    const far = ticket('far', 1090, 30)
    const recent: Recent = (x, y) => pairKey(x, y) === pairKey('usr_a', 'usr_near')
    expect(pairTickets({ now: NOW, window: W, tickets: [a, near], recentlyPlayed: recent })).toEqual([])
    expect(ids(pairTickets({ now: NOW, window: W, tickets: [a, near, far], recentlyPlayed: recent }))).toEqual([['a', 'far']])
    expect(ids(pairTickets({ now: NOW, window: W, tickets: [a, near, far] }))).toEqual([['a', 'near']])
  })

  test('two tickets of one user are never paired', () => {
    const tickets = [ticket('a1', 1000, 30, 'usr_same'), ticket('a2', 1001, 30, 'usr_same')]
    expect(pairTickets({ now: NOW, window: W, tickets })).toEqual([])
    const third = ticket('b', 1050, 5)
    expect(ids(pairTickets({ now: NOW, window: W, tickets: [...tickets, third] }))).toEqual([['a1', 'b']])
  })

  test('oldest first: the oldest takes its nearest compatible ticket, even from a nearer younger pair', () => {
    // a is the oldest; b and c are 20 apart, but a comes first and c is nearer to it than b.
    const a = ticket('a', 1000, 40)
    const b = ticket('b', 1080, 20)
    const c = ticket('c', 1060, 10)
    expect(ids(pairTickets({ now: NOW, window: W, tickets: [b, c, a] }))).toEqual([['a', 'c']])
    // A chain a–b–c where only neighbours fit (windows 60): the oldest is not starved by b–c.
    const narrow: QueueWindow = { initial: 60, widenPerSecond: 0, max: 60 }
    const chain = [ticket('c', 1090, 1), ticket('b', 1050, 2), ticket('a', 1000, 3)]
    expect(ids(pairTickets({ now: NOW, window: narrow, tickets: chain }))).toEqual([['a', 'b']])
  })

  test('ties in distance go to the older ticket, then the smaller id; equal times order by id', () => {
    const t = ticket('t', 1000, 50)
    const below = ticket('below', 970, 20)
    const above = ticket('above', 1030, 10)
    expect(ids(pairTickets({ now: NOW, window: W, tickets: [t, above, below] }))).toEqual([['t', 'below']])
    const above2 = ticket('above', 1030, 30)
    expect(ids(pairTickets({ now: NOW, window: W, tickets: [t, above2, below] }))).toEqual([['t', 'above']])
    // Same display, same waitingSince: the ids decide, both who goes first and who is taken.
    const same = [ticket('m3', 1200, 5), ticket('m1', 1200, 5), ticket('m2', 1200, 5), ticket('m0', 1200, 5)]
    expect(ids(pairTickets({ now: NOW, window: W, tickets: same }))).toEqual([['m0', 'm1'], ['m2', 'm3']])
    // Equal displays below: the older of them, though the younger sits nearer in the sorted order.
    const runs = [ticket('x', 1000, 50), ticket('y1', 960, 40), ticket('y2', 960, 10), ticket('y3', 960, 30)]
    expect(ids(pairTickets({ now: NOW, window: W, tickets: runs }))).toEqual([['x', 'y1'], ['y3', 'y2']])
  })

  test('pairs come in the order made, the older ticket of each first; the input objects, unmutated', () => {
    const tickets = [ticket('d', 2000, 1), ticket('c', 1990, 2), ticket('b', 1010, 3), ticket('a', 1000, 4)]
    const copy = structuredClone(tickets)
    const pairs = pairTickets({ now: NOW, window: W, tickets })
    expect(ids(pairs)).toEqual([['a', 'b'], ['c', 'd']])
    expect(pairs[0]![0]).toBe(tickets[3]!)
    expect(tickets).toEqual(copy)
  })

  test('the order of the input does not matter', () => {
    const random = seededRandom(SEED, 1)
    const tickets = Array.from({ length: 40 }, (_, i) => ticket(`t${i}`, 1000 + Math.round(random() * 20) * 10, Math.floor(random() * 60)))
    const expected = ids(pairTickets({ now: NOW, window: W, tickets }))
    expect(expected.length).toBeGreaterThan(5)
    for (let k = 0; k < 20; k++) {
      expect(ids(pairTickets({ now: NOW, window: W, tickets: shuffleWith(random, tickets) }))).toEqual(expected)
    }
  })

  test('a window that is not 0 ≤ initial ≤ max (finite, widening ≥ 0) or a non-finite display throws', () => {
    const two = [ticket('a', 1000, 1), ticket('b', 1001, 1)]
    for (const window of [
      { initial: -1, widenPerSecond: 5, max: 400 },
      { initial: 50, widenPerSecond: -5, max: 400 },
      { initial: 50, widenPerSecond: 5, max: 40 },
      { initial: 50, widenPerSecond: Number.NaN, max: 400 },
      { initial: 50, widenPerSecond: 5, max: Infinity },
    ]) {
      expect(() => pairTickets({ now: NOW, window, tickets: two })).toThrow(/invalid window/)
    }
    expect(() => pairTickets({ now: NOW, window: W, tickets: [two[0]!, ticket('n', Number.NaN, 1)] })).toThrow(/non-finite display/)
    expect(() => pairTickets({ now: NOW, window: W, tickets: [two[0]!, { ...two[1]!, waitingSince: new Date(Number.NaN) }] })).toThrow(/invalid waitingSince/)
  })
})

// ------------------------------------------------------------ random sets against the naive rule

describe('random ticket sets: the same pairs as the naive statement of the rule', () => {
  test('500 sets (2–300 tickets; shared users, cooldowns, equal displays and times)', () => {
    for (let run = 0; run < 500; run++) {
      const random = seededRandom(SEED, 2, run)
      const n = 2 + Math.floor(random() ** 2 * 299)
      const window: QueueWindow = { initial: Math.floor(random() * 60), widenPerSecond: random() < 0.2 ? 0 : random() * 10, max: 0 }
      window.max = window.initial + Math.floor(random() * 300)
      const users = Math.max(2, Math.floor(n * (0.5 + random() * 0.6)))
      const coarse = random() < 0.5 // displays on a 25-point grid and whole-second waits: many exact ties
      const tickets = Array.from({ length: n }, (_, i) => {
        const display = 1200 + (random() + random() + random() - 1.5) * 600
        const waited = random() * 90
        return ticket(`t${String(i).padStart(3, '0')}`, coarse ? Math.round(display / 25) * 25 : display, coarse ? Math.floor(waited) : waited, `u${Math.floor(random() * users)}`)
      })
      const cooldown = new Set<string>()
      const pairsOfCooldown = Math.floor(random() * n)
      for (let k = 0; k < pairsOfCooldown; k++) cooldown.add(pairKey(`u${Math.floor(random() * users)}`, `u${Math.floor(random() * users)}`))
      const recent: Recent = (a, b) => cooldown.has(pairKey(a, b))
      const got = pairTickets({ now: NOW, window, tickets: shuffleWith(random, tickets), recentlyPlayed: recent })
      const context = `seed ${SEED}, run ${run}`
      expect({ context, pairs: ids(got) }).toEqual({ context, pairs: ids(naivePairs(window, NOW, tickets, recent)) })
    }
  })
})

// ------------------------------------------------------------ the simulated queue

interface Player {
  userId: string
  display: number
  ticket?: WaitingTicket
  /** When an idle player joins again (ms). */
  rejoinAt: number
}

/**
 * One simulated queue, `ticks` simulated seconds, checked after every tick.
 * Returns how many pairs it made (so the test can see the runs do something).
 */
function simulate(run: number, ticks: number): { pairs: number; longestWaitS: number } {
  const random = seededRandom(SEED, 3, run)
  const context = `seed ${SEED} (MATCHER_SEED), run ${run}`
  const window: QueueWindow = { initial: Math.floor(random() * 80), widenPerSecond: random() < 0.15 ? 0 : Math.round(random() * 200) / 10, max: 0 }
  window.max = window.initial + Math.floor(random() * 350)
  const cooldownMs = random() < 0.3 ? 0 : Math.floor(random() * 120) * 1000
  const coarse = random() < 0.5
  const players: Player[] = Array.from({ length: 20 + Math.floor(random() * 40) }, (_, i) => {
    const normal = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random())
    const display = 1200 + normal * 300
    return { userId: `usr_${i}`, display: coarse ? Math.round(display / 10) * 10 : display, rejoinAt: T0 + random() * 30_000 }
  })
  const lastMet = new Map<string, number>()
  let ticketSeq = 0
  let pairsMade = 0
  let longestWaitS = 0

  for (let k = 1; k <= ticks; k++) {
    const nowMs = T0 + k * 1000
    const now = new Date(nowMs)
    // Joins since the last tick (at their own instants, not on the second), and a few leave.
    for (const p of players) {
      if (p.ticket === undefined && p.rejoinAt <= nowMs) {
        p.ticket = { id: `tkt_${String(ticketSeq++).padStart(6, '0')}`, userId: p.userId, display: p.display, waitingSince: new Date(Math.floor(p.rejoinAt)) }
      } else if (p.ticket !== undefined && random() < 0.005) {
        p.ticket = undefined
        p.rejoinAt = nowMs + random() * 20_000
      }
    }
    const waiting = players.filter((p) => p.ticket !== undefined).map((p) => p.ticket!)
    const recent: Recent = (a, b) => {
      const met = lastMet.get(pairKey(a, b))
      return met !== undefined && nowMs - met < cooldownMs
    }
    const pairs = pairTickets({ now, window, tickets: shuffleWith(random, waiting), recentlyPlayed: recent })
    const fail = (what: string) => {
      throw new Error(`${context}, tick ${k}: ${what}; window ${JSON.stringify(window)}, cooldown ${cooldownMs} ms`)
    }

    // The rule, exactly, and the input's order.
    if (JSON.stringify(ids(pairs)) !== JSON.stringify(ids(naivePairs(window, now, waiting, recent)))) fail(`pairs ${JSON.stringify(ids(pairs))} are not the rule's`)
    if (JSON.stringify(ids(pairTickets({ now, window, tickets: [...waiting].reverse(), recentlyPlayed: recent }))) !== JSON.stringify(ids(pairs))) fail('the input order changed the pairs')

    // Every pair: two waiting tickets, each once, in each other's window, not within the cooldown.
    const inPair = new Set<WaitingTicket>()
    for (const [a, b] of pairs) {
      if (!waiting.includes(a) || !waiting.includes(b)) fail(`a pair of tickets that are not waiting: ${a.id}, ${b.id}`)
      if (inPair.has(a) || inPair.has(b)) fail(`a ticket in two pairs: ${a.id}, ${b.id}`)
      inPair.add(a).add(b)
      if (a.userId === b.userId) fail(`two tickets of ${a.userId}`)
      if (recent(a.userId, b.userId)) fail(`${a.userId} and ${b.userId} paired within their cooldown`)
      if (!compatible(window, nowMs, a, b, recent)) fail(`${a.id} (${a.display}) and ${b.id} (${b.display}) are not in each other's windows`)
    }
    const left = waiting.filter((t) => !inPair.has(t))

    // Maximal: no two compatible tickets are left.
    for (let i = 0; i < left.length; i++) {
      for (let j = i + 1; j < left.length; j++) {
        if (compatible(window, nowMs, left[i]!, left[j]!, recent)) fail(`${left[i]!.id} and ${left[j]!.id} are compatible and both left waiting`)
      }
    }
    // Fair: the oldest ticket with any compatible partner is paired.
    const oldestWithPartner = [...waiting].sort(older).find((t) => waiting.some((o) => compatible(window, nowMs, t, o, recent)))
    if (oldestWithPartner !== undefined && !inPair.has(oldestWithPartner)) fail(`the oldest ticket with a partner, ${oldestWithPartner.id}, is left waiting`)
    // No starvation: two tickets still waiting became compatible less than a tick ago, if ever.
    // When each window reaches the other, from the window's formula solved for the time
    // (not from the windows at `now`), and when their cooldown ends.
    const reaches = (t: WaitingTicket, distance: number) => {
      const since = t.waitingSince.getTime()
      if (distance <= window.initial) return since
      if (window.widenPerSecond === 0 || distance > window.max) return Infinity
      return since + ((distance - window.initial) / window.widenPerSecond) * 1000
    }
    for (let i = 0; i < left.length; i++) {
      for (let j = i + 1; j < left.length; j++) {
        const [a, b] = [left[i]!, left[j]!]
        const distance = Math.abs(a.display - b.display)
        const met = lastMet.get(pairKey(a.userId, b.userId))
        const from = Math.max(reaches(a, distance), reaches(b, distance), met === undefined ? -Infinity : met + cooldownMs)
        if (nowMs - from >= 1000) fail(`${a.id} and ${b.id} have been compatible since ${new Date(from).toISOString()} and still wait`)
      }
    }

    // Play: the pair's players leave, remember the match, and come back later.
    for (const [a, b] of pairs) {
      lastMet.set(pairKey(a.userId, b.userId), nowMs)
      for (const t of [a, b]) {
        const p = players.find((x) => x.userId === t.userId)!
        longestWaitS = Math.max(longestWaitS, (nowMs - t.waitingSince.getTime()) / 1000)
        p.ticket = undefined
        p.rejoinAt = nowMs + 5_000 + random() * 40_000
      }
    }
    pairsMade += pairs.length
  }
  return { pairs: pairsMade, longestWaitS }
}

describe('a simulated queue, ticked every simulated second', () => {
  test('50 runs × 300 ticks: the rule, maximal, fair, within windows and cooldowns, no starvation', () => {
    let pairs = 0
    let longestWaitS = 0
    for (let run = 0; run < 50; run++) {
      const result = simulate(run, 300)
      pairs += result.pairs
      longestWaitS = Math.max(longestWaitS, result.longestWaitS)
    }
    // The runs pair players (about 170 pairs a run), some only after their windows widened a while.
    expect(pairs).toBeGreaterThan(2_500)
    expect(longestWaitS).toBeGreaterThan(30)
  })
})
