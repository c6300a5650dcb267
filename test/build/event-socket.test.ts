// The event plane over a WebSocket (contract §14) through real sockets on the
// compiled binary, on the run's engine:
// - replay then live with no gap and no duplicate while writes land
//   concurrently with the replay;
// - the close codes a client acts on: 4001 (its session ended), 4029 (too
//   many, per account and per instance), 4008 (too slow: it resumes from its
//   cursor and gets the rest exactly once), 1012 (the server stopping, which
//   then exits 0);
// - the ticket: single use, a plain GET refused without spending it;
// - events another process writes (the `arena` CLI, a process writing the
//   outbox straight into the database) reach the socket by the server's
//   once-a-second re-check.
// One server for most of it (ARENA_SOCKETS_PER_USER=2, ARENA_SOCKET_SLOW_S=1),
// one more for ARENA_SOCKETS_MAX and the stop.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { loadConfig } from '../../src/config'
import { openStorage } from '../../src/db/open'
import { inProcessWakeups } from '../../src/modules/events/wakeups'
import type { PlaneEvent } from '../../src/modules/events/model'
import { createLogger } from '../../src/shared/logger'
import { postJson, remote, req, tempDir, testDatabaseEnv, type Handler } from '../helpers/app'
import { bearer, login, registerUser } from '../helpers/auth'
import { parseMetrics } from '../helpers/metrics'
import { BINARY, buildBinary, run, startServe, type ServerProcess } from '../helpers/process'
import { attemptUpgrade, mintTicket, openSocket, RawSocketClient, SocketClient, type Frame } from '../helpers/sockets'
import { creditSurely } from '../helpers/accounts'
import { waitFor } from '../helpers/wait'
import { admin, ADMIN_TOKEN } from '../helpers/arena'

// The admin token every test app runs with (test/helpers/arena.ts), so creditSurely's credits are an operator's here too.
const ADMIN = ADMIN_TOKEN
const METRICS = 'event-socket-metrics-token-of-32-chars!'

const started: ServerProcess[] = []
const clients: { close(): void }[] = []
afterAll(() => {
  for (const client of clients) client.close()
  for (const server of started) server.proc.kill('SIGKILL')
})
beforeAll(() => buildBinary(), 180_000)

interface Player {
  id: string
  username: string
  accessToken: string
}

/** A server of the compiled binary on a fresh data dir and database, with the API it answers. */
async function binary(settings: Record<string, string>) {
  const env = { ARENA_DATA_DIR: tempDir('arena-sockets-'), ARENA_ADMIN_TOKEN: ADMIN, ...settings, ...(await testDatabaseEnv()) }
  const server = await startServe([BINARY, 'serve'], env)
  started.push(server)
  const http: Handler = remote(() => server.url)
  const wsUrl = server.url.replace(/^http/, 'ws')
  return {
    env,
    server,
    http,
    async player(): Promise<Player> {
      const user = await registerUser(http)
      const { accessToken } = await login(http, user.username)
      return { id: user.id, username: user.username, accessToken }
    },
    /** A socket of the player's session, open (not yet subscribed). */
    async socket(player: Player): Promise<SocketClient> {
      const client = await openSocket(http, wsUrl, player.accessToken)
      clients.push(client)
      return client
    },
    /** A subscribed socket that has its first answer (so its position is fixed and it reads). */
    async subscribed(player: Player, options: { after?: string; topics?: string[] } = {}): Promise<SocketClient> {
      const client = await this.socket(player)
      client.subscribe(options)
      await client.until(() => client.cursor !== undefined, 5000, 'the answer to subscribe')
      return client
    },
    credit(player: Player, reference: string, amount = '1'): Promise<Response> {
      return http.handle(postJson(`/api/v1/admin/wallets/${player.id}/credit`, { amount, reference }, admin))
    },
    /** A credit that tries a 503 again (creditSurely in test/helpers/accounts.ts). */
    creditSurely(player: Player, reference: string): Promise<number> {
      return creditSurely(http, player.id, reference)
    },
    /** GET /events from `after` to the end, every page: what the long poll says the user has. */
    async eventsAfter(player: Player, after: string | undefined): Promise<{ events: PlaneEvent[]; cursor: string }> {
      const events: PlaneEvent[] = []
      let cursor = after
      for (;;) {
        const query = cursor === undefined ? '' : `&after=${encodeURIComponent(cursor)}`
        const res = await http.handle(req(`/api/v1/events?wait=0${query}`, { headers: bearer(player.accessToken) }))
        expect(res.status).toBe(200)
        const page = (await res.json()) as { events: PlaneEvent[]; cursor: string }
        events.push(...page.events)
        cursor = page.cursor
        if (page.events.length === 0) return { events, cursor }
      }
    },
  }
}

/** A counter of the server's /metrics, of one close reason if given (0 before the first). */
async function socketMetric(url: string, name: string, reason?: string): Promise<number> {
  const metrics = await fetch(`${url}/metrics`, { headers: bearer(METRICS) })
  expect(metrics.status).toBe(200)
  const samples = parseMetrics(await metrics.text()).filter((sample) => sample.name === name && (reason === undefined || sample.labels.reason === reason))
  return samples[0]?.value ?? 0
}

const ids = (events: readonly PlaneEvent[]) => events.map((event) => event.id)
const eventsOf = (frames: readonly Frame[]) => frames.flatMap((frame) => (frame.type === 'events' ? frame.events : []))

describe('dist/arena event sockets', () => {
  let arena: Awaited<ReturnType<typeof binary>>
  beforeAll(async () => {
    arena = await binary({ ARENA_SOCKETS_PER_USER: '2', ARENA_SOCKET_SLOW_S: '1', ARENA_METRICS_TOKEN: METRICS })
  }, 30_000)

  test('replay then live under a burst of concurrent writes: the socket delivers exactly what GET /events reads from the same cursor, in order', async () => {
    const player = await arena.player()
    const { cursor } = await arena.eventsAfter(player, undefined)
    // Half of the credits before the socket opens: they are the replay.
    const before = await Promise.all(Array.from({ length: 50 }, (_, i) => arena.creditSurely(player, `burst-${i}`)))
    expect(before).toEqual(Array(50).fill(200))
    const socket = await arena.socket(player)
    socket.subscribe({ after: cursor })
    // The other half fired at once, while the socket replays: each commits somewhere in the hand-over.
    const during = await Promise.all(Array.from({ length: 50 }, (_, i) => arena.creditSurely(player, `burst-${50 + i}`)))
    expect(during).toEqual(Array(50).fill(200))
    await socket.untilEvents(100)
    // A last credit after all of them: anything the socket sent twice would come before it.
    expect((await arena.credit(player, 'fence-burst')).status).toBe(200)
    await socket.untilEvents(101)
    const delivered = socket.events
    const polled = (await arena.eventsAfter(player, cursor)).events
    expect(polled).toHaveLength(101)
    expect(ids(delivered)).toEqual(ids(polled))
    expect(new Set(ids(delivered)).size).toBe(101)
    // Commit order: each credit of 1 moved the balance by one, so the balances count up with no gap.
    expect(delivered.map((event) => Number((event.data as { balance: string }).balance))).toEqual(Array.from({ length: 101 }, (_, i) => i + 1))
    expect(new Set(delivered.map((event) => (event.data as { reference: string }).reference)).size).toBe(101)
    expect(socket.closed).toBeUndefined()
    socket.close()
  }, 30_000)

  test('a ticket: a plain GET is 400 and does not spend it; the first upgrade opens the socket, a second use is 401, as is an unknown ticket', async () => {
    const player = await arena.player()
    const ticket = await mintTicket(arena.http, player.accessToken)
    const path = `/api/v1/events/socket?ticket=${encodeURIComponent(ticket)}`
    const plain = await fetch(`${arena.server.url}${path}`)
    expect(plain.status).toBe(400)
    expect(((await plain.json()) as { error: { code: string; status: number } }).error).toMatchObject({ code: 'bad_request', status: 400 })
    const socket = await SocketClient.open(arena.server.url.replace(/^http/, 'ws'), ticket)
    clients.push(socket)
    socket.subscribe()
    await socket.until(() => socket.cursor !== undefined, 5000, 'the answer to subscribe')
    const again = await attemptUpgrade(arena.server.url, path)
    expect(again.status).toBe(401)
    expect(again.body).toEqual({ error: { code: 'unauthorized', message: expect.stringContaining('socket-ticket'), status: 401 } })
    const unknown = await attemptUpgrade(arena.server.url, `/api/v1/events/socket?ticket=${'A'.repeat(43)}`)
    expect(unknown.status).toBe(401)
    expect(unknown.body).toMatchObject({ error: { code: 'unauthorized', status: 401 } })
    // The socket the ticket opened is not disturbed by the refused reuse.
    expect(socket.closed).toBeUndefined()
    socket.close()
  }, 20_000)

  test('logout closes the session\'s socket with 4001 after sending the logout event', async () => {
    const player = await arena.player()
    const socket = await arena.subscribed(player, { topics: ['session'] })
    const res = await arena.http.handle(postJson('/api/v1/user/s/logout', {}, bearer(player.accessToken)))
    expect(res.status).toBe(200)
    expect(await socket.untilClosed()).toBe(4001)
    expect(socket.events.map((event) => event.type)).toEqual(['session.logout'])
  }, 20_000)

  test('ARENA_SOCKETS_PER_USER=2: the third socket of an account is closed with 4029; the two others keep delivering', async () => {
    const player = await arena.player()
    const first = await arena.subscribed(player, { topics: ['wallet'] })
    const second = await arena.subscribed(player, { topics: ['wallet'] })
    const third = await arena.socket(player)
    expect(await third.untilClosed()).toBe(4029)
    // Another account is not limited by this one's sockets.
    const other = await arena.subscribed(await arena.player())
    expect((await arena.credit(player, 'after-refusal')).status).toBe(200)
    for (const socket of [first, second]) {
      await socket.untilEvents(1)
      expect(socket.events.map((event) => event.type)).toEqual(['wallet.credited'])
      expect(socket.closed).toBeUndefined()
    }
    expect(other.closed).toBeUndefined()
    for (const socket of [first, second, other]) socket.close()
  }, 20_000)

  test('events the `arena` CLI writes beside the server (another process) reach an open socket', async () => {
    const player = await arena.player()
    const socket = await arena.subscribed(player, { topics: ['wallet'] })
    const credited = await run([BINARY, 'wallet', 'credit', player.username, '--amount', '7', '--reference', 'from-the-cli', '--json'], arena.env)
    expect({ code: credited.code, stderr: credited.stderr }).toEqual({ code: 0, stderr: '' })
    await socket.untilEvents(1)
    expect(socket.events[0]).toMatchObject({ type: 'wallet.credited', data: { amount: '7', reference: 'from-the-cli' } })
    socket.close()
  }, 20_000)

  test('a reader that stops reading is closed with 4008 after what it was sent, in order; it resumes from its last cursor and gets the rest exactly once', async () => {
    const player = await arena.player()
    const raw = new RawSocketClient(arena.server.port, `/api/v1/events/socket?ticket=${encodeURIComponent(await mintTicket(arena.http, player.accessToken))}`)
    clients.push({ close: () => raw.destroy() })
    await raw.ready
    raw.sendText(JSON.stringify({ type: 'subscribe' }))
    const answer = await waitFor('the answer to subscribe', async () => raw.texts().find((frame) => frame.type === 'events'))
    const from = answer.cursor
    raw.pause()

    // Another process writes ~6 MB of events for the player straight into the
    // server's database, more than the loopback's kernel buffers take from a
    // reader that reads nothing; the server hears of them by its re-check.
    const storage = await openStorage(loadConfig(arena.env), { logger: createLogger('silent'), wakeups: inProcessWakeups() })
    try {
      const append = (count: number, prefix: string, reason: string) =>
        storage.write(async (tx) => {
          for (let i = 0; i < count; i++) {
            await tx.events.append({ userId: player.id, topic: 'wallet', type: 'wallet.adjusted', data: { asset: 'USDT', amount: '1', reference: `${prefix}-${i}`, reason, balance: '1' } }, new Date())
          }
        })
      const sentBefore = await socketMetric(arena.server.url, 'arena_socket_frames_sent_total')
      await append(3000, 'bulk', 'x'.repeat(2000))
      // Once the server is sending them (and the reader takes none), a few more wait behind them.
      await waitFor('the server sending the events', async () => ((await socketMetric(arena.server.url, 'arena_socket_frames_sent_total')) > sentBefore ? true : undefined))
      await append(5, 'more', 'still waiting')
    } finally {
      await storage.close()
    }

    // Still reading nothing: the server gives up on it within ARENA_SOCKET_SLOW_S of being behind.
    await waitFor('the slow-consumer close', async () => ((await socketMetric(arena.server.url, 'arena_socket_closes_total', 'slow_consumer')) === 1 ? true : undefined), 10_000)
    raw.resume()
    await waitFor('the close frame', async () => raw.closeCode(), 10_000)
    expect(raw.closeCode()).toBe(4008)
    // The close is the last frame: nothing was sent after it.
    expect(raw.opcodes().at(-1)).toBe(0x8)
    raw.destroy()
    const { events: all } = await arena.eventsAfter(player, from)
    expect(all).toHaveLength(3005)
    const texts = raw.texts()
    const got = eventsOf(texts)
    // What it was sent is where the stream begins, in order, with no gap; and it was cut short.
    expect(got.length).toBeGreaterThan(0)
    expect(got.length).toBeLessThan(all.length)
    expect(ids(got)).toEqual(ids(all.slice(0, got.length)))
    const last = texts.findLast((frame) => frame.type === 'events')!.cursor

    const resumed = await arena.subscribed(player, { after: last })
    await resumed.untilEvents(all.length - got.length, 10_000)
    expect((await arena.credit(player, 'fence-slow')).status).toBe(200)
    await resumed.until(() => resumed.events.some((event) => event.type === 'wallet.credited'), 5000, 'the fence')
    expect(ids(resumed.events)).toEqual([...ids(all.slice(got.length)), resumed.events.at(-1)!.id])
    resumed.close()

    expect(await socketMetric(arena.server.url, 'arena_socket_closes_total', 'slow_consumer')).toBe(1)
  }, 30_000)
})

test('ARENA_SOCKETS_MAX=1: a socket past the instance\'s limit is closed with 4029; SIGTERM closes the open one with 1012 and the server exits 0', async () => {
  const arena = await binary({ ARENA_SOCKETS_MAX: '1' })
  const holder = await arena.subscribed(await arena.player())
  const refused = await arena.socket(await arena.player())
  expect(await refused.untilClosed()).toBe(4029)
  expect(holder.closed).toBeUndefined()
  const stopping = arena.server.signal('SIGTERM')
  expect(await holder.untilClosed()).toBe(1012)
  expect((await stopping).code).toBe(0)
}, 30_000)
