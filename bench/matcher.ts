// One matchmaking tick (src/modules/matchmaking/matcher.ts, pairTickets) over
// 10 000 waiting tickets: how long the pure matcher takes, in this process,
// median and max of BENCH_RUNS runs after three unmeasured ones. Each run gets
// the same tickets, shuffled (the store's order is not the matcher's). The
// window is { initial 50, widenPerSecond 5, max 400 } (max reached after 70 s).
// Scenarios:
//   realistic  displays normal around 1200 (sd 300), waits uniform 0–120 s;
//              2 % of the players have played a display neighbour recently
//   at-max     the same displays, every window at max (waits 70–120 s)
//   newcomers  the same displays, every window at initial (waits 0)
//   cooldowns  the realistic tickets, every player having recently played
//              the 10 players nearest in display (a busy queue with a long
//              rematch cooldown): refusals are the term the matcher's cost
//              grows with (its module comment, "Cost")
//   blocked    the pathological end of that term: BENCH_BLOCKED (2000)
//              tickets at max that have all played one another recently, so
//              every ticket refuses every younger one in reach (quadratic)
// Prints one JSON line per scenario: { scenario, tickets, runs, medianMs,
// maxMs, cpuMedianMs, pairs, cooldownChecks } (cpuMedianMs: the process's CPU
// time of the median run, which waiting for a busy core does not inflate;
// cooldownChecks: calls of recentlyPlayed in one tick), then one with them all
// and the load average. docs/performance.md, "Matchmaking (issue 39)", has the figures.
//
//   npx bun bench/matcher.ts
//
// BENCH_TICKETS (10000), BENCH_RUNS (30), BENCH_SEED (1), BENCH_BLOCKED (2000).
import { pairTickets, type QueueWindow, type WaitingTicket } from '../src/modules/matchmaking/matcher'
import { seededRandom, shuffleWith } from '../test/helpers/seed'

const TICKETS = Number(process.env.BENCH_TICKETS ?? 10_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 30)
const SEED = Number(process.env.BENCH_SEED ?? 1)
const BLOCKED = Number(process.env.BENCH_BLOCKED ?? 2_000)
const WINDOW: QueueWindow = { initial: 50, widenPerSecond: 5, max: 400 }
const NOW = new Date(Date.UTC(2026, 10, 28, 12, 0, 0))

const random = seededRandom(SEED)
const normal = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random())
const displays = Array.from({ length: TICKETS }, () => Math.round((1200 + normal() * 300) * 100) / 100)

function tickets(waitS: () => number): WaitingTicket[] {
  return displays.map((display, i) => ({
    id: `tkt_${String(i).padStart(8, '0')}`,
    userId: `usr_${String(i).padStart(8, '0')}`,
    display,
    waitingSince: new Date(NOW.getTime() - Math.floor(waitS() * 1000)),
  }))
}

const pairKey = (a: string, b: string) => (a < b ? `${a}|${b}` : `${b}|${a}`)

/** 2 % of the players, each with a display neighbour (among its 10 nearest) it has played recently. */
function neighbourCooldowns(list: WaitingTicket[]): Set<string> {
  const byDisplay = [...list].sort((a, b) => a.display - b.display)
  const pairs = new Set<string>()
  for (let k = 0; k < list.length * 0.02; k++) {
    const p = Math.floor(random() * byDisplay.length)
    const q = Math.min(byDisplay.length - 1, Math.max(0, p + Math.floor(random() * 11) - 5))
    if (p !== q) pairs.add(pairKey(byDisplay[p]!.userId, byDisplay[q]!.userId))
  }
  return pairs
}

function measure(scenario: string, list: WaitingTicket[], recent: (a: string, b: string) => boolean) {
  let checks = 0
  const recentlyPlayed = (a: string, b: string) => {
    checks++
    return recent(a, b)
  }
  const times: number[] = []
  const cpu: number[] = []
  let pairs = 0
  for (let run = -3; run < RUNS; run++) {
    const input = shuffleWith(random, list)
    checks = 0
    const started = performance.now()
    const cpuStarted = process.cpuUsage()
    pairs = pairTickets({ now: NOW, window: WINDOW, tickets: input, recentlyPlayed }).length
    const used = process.cpuUsage(cpuStarted)
    const ms = performance.now() - started
    if (run >= 0) {
      times.push(ms)
      cpu.push((used.user + used.system) / 1000)
    }
  }
  times.sort((a, b) => a - b)
  cpu.sort((a, b) => a - b)
  const round = (ms: number) => Math.round(ms * 100) / 100
  const figures = {
    scenario,
    tickets: list.length,
    runs: RUNS,
    medianMs: round(times[Math.floor(times.length / 2)]!),
    maxMs: round(times[times.length - 1]!),
    cpuMedianMs: round(cpu[Math.floor(cpu.length / 2)]!),
    pairs,
    cooldownChecks: checks,
  }
  summary.push(figures)
  console.log(JSON.stringify(figures))
}
const summary: Record<string, unknown>[] = []

const realistic = tickets(() => random() * 120)
const cooldowns = neighbourCooldowns(realistic)
measure('realistic', realistic, (a, b) => cooldowns.has(pairKey(a, b)))
measure('at-max', tickets(() => 70 + random() * 50), (a, b) => cooldowns.has(pairKey(a, b)))
measure('newcomers', tickets(() => 0), (a, b) => cooldowns.has(pairKey(a, b)))
const byDisplay = [...realistic].sort((a, b) => a.display - b.display)
const nearest = new Set<string>()
for (let p = 0; p < byDisplay.length; p++) {
  for (let q = p + 1; q <= p + 10 && q < byDisplay.length; q++) nearest.add(pairKey(byDisplay[p]!.userId, byDisplay[q]!.userId))
}
measure('cooldowns', realistic, (a, b) => nearest.has(pairKey(a, b)))
measure('blocked', tickets(() => 70 + random() * 50).slice(0, BLOCKED), () => true)
// The run's figures in one line, with the load average (the machine may be shared).
console.log(JSON.stringify({ bench: 'matcher', target: '10 000 tickets paired within 100 ms', realisticMedianMs: summary[0]!.medianMs, realisticCpuMedianMs: summary[0]!.cpuMedianMs, scenarios: summary, load: (await Bun.file('/proc/loadavg').text()).split(' ').slice(0, 3).join(' ') }))
