// The event plane over a WebSocket (`events.connect`): a ticket, the socket,
// a subscribe from the resume cursor, and each `events` frame handed to the
// handler in order, one at a time. The resume cursor is the cursor of the last
// frame whose handler finished, so every reconnect (a fresh ticket, a
// subscribe with `after`) hears nothing twice that was handled and loses
// nothing that was not. Where sockets cannot be used (no WebSocket, or a
// proxy that refuses the upgrade) it long-polls from the same cursor with the
// same handler rules, and tries the socket again now and then.
import type { Auth } from './auth.js'
import { ApiError, NotSignedIn } from './errors.js'
import type { EventBatchHandler, Subscription, SubscriptionEnd, SubscribeOptions } from './events.js'
import { Pause, teller } from './pause.js'
import { readJson } from './transport.js'
import type { EventsPage, EventTopic, PlaneEvent, ServerFrame, SocketTicketResponse, SubscribeMessage } from './types.js'

/** The close codes the server sends (see `EventSocketError.code`). */
export const SOCKET_CLOSE_CODES = {
  /** The session ended (logout, ban, password change or reset, deletion, expiry): sign in again. */
  sessionEnded: 4001,
  /** The client read too slowly: it reconnects and resumes. */
  slowConsumer: 4008,
  /** Too many sockets for the account or the server: it backs off. */
  tooMany: 4029,
  /** The server is stopping: it reconnects at once (elsewhere) and resumes. */
  restart: 1012,
} as const

/**
 * The event socket closed (`code`: its close code; 1006 when it could not be
 * opened), or the server refused a message (`code`: the error frame's code,
 * e.g. `validation_failed` for a cursor it did not issue).
 */
export class EventSocketError extends Error {
  override readonly name: string = 'EventSocketError'
  readonly code: number | string
  constructor(code: number | string, message: string) {
    super(message)
    this.code = code
  }
}

/** What the SDK needs of a WebSocket: the standard constructor (browsers, Bun, Node 22+). */
export type WebSocketConstructor = new (url: string) => WebSocket

export interface ConnectOptions {
  /** Handed each batch of events, oldest first, one batch at a time (awaited). A handler that throws gets the same events again, on the next connection. */
  onEvents: EventBatchHandler
  /** Resume after this cursor (a `connection.cursor` saved earlier). Without it: only the events committed from the moment the first socket opened (or the long poll started). */
  after?: string
  /** Absent: every topic. */
  topics?: EventTopic[]
  /** Told about every failure: a close the app did not ask for (an `EventSocketError` with its code), a ticket or poll that failed, a handler that threw. Its own errors are ignored. */
  onError?: (error: unknown) => void
  /** Told before each wait to reconnect the socket: the delay, the close code that led to it (undefined: no socket was opened), and how many back-offs in a row it is. */
  onReconnect?: (info: { delayMs: number; code: number | undefined; attempt: number }) => void
  /** Back-off before reconnecting: a random delay up to min(`maxBackoffMs`, `minBackoffMs` × 2^attempt) ("full jitter"). Defaults 250 ms and 30 s. */
  minBackoffMs?: number
  maxBackoffMs?: number
  /** After a 1012 (the server restarting), reconnect within a random delay up to this. Default 1000 ms. (A socket closed 1012 sooner than this after it opened, having delivered nothing, met a stopping server: that backs off instead.) */
  restartJitterMs?: number
  /** A connection that stayed up this long resets the back-off. Default 30 s. */
  stableMs?: number
  /** Sockets that failed to open, in a row (while HTTP works), before falling back to the long poll. Default 3. */
  socketFailuresBeforePoll?: number
  /** While on the long poll, try the socket again this often. Default 5 minutes. */
  socketRetryMs?: number
  /** Nothing heard for this long (the server pings every 25 s): the connection is taken for dead and replaced. Default 60 s. */
  silenceMs?: number
  /** The long poll's wait in seconds when falling back. Default 25. */
  pollWait?: number
  /** The WebSocket constructor. Default `globalThis.WebSocket`; `null`: never a socket, the long poll only. */
  WebSocket?: WebSocketConstructor | null
  /** A number in [0, 1) for the jitter. Default Math.random. */
  random?: () => number
}

export interface Connection {
  /** The cursor after the last batch the handler finished: save it to resume with `{ after }`. */
  readonly cursor: string | undefined
  /** How events arrive now. */
  readonly transport: 'socket' | 'poll'
  /** Changes the topics: on a live socket from its current position (nothing skipped or repeated); on the long poll, the poll restarts from the cursor. Absent or empty: every topic. */
  setTopics(topics?: EventTopic[]): void
  /** Closes the socket (or ends the poll) and resolves when it has: no handler is called after. Safe to call from the handler (it then does not wait for the handler to return). */
  stop(): Promise<void>
  /** Resolves when the connection ends: `stop()`, or `failed` when no retry can help (the session ended: 4001, or signed out; a cursor the server refuses). Never rejects. */
  readonly done: Promise<SubscriptionEnd>
}

/** What a connection needs of the events client. */
export interface ConnectDeps {
  auth: Auth
  baseUrl: string
  page(topics: EventTopic[] | undefined, after: string | undefined, wait: number): Promise<EventsPage>
  subscribe(topics: EventTopic[], handler: EventBatchHandler, options: SubscribeOptions): Subscription
}

/** How one socket ended. */
interface SocketRun {
  opened: boolean
  code: number | undefined
  reason: string
  /** The handler finished a batch of events on it. */
  delivered: boolean
  handlerFailed: boolean
  /** A failure no reconnect can fix. */
  fatal: unknown
  upMs: number
}

const CLIENT_CLOSE = 4000

export function connectEvents(deps: ConnectDeps, options: ConnectOptions): Connection {
  const minBackoff = options.minBackoffMs ?? 250
  const maxBackoff = options.maxBackoffMs ?? 30_000
  const restartJitter = options.restartJitterMs ?? 1000
  const stableMs = options.stableMs ?? 30_000
  const failuresBeforePoll = options.socketFailuresBeforePoll ?? 3
  const socketRetryMs = options.socketRetryMs ?? 300_000
  const silenceMs = options.silenceMs ?? 60_000
  const pollWait = options.pollWait ?? 25
  const random = options.random ?? Math.random
  const WS: WebSocketConstructor | undefined = options.WebSocket === null ? undefined : (options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket)
  const socketUrl = deps.baseUrl.replace(/^http/, 'ws') + '/api/v1/events/socket'

  let topics = options.topics && options.topics.length > 0 ? [...options.topics] : undefined
  let cursor = options.after
  let mode: 'socket' | 'poll' = WS ? 'socket' : 'poll'
  let stopped = false
  let inHandler = false
  let attempt = 0
  let openFailures = 0
  const mint = new AbortController()
  /** The socket open now, and how to end it. */
  let live: { ws: WebSocket; end(code: number | undefined, reason: string): void } | undefined
  let poll: Subscription | undefined
  /** A back-off or the wait before trying the socket again, cut short by stop or a topic change. */
  const pause = new Pause(() => stopped)
  /** The topics changed while long-polling: poll again with them. */
  let pollRestart = false

  const tell = teller(options.onError, () => stopped)
  const backoff = () => random() * Math.min(maxBackoff, minBackoff * 2 ** attempt++)

  const handle = async (events: PlaneEvent[]) => {
    inHandler = true
    try {
      await options.onEvents(events)
    } finally {
      inHandler = false
    }
  }

  const ticket = async (): Promise<string> => {
    const response = await deps.auth.send({ method: 'POST', path: '/api/v1/events/socket-ticket', body: {}, signal: mint.signal })
    return (await readJson<SocketTicketResponse>(response)).ticket
  }

  const runSocket = (ticketValue: string): Promise<SocketRun> =>
    new Promise((resolve) => {
      const run: SocketRun = { opened: false, code: undefined, reason: '', delivered: false, handlerFailed: false, fatal: undefined, upMs: 0 }
      let openedAt = 0
      let ended = false
      let frames: Promise<void> = Promise.resolve()
      let silence: ReturnType<typeof setTimeout> | undefined
      let ws: WebSocket
      const end = (code: number | undefined, reason: string) => {
        if (ended) return
        ended = true
        clearTimeout(silence)
        live = undefined
        run.code = code
        run.reason = reason
        run.upMs = run.opened ? Date.now() - openedAt : 0
        ws.onopen = ws.onmessage = ws.onerror = ws.onclose = null
        // What came before the close is still handled (in order), unless a handler failed or stop() was called.
        void frames.then(() => resolve(run))
      }
      const hang = () => {
        clearTimeout(silence)
        silence = setTimeout(() => {
          try {
            ws.close(CLIENT_CLOSE, 'silent')
          } catch {
            // already closing
          }
          end(undefined, 'nothing heard from the server')
        }, silenceMs)
      }
      try {
        ws = new WS!(`${socketUrl}?ticket=${encodeURIComponent(ticketValue)}`)
      } catch (error) {
        tell(error)
        return resolve(run)
      }
      live = { ws, end }
      // An upgrade that hangs counts as one that failed.
      hang()
      ws.onopen = () => {
        run.opened = true
        openedAt = Date.now()
        hang()
        const subscribe: SubscribeMessage = { type: 'subscribe', ...(cursor !== undefined ? { after: cursor } : {}), ...(topics ? { topics } : {}) }
        ws.send(JSON.stringify(subscribe))
      }
      ws.onmessage = (message: MessageEvent) => {
        hang()
        let frame: ServerFrame
        try {
          frame = JSON.parse(String(message.data)) as ServerFrame
        } catch {
          return tell(new EventSocketError('malformed_frame', 'The server sent a frame that is not JSON'))
        }
        frames = frames.then(async () => {
          if (stopped || run.handlerFailed || run.fatal !== undefined) return
          if (frame.type === 'events') {
            if (frame.events.length > 0) {
              try {
                await handle(frame.events)
              } catch (error) {
                // Not past this frame: its events come again on the next connection.
                tell(error)
                run.handlerFailed = true
                ws.close(1000, 'the handler failed')
                return end(undefined, 'the handler failed')
              }
              run.delivered = true
            }
            if (!stopped) cursor = frame.cursor
          } else if (frame.type === 'error') {
            const error = new EventSocketError(frame.error.code, frame.error.message)
            tell(error)
            // The SDK sends only well-formed subscribes: a refused one names a cursor this server did not issue.
            if (frame.error.code === 'validation_failed') {
              run.fatal = error
              ws.close(1000, 'subscribe refused')
              end(undefined, 'subscribe refused')
            }
          }
        })
      }
      ws.onerror = () => {
        // The close event follows with the code.
      }
      ws.onclose = (event: CloseEvent) => end(event.code, event.reason)
    })

  /** The events client's cursor for "now": pages read and skipped until the newest (what a socket without `after` starts from). */
  const newestCursor = async (): Promise<string | undefined> => {
    let after: string | undefined
    for (;;) {
      const page = await deps.page(topics, after, 0)
      after = page.cursor
      if (page.events.length === 0) return after
    }
  }

  /** Long-polls until it ends (`stop()`, a failure no retry fixes), the topics change (`again`) or it is time to try the socket (`socket`). */
  const runPoll = async (): Promise<SubscriptionEnd | 'again' | 'socket'> => {
    if (cursor === undefined) {
      try {
        cursor = await newestCursor()
      } catch (error) {
        tell(error)
        if (isFatal(error)) return { reason: 'failed', error }
        await pause.for(backoff())
        return 'again'
      }
    }
    const sub = deps.subscribe(
      topics ?? [],
      (events) => {
        // After stop() nothing is handed over, and the poll's cursor must not move past it.
        if (stopped) throw new Error('stopped')
        return handle(events)
      },
      { after: cursor!, wait: pollWait, minBackoffMs: minBackoff, maxBackoffMs: maxBackoff, onError: tell },
    )
    poll = sub
    const retry = pause.for(socketRetryMs).then(() => 'wake' as const)
    const outcome = await Promise.race([sub.done, retry])
    poll = undefined
    await sub.stop()
    pause.end()
    cursor = sub.cursor ?? cursor
    if (outcome !== 'wake') return outcome.reason === 'failed' && !stopped ? outcome : { reason: 'stopped' }
    if (pollRestart) {
      pollRestart = false
      return 'again'
    }
    return 'socket'
  }

  const loop = async (): Promise<SubscriptionEnd> => {
    while (!stopped) {
      if (mode === 'poll') {
        const outcome = await runPoll()
        if (typeof outcome === 'object') return stopped ? { reason: 'stopped' } : outcome
        // Time to try the socket again: one failure to open sends it back to the poll.
        if (outcome === 'socket' && WS && !stopped) {
          mode = 'socket'
          openFailures = failuresBeforePoll - 1
        }
        continue
      }
      let value: string
      try {
        value = await ticket()
      } catch (error) {
        if (stopped) break
        tell(error)
        if (isFatal(error)) return { reason: 'failed', error }
        const retryAfterMs = error instanceof ApiError && error.retryAfter !== undefined ? error.retryAfter * 1000 : 0
        const delayMs = Math.max(retryAfterMs, backoff())
        options.onReconnect?.({ delayMs, code: undefined, attempt })
        await pause.for(delayMs)
        continue
      }
      if (stopped) break
      const run = await runSocket(value)
      if (stopped) break
      if (run.fatal !== undefined) return { reason: 'failed', error: run.fatal }
      if (!run.opened) {
        openFailures++
        tell(new EventSocketError(run.code ?? 1006, `The event socket could not be opened (${openFailures} in a row)`))
        if (openFailures >= failuresBeforePoll) {
          mode = 'poll'
          continue
        }
        const delayMs = backoff()
        options.onReconnect?.({ delayMs, code: run.code, attempt })
        await pause.for(delayMs)
        continue
      }
      openFailures = 0
      if (run.code === SOCKET_CLOSE_CODES.sessionEnded) {
        const error = new EventSocketError(run.code, `The session ended (${run.reason || 'signed out'}): sign in again`)
        tell(error)
        return { reason: 'failed', error }
      }
      if (!run.handlerFailed) tell(new EventSocketError(run.code ?? CLIENT_CLOSE, `The event socket closed: ${run.code ?? ''} ${run.reason}`.trim()))
      let delayMs: number
      if (run.handlerFailed || run.code === SOCKET_CLOSE_CODES.slowConsumer || run.code === SOCKET_CLOSE_CODES.tooMany) delayMs = backoff()
      else if (run.code === SOCKET_CLOSE_CODES.restart && (run.delivered || run.upMs >= restartJitter)) {
        // A restart: rejoin at once (another instance takes it). A socket closed 1012 as soon as it opened
        // met a server that is itself stopping: that one backs off like any failure, not to spin on it.
        attempt = 0
        delayMs = random() * restartJitter
      } else {
        if (run.delivered || run.upMs >= stableMs) attempt = 0
        delayMs = backoff()
      }
      options.onReconnect?.({ delayMs, code: run.code, attempt })
      await pause.for(delayMs)
    }
    return { reason: 'stopped' }
  }

  const done = loop().then((end) => {
    stopped = true
    return end
  })

  return {
    get cursor() {
      return poll?.cursor ?? cursor
    },
    get transport() {
      return mode
    },
    done,
    setTopics(next?: EventTopic[]) {
      topics = next && next.length > 0 ? [...next] : undefined
      if (mode === 'poll') {
        if (poll) {
          pollRestart = true
          pause.end()
        }
        return
      }
      if (live && live.ws.readyState === 1) {
        const subscribe: SubscribeMessage = { type: 'subscribe', ...(topics ? { topics } : {}) }
        live.ws.send(JSON.stringify(subscribe))
      }
    },
    async stop() {
      if (!stopped) {
        stopped = true
        mint.abort()
        void poll?.stop()
        if (live) {
          try {
            live.ws.close(1000, 'stopped')
          } catch {
            // already closing
          }
          live.end(1000, 'stopped')
        }
        pause.end()
      }
      // From inside the handler the connection cannot end before the handler returns: do not wait for it.
      if (!inHandler) await done
    },
  }
}

/** Failures a retry cannot fix: no session, or a request the server refuses as such. */
export function isFatal(error: unknown): boolean {
  if (error instanceof NotSignedIn) return true
  return error instanceof ApiError && (error.status === 401 || error.status === 403 || error.status === 422)
}
