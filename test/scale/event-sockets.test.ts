// Event-plane WebSockets (contract §14) across two instances of the compiled
// binary on one PostgreSQL database, as a studio runs them behind a load
// balancer that sends each connection wherever it likes. What must stay true:
// - a ticket minted on one instance opens a socket on the other (tickets are
//   rows of the shared database), once: spent there, it is refused here;
// - a socket hears every instance's writes: credits made through B reach a
//   socket on A in order, each once, woken by NOTIFY (not by the once-a-second
//   re-check: every one arrives within 900 ms of its write's answer, and A's
//   fan-out histogram counts them, which only a wake-up does);
// - a session ended on B (logout) closes its socket on A with 4001, and only
//   its own: another session's socket hears the logout event and stays open;
// - limits are per instance (ARENA_SOCKETS_PER_USER=1 here): one socket of an
//   account on A and one on B both stay open, a second on A is closed 4029;
// - A SIGKILLed while credits stream in through B: the client reconnects to B
//   with a fresh ticket and resumes from the last cursor it got, and what its
//   two sockets delivered equals GET /events from the start, every event once;
// - A stopped gracefully (SIGTERM): its sockets close with 1012 and the
//   clients resume on B with nothing lost.
//
// The pauses between credits and the moment of the kill come from the seed
// printed at the start (ARENA_TEST_SEED replays it, as far as the timing of
// real processes allows).
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import type { PlaneEvent } from '../../src/modules/events/model'
import { onEngine, postJson, remote, req, tempDir, testDatabaseEnv, type Handler } from '../helpers/app'
import { ADMIN_TOKEN, admin } from '../helpers/arena'
import { bearer, login, registerUser } from '../helpers/auth'
import { describeOnEngine } from '../helpers/engine'
import { parseMetrics } from '../helpers/metrics'
import { BINARY, buildBinary, startServe, type ServerProcess } from '../helpers/process'
import { chooseSeed, seededRandom } from '../helpers/seed'
import { mintTicket, RawSocketClient, SocketClient } from '../helpers/sockets'

const SEED = onEngine('postgres') ? chooseSeed('ARENA_TEST_SEED', 'event sockets across instances') : 0
const METRICS_TOKEN = 'event-sockets-metrics-token-0123456789abcdef'
const JWT_SECRET = 'event-sockets-signing-secret-0123456789abcdef'
/** Below the hub's once-a-second re-check: a delivery this fast came from a wake-up (NOTIFY), give or take luck, which the histogram rules out. */
const NOTIFY_LIMIT_MS = 900

interface Instance {
  name: string
  server: ServerProcess
  http: Handler
  /** ws://127.0.0.1:port */
  ws: string
}

interface Player {
  id: string
  token: string
}

let database: Record<string, string> = {}
const dataDirs = new Map<string, string>()
const servers: ServerProcess[] = []
const sockets: SocketClient[] = []
let a: Instance
let b: Instance

async function startInstance(name: string): Promise<Instance> {
  if (!dataDirs.has(name)) dataDirs.set(name, tempDir(`arena-sockets-${name}-`))
  const server = await startServe(
    [BINARY, 'serve'],
    {
      ...database,
      ARENA_DATA_DIR: dataDirs.get(name)!,
      ARENA_JWT_SECRET: JWT_SECRET,
      ARENA_ADMIN_TOKEN: ADMIN_TOKEN,
      ARENA_METRICS_TOKEN: METRICS_TOKEN,
      ARENA_SOCKETS_PER_USER: '1',
    },
    { timeoutMs: 30_000 },
  )
  servers.push(server)
  return { name, server, http: remote(() => server.url), ws: server.url.replace(/^http/, 'ws') }
}

/** A new account, signed in through `via`. */
async function newPlayer(via: Handler): Promise<Player> {
  const user = await registerUser(via)
  return { id: user.id, token: (await login(via, user.username)).accessToken }
}

/** Credits 1 to `userId` through `via`; the stored reference is `<userId>/<reference>` (references are unique across accounts). */
async function credit(via: Handler, userId: string, reference: string): Promise<void> {
  const res = await via.handle(postJson(`/api/v1/admin/wallets/${userId}/credit`, { amount: '1', reference: `${userId}/${reference}` }, admin))
  if (res.status !== 200) throw new Error(`credit ${reference}: ${res.status} ${await res.text()}`)
}

/** GET /events, every page, from `after` (absent: from the start). */
async function eventsFrom(via: Handler, token: string, after?: string): Promise<{ events: PlaneEvent[]; cursor: string | undefined }> {
  const events: PlaneEvent[] = []
  let cursor = after
  for (;;) {
    const res = await via.handle(req(`/api/v1/events${cursor === undefined ? '' : `?after=${encodeURIComponent(cursor)}`}`, { headers: bearer(token) }))
    expect(res.status).toBe(200)
    const page = (await res.json()) as { events: PlaneEvent[]; cursor: string }
    cursor = page.cursor
    if (page.events.length === 0) return { events, cursor }
    events.push(...page.events)
  }
}

/** A socket on `on` with a ticket minted on `mintOn`, subscribed and answered. */
async function socketOn(on: Instance, mintOn: Instance, player: Player, subscribe: { after?: string; topics?: string[] } = {}): Promise<SocketClient> {
  const socket = await SocketClient.open(on.ws, await mintTicket(mintOn.http, player.token))
  sockets.push(socket)
  socket.subscribe(subscribe)
  await socket.until(() => socket.cursor !== undefined, 5000, `the subscribe's answer on ${on.name}`)
  return socket
}

/** One sample of an instance's GET /metrics (0 when absent). */
async function metric(instance: Instance, name: string, labels: Record<string, string> = {}): Promise<number> {
  const res = await fetch(`${instance.server.url}/metrics`, { headers: bearer(METRICS_TOKEN) })
  expect(res.status).toBe(200)
  const sample = parseMetrics(await res.text()).find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
  return sample?.value ?? 0
}

const ids = (events: PlaneEvent[]) => events.map((e) => e.id)
/** The credits' references, as `credit` was given them. */
const references = (events: PlaneEvent[]) => events.filter((e) => e.type === 'wallet.credited').map((e) => String(e.data.reference).replace(/^[^/]*\//, ''))

afterAll(async () => {
  for (const socket of sockets) socket.close()
  for (const server of servers) server.proc.kill('SIGKILL')
  await Promise.all(servers.map((server) => server.proc.exited))
  for (const dir of dataDirs.values()) rmSync(dir, { recursive: true, force: true })
})

describeOnEngine('postgres', 'event sockets across two instances', () => {
  beforeAll(async () => {
    await buildBinary()
    database = await testDatabaseEnv('postgres')
    ;[a, b] = await Promise.all([startInstance('a'), startInstance('b')])
  }, 120_000)

  test('a socket on A, its ticket minted on B, hears every credit made through B in order, once, woken by NOTIFY', async () => {
    const random = seededRandom(SEED, 1)
    const player = await newPlayer(b.http)
    const ticket = await mintTicket(b.http, player.token)
    const socket = await SocketClient.open(a.ws, ticket)
    sockets.push(socket)
    socket.subscribe({ topics: ['wallet'] })
    await socket.until(() => socket.cursor !== undefined, 5000, 'the subscribe answer')
    const opened = socket.cursor!
    // Spent on A, so refused on B: one row in the one database, deleted once.
    const again = new RawSocketClient(b.server.port, `/api/v1/events/socket?ticket=${encodeURIComponent(ticket)}`)
    await expect(again.ready).rejects.toThrow(/^no upgrade: HTTP\/1\.1 401/)
    again.destroy()

    const fannedOutBefore = await metric(a, 'arena_socket_fanout_seconds_count')
    const CREDITS = 12
    const lags: number[] = []
    for (let i = 0; i < CREDITS; i++) {
      // Spread the writes over the phase of A's re-check (once a second).
      await Bun.sleep(Math.floor(random() * 250))
      await credit(b.http, player.id, `notify-${i}`)
      const answered = performance.now()
      await socket.untilEvents(i + 1)
      lags.push(Math.max(0, performance.now() - answered))
    }
    console.log(`delivery on A after the write's answer on B, ms: ${lags.map((ms) => ms.toFixed(1)).join(' ')}`)
    const expected = Array.from({ length: CREDITS }, (_, i) => `notify-${i}`)
    expect(references(socket.events)).toEqual(expected)
    // Each once, nothing else: what GET /events has after the socket's first cursor.
    const stored = await eventsFrom(a.http, player.token, opened)
    expect(ids(socket.events)).toEqual(ids(stored.events.filter((e) => e.topic === 'wallet')))
    expect(Math.max(...lags)).toBeLessThan(NOTIFY_LIMIT_MS)
    // A's histogram counts a frame only when a wake-up led to its read; the
    // re-check's reads are not counted, and A itself wrote nothing: NOTIFY
    // woke it (now and then the re-check may read first, so not all of them).
    const fannedOut = (await metric(a, 'arena_socket_fanout_seconds_count')) - fannedOutBefore
    expect(fannedOut).toBeGreaterThanOrEqual(CREDITS / 2)
    expect(fannedOut).toBeLessThanOrEqual(CREDITS)
  }, 30_000)

  test('a logout through B closes the session\'s socket on A with 4001; another session\'s socket stays open', async () => {
    const user = await registerUser(a.http)
    const ending = { id: user.id, token: (await login(a.http, user.username)).accessToken }
    const staying = { id: user.id, token: (await login(b.http, user.username)).accessToken }
    const onA = await socketOn(a, a, ending)
    const onB = await socketOn(b, b, staying)

    const res = await b.http.handle(postJson('/api/v1/user/s/logout', {}, bearer(ending.token)))
    expect(res.status).toBe(200)
    expect(await onA.untilClosed()).toBe(4001)
    // Its own logout was delivered first (the socket is subscribed to every topic).
    expect(onA.events.map((e) => e.type)).toEqual(['session.logout'])
    // The other session's socket heard that logout, and stays open: a credit through A still reaches it.
    await credit(a.http, user.id, 'after-logout')
    await onB.until(() => references(onB.events).includes('after-logout'), 5000, 'the credit after the logout')
    expect(onB.events.map((e) => e.type)).toEqual(['session.logout', 'wallet.credited'])
    expect(onB.closed).toBeUndefined()
  }, 30_000)

  test('limits are per instance: with ARENA_SOCKETS_PER_USER=1, one socket on A and one on B stay open; a second on A is closed 4029', async () => {
    const player = await newPlayer(a.http)
    const tooManyBefore = { a: await metric(a, 'arena_socket_closes_total', { reason: 'too_many' }), b: await metric(b, 'arena_socket_closes_total', { reason: 'too_many' }) }
    const onA = await socketOn(a, b, player)
    const onB = await socketOn(b, a, player)
    const second = await SocketClient.open(a.ws, await mintTicket(b.http, player.token))
    sockets.push(second)
    expect(await second.untilClosed()).toBe(4029)
    // The two within the limit are open and hear writes made through either instance.
    await credit(a.http, player.id, 'limit-1')
    await credit(b.http, player.id, 'limit-2')
    for (const socket of [onA, onB]) await socket.until(() => references(socket.events).length === 2, 5000, 'both credits')
    expect(references(onA.events)).toEqual(['limit-1', 'limit-2'])
    expect(references(onB.events)).toEqual(['limit-1', 'limit-2'])
    expect([onA.closed, onB.closed]).toEqual([undefined, undefined])
    expect({
      a: (await metric(a, 'arena_socket_closes_total', { reason: 'too_many' })) - tooManyBefore.a,
      b: (await metric(b, 'arena_socket_closes_total', { reason: 'too_many' })) - tooManyBefore.b,
    }).toEqual({ a: 1, b: 0 })
    expect(await metric(a, 'arena_sockets_open')).toBeGreaterThanOrEqual(1)
  }, 30_000)

  test('A SIGKILLed while credits stream in through B: the client resumes on B from its last cursor, every event exactly once, in order', async () => {
    const random = seededRandom(SEED, 4)
    const player = await newPlayer(b.http)
    // What the client read before it opened a socket, and the cursor it resumes from.
    const before = await eventsFrom(b.http, player.token)
    const first = await socketOn(a, a, player, { after: before.cursor })

    const STREAMS = 2
    const PER_STREAM = 30
    const killAfter = 8 + Math.floor(random() * 20)
    let answered = 0
    const streams = Array.from({ length: STREAMS }, async (_, s) => {
      for (let i = 0; i < PER_STREAM; i++) {
        await credit(b.http, player.id, `stream${s}-${i}`)
        answered++
      }
    })
    const writing = Promise.all(streams)
    await first.untilEvents(killAfter, 15_000)
    const killing = a.server.signal('SIGKILL')
    const answeredAtKill = answered
    await killing
    const code = await first.untilClosed()
    console.log(`A killed after ${first.events.length} events on its socket (asked for ${killAfter}), ${answeredAtKill} credits answered; the socket closed ${code}`)
    // Mid-stream: credits were still being made; the connection dropped, no close frame.
    expect(answeredAtKill).toBeLessThan(STREAMS * PER_STREAM)
    expect(code).toBe(1006)

    const second = await socketOn(b, b, player, { after: first.cursor })
    await writing
    const total = STREAMS * PER_STREAM
    await second.until(() => first.events.length + second.events.length >= total, 15_000, `${total} events over both sockets`)

    const delivered = [...before.events, ...first.events, ...second.events]
    const stored = await eventsFrom(b.http, player.token)
    expect(ids(delivered)).toEqual(ids(stored.events))
    expect(new Set(ids(delivered)).size).toBe(delivered.length)
    const expected = Array.from({ length: STREAMS }, (_, s) => Array.from({ length: PER_STREAM }, (_, i) => `stream${s}-${i}`)).flat()
    expect(references(delivered).sort()).toEqual([...expected].sort())
    // Each stream's credits in the order they were made.
    for (let s = 0; s < STREAMS; s++) {
      expect(references(delivered).filter((r) => r.startsWith(`stream${s}-`))).toEqual(expected.filter((r) => r.startsWith(`stream${s}-`)))
    }
  }, 40_000)

  test('A stopped gracefully (SIGTERM): its sockets close 1012 and the clients resume on B with nothing lost', async () => {
    if (a.server.proc.exitCode !== null || a.server.proc.signalCode !== null) a = await startInstance('a')
    const players = [await newPlayer(a.http), await newPlayer(b.http)]
    const before = await Promise.all(players.map((p) => eventsFrom(b.http, p.token)))
    const onA = await Promise.all(players.map((p, i) => socketOn(a, b, p, { after: before[i]!.cursor })))
    const creditAll = (reference: string) => Promise.all(players.map((p) => credit(b.http, p.id, reference)))

    await creditAll('before-stop')
    for (const socket of onA) await socket.until(() => references(socket.events).includes('before-stop'), 5000, 'the credit before the stop')
    const stopping = a.server.signal('SIGTERM')
    const during = creditAll('during-stop')
    expect(await Promise.all(onA.map((socket) => socket.untilClosed(10_000)))).toEqual([1012, 1012])
    expect((await stopping).code).toBe(0)
    await during
    await creditAll('after-stop')

    const onB = await Promise.all(players.map((p, i) => socketOn(b, b, p, { after: onA[i]!.cursor })))
    for (const [i, player] of players.entries()) {
      const socket = onB[i]!
      await socket.until(() => references([...onA[i]!.events, ...socket.events]).length === 3, 5000, 'three credits over both sockets')
      const delivered = [...before[i]!.events, ...onA[i]!.events, ...socket.events]
      expect(ids(delivered)).toEqual(ids((await eventsFrom(b.http, player.token)).events))
      expect(references(delivered)).toEqual(['before-stop', 'during-stop', 'after-stop'])
    }
  }, 40_000)
})
