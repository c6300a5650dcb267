// Model-based test of the event sockets (contract §14): whatever the
// interleaving of writes, reconnects and topic changes, what a client was
// delivered over its sockets, one after another, is exactly its outbox
// filtered by the topics in force, in seq order: no gap, no duplicate, no
// event of another user or of a rolled-back unit of work.
//
// Each run: 2–3 fresh users on a real app served on a real port (SQLite, or
// PostgreSQL under ARENA_TEST_ENGINE=postgres), each with a client that holds
// at most one socket at a time. A random list of step groups runs; the steps
// of one group run concurrently (a client's own actions one after another,
// as one client would). The steps:
// - writes for a random user: a wallet credit (the admin route); a login
//   (session.login; a login past the account's MAX_AUTH_SESSIONS ends the
//   oldest session, and each user may be given filler sessions so that one
//   of the run's logins ends the client's: its socket closes 4001, the
//   client signs in again and resumes); a unit of work appending 1–5
//   catalogue events straight to the outbox, for one user or several,
//   sometimes rolled back (a throw inside storage.write: nothing appended,
//   so nothing may be delivered);
// - reconnect: the client closes its socket and opens one with a fresh
//   ticket, subscribing with `after` = the cursor of the last events frame
//   it handled (frames arriving after it decided to close are not handled),
//   with the same topics or new ones;
// - drop: the server ends the socket (the client's session logs out: 4001);
//   the client signs in again and resumes from its cursor;
// - topic change: a subscribe without `after`, with a new non-empty topic set.
// A client's very first socket subscribes without `after` (delivery starts
// where the socket opened). At the end, with every write done, each client
// logs out: its socket reads up to that logout (the user's last event),
// sends everything before it and closes 4001. That close is the final frame:
// the last socket has read the user's whole outbox, and every frame it sent
// has arrived. Then checkClient (below, tested on its own with sequences that
// must fail) compares what each client got with the user's outbox.
import { afterAll, describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { MAX_AUTH_SESSIONS } from '../../src/modules/auth/sign-in'
import { EVENT_TOPICS, type EventTopic } from '../../src/modules/events/catalogue'
import type { OutboxEvent, StoredEvent } from '../../src/modules/events/store'
import { newId } from '../../src/shared/ids'
import { postJson, req } from '../helpers/app'
import { admin, createArenaApp } from '../helpers/arena'
import { bearer, login, registerUser, type Tokens } from '../helpers/auth'
import { chooseSeed } from '../helpers/seed'
import { serve, SocketClient, type Frame } from '../helpers/sockets'
import { assertParams, modelRuns, testTimeout } from './support'

type Topic = EventTopic

// ---- the checker: pure, over seqs ----
//
// A client's sockets form a chain: each one after the first resumes from
// the cursor the previous one ended on (the last it handled), so together
// they cover the outbox from the first socket's start on, each seq once.
//
// Within one socket, subscribe i applies its topics from a split point b_i
// on: an event with b_i < seq <= b_{i+1} is delivered exactly when its topic
// is among subscribe i's topics. The split points are:
// - b_0 of a resume: the seq of its `after` cursor, known;
// - b_0 of a first connect (no `after`): the seq the socket opened at. The
//   client does not know it, only that it lies between the newest seq before
//   the upgrade and the newest seq once the first answer came ([lo, hi]);
//   before it nothing is delivered (the topics of "subscribe -1" are none);
// - b_i of a topic change: the socket's position when the server handled the
//   subscribe, unknown, but at least the last cursor the client had received
//   when it sent it ([lo, ∞)); the server may have sent frames under the old
//   topics in between, and that is fine.
// The split points are non-decreasing, each within its bounds, and those not
// reached by any event lie between the range's last event and its end.
//
// The checker walks the socket's range of the outbox in seq order, keeping
// the set of subscribes the walk may be in; at each event the walk may move
// on through later subscribes (only while their split point can lie between
// the previous event and this one), and the event must be delivered exactly
// when its topic is in that subscribe's set. If no choice works for an event,
// no split points explain what was delivered: a gap, an extra event, or an
// event under the wrong topics. Delivery order is checked first and apart:
// the concatenated seqs must increase strictly (a duplicate or a reordering
// fails there, with its own message).

export interface OutboxRow {
  seq: number
  topic: Topic
}

/** One subscribe: its topics apply from a split point in [lo, hi]. */
export interface SubscribeRecord {
  topics: readonly Topic[]
  lo: number
  hi: number
}

/** What one socket delivered, in seqs. */
export interface SocketRecord {
  /** The seq of the cursor it resumed from; null for a first connect. */
  after: number | null
  /** In the order sent; a resume's first subscribe splits at `after`, its bounds unused. Lower bounds never decrease. */
  subscribes: SubscribeRecord[]
  /** Seqs of the events delivered, in arrival order. */
  delivered: number[]
  /** The seq of the last cursor it delivered; Infinity when it read the outbox to its end; null for a first connect that delivered no cursor. */
  end: number | null
}

/** Why one socket's delivery is not its range of the outbox under some split points, or null. */
export function checkSocket(outbox: readonly OutboxRow[], s: SocketRecord): string | null {
  const { subscribes } = s
  if (s.end === null) return s.delivered.length === 0 ? null : `${s.delivered.length} events delivered without a cursor`
  for (let i = 1; i < subscribes.length; i++) if (subscribes[i]!.lo < subscribes[i - 1]!.lo) throw new Error('checker input: lower bounds must not decrease')
  const end = s.end
  // Nothing at or before `from` is this socket's.
  const from = s.after ?? subscribes[0]!.lo
  const range = outbox.filter((e) => e.seq > from && e.seq <= end)
  const inRange = new Set(range.map((e) => e.seq))
  const stray = s.delivered.find((seq) => !inRange.has(seq))
  if (stray !== undefined) return `delivered seq ${stray}, outside its range (${from}, ${end}] of the outbox`
  const delivered = new Set(s.delivered)
  const topicsOf = (i: number): readonly Topic[] => (i < 0 ? [] : subscribes[i]!.topics)
  // Subscribe i's split point can lie in [a, b], within its bounds. Lower
  // bounds never decrease and only subscribe 0 has an upper one, so splits
  // that each fit can be chosen non-decreasing (each at max(a, lo)).
  const fits = (i: number, a: number, b: number) => Math.max(a, subscribes[i]!.lo) <= Math.min(b, subscribes[i]!.hi)
  let states = new Set([s.after === null ? -1 : 0])
  let previous = from
  for (const e of range) {
    const next = new Set<number>()
    for (const i of states) {
      for (let j = i; j < subscribes.length; j++) {
        // Moving into subscribe j puts its split point between the previous event and this one; if it cannot lie there, no later one can.
        if (j > i && !fits(j, previous, e.seq - 1)) break
        if (topicsOf(j).includes(e.topic) === delivered.has(e.seq)) next.add(j)
      }
    }
    if (next.size === 0) {
      const under = [...states].map((i) => (i < 0 ? 'before the first subscribe' : `subscribe ${i} [${topicsOf(i).join(',')}]`)).join(' or ')
      return `seq ${e.seq} (${e.topic}) was ${delivered.has(e.seq) ? '' : 'NOT '}delivered, which no split point explains (the walk was ${under}, previous event ${previous})`
    }
    states = next
    previous = e.seq
  }
  const closes = [...states].some((i) => {
    for (let j = i + 1; j < subscribes.length; j++) if (!fits(j, previous, end)) return false
    return true
  })
  return closes ? null : `the subscribes after the last event (${previous}) cannot split within their bounds by the end (${end})`
}

/** Why a client's sockets, one after another, did not deliver exactly its outbox under the topics in force; null when they did. */
export function checkClient(outbox: readonly OutboxRow[], sockets: readonly SocketRecord[]): string | null {
  const all = sockets.flatMap((s) => s.delivered)
  const seen = new Set<number>()
  for (let i = 0; i < all.length; i++) {
    if (seen.has(all[i]!)) return `seq ${all[i]} delivered twice`
    if (i > 0 && all[i]! < all[i - 1]!) return `seq ${all[i]} delivered after seq ${all[i - 1]}`
    seen.add(all[i]!)
  }
  // Where the previous socket left the client: null until a cursor was delivered.
  let cursor: number | null = null
  for (const [n, s] of sockets.entries()) {
    if (s.after !== cursor) return `socket ${n} started after ${s.after}, but the client's cursor was ${cursor}`
    const why = checkSocket(outbox, s)
    if (why !== null) return `socket ${n}: ${why}`
    if (s.end !== null) cursor = s.end
  }
  return cursor === Infinity ? null : `the last socket did not read to the end of the outbox (ended at ${cursor})`
}

// ---- the real system ----

const RUNS = modelRuns(5)
const SEED = chooseSeed('ARENA_MODEL_SEED', 'event-sockets model')
// Per-account socket limits are not what this checks (closing sockets may linger a moment next to their successor).
// Nor are pings: a ping tick that found the session ended by the final logout would close the socket (4001) before it
// read up to that logout, and the last frame would not be the end of the outbox. An hour between ticks: none in a run.
const ctx = await createArenaApp({ ARENA_SOCKETS_PER_USER: '20' }, { socketTimings: { pingMs: 3_600_000 } })
const server = serve(ctx)
afterAll(async () => {
  await server.stop()
  await ctx.close()
})

/** What the runs went through, printed at the end. */
const seen = new Map<string, number>()
const tally = (what: string, n = 1) => seen.set(what, (seen.get(what) ?? 0) + n)

/** Public ids of events whose unit of work rolled back: never in an outbox, never delivered. */
const rolledBack = new Set<string>()
let references = 0
let runs = 0

/** One socket as the client saw it. */
interface Opened {
  socket: SocketClient
  /** The cursor it resumed from; null for a first connect. */
  after: string | null
  /** First connect: the newest seq before the upgrade, and once the first answer came (the socket opened in between). */
  lo: number
  hi: number
  /** Every subscribe sent, with the last cursor this socket had delivered when it was sent. */
  subscribes: { topics: Topic[]; lastCursor: string | null }[]
  /** Frames the client handled: all of them once the server closed it, those before close() when the client closed it; null while open. */
  handled: number | null
  /** Closed by the final logout: it read the user's outbox to its end. */
  final: boolean
}

interface Client {
  name: string
  userId: string
  username: string
  /** Null once the session ended (4001, or a 401): sign in again. */
  tokens: Tokens | null
  /** The topics last subscribed to. */
  topics: Topic[]
  sockets: Opened[]
  /** The cursor of the last events frame handled, over all sockets: where a resume starts. */
  cursor: string | null
  /** The client's actions, one after another. */
  queue: Promise<void>
}

const newestSeq = () => ctx.storage.read.events.newestSeq()
const lastCursor = (frames: readonly Frame[]) => frames.findLast((frame) => frame.type === 'events')?.cursor

/** The socket the client holds: open, and its frames still handled. */
function held(c: Client): Opened | undefined {
  const o = c.sockets.at(-1)
  return o !== undefined && o.handled === null && o.socket.closed === undefined ? o : undefined
}

/** The client stops handling the socket's frames (closing it itself when `close`); what it handled moves its cursor. */
function settle(c: Client, o: Opened, close: boolean): void {
  if (o.handled !== null) return
  o.handled = o.socket.frames.length
  const cursor = lastCursor(o.socket.frames.slice(0, o.handled))
  if (cursor !== undefined) c.cursor = cursor
  if (close) o.socket.close()
}

/** The server closed the socket: its session ended (anything but 4001 is a failure). Every frame before the close was handled. */
function serverClosed(c: Client, o: Opened): void {
  const { code, reason } = o.socket.closed!
  if (code !== 4001) throw new Error(`${c.name}: the server closed a socket with ${code} (${reason}); only 4001 (session ended) is expected`)
  settle(c, o, false)
  c.tokens = null
}

/** Waits for the first answer of the socket (or its close); whether it is still open. */
async function answered(c: Client, o: Opened): Promise<boolean> {
  await o.socket.until(() => o.socket.cursor !== undefined || o.socket.closed !== undefined, 10_000, `${c.name}'s subscribe answer`)
  if (o.socket.closed !== undefined) {
    serverClosed(c, o)
    return false
  }
  if (o.after === null && o.hi === Infinity) o.hi = await newestSeq()
  return true
}

/** A refused upgrade or mint is fine only when the session ended meanwhile. */
async function sessionEnded(c: Client, what: string): Promise<void> {
  const res = await ctx.handle(req('/api/v1/me', { headers: bearer(c.tokens!.accessToken) }))
  if (res.status !== 401) throw new Error(`${c.name}: ${what}, yet its session is live (/me answered ${res.status})`)
  c.tokens = null
}

/** Opens a socket (signing in first if the session ended) and subscribes: from the client's cursor, or on a first connect from where it opened. */
async function connect(c: Client, topics: Topic[], waitAnswer: boolean): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    if (attempt > 10) throw new Error(`${c.name}: no socket after 10 attempts`)
    if (c.tokens === null) {
      c.tokens = await login(ctx, c.username)
      tally('client signed in again')
    }
    const minted = await ctx.handle(postJson('/api/v1/events/socket-ticket', {}, bearer(c.tokens.accessToken)))
    if (minted.status !== 200) {
      expect(minted.status).toBe(401)
      await sessionEnded(c, 'the ticket was refused')
      continue
    }
    const { ticket } = (await minted.json()) as { ticket: string }
    const lo = await newestSeq()
    let socket: SocketClient
    try {
      socket = await SocketClient.open(server.wsUrl, ticket)
    } catch {
      await sessionEnded(c, 'the upgrade was refused')
      continue
    }
    const o: Opened = { socket, after: c.cursor, lo, hi: Infinity, subscribes: [{ topics, lastCursor: null }], handled: null, final: false }
    c.sockets.push(o)
    c.topics = topics
    socket.subscribe(o.after === null ? { topics } : { after: o.after, topics })
    tally(o.after === null ? 'first connect' : 'resume with after')
    // A first connect waits for its answer: the client learns its cursor (and where the socket opened lies).
    if (!waitAnswer && o.after !== null) return
    if (await answered(c, o)) return
  }
}

/** The client holds an open socket whose first subscribe was answered. */
async function ensureHeld(c: Client): Promise<Opened> {
  const o = c.sockets.at(-1)
  if (o !== undefined && o.handled === null) {
    if (o.socket.closed === undefined && (await answered(c, o))) return o
    if (o.handled === null) serverClosed(c, o)
  }
  await connect(c, c.topics, true)
  return held(c) ?? ensureHeld(c)
}

// ---- steps ----

type Step =
  | { kind: 'credit'; user: number }
  | { kind: 'login'; user: number }
  | { kind: 'append'; events: { user: number; topic: Topic }[]; rollback: boolean }
  | { kind: 'reconnect'; user: number; topics: Topic[] | null; awaitClose: boolean; waitAnswer: boolean }
  | { kind: 'drop'; user: number }
  | { kind: 'change'; user: number; topics: Topic[] }

class RolledBack extends Error {}

/** A catalogue event of `topic` that ends no session of the user's (the session.logout is of a session that never existed). */
function eventFor(userId: string, topic: Topic): OutboxEvent {
  const at = ctx.clock.now().toISOString()
  switch (topic) {
    case 'wallet':
      return { userId, topic, type: 'wallet.adjusted', data: { asset: 'USDT', amount: '1', reference: `m${++references}`, reason: 'model', balance: '1' } }
    case 'status':
      return { userId, topic, type: 'match.ready', data: { tournamentId: newId('tournament'), matchId: newId('match'), round: 1 } }
    case 'account':
      return { userId, topic, type: 'account.pin_unlocked', data: { unlockedAt: at } }
    case 'session':
      return { userId, topic, type: 'session.logout', data: { sessionId: newId('authSession'), reason: 'revoked' } }
  }
}

async function write(clients: Client[], step: Step): Promise<void> {
  const user = (i: number) => clients[i % clients.length]!
  if (step.kind === 'credit') {
    const res = await ctx.handle(postJson(`/api/v1/admin/wallets/${user(step.user).userId}/credit`, { amount: '2.5', reference: `m${++references}` }, admin))
    expect(res.status).toBe(200)
  } else if (step.kind === 'login') {
    await login(ctx, user(step.user).username)
  } else if (step.kind === 'append') {
    const ids: string[] = []
    try {
      await ctx.storage.write(async (tx) => {
        for (const e of step.events) ids.push(await tx.events.append(eventFor(user(e.user).userId, e.topic), ctx.clock.now()))
        if (step.rollback) throw new RolledBack()
      })
    } catch (error) {
      if (!(error instanceof RolledBack)) throw error
      for (const id of ids) rolledBack.add(id)
    }
  }
  tally(step.kind === 'append' ? `append ${step.events.length}${new Set(step.events.map((e) => e.user % clients.length)).size > 1 ? ' (several users)' : ''}${step.rollback ? ', rolled back' : ''}` : step.kind)
}

async function act(c: Client, step: Step): Promise<void> {
  if (step.kind === 'reconnect') {
    const o = c.sockets.at(-1)
    if (o !== undefined && o.handled === null) {
      if (o.socket.closed !== undefined) serverClosed(c, o)
      else {
        settle(c, o, true)
        if (step.awaitClose) await o.socket.done
      }
    }
    await connect(c, step.topics ?? c.topics, step.waitAnswer)
    tally(`reconnect${step.topics ? ', new topics' : ''}`)
  } else if (step.kind === 'drop') {
    const o = await ensureHeld(c)
    const res = await ctx.handle(postJson('/api/v1/user/s/logout', {}, bearer(c.tokens!.accessToken)))
    // 401: a login past the bound ended the session first; the socket closes all the same.
    expect([200, 401]).toContain(res.status)
    await o.socket.untilClosed(10_000)
    serverClosed(c, o)
    await connect(c, c.topics, true)
    tally('drop (logout: 4001), signed in again')
  } else if (step.kind === 'change') {
    const o = held(c) ?? (await ensureHeld(c))
    o.subscribes.push({ topics: step.topics, lastCursor: o.socket.cursor ?? null })
    c.topics = step.topics
    o.socket.subscribe({ topics: step.topics })
    tally('topic change')
  }
}

/** The final frame: the client logs out; its socket reads to that logout (the user's last event) and closes 4001. */
async function finish(c: Client): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    if (attempt > 5) throw new Error(`${c.name}: could not log out in 5 attempts`)
    const o = await ensureHeld(c)
    const res = await ctx.handle(postJson('/api/v1/user/s/logout', {}, bearer(c.tokens!.accessToken)))
    expect([200, 401]).toContain(res.status)
    await o.socket.untilClosed(10_000)
    serverClosed(c, o)
    if (res.status === 200) {
      o.final = true
      return
    }
  }
}

/** Gives the user `count` more sessions, newer than the client's: the login that brings the rows past the bound ends the client's. */
async function fillSessions(userId: string, count: number): Promise<void> {
  ctx.clock.advance(1)
  const now = ctx.clock.now()
  await ctx.storage.write(async (tx) => {
    for (let i = 0; i < count; i++) await tx.auth.createSession({ id: newId('authSession'), userId, createdAt: now, lastUsedAt: now, expiresAt: new Date(now.getTime() + 86_400_000), userAgent: null })
  })
}

/** The user's whole outbox, oldest first. */
async function outboxOf(userId: string): Promise<StoredEvent[]> {
  const out: StoredEvent[] = []
  for (;;) {
    const page = await ctx.storage.read.events.page(userId, out.at(-1)?.seq ?? 0, EVENT_TOPICS, 100)
    out.push(...page)
    if (page.length < 100) return out
  }
}

/** The client's sockets as the checker reads them: events as seqs of the outbox, cursors as seqs. */
async function recordsOf(c: Client, outbox: readonly StoredEvent[]): Promise<SocketRecord[]> {
  const byId = new Map(outbox.map((e) => [e.id, e]))
  const seqOf = (cursor: string) => ctx.services.events.cursorSeq(cursor)
  const records: SocketRecord[] = []
  for (const o of c.sockets) {
    const frames = o.socket.frames.slice(0, o.handled!)
    const error = frames.find((frame) => frame.type === 'error')
    if (error) throw new Error(`${c.name}: an error frame ${JSON.stringify(error)}`)
    const delivered = frames.flatMap((frame) => (frame.type === 'events' ? frame.events : [])).map((e) => {
      const row = byId.get(e.id)
      if (row === undefined) throw new Error(`${c.name} was delivered ${e.id} (${e.type}), which is not in its outbox${rolledBack.has(e.id) ? ': its unit of work rolled back' : ''}`)
      if (row.topic !== e.topic || row.type !== e.type) throw new Error(`${c.name} was delivered ${e.id} as ${e.topic}/${e.type}; the outbox has ${row.topic}/${row.type}`)
      return row.seq
    })
    const after = o.after === null ? null : await seqOf(o.after)
    const last = lastCursor(frames)
    const end = o.final ? Infinity : last !== undefined ? await seqOf(last) : after
    const subscribes: SubscribeRecord[] = []
    let lo = after ?? o.lo
    for (const [i, sub] of o.subscribes.entries()) {
      if (i > 0 && sub.lastCursor !== null) lo = Math.max(lo, await seqOf(sub.lastCursor))
      subscribes.push({ topics: sub.topics, lo, hi: i === 0 && after === null ? o.hi : Infinity })
    }
    records.push({ after, subscribes, delivered, end })
    tally('events delivered', delivered.length)
  }
  return records
}

interface RunSpec {
  /** Per user: the topics of the first socket, and which of the run's logins ends the client's session (0: none does). */
  users: { topics: Topic[]; endsAtLogin: number }[]
  groups: Step[][]
}

async function play(spec: RunSpec): Promise<void> {
  const run = ++runs
  const clients: Client[] = []
  try {
    const made = await Promise.all(
      spec.users.map(async (u, i) => {
        const registered = await registerUser(ctx)
        const tokens = await login(ctx, registered.username)
        // MAX_AUTH_SESSIONS logins through the route would cost seconds of argon2id: the rows are written directly.
        if (u.endsAtLogin > 0) await fillSessions(registered.id, MAX_AUTH_SESSIONS - u.endsAtLogin)
        const c: Client = { name: `run ${run} user ${i}`, userId: registered.id, username: registered.username, tokens, topics: u.topics, sockets: [], cursor: null, queue: Promise.resolve() }
        return c
      }),
    )
    clients.push(...made)
    // The first connects run alongside the first groups' writes.
    for (const c of clients) c.queue = connect(c, c.topics, true)
    for (const group of spec.groups) {
      await Promise.all(
        group.map((step) => {
          if (step.kind === 'credit' || step.kind === 'login' || step.kind === 'append') return write(clients, step)
          const c = clients[step.user % clients.length]!
          c.queue = c.queue.then(() => act(c, step))
          return c.queue
        }),
      )
    }
    await Promise.all(clients.map((c) => c.queue))
    await Promise.all(clients.map(finish))
    for (const c of clients) {
      const outbox = await outboxOf(c.userId)
      const records = await recordsOf(c, outbox)
      const why = checkClient(outbox, records)
      if (why !== null) {
        const rows = outbox.map((e) => `${e.seq}:${e.topic}`).join(' ')
        throw new Error(`${c.name}: ${why}\noutbox: ${rows}\nsockets: ${JSON.stringify(records)}`)
      }
      tally(`sockets per client: ${records.length}`)
    }
  } finally {
    for (const c of clients) for (const o of c.sockets) if (o.socket.closed === undefined) o.socket.close()
  }
}

// ---- arbitraries ----

const topicsArb = fc.shuffledSubarray([...EVENT_TOPICS], { minLength: 1 })
const userArb = fc.nat(2)

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 2, arbitrary: userArb.map((user) => ({ kind: 'credit' as const, user })) },
  { weight: 1, arbitrary: userArb.map((user) => ({ kind: 'login' as const, user })) },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('append' as const),
      events: fc.array(fc.record({ user: userArb, topic: fc.constantFrom(...EVENT_TOPICS) }), { minLength: 1, maxLength: 5 }),
      rollback: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('reconnect' as const), user: userArb, topics: fc.option(topicsArb, { nil: null }), awaitClose: fc.boolean(), waitAnswer: fc.boolean() }),
  },
  { weight: 1, arbitrary: userArb.map((user) => ({ kind: 'drop' as const, user })) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('change' as const), user: userArb, topics: topicsArb }) },
)

const runArb: fc.Arbitrary<RunSpec> = fc.record({
  users: fc.array(fc.record({ topics: topicsArb, endsAtLogin: fc.constantFrom(0, 1, 2, 3) }), { minLength: 2, maxLength: 3 }),
  groups: fc.array(fc.array(stepArb, { minLength: 1, maxLength: 3 }), { minLength: 4, maxLength: 14 }),
})

/** Every kind of step at least once, whatever the seed: client 0's first login-step ends its session (filler sessions). */
const FIXED_RUN: RunSpec = {
  users: [
    { topics: ['wallet', 'session'], endsAtLogin: 1 },
    { topics: ['status', 'account'], endsAtLogin: 0 },
    { topics: [...EVENT_TOPICS], endsAtLogin: 0 },
  ],
  groups: [
    [{ kind: 'append', events: [{ user: 0, topic: 'wallet' }, { user: 1, topic: 'status' }, { user: 0, topic: 'session' }], rollback: false }],
    [{ kind: 'credit', user: 0 }, { kind: 'change', user: 1, topics: ['wallet', 'status'] }],
    [{ kind: 'login', user: 0 }, { kind: 'credit', user: 1 }],
    [{ kind: 'append', events: [{ user: 0, topic: 'wallet' }, { user: 1, topic: 'wallet' }, { user: 2, topic: 'account' }], rollback: true }],
    [
      { kind: 'reconnect', user: 1, topics: ['session', 'wallet'], awaitClose: false, waitAnswer: false },
      { kind: 'credit', user: 1 },
    ],
    [{ kind: 'drop', user: 2 }, { kind: 'append', events: [{ user: 2, topic: 'session' }, { user: 2, topic: 'account' }], rollback: false }],
    [
      { kind: 'change', user: 0, topics: ['account', 'wallet'] },
      { kind: 'reconnect', user: 2, topics: null, awaitClose: true, waitAnswer: true },
      { kind: 'login', user: 2 },
    ],
    [{ kind: 'credit', user: 0 }, { kind: 'credit', user: 1 }, { kind: 'credit', user: 2 }],
  ],
}

// ---- tests ----

const BUDGET_MS = RUNS * 8_000 + 30_000

describe('event sockets against a model', () => {
  test('the checker refuses a gap, a duplicate, a reordering and deliveries no split point explains', () => {
    const topics = ['wallet', 'session', 'wallet', 'wallet', 'status', 'account', 'wallet', 'status', 'session', 'wallet', 'status', 'session'] as const
    const outbox: OutboxRow[] = topics.map((topic, i) => ({ seq: i + 1, topic }))
    // A first connect opened at 2 ([wallet]); a change to [status, session] sent with cursor 4 in hand, applied at 6 or 7;
    // the client closes it after the frame with cursor 9 and resumes there with [wallet, account].
    const first = (delivered: number[], lo = 2, hi = 2): SocketRecord => ({
      after: null,
      subscribes: [
        { topics: ['wallet'], lo, hi },
        { topics: ['status', 'session'], lo: 4, hi: Infinity },
      ],
      delivered,
      end: 9,
    })
    const second = (delivered: number[], after = 9): SocketRecord => ({ after, subscribes: [{ topics: ['wallet', 'account'], lo: after, hi: Infinity }], delivered, end: Infinity })
    const check = (a: SocketRecord, b: SocketRecord) => checkClient(outbox, [a, b])

    // What the server may send: the change applied at 6 or at 7 (the wallet event 7 under the old topics or not).
    expect(check(first([3, 4, 8, 9]), second([10]))).toBeNull()
    expect(check(first([3, 4, 7, 8, 9]), second([10]))).toBeNull()
    // The socket opened at 3 rather than 2: within [2, 3].
    expect(check(first([4, 8, 9], 2, 3), second([10]))).toBeNull()

    // A gap: the resumed socket misses wallet 10; the first misses wallet 4 (the change was sent with cursor 4: it applies after 4).
    expect(check(first([3, 4, 8, 9]), second([]))).toContain('seq 10 (wallet) was NOT delivered')
    expect(check(first([3, 8, 9]), second([10]))).toContain('seq 4 (wallet) was NOT delivered')
    // The socket opened at 2 at the latest: wallet 3 is owed (seen at 4, which the old topics would not deliver without 3).
    expect(check(first([4, 8, 9]), second([10]))).toContain('seq 4 (wallet) was delivered')
    // Before where it opened: not owed, and not to be sent.
    expect(check(first([1, 3, 4, 8, 9]), second([10]))).toContain('delivered seq 1, outside its range')
    // Duplicates: within one socket, and across a resume.
    expect(check(first([3, 4, 4, 8, 9]), second([10]))).toContain('seq 4 delivered twice')
    expect(check(first([3, 4, 8, 9]), second([9, 10]))).toContain('seq 9 delivered twice')
    // A reordering.
    expect(check(first([3, 8, 4, 9]), second([10]))).toContain('seq 4 delivered after seq 8')
    // The new topics before the old ones' last event (status 5 under the new topics, then wallet 7 under the old).
    expect(check(first([3, 4, 5, 7, 8, 9]), second([10]))).toContain('seq 7 (wallet) was delivered')
    // An event of a topic never subscribed.
    expect(check(first([3, 4, 6, 8, 9]), second([10]))).toContain('seq 6 (account) was delivered')
    // A resume from somewhere else than the cursor the client held (8, not 9): the chain is broken.
    expect(check(first([3, 4, 8, 9]), second([10], 8))).toContain('socket 1 started after 8')
    // A last socket that did not read to the end.
    expect(checkClient(outbox, [first([3, 4, 8, 9])])).toContain('did not read to the end')
  })

  test(
    `writes, reconnects with after, drops (4001) and topic changes, some at once: each client gets exactly its outbox under its topics: ${RUNS} runs`,
    async () => {
      await fc.assert(
        fc.asyncProperty(runArb, (spec) => play(spec)),
        assertParams(RUNS, BUDGET_MS, SEED),
      )
    },
    testTimeout(BUDGET_MS),
  )

  test('a fixed run reaches every kind of step, checked like the generated ones', async () => {
    const before = new Map(seen)
    await play(FIXED_RUN)
    const reached = (what: string) => (seen.get(what) ?? 0) - (before.get(what) ?? 0)
    console.log(`event-sockets model (seed ${SEED}): ${runs} runs (shrinks included); seen:\n${[...seen].sort().map(([k, n]) => `  ${k}: ${n}`).join('\n')}`)
    for (const what of [
      'first connect',
      'resume with after',
      'reconnect',
      'reconnect, new topics',
      'topic change',
      'drop (logout: 4001), signed in again',
      'login',
      'credit',
      'append 3 (several users), rolled back',
      'append 3 (several users)',
    ]) {
      expect(reached(what), what).toBeGreaterThan(0)
    }
    // Client 0's session was ended by the first login (its filler sessions), client 2's by the drop: both signed in again.
    expect(reached('client signed in again')).toBeGreaterThanOrEqual(2)
    expect(reached('events delivered')).toBeGreaterThan(0)
  })
})
