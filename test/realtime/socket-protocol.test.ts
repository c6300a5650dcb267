// The event socket's protocol (contract §14), through real sockets: a
// subscribe answers with a cursor; without `after` only what committed after
// the socket opened, with `after` the missed events then live ones, never a
// gap or a repeat across the hand-over; topics filter and can change on a
// live socket; a bad message gets an error frame and the socket stays; too
// many messages are refused; a binary or an oversized frame closes it.
import { afterAll, expect, test } from 'bun:test'
import { postJson, req } from '../helpers/app'
import { admin, createArenaApp } from '../helpers/arena'
import { bearer, login, registerUser, type Tokens } from '../helpers/auth'
import { openSocket, serve, type SocketClient } from '../helpers/sockets'
import { creditSurely } from '../helpers/accounts'
import type { EventsPage, PlaneEvent } from '../../src/modules/events/model'

const ctx = await createArenaApp()
const server = serve(ctx)
afterAll(async () => {
  await server.stop()
  await ctx.close()
})

async function signedIn(): Promise<{ userId: string; username: string; tokens: Tokens }> {
  const user = await registerUser(ctx)
  return { userId: user.id, username: user.username, tokens: await login(ctx, user.username) }
}

/** A credit; on PostgreSQL a burst on one wallet may be told 503 and try again (creditSurely). */
async function credit(userId: string, reference: string): Promise<void> {
  expect(await creditSurely(ctx, userId, reference)).toBe(200)
}

/** GET /events from `after` (or the start) read to the end, as the long poll's reader would. */
async function pollToEnd(accessToken: string, after?: string): Promise<{ events: PlaneEvent[]; cursor: string }> {
  const events: PlaneEvent[] = []
  let cursor = after
  for (;;) {
    const res = await ctx.handle(req(`/api/v1/events${cursor === undefined ? '' : `?after=${cursor}`}`, { headers: bearer(accessToken) }))
    expect(res.status).toBe(200)
    const page = (await res.json()) as EventsPage
    events.push(...page.events)
    cursor = page.cursor
    if (page.events.length === 0) return { events, cursor }
  }
}

/** Appends `count` wallet events for the user in one unit of work (faster than as many credits). */
async function appendWallet(userId: string, count: number, tag: string): Promise<void> {
  const now = ctx.clock.now()
  await ctx.storage.write(async (tx) => {
    for (let i = 0; i < count; i++) await tx.events.append({ userId, topic: 'wallet', type: 'wallet.adjusted', data: { asset: 'USDT', amount: '1', reference: `${tag}-${i}`, reason: 'test', balance: '1' } }, now)
  })
}

async function subscribed(socket: SocketClient, options: { after?: string; topics?: string[] } = {}): Promise<void> {
  const frames = socket.frames.filter((f) => f.type === 'events').length
  socket.subscribe(options)
  await socket.until(() => socket.frames.filter((f) => f.type === 'events').length > frames, 5000, 'the answer to the subscribe')
}

const ids = (events: PlaneEvent[]) => events.map((e) => e.id)

test('a subscribe without `after` is answered by an empty events frame with a cursor, then only events committed after the socket opened', async () => {
  const p = await signedIn()
  await credit(p.userId, 'before-open')
  const socket = await openSocket(ctx, server.wsUrl, p.tokens.accessToken)
  await subscribed(socket)
  expect(socket.frames[0]).toEqual({ type: 'events', events: [], cursor: expect.stringMatching(/^c1\./) })
  await credit(p.userId, 'after-open')
  await socket.untilEvents(1)
  expect(socket.events.map((e) => [e.type, e.data.reference])).toEqual([['wallet.credited', 'after-open']])
  // The socket's cursor resumes the long poll where the socket is.
  expect((await pollToEnd(p.tokens.accessToken, socket.cursor)).events).toEqual([])
  socket.close()
})

test('events committed between the open and the first subscribe are delivered by that subscribe', async () => {
  const p = await signedIn()
  const socket = await openSocket(ctx, server.wsUrl, p.tokens.accessToken)
  await credit(p.userId, 'between')
  // A session event for the same user wakes the socket before it subscribed.
  await login(ctx, p.username)
  const expected = (await pollToEnd(p.tokens.accessToken)).events.slice(-2)
  expect(expected.map((e) => e.type)).toEqual(['wallet.credited', 'session.login'])
  // Whatever the socket did with the wake-ups before the subscribe, the subscribe delivers both.
  // (No condition to wait for: a read before the subscribe sends nothing. The pause only gives
  // that read time to happen, so that a read moving the position past these rows would be caught.)
  await Bun.sleep(50)
  await subscribed(socket)
  await socket.untilEvents(2)
  expect(ids(socket.events)).toEqual(ids(expected))
  socket.close()
})

test('with `after` the missed events come first, then live ones: no gap, no repeat while a burst of credits commits during the replay', async () => {
  const p = await signedIn()
  const { cursor } = await pollToEnd(p.tokens.accessToken)
  // Missed while away: three pages' worth.
  await appendWallet(p.userId, 250, 'missed')
  const socket = await openSocket(ctx, server.wsUrl, p.tokens.accessToken)
  socket.subscribe({ after: cursor })
  const burst = Promise.all(Array.from({ length: 50 }, (_, i) => credit(p.userId, `burst-${i}`)))
  await burst
  const truth = await pollToEnd(p.tokens.accessToken, cursor)
  expect(truth.events.length).toBe(300)
  await socket.untilEvents(300, 15_000)
  expect(ids(socket.events)).toEqual(ids(truth.events))
  expect(socket.cursor).toBe(truth.cursor)
  // Nothing more comes.
  await credit(p.userId, 'after')
  await socket.untilEvents(301)
  expect(socket.events.length).toBe(301)
  socket.close()
})

test('topics filter what is delivered; the cursor moves past the rest', async () => {
  const p = await signedIn()
  const socket = await openSocket(ctx, server.wsUrl, p.tokens.accessToken)
  await subscribed(socket, { topics: ['wallet'] })
  await login(ctx, p.username)
  await credit(p.userId, 'w1')
  await socket.untilEvents(1)
  await login(ctx, p.username)
  await credit(p.userId, 'w2')
  await socket.untilEvents(2)
  expect(socket.events.map((e) => e.topic)).toEqual(['wallet', 'wallet'])
  expect(socket.events.map((e) => e.data.reference)).toEqual(['w1', 'w2'])
  // The cursor is past the logins too: resuming from it, the long poll has nothing.
  expect((await pollToEnd(p.tokens.accessToken, socket.cursor)).events).toEqual([])
  socket.close()
})

test('changing topics on a live socket: the topics kept skip nothing and repeat nothing, the new ones start from the socket\'s position', async () => {
  const p = await signedIn()
  const socket = await openSocket(ctx, server.wsUrl, p.tokens.accessToken)
  await subscribed(socket, { topics: ['wallet'] })
  const credits = Array.from({ length: 30 }, (_, i) => credit(p.userId, `live-${i}`))
  // Topic changes while the credits commit: wallet is always kept.
  for (const topics of [['wallet', 'session'], ['wallet'], ['session', 'wallet', 'account'], ['wallet']]) {
    // Spread among the commits (not a wait for anything).
    await Bun.sleep(5)
    socket.subscribe({ topics })
  }
  await Promise.all(credits)
  const wallet = () => socket.events.filter((e) => e.topic === 'wallet')
  await socket.until(() => wallet().length >= 30, 5000, '30 wallet events')
  const truth = (await pollToEnd(p.tokens.accessToken)).events.filter((e) => e.topic === 'wallet')
  expect(ids(wallet())).toEqual(ids(truth))
  // Now session only: a login arrives, a credit does not.
  await subscribed(socket, { topics: ['session'] })
  await credit(p.userId, 'unheard')
  await login(ctx, p.username)
  await socket.until(() => socket.events.at(-1)?.type === 'session.login')
  expect(socket.events.some((e) => e.data.reference === 'unheard')).toBe(false)
  expect(new Set(ids(socket.events)).size).toBe(socket.events.length)
  socket.close()
})

test('bad messages get error frames and the socket stays usable', async () => {
  const p = await signedIn()
  const socket = await openSocket(ctx, server.wsUrl, p.tokens.accessToken)
  const bad: [unknown, string][] = [
    ['not json {', 'malformed_json'],
    [{ type: 'subscribe', topics: ['games'] }, 'validation_failed'],
    [{ type: 'subscribe', topics: ['wallet'], extra: true }, 'validation_failed'],
    [{ type: 'subscribe', after: 'c1.not-a-cursor' }, 'validation_failed'],
    [{ type: 'subscribe', after: 'x'.repeat(100) }, 'validation_failed'],
    [{ type: 'hello' }, 'validation_failed'],
    [{ type: 'subscribe', topics: [] }, 'validation_failed'],
    [{ type: 'subscribe', topics: ['wallet', 'wallet'] }, 'validation_failed'],
    [[1, 2], 'validation_failed'],
  ]
  for (const [message] of bad) socket.send(message)
  await socket.until(() => socket.errors.length === bad.length, 5000, `${bad.length} error frames`)
  expect(socket.errors).toEqual(bad.map(([, code]) => code))
  expect(socket.closed).toBeUndefined()
  await subscribed(socket, { topics: ['wallet'] })
  await credit(p.userId, 'still-here')
  await socket.untilEvents(1)
  expect(socket.events[0]!.data.reference).toBe('still-here')
  socket.close()
})

test('more than 50 messages in an interval: rate_limited error frames, the extra messages ignored, the socket open', async () => {
  const p = await signedIn()
  const socket = await openSocket(ctx, server.wsUrl, p.tokens.accessToken)
  for (let i = 0; i < 55; i++) socket.send('nope')
  await socket.until(() => socket.errors.length === 55, 5000, '55 error frames')
  expect(socket.errors).toEqual([...Array(50).fill('malformed_json'), ...Array(5).fill('rate_limited')])
  // A subscribe now is ignored too, and said so.
  socket.subscribe()
  await socket.until(() => socket.errors.length === 56)
  expect(socket.errors.at(-1)).toBe('rate_limited')
  expect(socket.frames.some((f) => f.type === 'events')).toBe(false)
  expect(socket.closed).toBeUndefined()
  socket.close()
})

test('a binary frame closes the socket with 1008', async () => {
  const p = await signedIn()
  const socket = await openSocket(ctx, server.wsUrl, p.tokens.accessToken)
  socket.sendBinary(new TextEncoder().encode(JSON.stringify({ type: 'subscribe' })))
  expect(await socket.untilClosed()).toBe(1008)
})

test('a message over 4096 bytes closes the socket with 1009', async () => {
  const p = await signedIn()
  const socket = await openSocket(ctx, server.wsUrl, p.tokens.accessToken)
  socket.send(JSON.stringify({ type: 'subscribe', pad: 'x'.repeat(4100) }))
  expect(await socket.untilClosed()).toBe(1009)
  // 4096 bytes exactly are read (and refused as not a subscribe).
  const next = await openSocket(ctx, server.wsUrl, p.tokens.accessToken)
  const head = '{"type":"subscribe","pad":"'
  next.send(head + 'x'.repeat(4096 - head.length - 2) + '"}')
  await next.until(() => next.errors.length === 1)
  expect(next.errors).toEqual(['validation_failed'])
  next.close()
})
