// One event-plane WebSocket (contract §14). What it delivers comes from the
// outbox, always: the socket keeps a position (the seq it has read up to) and
// reads the user's events after it, a page at a time, whenever it is told
// there may be more (a wake-up for its user, a subscribe, the hub's
// re-check). Replay and live delivery are the same read, so the hand-over
// between them has nothing to lose or repeat: the position only moves past
// what was read, and seq order is commit order on both engines
// (src/db/stores/events.ts).
//
// It also watches its session: the read always includes the `session` and
// `account` topics (sent only when subscribed), and an event that ends this
// session (its logout, its revocation, the account's deletion) closes the
// socket with 4001 once everything before it was sent. Every session ending
// appends such an event in the transaction that ends it
// (src/modules/auth/service.ts revokeSessions, account-deletion.ts), and
// that event wakes the user's sockets on every instance. Expiry, which
// appends nothing, is checked with each ping.
//
// Memory is bounded: at most one frame is sent past what the socket took
// (`send` answering -1, backpressure, pauses the reads until `drain`); the
// events waiting meanwhile stay in the database. A socket that stays behind
// for ARENA_SOCKET_SLOW_S while more events wait is closed with 4008.
import type { ServerWebSocket } from 'bun'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import type { Storage } from '../../db/storage'
import { toIso } from '../../shared/clock'
import { AppError } from '../../shared/errors'
import { EVENT_TOPICS, type EventTopic } from '../events/catalogue'
import type { StoredEvent } from '../events/store'
import { encodeCursor, PAGE_SIZE, type EventsService } from '../events/service'
import type { TicketHolder } from './tickets'
import { CLIENT_MESSAGES_PER_INTERVAL, CLOSE_CODES, SubscribeMessage, type CloseCode, type ServerFrame } from './protocol'

const checkSubscribe = TypeCompiler.Compile(SubscribeMessage)

/** Read whatever the socket delivers: an event that ends the session is in one of these. */
const GUARD_TOPICS: readonly EventTopic[] = ['session', 'account']

/** Why a socket closed, for /metrics (a bounded label). */
export const SOCKET_CLOSE_REASONS = ['session_ended', 'slow_consumer', 'too_many', 'restart', 'error', 'policy', 'client'] as const
export type CloseReason = (typeof SOCKET_CLOSE_REASONS)[number]

export const CLOSE_REASONS: Record<CloseCode, CloseReason> = {
  [CLOSE_CODES.sessionEnded]: 'session_ended',
  [CLOSE_CODES.slowConsumer]: 'slow_consumer',
  [CLOSE_CODES.tooMany]: 'too_many',
  [CLOSE_CODES.restart]: 'restart',
  [CLOSE_CODES.internalError]: 'error',
  [CLOSE_CODES.policy]: 'policy',
}

/** What a socket needs from the rest of the server. */
export interface SocketContext {
  storage: Storage
  events: EventsService
  /** Whether the session is still live (revoked or expired: no). */
  sessionLive(sessionId: string): Promise<boolean>
  slowMs: number
  /** A frame went out. */
  sent(): void
  /** Seconds from the wake-up that led to a read to the frame carrying its events. */
  fannedOut(seconds: number): void
  /** The socket closed itself with `code`. */
  closing(code: CloseCode): void
  /** Something failed that is not the client's doing. */
  failed(error: unknown): void
}

function endsSession(row: StoredEvent, sessionId: string): boolean {
  if (row.type === 'account.deleted') return true
  return (row.type === 'session.logout' || row.type === 'session.reuse_revoked') && row.data.sessionId === sessionId
}

export class EventSocket {
  readonly userId: string
  readonly sessionId: string
  /** What is delivered; null before the first subscribe (the session is watched all the same). */
  private topics: Set<EventTopic> | null = null
  /**
   * The seq read up to. Fixed at open (what was committed before the socket
   * opened is not sent unless asked for with `after`); it moves only once
   * the client subscribed, so the first subscribe without `after` gets
   * everything committed since the socket opened.
   */
  private position = 0
  /** Before the first subscribe: how far the session's end was looked for. */
  private watched = 0
  private ready: Promise<void> | undefined
  /** The position is fixed and the session was found live: reads may begin. */
  private started = false
  private reading = false
  /** A read is wanted once the one under way (or the backpressure) is over. */
  private again = false
  /** The last frame went out past what the reader took: wait for `drain`. */
  private blocked = false
  private slowTimer: ReturnType<typeof setTimeout> | undefined
  /** The subscribe just handled is answered with a frame even when it has no events: the client learns its cursor. */
  private answerSubscribe = false
  /** When the earliest wake-up not yet read was taken (performance.now()). */
  private wokenAt: number | null = null
  private messages = 0
  private closed = false
  /** Counts subscribes: a read begun before one is thrown away (its position and topics are the old ones). */
  private generation = 0
  private inbox: Promise<void> = Promise.resolve()
  /** The session ended (seen by a ping tick): close once everything readable was sent. */
  private ending = false

  constructor(
    private readonly ws: Pick<ServerWebSocket<unknown>, 'send' | 'close' | 'terminate'>,
    holder: TicketHolder,
    private readonly context: SocketContext,
  ) {
    this.userId = holder.userId
    this.sessionId = holder.sessionId
  }

  get isClosed(): boolean {
    return this.closed
  }

  /** The socket is open: fix the position, then check the session (in that order: an end committed in between is seen by one or the other). */
  open(): void {
    this.ready = (async () => {
      this.position = await this.context.storage.read.events.newestSeq()
      this.watched = this.position
      if (!(await this.context.sessionLive(this.sessionId))) return this.close(CLOSE_CODES.sessionEnded, 'session ended')
      this.started = true
      this.pump()
    })().catch((error) => this.fail(error))
  }

  /** There may be new events for the user (`at`: when the wake-up was taken). */
  nudge(at: number | null): void {
    if (this.closed) return
    if (at !== null && this.wokenAt === null) this.wokenAt = at
    this.pump()
  }

  /** A message from the client; handled one after another, in the order they came. */
  message(raw: string | Buffer): Promise<void> {
    this.inbox = this.inbox.then(() => this.handle(raw)).catch((error) => this.fail(error))
    return this.inbox
  }

  private async handle(raw: string | Buffer): Promise<void> {
    if (this.closed) return
    if (typeof raw !== 'string') return this.close(CLOSE_CODES.policy, 'text frames only')
    if (++this.messages > CLIENT_MESSAGES_PER_INTERVAL) return this.error('rate_limited', `At most ${CLIENT_MESSAGES_PER_INTERVAL} messages per 25 s; this one was ignored`)
    let parsed: unknown
    try {
      parsed = JSON.parse(raw)
    } catch {
      return this.error('malformed_json', 'A message is one JSON object: { "type": "subscribe", "after"?: cursor, "topics"?: [...] }')
    }
    if (!checkSubscribe.Check(parsed)) {
      const first = checkSubscribe.Errors(parsed).First()
      return this.error('validation_failed', `Not a subscribe message${first ? ` (${first.path || '/'}: ${first.message})` : ''}; topics are ${EVENT_TOPICS.join(', ')}`)
    }
    await this.ready
    if (this.closed) return
    try {
      if (parsed.after !== undefined) {
        const seq = await this.context.events.cursorSeq(parsed.after)
        // Events up to a cursor were committed before it was issued, so
        // before this check: an end of the session among them is seen here.
        if (!(await this.context.sessionLive(this.sessionId))) return this.close(CLOSE_CODES.sessionEnded, 'session ended')
        this.position = seq
      }
    } catch (error) {
      if (error instanceof AppError && error.code === 'validation_failed') return this.error('validation_failed', 'after: not a cursor this server issued')
      return this.fail(error)
    }
    this.topics = new Set(parsed.topics ?? EVENT_TOPICS)
    this.generation++
    this.answerSubscribe = true
    this.pump()
  }

  /** Every ping interval, with whether the session is still live (the hub asks for every socket at once): the ping, or the end. */
  tick(live: boolean): void {
    if (this.closed) return
    this.messages = 0
    if (!live) return this.endAfterReading()
    if (!this.blocked) this.send({ type: 'ping' })
  }

  /**
   * The session is over, seen by a ping tick: what was committed before its
   * end is sent first, as when the end is read from the outbox (a revocation
   * no wake-up told of, or an expiry, which appends nothing), then 4001.
   */
  private endAfterReading(): void {
    if (!this.started) return this.close(CLOSE_CODES.sessionEnded, 'session ended')
    this.ending = true
    this.pump()
  }

  /** The reader took what was buffered. */
  drain(): void {
    if (!this.blocked) return
    this.blocked = false
    clearTimeout(this.slowTimer)
    if (this.again || this.ending) this.pump()
  }

  close(code: CloseCode, reason: string): void {
    if (this.closed) return
    this.closed = true
    clearTimeout(this.slowTimer)
    this.context.closing(code)
    this.ws.close(code, reason)
    // A reader that takes nothing never answers the close either.
    if (code === CLOSE_CODES.slowConsumer) setTimeout(() => this.ws.terminate(), 5000).unref?.()
  }

  /** The connection is gone (either side closed it). */
  gone(): void {
    this.closed = true
    clearTimeout(this.slowTimer)
  }

  private error(code: string, message: string): void {
    this.send({ type: 'error', error: { code, message } })
  }

  private fail(error: unknown): void {
    this.context.failed(error)
    this.close(CLOSE_CODES.internalError, 'could not read the events; reconnect and resume')
  }

  /** Reads until there is nothing more to send, unless a read is under way (it will read again) or the reader is behind. */
  private pump(): void {
    if (this.reading || this.closed || !this.started) {
      this.again = true
      return
    }
    if (this.blocked) {
      this.again = true
      return
    }
    this.reading = true
    void (async () => {
      try {
        do {
          this.again = false
          await this.readOnce()
        } while (this.again && !this.blocked && !this.closed)
        if (this.ending && !this.again && !this.blocked) this.close(CLOSE_CODES.sessionEnded, 'session ended')
      } catch (error) {
        this.fail(error)
      } finally {
        this.reading = false
      }
    })()
  }

  private async readOnce(): Promise<void> {
    const wokenAt = this.wokenAt
    this.wokenAt = null
    const { topics, generation } = this
    if (topics === null) return this.watch()
    const readTopics = [...new Set([...topics, ...GUARD_TOPICS])]
    const rows = await this.context.storage.read.events.page(this.userId, this.position, readTopics, PAGE_SIZE)
    if (this.closed) return
    if (generation !== this.generation) {
      this.again = true
      return
    }
    let ended = false
    const events: Extract<ServerFrame, { type: 'events' }>['events'] = []
    for (const row of rows) {
      if (topics.has(row.topic)) events.push({ id: row.id, topic: row.topic, type: row.type, data: row.data, createdAt: toIso(row.createdAt) })
      this.position = row.seq
      if (endsSession(row, this.sessionId)) {
        ended = true
        break
      }
    }
    if (events.length > 0 || this.answerSubscribe) {
      this.answerSubscribe = false
      this.send({ type: 'events', events, cursor: encodeCursor(this.position) })
      if (events.length > 0 && wokenAt !== null) this.context.fannedOut((performance.now() - wokenAt) / 1000)
    }
    if (ended) return this.close(CLOSE_CODES.sessionEnded, 'session ended')
    if (rows.length === PAGE_SIZE) this.again = true
  }

  /** Not subscribed yet: only looks for the end of the session, without moving the position. */
  private async watch(): Promise<void> {
    const { generation } = this
    const rows = await this.context.storage.read.events.page(this.userId, this.watched, GUARD_TOPICS, PAGE_SIZE)
    if (this.closed || generation !== this.generation) return
    for (const row of rows) {
      this.watched = row.seq
      if (endsSession(row, this.sessionId)) return this.close(CLOSE_CODES.sessionEnded, 'session ended')
    }
    if (rows.length === PAGE_SIZE) this.again = true
  }

  private send(frame: ServerFrame): void {
    if (this.closed) return
    const sent = this.ws.send(JSON.stringify(frame))
    this.context.sent()
    // 0: not sent at all (the connection is closing); what was not sent is read again on reconnect.
    if (sent === 0) return this.gone()
    if (sent === -1) {
      this.blocked = true
      this.armSlowTimer()
    }
  }

  /** Behind for slowMs with events waiting: closed with 4008. Behind with none waiting: it may catch up; look again later. */
  private armSlowTimer(): void {
    clearTimeout(this.slowTimer)
    this.slowTimer = setTimeout(() => {
      if (!this.blocked || this.closed) return
      if (this.again) this.close(CLOSE_CODES.slowConsumer, 'too slow: reconnect and resume from your cursor')
      else this.armSlowTimer()
    }, this.context.slowMs)
  }
}
