// What an instance holds and tells of its event sockets (contract §14): at
// most ARENA_SOCKETS_PER_USER per account and ARENA_SOCKETS_MAX in all (one
// more is closed 4029, the others untouched); /metrics counts them; the
// once-a-second re-check delivers an event no wake-up in this process told
// of (another process on the same database); a graceful stop closes every
// socket with 1012.
import { afterAll, expect, test } from 'bun:test'
import { postJson, req, tempDir, type TestApp } from '../helpers/app'
import { admin, createArenaApp } from '../helpers/arena'
import { bearer, login, registerUser, type Tokens } from '../helpers/auth'
import { parseMetrics, type Sample } from '../helpers/metrics'
import { openSocket, serve, type SocketClient } from '../helpers/sockets'
import { waitFor } from '../helpers/wait'
import { newId } from '../../src/shared/ids'

const TOKEN = 'metrics-token-0123456789abcdef0123456789'
const ctx = await createArenaApp({ ARENA_METRICS_TOKEN: TOKEN })
const server = serve(ctx)
// Two sockets at most, whoever holds them; stopped by the last test.
const small = await createArenaApp({ ARENA_SOCKETS_MAX: '2' })
const smallServer = serve(small)
let smallStopped = false
// Two apps on one database: `here` serves the socket and re-checks every 100 ms, `elsewhere` writes.
const dataDir = tempDir()
const here = await createArenaApp({ ARENA_METRICS_TOKEN: TOKEN }, { dataDir, socketTimings: { recheckMs: 100 } })
const hereServer = serve(here)
const elsewhere = await createArenaApp({}, { dataDir })
afterAll(async () => {
  await server.stop()
  if (!smallStopped) await smallServer.stop()
  await hereServer.stop()
  for (const app of [ctx, small, here, elsewhere]) await app.close()
})

async function signedIn(app: TestApp = ctx): Promise<{ userId: string; username: string; tokens: Tokens }> {
  const user = await registerUser(app)
  return { userId: user.id, username: user.username, tokens: await login(app, user.username) }
}

async function credit(app: TestApp, userId: string, reference: string): Promise<void> {
  expect((await app.handle(postJson(`/api/v1/admin/wallets/${userId}/credit`, { amount: '1', reference }, admin))).status).toBeLessThan(300)
}

async function subscribed(socket: SocketClient): Promise<SocketClient> {
  socket.subscribe()
  await socket.until(() => socket.cursor !== undefined, 5000, 'the answer to the subscribe')
  return socket
}

const scrape = async (app: TestApp = ctx): Promise<Sample[]> => {
  const res = await app.handle(req('/metrics', { headers: { authorization: `Bearer ${TOKEN}` } }))
  expect(res.status).toBe(200)
  return parseMetrics(await res.text())
}
const value = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value ?? 0

/** Waits until the hub of `app` counts `count` open sockets (a client's close reaches the server a moment after the client sees it). */
const openCount = (app: TestApp, count: number) => waitFor(`${count} open sockets`, async () => (app.services.sockets.openSockets() === count ? true : undefined), 5000)

test('the 6th socket of one account is closed 4029; the other 5 keep working, and after one closes a new one opens', async () => {
  const p = await signedIn()
  const five: SocketClient[] = []
  for (let i = 0; i < 5; i++) five.push(await subscribed(await openSocket(ctx, server.wsUrl, p.tokens.accessToken)))
  const sixth = await openSocket(ctx, server.wsUrl, p.tokens.accessToken)
  expect(await sixth.untilClosed()).toBe(4029)
  // Another account is not limited by this one's sockets.
  const other = await subscribed(await openSocket(ctx, server.wsUrl, (await signedIn()).tokens.accessToken))
  await credit(ctx, p.userId, 'to-all-five')
  for (const socket of five) {
    await socket.untilEvents(1)
    expect(socket.events[0]!.data.reference).toBe('to-all-five')
    expect(socket.closed).toBeUndefined()
  }
  five[0]!.close()
  await five[0]!.untilClosed()
  await openCount(ctx, 5)
  const again = await subscribed(await openSocket(ctx, server.wsUrl, p.tokens.accessToken))
  expect(again.closed).toBeUndefined()
  for (const socket of [...five.slice(1), again, other]) socket.close()
  await openCount(ctx, 0)
})

test('/metrics: sockets open, frames sent, closes by reason, fan-out times', async () => {
  await openCount(ctx, 0)
  const before = await scrape()
  expect(value(before, 'arena_sockets_open')).toBe(0)
  const p = await signedIn()
  const first = await subscribed(await openSocket(ctx, server.wsUrl, p.tokens.accessToken))
  const second = await subscribed(await openSocket(ctx, server.wsUrl, p.tokens.accessToken))
  expect(value(await scrape(), 'arena_sockets_open')).toBe(2)
  await credit(ctx, p.userId, 'counted')
  await first.untilEvents(1)
  await second.untilEvents(1)
  const delivered = await scrape()
  // Two subscribe answers and two frames of events, at least.
  expect(value(delivered, 'arena_socket_frames_sent_total') - value(before, 'arena_socket_frames_sent_total')).toBeGreaterThanOrEqual(4)
  // One observation per frame a wake-up led to: 2, or 1 should the re-check's read have taken one socket's event first.
  const fannedOut = value(delivered, 'arena_socket_fanout_seconds_count') - value(before, 'arena_socket_fanout_seconds_count')
  expect(fannedOut).toBeGreaterThanOrEqual(1)
  expect(fannedOut).toBeLessThanOrEqual(2)
  expect(value(delivered, 'arena_socket_fanout_seconds_bucket', { le: '+Inf' })).toBe(value(delivered, 'arena_socket_fanout_seconds_count'))

  // The account's limit: 3 more make 5, the 6th is refused.
  const more: SocketClient[] = []
  for (let i = 0; i < 3; i++) more.push(await openSocket(ctx, server.wsUrl, p.tokens.accessToken))
  expect(await (await openSocket(ctx, server.wsUrl, p.tokens.accessToken)).untilClosed()).toBe(4029)
  const refused = await scrape()
  expect(value(refused, 'arena_socket_closes_total', { reason: 'too_many' }) - value(before, 'arena_socket_closes_total', { reason: 'too_many' })).toBe(1)

  expect((await ctx.handle(postJson('/api/v1/user/s/logout', {}, bearer(p.tokens.accessToken)))).status).toBe(200)
  for (const socket of [first, second, ...more]) expect(await socket.untilClosed()).toBe(4001)
  await openCount(ctx, 0)
  const after = await scrape()
  expect(value(after, 'arena_socket_closes_total', { reason: 'session_ended' }) - value(before, 'arena_socket_closes_total', { reason: 'session_ended' })).toBe(5)
  expect(value(after, 'arena_sockets_open')).toBe(0)
})

test('ARENA_SOCKETS_MAX=2: the third socket of anyone is closed 4029; after one closes a new one opens', async () => {
  const people = [await signedIn(small), await signedIn(small), await signedIn(small)]
  const one = await subscribed(await openSocket(small, smallServer.wsUrl, people[0]!.tokens.accessToken))
  const two = await subscribed(await openSocket(small, smallServer.wsUrl, people[1]!.tokens.accessToken))
  const third = await openSocket(small, smallServer.wsUrl, people[2]!.tokens.accessToken)
  expect(await third.untilClosed()).toBe(4029)
  two.close()
  await two.untilClosed()
  await openCount(small, 1)
  const fresh = await subscribed(await openSocket(small, smallServer.wsUrl, people[2]!.tokens.accessToken))
  await credit(small, people[2]!.userId, 'room-again')
  await fresh.untilEvents(1)
  expect(one.closed).toBeUndefined()
  for (const socket of [one, fresh]) socket.close()
  await openCount(small, 0)
})

test('an event another instance appended on the same database reaches the socket through the re-check, with no wake-up here', async () => {
  const p = await signedIn(here)
  const socket = await subscribed(await openSocket(here, hereServer.wsUrl, p.tokens.accessToken))
  const before = await scrape(here)
  const data = { asset: 'USDT', amount: '1', reference: 'from-elsewhere', reason: 'test', balance: '1' }
  if (elsewhere.storage.engine === 'sqlite') {
    // Another process's commit: `elsewhere`'s wake-ups reach its own sockets only.
    await elsewhere.storage.write((tx) => tx.events.append({ userId: p.userId, topic: 'wallet', type: 'wallet.adjusted', data }, elsewhere.clock.now()))
  } else {
    // A row without its NOTIFY (a lost notification): only the re-check can find it.
    await elsewhere.postgres.sql`INSERT INTO outbox_events (id, user_id, topic, type, data, created_at) VALUES (${newId('event')}, ${p.userId}, 'wallet', 'wallet.adjusted', ${JSON.stringify(data)}::json, now())`
  }
  await socket.untilEvents(1)
  expect(socket.events[0]!.data.reference).toBe('from-elsewhere')
  // The read was the re-check's: no wake-up, so no fan-out time observed.
  const after = await scrape(here)
  expect(value(after, 'arena_socket_fanout_seconds_count')).toBe(value(before, 'arena_socket_fanout_seconds_count'))
  socket.close()
})

// Last for `small`: its hub stays stopping.
test('a graceful stop closes every socket with 1012', async () => {
  const people = [await signedIn(small), await signedIn(small)]
  const sockets = [await subscribed(await openSocket(small, smallServer.wsUrl, people[0]!.tokens.accessToken)), await subscribed(await openSocket(small, smallServer.wsUrl, people[1]!.tokens.accessToken))]
  smallStopped = true
  await smallServer.stop()
  for (const socket of sockets) expect(await socket.untilClosed()).toBe(1012)
  expect(small.services.sockets.openSockets()).toBe(0)
})
