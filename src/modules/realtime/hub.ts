// Every event-plane WebSocket of this instance (contract §14): who holds
// them, the limits, and what tells them to read.
//
// - A commit that appended events for a user wakes that user's sockets here
//   (EventWakeups: in the commit's own step for this process's writes, by
//   NOTIFY for another instance's on PostgreSQL), as it wakes long polls.
// - Once a second, if any socket is open, one query asks which users have
//   events past what the previous look saw (an `arena` command on the same
//   SQLite data dir wakes no one here; a NOTIFY can be lost while the
//   listener reconnects): their sockets read too. One query whatever the
//   number of sockets; an idle socket costs no reads.
// - Every ping interval the hub asks which of its sockets' sessions are still
//   live (one query per 500 sockets), and each socket pings or, its session
//   over, sends what it has and closes with 4001.
// - On stop, every socket is closed with 1012: the client reconnects
//   (another instance takes it) and resumes from its cursor.
//
// Limits are counted here, per instance: ARENA_SOCKETS_PER_USER for one
// account, ARENA_SOCKETS_MAX for all. One over either is closed with 4029
// right after the upgrade (a browser cannot read an HTTP status of a
// refused upgrade, but it can read a close code).
import type { ServerWebSocket } from 'bun'
import type { Storage } from '../../db/storage'
import type { Logger } from '../../shared/logger'
import type { EventsService } from '../events/service'
import type { EventWakeups } from '../events/wakeups'
import { CLOSE_CODES, PING_INTERVAL_MS, type CloseCode } from './protocol'
import { CLOSE_REASONS, EventSocket, SOCKET_CLOSE_REASONS, type CloseReason } from './socket'
import type { SocketTickets, TicketHolder } from './tickets'

/** How often the hub looks for events no wake-up told of. */
export const RECHECK_MS = 1000
/** Sockets whose sessions one query of the ping tick checks. */
const TICK_BATCH = 500
/** Events the re-check looks at per look, at most: past it every socket reads once. */
const RECHECK_BATCH = 1000

export interface HubObserver {
  sent(): void
  closed(reason: CloseReason): void
  fannedOut(seconds: number): void
}

/** What the console shows of this instance's sockets (src/console/pages/dashboard.tsx). */
export interface SocketStats {
  /** Open now. */
  open: number
  /** Closes since this process started, by reason (the same labels as /metrics' arena_socket_closes_total). */
  closes: Record<CloseReason, number>
}

export interface HubDeps {
  storage: Storage
  events: EventsService
  tickets: Pick<SocketTickets, 'sessionLive' | 'liveSessions'>
  wakeups: EventWakeups
  logger: Logger
  perUser: number
  max: number
  slowS: number
  /** Tests shorten these. */
  pingMs?: number
  recheckMs?: number
}

/** What Bun hands the socket handlers: the upgrade's data. */
export interface SocketData {
  open(ws: ServerWebSocket<SocketData>): void
  message(ws: ServerWebSocket<SocketData>, message: string | Buffer): void
  drain(ws: ServerWebSocket<SocketData>): void
  close(ws: ServerWebSocket<SocketData>, code: number, reason: string): void
}

export class SocketHub {
  private readonly byUser = new Map<string, Set<EventSocket>>()
  private open = 0
  private readonly observers: HubObserver[] = []
  private pingTimer: ReturnType<typeof setInterval> | undefined
  private recheckTimer: ReturnType<typeof setInterval> | undefined
  /** The seq the re-check has looked up to (null: not yet looked). */
  private recheckedTo: number | null = null
  private rechecking = false
  private ticking = false
  private stopping = false
  private readonly closes = Object.fromEntries(SOCKET_CLOSE_REASONS.map((reason) => [reason, 0])) as Record<CloseReason, number>

  constructor(private readonly deps: HubDeps) {
    // Counted as /metrics counts them: through the same observer calls.
    this.observers.push({ sent: () => {}, closed: (reason) => this.closes[reason]++, fannedOut: () => {} })
    deps.wakeups.observe((userId) => {
      const at = performance.now()
      if (userId === null) this.nudgeAll(at)
      else for (const socket of this.byUser.get(userId) ?? []) socket.nudge(at)
    })
  }

  /** Registers for what /metrics counts. */
  observe(observer: HubObserver): void {
    this.observers.push(observer)
  }

  /** Sockets open on this instance now. */
  openSockets(): number {
    return this.open
  }

  /** Sockets one account holds open on this instance now. */
  openFor(userId: string): number {
    return this.byUser.get(userId)?.size ?? 0
  }

  /** Open sockets and closes by reason since start, read-only (the console's dashboard). */
  stats(): SocketStats {
    return { open: this.open, closes: { ...this.closes } }
  }

  /** The upgrade's handlers for a ticket's holder: the socket exists once Bun opens it. */
  handlersFor(holder: TicketHolder): SocketData {
    let socket: EventSocket | undefined
    return {
      open: (ws) => {
        socket = this.admit(ws, holder)
      },
      message: (_ws, message) => void socket?.message(message),
      drain: () => socket?.drain(),
      close: () => {
        if (socket) this.remove(socket)
      },
    }
  }

  /** Closes every socket with 1012 and stops the timers (the server is stopping). */
  closeAll(): void {
    this.stopping = true
    for (const sockets of this.byUser.values()) for (const socket of sockets) socket.close(CLOSE_CODES.restart, 'server stopping: reconnect and resume')
    this.stopTimers()
  }

  private admit(ws: ServerWebSocket<SocketData>, holder: TicketHolder): EventSocket | undefined {
    const { deps } = this
    const mine = this.byUser.get(holder.userId)
    const refuse = (code: CloseCode, reason: string) => {
      for (const observer of this.observers) observer.closed(CLOSE_REASONS[code])
      ws.close(code, reason)
      return undefined
    }
    if (this.stopping) return refuse(CLOSE_CODES.restart, 'server stopping: reconnect elsewhere')
    if (this.open >= deps.max) return refuse(CLOSE_CODES.tooMany, 'this server holds as many sockets as it may')
    if ((mine?.size ?? 0) >= deps.perUser) return refuse(CLOSE_CODES.tooMany, `at most ${deps.perUser} sockets per account`)
    const socket = new EventSocket(ws, holder, {
      storage: deps.storage,
      events: deps.events,
      sessionLive: (sessionId) => deps.tickets.sessionLive(sessionId),
      slowMs: deps.slowS * 1000,
      sent: () => {
        for (const observer of this.observers) observer.sent()
      },
      fannedOut: (seconds) => {
        for (const observer of this.observers) observer.fannedOut(seconds)
      },
      closing: (code) => {
        for (const observer of this.observers) observer.closed(CLOSE_REASONS[code])
      },
      failed: (error) => deps.logger.warn('event socket failed', { error: error instanceof Error ? error.message : String(error) }),
    })
    const set = mine ?? new Set<EventSocket>()
    set.add(socket)
    this.byUser.set(holder.userId, set)
    this.open++
    this.startTimers()
    socket.open()
    return socket
  }

  private remove(socket: EventSocket): void {
    const set = this.byUser.get(socket.userId)
    if (!set?.delete(socket)) return
    // Closed by the client (or the network) rather than by us: counted as such.
    if (!socket.isClosed) for (const observer of this.observers) observer.closed('client')
    socket.gone()
    if (set.size === 0) this.byUser.delete(socket.userId)
    this.open--
    if (this.open === 0) this.stopTimers()
  }

  private nudgeAll(at: number | null): void {
    for (const sockets of this.byUser.values()) for (const socket of sockets) socket.nudge(at)
  }

  private startTimers(): void {
    if (this.pingTimer !== undefined) return
    this.pingTimer = setInterval(() => void this.tick(), this.deps.pingMs ?? PING_INTERVAL_MS)
    this.recheckTimer = setInterval(() => void this.recheck(), this.deps.recheckMs ?? RECHECK_MS)
    // The first look only notes where the outbox ends: from there on nothing is missed.
    void this.recheck()
  }

  private stopTimers(): void {
    clearInterval(this.pingTimer)
    clearInterval(this.recheckTimer)
    this.pingTimer = undefined
    this.recheckTimer = undefined
    this.recheckedTo = null
  }

  /**
   * The ping tick: which sessions are still live, asked for every socket at
   * once (a query per TICK_BATCH sockets, not one per socket: 10,000 sockets
   * asking at the same moment queued as many queries), then each socket pings
   * or, its session over, sends what it has and closes with 4001.
   */
  private async tick(): Promise<void> {
    if (this.ticking) return
    this.ticking = true
    try {
      const sockets = [...this.byUser.values()].flatMap((set) => [...set])
      for (let start = 0; start < sockets.length; start += TICK_BATCH) {
        const batch = sockets.slice(start, start + TICK_BATCH)
        const live = await this.deps.tickets.liveSessions([...new Set(batch.map((socket) => socket.sessionId))])
        for (const socket of batch) socket.tick(live.has(socket.sessionId))
      }
    } catch (error) {
      // The database away: no socket is told its session ended for it; the next tick asks again.
      this.deps.logger.warn('event sockets: the ping tick could not check the sessions', { error: error instanceof Error ? error.message : String(error) })
    } finally {
      this.ticking = false
    }
  }

  /** Users with events past the last look: their sockets read (see the top of this file). */
  private async recheck(): Promise<void> {
    if (this.rechecking || this.open === 0) return
    this.rechecking = true
    try {
      const events = this.deps.storage.read.events
      if (this.recheckedTo === null) {
        // Where the outbox ends as the first socket opens; that socket reads once it opened.
        this.recheckedTo = await events.newestSeq()
        return
      }
      const found = await events.usersWithEventsAfter(this.recheckedTo, RECHECK_BATCH)
      this.recheckedTo = found.lastSeq
      if (found.full) {
        this.recheckedTo = await events.newestSeq()
        this.nudgeAll(null)
        return
      }
      for (const userId of found.userIds) for (const socket of this.byUser.get(userId) ?? []) socket.nudge(null)
    } catch (error) {
      this.deps.logger.warn('event sockets: re-check failed', { error: error instanceof Error ? error.message : String(error) })
    } finally {
      this.rechecking = false
    }
  }
}
