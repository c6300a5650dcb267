// The SDK's events.connect against a real server: an in-process app served on
// a loopback port (test/helpers/sockets.ts), the SDK's own fetch and the
// runtime's WebSocket. Live delivery, resuming after a server restart, a
// handler that throws, the session ending (4001), the long poll where sockets
// cannot be used (no WebSocket; a proxy that drops the upgrade) and back,
// and the back-off's delays (its random source injected, so exact).
import { afterEach, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { createClient, EventSocketError, type ArenaClient, type Connection, type ConnectOptions, type PlaneEvent } from '@arena/sdk'
import { postJson, tempDir, type TestApp } from '../helpers/app'
import { admin, createArenaApp, type Player } from '../helpers/arena'
import { PASSWORD } from '../helpers/auth'
import { funded } from '../helpers/purchases'
import { mintTicket, serve, SocketClient, upgradeStrippingProxy } from '../helpers/sockets'
import { waitFor } from '../helpers/wait'

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function credit(ctx: TestApp, player: Player, amount: number) {
  const res = await ctx.handle(postJson(`/api/v1/admin/wallets/${player.userId}/credit`, { amount: String(amount), reference: `r${amount}` }, admin))
  expect(res.status).toBe(200)
}

/** An app on a real port, a player, and an SDK client signed in as the player (through `baseUrl`, default the app's). */
async function setup(env: Record<string, string> = {}, options: { dataDir?: string } = {}) {
  const ctx = await createArenaApp(env, options)
  cleanups.push(() => ctx.close())
  const served = serve(ctx)
  cleanups.push(() => served.stop())
  const player = await funded(ctx, '0')
  return { ctx, served, player }
}

async function signedIn(baseUrl: string, player: Player): Promise<ArenaClient> {
  const client = createClient({ baseUrl })
  await client.auth.login(player.username, PASSWORD)
  return client
}

/** What a connection handed over, and what it reported. */
class Heard {
  readonly batches: PlaneEvent[][] = []
  readonly errors: unknown[] = []
  readonly reconnects: { delayMs: number; code: number | undefined; attempt: number }[] = []

  get events(): PlaneEvent[] {
    return this.batches.flat()
  }

  /** The wallet credits' amounts, in the order they came. */
  get amounts(): number[] {
    return this.events.filter((e) => e.type === 'wallet.credited').map((e) => Number(e.data.amount))
  }

  options(extra: Partial<ConnectOptions> = {}): ConnectOptions {
    return {
      onEvents: (events) => void this.batches.push(events),
      onError: (error) => void this.errors.push(error),
      onReconnect: (info) => void this.reconnects.push(info),
      minBackoffMs: 20,
      maxBackoffMs: 200,
      ...extra,
    }
  }

  until(what: string, check: () => boolean, ms = 8000): Promise<true> {
    return waitFor(what, async () => (check() ? true : undefined), ms)
  }

  /** Every event once: no id twice. */
  expectNoDuplicates(): void {
    const ids = this.events.map((e) => e.id)
    expect(new Set(ids).size).toBe(ids.length)
  }
}

function connected(ctx: TestApp, connection: Connection, heard: Heard): Promise<true> {
  return heard.until('the socket open and subscribed', () => connection.transport === 'socket' && connection.cursor !== undefined && ctx.services.sockets.openSockets() === 1)
}

describe('SDK events.connect', () => {
  test('delivers live events in order over the socket; setTopics changes what comes on the same socket; stop() ends it with nothing after', async () => {
    const { ctx, served, player } = await setup()
    const client = await signedIn(served.url, player)
    const heard = new Heard()
    const connection = client.events.connect(heard.options({ topics: ['wallet'] }))
    cleanups.push(() => connection.stop())
    await connected(ctx, connection, heard)
    for (const amount of [1, 2, 3]) await credit(ctx, player, amount)
    await heard.until('three credits', () => heard.amounts.length === 3)
    expect(heard.amounts).toEqual([1, 2, 3])
    expect(heard.events.every((e) => e.topic === 'wallet')).toBe(true)
    expect(connection.transport).toBe('socket')

    // Session events only, from here: a login elsewhere comes (so the subscribe was handled), a credit does not.
    connection.setTopics(['session'])
    const elsewhere = await signedIn(served.url, player)
    await heard.until('the other login', () => heard.events.some((e) => e.type === 'session.login'))
    await credit(ctx, player, 4)
    await elsewhere.auth.logout()
    await heard.until('the other logout', () => heard.events.some((e) => e.type === 'session.logout'))
    expect(heard.amounts).toEqual([1, 2, 3])
    expect(ctx.services.sockets.openSockets()).toBe(1)

    const before = heard.events.length
    await connection.stop()
    expect(await connection.done).toEqual({ reason: 'stopped' })
    await heard.until('the socket closed on the server', () => ctx.services.sockets.openSockets() === 0)
    await credit(ctx, player, 5)
    connection.setTopics(['wallet'])
    expect(heard.events.length).toBe(before)
    expect(heard.errors).toEqual([])
    heard.expectNoDuplicates()
  })

  test('resumes on a second instance of the same data after the first stops (1012): every event once, in order', async () => {
    const dataDir = tempDir()
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }))
    const { ctx: first, served, player } = await setup({}, { dataDir })
    const client = await signedIn(served.url, player)
    const heard = new Heard()
    // Every jitter draws 0.5: each delay is exact.
    const connection = client.events.connect(heard.options({ topics: ['wallet'], random: () => 0.5, restartJitterMs: 40 }))
    cleanups.push(() => connection.stop())
    await connected(first, connection, heard)
    for (const amount of [1, 2, 3]) await credit(first, player, amount)
    await heard.until('three credits', () => heard.amounts.length === 3)

    await served.stop()
    // The second instance: the same database, the same port; events written while no one listens come on resume.
    const second = await createArenaApp({}, { dataDir })
    cleanups.push(() => second.close())
    for (const amount of [4, 5, 6]) await credit(second, player, amount)
    const again = serve(second, { port: served.port })
    cleanups.push(() => again.stop())
    for (const amount of [7, 8, 9]) await credit(second, player, amount)
    await heard.until('nine credits', () => heard.amounts.length >= 9)
    await connected(second, connection, heard)
    expect(heard.amounts).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9])
    heard.expectNoDuplicates()

    // 1012: at once (within the restart jitter), the back-off reset; then, if no server answered yet, growing from the start.
    expect(heard.reconnects[0]).toEqual({ delayMs: 20, code: 1012, attempt: 0 })
    const refused = heard.reconnects.slice(1)
    expect(refused.map((r) => r.delayMs)).toEqual(refused.map((r) => 0.5 * Math.min(200, 20 * 2 ** (r.attempt - 1))))
    expect(heard.errors.some((e) => e instanceof EventSocketError && e.code === 1012)).toBe(true)
  })

  test('a server that is stopping closes every new socket with 1012 at once: the first 1012 is rejoined promptly, those after back off', async () => {
    const { ctx, served, player } = await setup()
    const client = await signedIn(served.url, player)
    const heard = new Heard()
    const connection = client.events.connect(heard.options({ topics: ['wallet'], random: () => 0.5, restartJitterMs: 400 }))
    cleanups.push(() => connection.stop())
    await connected(ctx, connection, heard)
    await credit(ctx, player, 1)
    await heard.until('the credit', () => heard.amounts.length === 1)
    // What listen()'s stop does first; the listener stays, so new sockets are taken and closed 1012.
    ctx.services.sockets.closeAll()
    await heard.until('four reconnects', () => heard.reconnects.length >= 4)
    await connection.stop()
    expect(heard.reconnects.slice(0, 4)).toEqual([
      { delayMs: 200, code: 1012, attempt: 0 },
      { delayMs: 10, code: 1012, attempt: 1 },
      { delayMs: 20, code: 1012, attempt: 2 },
      { delayMs: 40, code: 1012, attempt: 3 },
    ])
  })

  test('a handler that throws gets the same events again, on the next connection; the cursor does not pass them', async () => {
    const { ctx, served, player } = await setup()
    const client = await signedIn(served.url, player)
    const heard = new Heard()
    const failure = new Error('the game could not apply it')
    let calls = 0
    const connection = client.events.connect(
      heard.options({
        topics: ['wallet'],
        onEvents: (events) => {
          calls++
          if (calls === 1) throw failure
          heard.batches.push(events)
        },
      }),
    )
    cleanups.push(() => connection.stop())
    await connected(ctx, connection, heard)
    const start = connection.cursor
    await credit(ctx, player, 1)
    await heard.until('the credit, handled', () => heard.amounts.length === 1)
    expect(calls).toBe(2)
    expect(heard.errors).toEqual([failure])
    // It closed the socket and came back from the cursor before the batch: a fresh socket, the same events.
    expect(heard.reconnects).toHaveLength(1)
    expect(connection.cursor).not.toBe(start)
    await credit(ctx, player, 2)
    await heard.until('the next credit', () => heard.amounts.length === 2)
    expect(heard.amounts).toEqual([1, 2])
    heard.expectNoDuplicates()
  })

  test('a connection that goes silent (no frame, not even a ping, for silenceMs) is replaced, and resumes from its cursor', async () => {
    const { ctx, served, player } = await setup()
    const client = await signedIn(served.url, player)
    const heard = new Heard()
    // The server pings every 25 s: a 300 ms silence passes for a dead connection, again and again.
    const connection = client.events.connect(heard.options({ topics: ['wallet'], silenceMs: 300 }))
    cleanups.push(() => connection.stop())
    await connected(ctx, connection, heard)
    await credit(ctx, player, 1)
    await heard.until('two silences', () => heard.reconnects.length >= 2)
    await credit(ctx, player, 2)
    await heard.until('both credits', () => heard.amounts.length === 2)
    expect(heard.amounts).toEqual([1, 2])
    expect(heard.errors.some((e) => e instanceof EventSocketError && e.code === 4000)).toBe(true)
    heard.expectNoDuplicates()
    // The replaced sockets were closed, not left open on the server.
    await heard.until('one socket on the server', () => ctx.services.sockets.openSockets() <= 1)
  })

  test('a session that ends closes with 4001: the connection ends and says so, and does not reconnect', async () => {
    const { ctx, served, player } = await setup()
    const client = await signedIn(served.url, player)
    const heard = new Heard()
    const connection = client.events.connect(heard.options({ topics: ['session', 'wallet'] }))
    await connected(ctx, connection, heard)
    await client.auth.logout()
    const end = await connection.done
    expect(end.reason).toBe('failed')
    const error = (end as { error: unknown }).error
    expect(error).toBeInstanceOf(EventSocketError)
    expect((error as EventSocketError).code).toBe(4001)
    expect(heard.errors.at(-1)).toBe(error)
    // The logout itself came first, then the close.
    expect(heard.events.map((e) => e.type)).toEqual(['session.logout'])
    expect(heard.reconnects).toEqual([])
    expect(ctx.services.sockets.openSockets()).toBe(0)
    await connection.stop()
  })

  test('without a WebSocket it long-polls: from now when given no cursor, from a saved cursor when given one, once each; setTopics restarts the poll', async () => {
    const { ctx, served, player } = await setup()
    const client = await signedIn(served.url, player)
    await credit(ctx, player, 1)
    const heard = new Heard()
    const first = client.events.connect(heard.options({ topics: ['wallet'], WebSocket: null }))
    expect(first.transport).toBe('poll')
    // No cursor: what was there before is skipped, as a socket without `after` does.
    await heard.until('the poll at the newest event', () => first.cursor !== undefined)
    await credit(ctx, player, 2)
    await heard.until('the live credit', () => heard.amounts.length === 1)
    await first.stop()
    const saved = first.cursor
    await credit(ctx, player, 3)

    const connection = client.events.connect(heard.options({ topics: ['wallet'], WebSocket: null, after: saved }))
    cleanups.push(() => connection.stop())
    await heard.until('the credit made while stopped', () => heard.amounts.length === 2)
    await credit(ctx, player, 4)
    await heard.until('the next live credit', () => heard.amounts.length === 3)
    expect(heard.amounts).toEqual([2, 3, 4])

    connection.setTopics(['session'])
    const elsewhere = await signedIn(served.url, player)
    await heard.until('the other login', () => heard.events.some((e) => e.type === 'session.login'))
    await credit(ctx, player, 5)
    await elsewhere.auth.logout()
    await heard.until('the other logout', () => heard.events.some((e) => e.type === 'session.logout'))
    expect(heard.amounts).toEqual([2, 3, 4])
    expect(connection.transport).toBe('poll')
    expect(ctx.services.sockets.openSockets()).toBe(0)
    expect(heard.errors).toEqual([])
    heard.expectNoDuplicates()
  })

  test('behind a proxy that drops the upgrade it falls back to the long poll, then returns to the socket once it opens: nothing twice, nothing lost', async () => {
    const { ctx, served, player } = await setup()
    const proxy = upgradeStrippingProxy(served.url)
    cleanups.push(() => proxy.stop())
    const client = await signedIn(proxy.url, player)
    // The runtime's WebSocket, aimed past the proxy once the "network" lets sockets through.
    let direct = false
    class Network extends WebSocket {
      constructor(url: string) {
        super(direct ? url.replace(proxy.wsUrl, served.wsUrl) : url)
      }
    }
    const heard = new Heard()
    const connection = client.events.connect(heard.options({ topics: ['wallet'], WebSocket: Network, socketFailuresBeforePoll: 2, socketRetryMs: 300 }))
    cleanups.push(() => connection.stop())
    await heard.until('the fall-back to the long poll', () => connection.transport === 'poll')
    expect(proxy.upgradesRefused()).toBeGreaterThanOrEqual(2)
    expect(heard.errors.filter((e) => e instanceof EventSocketError).length).toBeGreaterThanOrEqual(2)
    await heard.until('the poll at the newest event', () => connection.cursor !== undefined)
    for (const amount of [1, 2]) await credit(ctx, player, amount)
    await heard.until('two credits by the poll', () => heard.amounts.length === 2)
    // Still refused when it tries again: straight back to the poll.
    await heard.until('a retry refused', () => proxy.upgradesRefused() >= 3)
    await credit(ctx, player, 3)
    await heard.until('a third credit by the poll', () => heard.amounts.length === 3)
    expect(ctx.services.sockets.openSockets()).toBe(0)

    direct = true
    await connected(ctx, connection, heard)
    for (const amount of [4, 5]) await credit(ctx, player, amount)
    await heard.until('two credits by the socket', () => heard.amounts.length === 5)
    expect(heard.amounts).toEqual([1, 2, 3, 4, 5])
    heard.expectNoDuplicates()
  })

  test('back-off: full jitter, doubling to the cap, while the server refuses with 4029; then it connects and delivers', async () => {
    const { ctx, served, player } = await setup({ ARENA_SOCKETS_PER_USER: '1' })
    // The account's one socket, held by another device.
    const holder = await SocketClient.open(served.wsUrl, await mintTicket(ctx, player.tokens.accessToken))
    cleanups.push(() => holder.close())
    const client = await signedIn(served.url, player)
    const draws = [0.5, 0.9, 0.1, 0.75, 0.3, 0.6]
    let next = 0
    const heard = new Heard()
    const connection = client.events.connect(heard.options({ topics: ['wallet'], minBackoffMs: 8, maxBackoffMs: 40, random: () => draws[next++ % draws.length]! }))
    cleanups.push(() => connection.stop())
    await heard.until('five refusals', () => heard.reconnects.length >= 5)
    holder.close()
    await connected(ctx, connection, heard)
    await credit(ctx, player, 1)
    await heard.until('the credit', () => heard.amounts.length === 1)
    const refusals = heard.reconnects.filter((r) => r.code === 4029)
    expect(refusals.length).toBeGreaterThanOrEqual(5)
    // delay n = draw n × min(cap, base × 2^n): 8, 16, 32, 40, 40, ...
    expect(refusals.slice(0, 5).map((r) => r.delayMs)).toEqual([0.5 * 8, 0.9 * 16, 0.1 * 32, 0.75 * 40, 0.3 * 40])
    expect(refusals.slice(0, 5).map((r) => r.attempt)).toEqual([1, 2, 3, 4, 5])
    expect(heard.errors.filter((e) => e instanceof EventSocketError && e.code === 4029).length).toBe(refusals.length)
  })
})
