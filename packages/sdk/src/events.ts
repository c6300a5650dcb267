// The event plane (GET /api/v1/events) as a polling API: `poll` reads one page and
// keeps the cursor; `subscribe` long-polls in a loop, hands each page to the
// handler as one batch, and moves its cursor only after the handler returned,
// so a batch whose handler threw is delivered again (at least once).
import type { Auth } from './auth.js'
import { ApiError } from './errors.js'
import { connectEvents, isFatal, type ConnectOptions, type Connection } from './socket.js'
import { Pause, teller } from './pause.js'
import { readJson } from './transport.js'
import type { EventsPage, EventTopic, EventType, KnownEvent, PlaneEvent } from './types.js'

export interface PollOptions {
  topics?: EventTopic[]
  /** Seconds the server may hold the request for a new event (0–30). Default 0: answer at once. */
  wait?: number
  /** Start after this cursor instead of the one the client keeps for these topics. */
  after?: string
  signal?: AbortSignal
}

export interface SubscribeOptions {
  /** Long-poll wait in seconds. Default 25. */
  wait?: number
  /** Resume after a cursor saved from an earlier subscription (`subscription.cursor`). Default: the client's cursor for these topics, or the oldest retained event. */
  after?: string
  /** Told about every failed poll and every handler that threw, before the back-off (its own errors are ignored). */
  onError?: (error: unknown) => void
  /** Back-off after a failure: doubles from `minBackoffMs` up to `maxBackoffMs`, with jitter. */
  minBackoffMs?: number
  maxBackoffMs?: number
}

/** Why a subscription ended: `stop()`, or an error no retry can fix (signed out, a cursor the server refuses). */
export type SubscriptionEnd = { reason: 'stopped' } | { reason: 'failed'; error: unknown }

export interface Subscription {
  /** The cursor after the last batch the handler finished; save it to resume later. */
  readonly cursor: string | undefined
  /** Stops the loop (aborting a poll in flight, cutting a back-off short) and resolves when it has ended. Safe to call from the handler. */
  stop(): Promise<void>
  /** Resolves when the loop ends, with why. Never rejects. */
  readonly done: Promise<SubscriptionEnd>
}

/**
 * Whether `event` is of the known type `type`; narrows it to that type's topic
 * and typed data, e.g. `events.filter((e) => isEvent(e, 'wallet.credited'))`
 * is a `KnownEvent<'wallet.credited'>[]`. It compares the type only: the data
 * is as the server wrote it for that type.
 */
export function isEvent<K extends EventType>(event: PlaneEvent, type: K): event is KnownEvent<K> {
  return event.type === type
}

export type EventBatchHandler = (events: PlaneEvent[]) => void | Promise<void>

export class EventsClient {
  /** One cursor per topic set: a cursor from a filtered read may sit past events of other topics. */
  private readonly cursors = new Map<string, string>()

  constructor(
    private readonly auth: Auth,
    /** The server's base URL, for the socket's address. */
    private readonly baseUrl: string,
  ) {}

  /**
   * Hears the caller's events as they commit, over a WebSocket
   * (`/api/v1/events/socket`), handing each batch to `onEvents` in order, one
   * at a time. It reconnects by itself (a fresh ticket, resuming after the
   * last batch the handler finished): at once after a server restart (1012),
   * with growing, jittered back-off otherwise; it ends on 4001 (the session
   * ended: sign in again, then connect again). Where sockets cannot be used (no
   * WebSocket, or the upgrade keeps failing while HTTP works) it long-polls
   * from the same cursor, and tries the socket again every `socketRetryMs`.
   */
  connect(options: ConnectOptions): Connection {
    return connectEvents(
      {
        auth: this.auth,
        baseUrl: this.baseUrl,
        page: (topics, after, wait) => this.page(topics, after, wait),
        subscribe: (topics, handler, subscribeOptions) => this.subscribe(topics, handler, subscribeOptions),
      },
      options,
    )
  }

  /** One page of the caller's events after the kept cursor (oldest first); advances the cursor. */
  async poll(options: PollOptions = {}): Promise<PlaneEvent[]> {
    const key = topicKey(options.topics)
    const page = await this.page(options.topics, options.after ?? this.cursors.get(key), options.wait ?? 0, options.signal)
    this.cursors.set(key, page.cursor)
    return page.events
  }

  /** The cursor the client keeps for a topic set (to persist it). */
  cursor(topics?: EventTopic[]): string | undefined {
    return this.cursors.get(topicKey(topics))
  }

  /**
   * Long-polls until stopped, delivering each non-empty page to `handler` as
   * one batch. The subscription keeps its own cursor (`subscription.cursor`),
   * starting after `options.after`, else after the cursor `poll` keeps for
   * these topics, else at the oldest retained event.
   */
  subscribe(topics: EventTopic[], handler: EventBatchHandler, options: SubscribeOptions = {}): Subscription {
    const wait = options.wait ?? 25
    const minBackoff = options.minBackoffMs ?? 250
    const maxBackoff = options.maxBackoffMs ?? 30_000
    const controller = new AbortController()
    let cursor = options.after ?? this.cursors.get(topicKey(topics))
    let stopped = false
    let inHandler = false
    const pause = new Pause(() => stopped)
    const tell = teller(options.onError)

    const loop = async (): Promise<SubscriptionEnd> => {
      let backoff = minBackoff
      const backOff = async (error: unknown) => {
        const retryAfterMs = error instanceof ApiError && error.retryAfter !== undefined ? error.retryAfter * 1000 : 0
        const delay = Math.max(retryAfterMs, backoff / 2 + Math.random() * (backoff / 2))
        backoff = Math.min(backoff * 2, maxBackoff)
        await pause.for(delay)
      }
      while (!stopped) {
        let page: EventsPage
        try {
          page = await this.page(topics, cursor, wait, controller.signal)
        } catch (error) {
          if (stopped) break
          tell(error)
          if (isFatal(error)) return { reason: 'failed', error }
          if (stopped) break
          await backOff(error)
          continue
        }
        if (page.events.length > 0) {
          try {
            inHandler = true
            await handler(page.events)
          } catch (error) {
            // The handler's failure is the app's, never a reason to give up: the batch comes again.
            tell(error)
            if (stopped) break
            await backOff(error)
            continue
          } finally {
            inHandler = false
          }
        }
        cursor = page.cursor
        backoff = minBackoff
      }
      return { reason: 'stopped' }
    }
    const done = loop()
    return {
      get cursor() {
        return cursor
      },
      done,
      async stop() {
        stopped = true
        controller.abort()
        pause.end()
        // From inside the handler the loop cannot end before the handler returns: do not wait for it.
        if (!inHandler) await done
      },
    }
  }

  private async page(topics: EventTopic[] | undefined, after: string | undefined, wait: number, signal?: AbortSignal): Promise<EventsPage> {
    const response = await this.auth.send({
      method: 'GET',
      path: '/api/v1/events',
      query: { after, wait: String(wait), topics: topics && topics.length > 0 ? topics.join(',') : undefined },
      // The server holds the poll up to `wait` s: the client's timeout counts from then.
      extraTimeoutMs: wait * 1000,
      ...(signal ? { signal } : {}),
    })
    return readJson<EventsPage>(response)
  }
}

function topicKey(topics: EventTopic[] | undefined): string {
  return topics && topics.length > 0 ? [...new Set(topics)].sort().join(',') : '*'
}
