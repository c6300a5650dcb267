// The event plane (contract §4): a caller reads its own outbox events, oldest
// first, after an opaque cursor, long-polling up to `wait` seconds. The
// database is the source of truth; a commit that appended events for a user
// wakes that user's polls (EventWakeups), and a woken poll reads again.
import type { Storage } from '../../db/storage'
import type { Clock } from '../../shared/clock'
import { toIso } from '../../shared/clock'
import { AppError } from '../../shared/errors'
import type { Lifecycle } from '../health/service'
import { EVENT_TOPICS, type EventTopic } from './catalogue'
import { CaughtUpPolls } from './caught-up'
import type { EventWakeups } from './wakeups'

const CURSOR_PREFIX = 'c1.'

export const PAGE_SIZE = 100

/** Events written by another process (the CLI, a second server) wake no one here: re-read this often. */
const RECHECK_MS = 1000

/** Events created before this are past their retention. */
export function retentionCutoff(now: Date, retentionDays: number): Date {
  return new Date(now.getTime() - retentionDays * 86_400_000)
}

export function encodeCursor(seq: number): string {
  return CURSOR_PREFIX + Buffer.from(String(seq)).toString('base64url')
}

function badCursor(): AppError {
  return new AppError('validation_failed', 'Request failed validation', { details: [{ path: 'query/after', message: 'Not a cursor this server issued' }] })
}

export function parseTopics(topics: string | undefined): EventTopic[] {
  if (topics === undefined || topics === '') return [...EVENT_TOPICS]
  const list = topics.split(',').map((t) => t.trim())
  const bad = list.filter((t) => !(EVENT_TOPICS as readonly string[]).includes(t))
  if (bad.length > 0 || list.length === 0) {
    throw new AppError('validation_failed', 'Request failed validation', {
      details: [{ path: 'query/topics', message: `Topics are ${EVENT_TOPICS.join(', ')}` }],
    })
  }
  return [...new Set(list)] as EventTopic[]
}

export interface EventsServiceDeps {
  storage: Storage
  wakeups: EventWakeups
  clock: Clock
  lifecycle: Lifecycle
  eventRetentionDays: number
  /**
   * Remember caught-up polls (./caught-up.ts): right only where every append
   * wakes this process in the commit's own step, i.e. on SQLite.
   */
  rememberCaughtUp?: boolean
}

export class EventsService {
  /** The highest seq seen in this process, for cursors whose events were all pruned. */
  private lastIssued = 0
  private readonly caughtUp: CaughtUpPolls | undefined
  private readonly wakeObservers: ((seconds: number) => void)[] = []

  constructor(private readonly deps: EventsServiceDeps) {
    if (deps.rememberCaughtUp) {
      const caughtUp = new CaughtUpPolls(RECHECK_MS)
      deps.wakeups.observe((userId) => caughtUp.forget(userId))
      this.caughtUp = caughtUp
    }
  }

  /** The seq a cursor names (the event socket's subscribe). */
  cursorSeq(cursor: string): Promise<number> {
    return this.decodeCursor(cursor)
  }

  /** A cursor names an event that exists or existed: never one past the newest. */
  private async decodeCursor(cursor: string | undefined): Promise<number> {
    if (cursor === undefined || cursor === '') return 0
    const raw = cursor.startsWith(CURSOR_PREFIX) ? Buffer.from(cursor.slice(CURSOR_PREFIX.length), 'base64url').toString() : ''
    if (!/^(0|[1-9][0-9]{0,14})$/.test(raw)) throw badCursor()
    const seq = Number(raw)
    // Pruning deletes old rows, not the sequence: it is never reused, so the
    // newest seq ever issued is at least what is still in the table.
    if (seq > this.lastIssued && seq > (await this.deps.storage.read.events.newestSeq())) throw badCursor()
    return seq
  }

  private async read(userId: string, after: number, topics: EventTopic[]) {
    const { caughtUp } = this
    const key = caughtUp === undefined ? '' : `${after} ${topics.join(',')}`
    if (caughtUp?.has(userId, key)) return { events: [], cursor: encodeCursor(after) }
    const epoch = caughtUp?.begin() ?? 0
    const rows = await this.deps.storage.read.events.page(userId, after, topics, PAGE_SIZE)
    if (rows.length === 0) caughtUp?.remember(userId, key, epoch)
    const last = rows.at(-1)?.seq ?? after
    this.lastIssued = Math.max(this.lastIssued, last)
    return {
      events: rows.map((r) => ({ id: r.id, topic: r.topic, type: r.type, data: r.data, createdAt: toIso(r.createdAt) })),
      cursor: encodeCursor(last),
    }
  }

  async poll(input: { userId: string; after?: string; waitS: number; topics?: string; signal?: AbortSignal }) {
    const after = await this.decodeCursor(input.after)
    const topics = parseTopics(input.topics)
    const deadline = Date.now() + input.waitS * 1000
    let wokenAt: number | null = null
    for (;;) {
      const page = await this.read(input.userId, after, topics)
      if (page.events.length > 0 && wokenAt !== null) {
        const seconds = (performance.now() - wokenAt) / 1000
        for (const observe of this.wakeObservers) observe(seconds)
      }
      const left = deadline - Date.now()
      if (page.events.length > 0 || left <= 0 || input.signal?.aborted || this.deps.lifecycle.draining) return page
      wokenAt = await this.deps.wakeups.wait(input.userId, Math.min(left, RECHECK_MS), input.signal)
    }
  }

  /**
   * Calls `observe` with the seconds from each wake-up (for an append of this
   * process: its commit) to the woken poll's page with the new events, for
   * /metrics. The page is then serialized and sent: microseconds more.
   */
  observeWakeups(observe: (seconds: number) => void): void {
    this.wakeObservers.push(observe)
  }

  /** Retention: events older than the retention period are deleted; returns how many. */
  prune(): Promise<number> {
    const before = retentionCutoff(this.deps.clock.now(), this.deps.eventRetentionDays)
    return this.deps.storage.write((tx) => tx.events.pruneCreatedBefore(before))
  }

  /** Wakes every waiting poll (shutdown: they answer at once instead of holding the stop). */
  wakeAll(): void {
    this.deps.wakeups.wakeAll()
  }

  /** Long polls waiting in this process now (for /metrics). */
  pollsWaiting(): number {
    return this.deps.wakeups.waiting()
  }
}
