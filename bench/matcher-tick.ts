// One matcher tick over the database (MatchmakingService.matchTick): 10 000
// open tickets in one queue, in-process, on this machine's engine (SQLite by
// default; BENCH_ENGINE=postgres). bench/matcher.ts times the pure pairing;
// this one times what a tick does around it:
//   decide  reading the queue's open tickets and its recent pairs, and
//           pairing them: what decides every pair of the tick
//   make    making the matches (each pair its own unit of work: both tickets
//           read again, the match and its seats, the tickets closed, the
//           ready check's job, two match.found events)
// The tickets are written straight into the database (users, then tickets:
// displays normal around 1200, sd 300; waits uniform 0–120 s; the window
// { initial 50, widenPerSecond 5, max 400 }), unstaked.
//
//   npx bun bench/matcher-tick.ts
//
// BENCH_TICKETS (10000), BENCH_SEED (1), BENCH_RUNS (3: fresh tickets each run),
// BENCH_MAKE (1; 0: the decide figure alone). One JSON line a run, then one
// with them all and the load average; decideCpuMs is this process's CPU time
// over the decision (on PostgreSQL the database's is not in it), which waiting
// for a busy core does not inflate.
import { createTestApp } from '../test/helpers/app'
import { pairTickets } from '../src/modules/matchmaking/matcher'
import { seededRandom } from '../test/helpers/seed'
import { newId } from '../src/shared/ids'
import { cliActor } from '../src/cli/actor'

const TICKETS = Number(process.env.BENCH_TICKETS ?? 10_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 3)
/** BENCH_MAKE=0 skips making the matches (the decide figure alone, faster). */
const MAKE = process.env.BENCH_MAKE !== '0'
const random = seededRandom(Number(process.env.BENCH_SEED ?? 1))
const normal = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random())

const ctx = await createTestApp({ env: { ARENA_ADMIN_TOKEN: 'bench-admin-token-of-at-least-32-chars!!', ARENA_LOG_LEVEL: 'warn' }, ...(process.env.BENCH_ENGINE ? { engine: process.env.BENCH_ENGINE as 'sqlite' | 'postgres' } : {}) })
const by = cliActor(ctx.services)
const { game } = await ctx.services.games.createGame('Bench game', by)
const { queue } = await ctx.services.matchmaking.createQueue(game.id, { name: 'ranked', rated: false, window: { initial: 50, widenPerSecond: 5, max: 400 }, readyCheckS: 30 }, by)

const { db, tables } = ctx.peek
const runs: { decideMs: number; decideCpuMs: number; readMs: number; perMatchMs: number; engine: string }[] = []
for (let run = 1; run <= RUNS; run++) {
  const now = ctx.clock.now()
  const users = Array.from({ length: TICKETS }, (_, i) => ({ id: newId('user'), username: `b${run}_${i}`, usernameKey: `b${run}_${i}`, country: 'ZZ', createdAt: now }))
  for (let i = 0; i < users.length; i += 500) await db.insert(tables.users).values(users.slice(i, i + 500))
  const tickets = users.map((u) => ({
    id: newId('ticket'),
    queueId: queue.id,
    gameId: game.id,
    userId: u.id,
    display: Math.round((1200 + normal() * 300) * 100) / 100,
    waitingSince: new Date(now.getTime() - Math.floor(random() * 120_000)),
    status: 'open' as const,
    createdAt: now,
  }))
  for (let i = 0; i < tickets.length; i += 500) await db.insert(tables.tickets).values(tickets.slice(i, i + 500))

  const read = ctx.storage.read
  const t0 = performance.now()
  const cpu0 = process.cpuUsage()
  const open = await read.matchmaking.waitingTickets(queue.id)
  const readMs = performance.now() - t0
  const recent = await read.matchmaking.recentPairs(game.id, now)
  const pairs = pairTickets({ now, window: queue.window, tickets: open, recentlyPlayed: () => recent.length < 0 })
  const decideMs = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  const decideCpuMs = Math.round((cpu.user + cpu.system) / 100) / 10
  const t1 = performance.now()
  const made = MAKE ? await ctx.services.matchmaking.matchTick() : 0
  const makeMs = performance.now() - t1
  const figures = { run, engine: ctx.config.databaseUrl ? 'postgres' : 'sqlite', tickets: open.length, pairs: pairs.length, readMs: Math.round(readMs * 10) / 10, decideMs: Math.round(decideMs * 10) / 10, decideCpuMs, made, makeMs: Math.round(makeMs), perMatchMs: Math.round((makeMs / Math.max(made, 1)) * 1000) / 1000 }
  runs.push(figures)
  console.log(JSON.stringify(figures))
  // Whatever the tick left open is closed before the next run's tickets.
  await db.update(tables.tickets).set({ status: 'cancelled', closedAt: now })
  ctx.clock.advance(60_000)
}
await ctx.close()
const sorted = (values: number[]) => [...values].sort((a, b) => a - b)
// The run's figures in one line, with the load average (the machine may be shared).
console.log(
  JSON.stringify({
    bench: 'matcher-tick',
    engine: runs[0]?.engine,
    tickets: TICKETS,
    target: '10 000 tickets paired (decide) within 100 ms',
    decideMs: sorted(runs.map((r) => r.decideMs)),
    decideCpuMs: sorted(runs.map((r) => r.decideCpuMs)),
    readMs: sorted(runs.map((r) => r.readMs)),
    ...(MAKE ? { perMatchMs: sorted(runs.map((r) => r.perMatchMs)) } : {}),
    load: (await Bun.file('/proc/loadavg').text()).split(' ').slice(0, 3).join(' '),
  }),
)
