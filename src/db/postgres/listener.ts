// Cross-instance long-poll wake-ups: LISTEN on a connection of its own, kept
// listening whatever happens to that connection.
//
// postgres.js's own sql.listen() listens again after its connection closes,
// but not reliably: after a PostgreSQL restart under load, most instances
// ended up not listening at all, or listening on a connection whose
// notifications no callback received (test/scale/postgres-faults.test.ts),
// and their polls then heard of other instances' events only at the poll's
// 1 s re-read. So the listener here asks the server, not the client's
// bookkeeping: whenever its connection closes, and every few seconds besides,
// it checks that the session it has listens on the channel, and LISTENs
// again when it does not. A notification sent while no session listened is
// lost; after listening again every waiting poll is woken to read once.
import postgres from 'postgres'
import type { Logger } from '../../shared/logger'
import { connectOptions } from './connection'
import { EVENTS_CHANNEL } from './scope'

/** How often the listener checks that it still listens, should its connection die without a close being seen. */
export const LISTEN_CHECK_MS = 5000

/** Pauses between attempts while the server cannot be reached: short at first, then at most a second. */
const RETRY_MS = [50, 100, 200, 500, 1000]

export interface WakeupListener {
  close(): Promise<void>
}

export interface WakeupTargets {
  /** A notification: the user whose events changed. */
  wake(userId: string): void
  /** Listening again after a gap: notifications may have been lost, every poll reads again. */
  wakeAll(): void
}

/** Listens on EVENTS_CHANNEL; resolves once listening (rejects when the first LISTEN fails). */
export async function listenForWakeups(url: string, targets: WakeupTargets, logger: Logger): Promise<WakeupListener> {
  const target = connectOptions(url)
  let closed = false
  let checking: Promise<void> | undefined
  let listenedBefore = false

  // `onnotify` is the connection-level hook postgres.js builds its own
  // listen() on (src/connection.js, NotificationResponse); its typings leave it out.
  const onnotify = (channel: string, payload: string) => {
    if (channel === EVENTS_CHANNEL) targets.wake(payload)
  }
  const sql = postgres(target.url, {
    ...(target.path ? { path: target.path } : {}),
    max: 1,
    // Never closed for idleness or age: a closed connection listens to nothing.
    idle_timeout: 0,
    max_lifetime: 0,
    connect_timeout: 5,
    fetch_types: false,
    onnotice: () => {},
    onclose: () => void ensureListening().catch(() => {}),
    connection: { application_name: 'arena' },
    ...({ onnotify } as object),
  })

  /** Whether this session listens on the channel; LISTENs when it does not. */
  const checkOnce = async (): Promise<void> => {
    const [row] = await sql<{ listening: boolean }[]>`SELECT ${EVENTS_CHANNEL}::text = ANY(ARRAY(SELECT pg_listening_channels())) AS listening`
    if (row?.listening) return
    await sql.unsafe(`LISTEN "${EVENTS_CHANNEL}"`)
    if (listenedBefore) {
      logger.info('listening for wake-ups again', { channel: EVENTS_CHANNEL })
      targets.wakeAll()
    }
    listenedBefore = true
  }

  /** Checks until it succeeds (or the listener is closed), pausing between failed attempts. */
  const ensureListening = (): Promise<void> => {
    checking ??= (async () => {
      for (let attempt = 0; !closed; attempt++) {
        try {
          await checkOnce()
          return
        } catch (error) {
          if (!listenedBefore) throw error
          if (attempt === 0) logger.warn('not listening for wake-ups; trying again', { error: error instanceof Error ? error.message : String(error) })
          await Bun.sleep(RETRY_MS[Math.min(attempt, RETRY_MS.length - 1)]!)
        }
      }
    })().finally(() => {
      checking = undefined
    })
    return checking
  }

  try {
    await ensureListening()
  } catch (error) {
    closed = true
    await sql.end({ timeout: 1 }).catch(() => {})
    throw error
  }
  const timer = setInterval(() => void ensureListening().catch(() => {}), LISTEN_CHECK_MS)
  return {
    async close() {
      closed = true
      clearInterval(timer)
      await checking?.catch(() => {})
      await sql.end({ timeout: 5 })
    },
  }
}
