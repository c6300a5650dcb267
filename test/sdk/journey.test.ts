// The whole platform through the SDK only: `arena seed` on a fresh data dir,
// the real server on a free port, four players who play their tournament to
// `completed`, a PIN withdrawal, and the events of all of it arriving through
// subscribe. The SDK's traffic is recorded to prove it never sent a second
// verify for one PIN session.
//
// On PostgreSQL (npm run test:pg) the same journey runs against TWO servers on
// one database, every request of every client sent to the other server than
// the one before: the contract must hold whichever instance a request reaches.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createClient, type ArenaClient, type FetchLike, type MyMatch, type PlaneEvent, type Subscription } from '@arena/sdk'
import { onEngine, tempDir, testDatabaseEnv } from '../helpers/app'
import { run, SOURCE_COMMAND, startServe, type ServerProcess } from '../helpers/process'
import { someAddress } from '../helpers/purchases'

interface Seeded {
  game: { id: string }
  gameKey: string
  password: string
  pin: string
  players: { id: string; username: string; balance: string }[]
  /** One of each format; the single elimination (with a third-place match) first. */
  tournaments: { id: string; format: string; status: string; participants: { id: string; userId: string }[] }[]
}

interface Seat {
  username: string
  userId: string
  client: ArenaClient
  events: PlaneEvent[]
  batches: number
  subscription: Subscription
}

const dataDir = tempDir('arena-journey-')
const sent: { method: string; path: string; instance: number }[] = []
/**
 * With two instances, requests alternate between them, kind by kind (method
 * and path with ids taken out): the second login, claim, verify or poll goes
 * to the other instance than the first.
 */
const turns = new Map<string, number>()
const recording: FetchLike = (input, init) => {
  const url = new URL(input)
  const kind = `${init.method ?? 'GET'} ${url.pathname.replace(/\/[a-z]+_[0-9a-zA-Z]+/g, '/:id')}`
  const turn = turns.get(kind) ?? 0
  turns.set(kind, turn + 1)
  const instance = turn % servers.length
  sent.push({ method: init.method ?? 'GET', path: url.pathname, instance })
  const target = new URL(servers[instance]!.url)
  url.protocol = target.protocol
  url.host = target.host
  return fetch(url.toString(), init)
}

let server: ServerProcess
const servers: ServerProcess[] = []
let seeded: Seeded
const seats: Seat[] = []

beforeAll(async () => {
  // The seed and the server share one database: the data dir's, or one PostgreSQL database.
  const env = { ARENA_DATA_DIR: dataDir, ...(await testDatabaseEnv()) }
  const seed = await run([...SOURCE_COMMAND, 'seed', '--json', '--players', '4'], env)
  expect(seed.stderr).toBe('')
  expect(seed.code).toBe(0)
  seeded = JSON.parse(seed.stdout.trim().split('\n').at(-1)!) as Seeded
  server = await startServe([...SOURCE_COMMAND, 'serve'], env)
  servers.push(server)
  // A second instance on the same database, with a data dir of its own: everything it needs is in the database.
  if (onEngine('postgres')) servers.push(await startServe([...SOURCE_COMMAND, 'serve'], { ...env, ARENA_DATA_DIR: tempDir('arena-journey-b-') }))
}, 60_000)

afterAll(async () => {
  for (const seat of seats) await seat.subscription.stop()
  for (const instance of servers) expect((await instance.signal('SIGTERM')).code).toBe(0)
})

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms = 15_000): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(25)
  }
}

describe('journey through the SDK', () => {
  test('four seeded players sign in and subscribe to their events', async () => {
    expect(seeded.players).toHaveLength(4)
    expect(seeded.tournaments.map((t) => [t.format, t.status])).toEqual([
      ['single_elimination', 'running'],
      ['double_elimination', 'running'],
      ['round_robin', 'running'],
      ['swiss', 'running'],
    ])
    for (const player of seeded.players) {
      const client = createClient({ baseUrl: server.url, fetch: recording })
      const user = await client.auth.login(player.username, seeded.password)
      expect(user.id).toBe(player.id)
      const seat: Seat = { username: player.username, userId: player.id, client, events: [], batches: 0, subscription: undefined! }
      seat.subscription = client.events.subscribe(['session', 'wallet', 'status'], (batch) => {
        seat.batches++
        seat.events.push(...batch)
      })
      seats.push(seat)
    }
    // The history arrives first: the seed's credit and the tournament's start.
    for (const seat of seats) {
      await until('history', () => (seat.events.some((e) => e.type === 'tournament.started') && seat.events.some((e) => e.type === 'wallet.credited') ? true : undefined))
    }
  })

  test('the single-elimination cup is played to completed: every match by agreeing claims', async () => {
    const cup = seeded.tournaments[0]!
    const game = (seat: Seat) => seat.client.game(seeded.game.id, seeded.gameKey)
    const decisions: string[] = []
    for (let round = 1; round <= 2; round++) {
      // Each player's open running matches in the cup (the seed started one tournament of each format), paired up by match id.
      const byMatch = new Map<string, { seat: Seat; match: MyMatch }[]>()
      for (const seat of seats) {
        for (const match of await seat.client.myMatches()) {
          if (match.status !== 'running' || match.tournamentId !== cup.id) continue
          byMatch.set(match.matchId, [...(byMatch.get(match.matchId) ?? []), { seat, match }])
        }
      }
      // Round 2: the final and the third-place match.
      expect(byMatch.size).toBe(2)
      for (const [matchId, sides] of byMatch) {
        expect(sides).toHaveLength(2)
        // The slot-1 player wins; both say so.
        const winner = sides.find((s) => s.match.slot === 1)!.match.participantId
        const sessions = await Promise.all(sides.map((s) => game(s.seat).openSession(matchId)))
        expect(sessions.map((s) => s.context.matchId)).toEqual([matchId, matchId])
        const first = await game(sides[0]!.seat).submitResult(sessions[0]!, { outcome: 'WIN', winnerParticipantId: winner })
        expect(first.decision).toBe('pending')
        const second = await game(sides[1]!.seat).submitResult(sessions[1]!, { outcome: 'WIN', winnerParticipantId: winner, score: { rounds: 3 } })
        decisions.push(second.decision)
        expect(second.winnerParticipantId).toBe(winner)
      }
    }
    expect(decisions).toEqual(['game_advance', 'game_advance', 'game_advance', 'game_advance_pending_finalization'])
    const done = await until('the tournament to complete', async () => {
      const t = await seats[0]!.client.tournament(cup.id)
      return t.status === 'completed' ? t : undefined
    })
    expect(done.winnerParticipantId).toBeString()
    expect(done.matches.every((m) => m.status === 'decided')).toBe(true)
    expect(done.standings.map((s) => s.rank)).toEqual([1, 2, 3, 4])
    expect(done.standings[0]!.participantId).toBe(done.winnerParticipantId!)
  })

  test('every player hears the result through subscribe, with their own place', async () => {
    const places: number[] = []
    for (const seat of seats) {
      const completed = await until('tournament.completed', () => seat.events.find((e) => e.type === 'tournament.completed'))
      expect(completed.data.tournamentId).toBe(seeded.tournaments[0]!.id)
      places.push(completed.data.place as number)
      const types = seat.events.map((e) => e.type)
      expect(types).toContain('match.decided')
      expect(types).toContain('tournament.finalizing')
      // Oldest first, each event once.
      expect(new Set(seat.events.map((e) => e.id)).size).toBe(seat.events.length)
      expect(types.indexOf('tournament.started')).toBeLessThan(types.indexOf('tournament.completed'))
    }
    // The third-place match gives everyone a place of their own.
    expect(places.sort()).toEqual([1, 2, 3, 4])
    const champion = seats.find((s) => s.events.some((e) => e.type === 'tournament.completed' && e.data.place === 1))!
    expect(champion.events.filter((e) => e.type === 'match.decided')).toHaveLength(2)
  })

  test('a PIN withdrawal: a wrong PIN first, then the right one; the wallet events arrive; one verify per PIN session', async () => {
    const seat = seats[0]!
    const before = await seat.client.wallet()
    const to = someAddress()
    const wrong = await seat.client.purchases.authorize({ pin: seeded.pin === '583920' ? '583921' : '583920', amount: '25', destinationAddress: to })
    expect(wrong).toMatchObject({ valid: false, locked: false, attempt: 1 })
    const paid = await seat.client.purchases.authorize({ pin: seeded.pin, amount: '25', destinationAddress: to })
    expect(paid.valid).toBe(true)
    expect(paid.withdrawal).toMatchObject({ amount: '25', destinationAddress: to, status: 'signed' })
    expect(paid.withdrawal!.signature).toBeString()
    const after = await seat.client.wallet()
    expect(Number(before.balance) - Number(after.balance)).toBe(25)

    const signed = await until('wallet.withdrawal_signed', () => seat.events.find((e) => e.type === 'wallet.withdrawal_signed' && e.data.withdrawalId === paid.withdrawal!.id))
    expect(signed.topic).toBe('wallet')
    const pending = seat.events.find((e) => e.type === 'wallet.withdrawal_pending' && e.data.withdrawalId === paid.withdrawal!.id)
    expect(pending).toBeDefined()
    expect(seat.events.indexOf(pending!)).toBeLessThan(seat.events.indexOf(signed))

    const verifies = sent.filter((r) => r.method === 'POST' && /\/security\/pin-session\/[^/]+\/verify$/.test(r.path)).map((r) => r.path)
    const mints = sent.filter((r) => r.method === 'POST' && r.path === '/api/v1/security/pin-session')
    expect(verifies).toHaveLength(2)
    expect(new Set(verifies).size).toBe(verifies.length)
    expect(mints).toHaveLength(2)
  })

  test('events came in batches over long polls, and logout ends the sessions', async () => {
    // Far fewer deliveries than events: pages, not one request per event.
    const total = seats.reduce((n, s) => n + s.events.length, 0)
    const batches = seats.reduce((n, s) => n + s.batches, 0)
    expect(batches).toBeLessThan(total)
    for (const seat of seats) {
      await seat.subscription.stop()
      expect(await seat.client.auth.logout()).toEqual({ revoked: 1 })
      expect(seat.client.auth.signedIn).toBe(false)
    }
    expect(sent.some((r) => r.path.endsWith('/user/register'))).toBe(false)
    // Every instance served its share of each kind of request: logins, claims, withdrawals, event polls.
    for (const kind of ['/user/login', '/results', '/verify', '/events']) {
      expect(new Set(sent.filter((r) => r.path.endsWith(kind)).map((r) => r.instance)).size).toBe(servers.length)
    }
  })
})
