// GET /metrics (contract §11): Prometheus text format behind a bearer token
// (ARENA_METRICS_TOKEN); unset, the route answers 404 like any unknown path.
// One prom-client Registry per app, never the global default one: tests build
// many apps in one process. Labels are bounded: the route TEMPLATE Elysia
// matched (never the raw path), the method and the status.
import { Elysia, t } from 'elysia'
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import { AppError } from '../../shared/errors'
import { constantTimeEqual } from '../../shared/crypto'
import { errors } from '../../plugins/openapi'
import type { Counted, Storage } from '../../db/storage'
import type { JobQueueStats } from '../../jobs/store'
import type { Clock } from '../../shared/clock'
import type { BackupStatus } from '../../backup/schedule'
import { STEAM_OUTCOMES, type SteamOutcome } from '../auth/steam'
import type { SocketHub } from '../realtime/hub'
import type { RatingChangeKind } from '../ratings/store'
import { SOCKET_CLOSE_REASONS } from '../realtime/socket'
import { INTEGRITY_SIGNALS } from '../integrity/store'
import { WEBHOOK_DELIVERY_OUTCOMES } from '../webhooks/store'

export interface MetricsSources {
  securityEvents: () => { buffered: number; shed: number; capacity: number }
  hashGate: () => { running: number; waiting: number; refused: number }
  /** Unfinished withdrawals by status: one grouped count, read at scrape time. */
  withdrawals: () => Promise<{ status: string; count: number }[]>
  /** The job queue now (one indexed query at scrape time). */
  jobs: () => Promise<JobQueueStats>
  /** Long polls waiting in this process. */
  pollsWaiting: () => number
  /** Registers for the seconds from a wake-up (a commit) to the woken poll's answer. */
  observeWakeups: (observe: (seconds: number) => void) => void
  /** The database: commits and reruns as they happen, its size at scrape time. */
  storage: Pick<Storage, 'observe' | 'sizeBytes'>
  clock: Clock
  /** What the scheduled backups last did (ARENA_BACKUP_DIR); `{}` when there are none. */
  backups: () => BackupStatus
  /** This instance's event sockets (contract §14): how many are open, and what they send and why they close. */
  sockets: Pick<SocketHub, 'openSockets' | 'observe'>
  /** Registers for the outcome of every Steam ticket check (contract §13). */
  observeSteam: (observe: (outcome: SteamOutcome) => void) => void
  /** Open tickets of every open queue, with its game and name (one grouped query at scrape time). */
  openTickets: () => Promise<{ gameId: string; queue: string; open: number }[]>
  /** Registers for each paired ticket's wait in seconds (waitingSince to its pairing), told once the pairing commits. */
  observeMatchmakingWaits: (observe: (seconds: number) => void) => void
  /** Payouts held for an operator's review now (one indexed count at scrape time). */
  payoutsHeld: () => Promise<number>
  /** Pending webhook deliveries and the creation time of the oldest (one indexed query at scrape time). */
  webhookQueue: () => Promise<{ pending: number; oldestCreatedAt: Date | null }>
}

const UNFINISHED_WITHDRAWALS = ['awaiting_approval', 'held', 'pending_signature'] as const
const JOB_STATES = ['due', 'later', 'failed'] as const
const RATING_UPDATE_KINDS = ['match', 'correction', 'season_reset'] as const satisfies readonly RatingChangeKind[]
const MATCHMAKING_KINDS = ['queue', 'challenge'] as const satisfies readonly Counted['matchmakingMatches'][]

export class AppMetrics {
  readonly registry = new Registry()
  private readonly requests: Counter<'route' | 'method' | 'status'>
  private readonly latency: Histogram<'route' | 'method' | 'status'>

  constructor(sources: MetricsSources) {
    const registers = [this.registry]
    this.requests = new Counter({ name: 'arena_http_requests_total', help: 'HTTP requests answered, by route template, method and status', labelNames: ['route', 'method', 'status'], registers })
    this.latency = new Histogram({
      name: 'arena_http_request_duration_seconds',
      help: 'HTTP request latency in seconds, by route template, method and status',
      labelNames: ['route', 'method', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    })

    // The database, observed as it writes.
    const batches = new Histogram({
      name: 'arena_db_commit_batch_size',
      help: 'Units of work made durable by one commit (SQLite group commit: the batch; PostgreSQL: always 1)',
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
      registers,
    })
    const commitTime = new Histogram({
      name: 'arena_db_commit_duration_seconds',
      help: 'Time one transaction was open, BEGIN to the end of COMMIT (the fsync included)',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
      registers,
    })
    const retries = new Counter({ name: 'arena_db_retries_total', help: 'Units of work run again after losing a race (PostgreSQL 40001/40P01; always 0 on SQLite)', registers })
    /** A counter by one label whose every value is there from 0, so a rate over any of them is defined from the start. */
    const countedBy = <L extends string>(name: string, help: string, label: L, values: readonly string[]) => {
      const counter = new Counter<L>({ name, help, labelNames: [label], registers })
      for (const value of values) counter.inc({ [label]: value } as Partial<Record<L, string>>, 0)
      return counter
    }
    // What committed units of work counted (Transaction.count): a counter per kind of Counted.
    const counted: { [K in keyof Counted]: Counter<string> } = {
      ratingUpdates: countedBy(
        'arena_rating_updates_total',
        'Players\' ratings updated, one per player and update, counted once committed: by a rated match (2 a match), a correction (2 a corrected match), a season start (1 a player of the game)',
        'kind',
        RATING_UPDATE_KINDS,
      ),
      matchmakingMatches: countedBy('arena_matchmaking_matches_total', 'Matches made by matchmaking, counted once committed: by a queue\'s pairing (queue) or a challenge\'s acceptance (challenge)', 'kind', MATCHMAKING_KINDS),
      integritySignals: countedBy('arena_integrity_signals_total', 'Integrity signals raised by decided staked or prize matches, counted once committed, by signal (docs/integrity.md)', 'signal', INTEGRITY_SIGNALS),
      webhookDeliveries: countedBy(
        'arena_webhook_deliveries_total',
        'Webhook delivery attempts, counted once recorded, by outcome: delivered (a 2xx), refused (the destination resolved to a private, loopback or link-local address), retried (another failure, tried again later), failed (another failure, given up; also a disabled endpoint\'s delivery expired after 3 days)',
        'outcome',
        WEBHOOK_DELIVERY_OUTCOMES,
      ),
    }
    sources.storage.observe({
      committed(units, seconds) {
        batches.observe(units)
        commitTime.observe(seconds)
      },
      retried: () => retries.inc(),
      counted: (counter, label, n) => counted[counter].labels(label).inc(n),
    })

    // Read at scrape time. A failing source skips its metric for this scrape (never a 500).
    const gauge = (name: string, help: string, read: () => number | Promise<number>) =>
      new Gauge({
        name,
        help,
        registers,
        async collect() {
          try {
            this.set(await read())
          } catch {
            this.remove() // left out (reset() would say 0)
          }
        },
      })
    // A running total kept by its source: the counter is set to it at each scrape.
    const total = (name: string, help: string, read: () => number) =>
      new Counter({
        name,
        help,
        registers,
        collect() {
          this.reset()
          try {
            this.inc(read())
          } catch {
            this.remove() // left out this scrape
          }
        },
      })
    gauge('arena_db_size_bytes', 'Size of the database (SQLite: file plus WAL; PostgreSQL: pg_database_size)', () => sources.storage.sizeBytes())
    gauge('arena_security_events_buffered', 'Security events buffered, not yet written', () => sources.securityEvents().buffered)
    gauge('arena_security_events_buffer_capacity', 'Capacity of the security-event buffer', () => sources.securityEvents().capacity)
    total('arena_security_events_shed_total', 'Security events shed since start because the buffer was full', () => sources.securityEvents().shed)
    gauge('arena_hash_gate_running', 'Password hashes running now', () => sources.hashGate().running)
    gauge('arena_hash_gate_waiting', 'Callers queued for a password-hash slot', () => sources.hashGate().waiting)
    total('arena_hash_gate_refused_total', 'Callers refused by the hash gate (503) since start', () => sources.hashGate().refused)
    gauge('arena_event_polls_waiting', 'Long polls of GET /events waiting in this process', () => sources.pollsWaiting())
    const woken = new Histogram({
      name: 'arena_event_wake_seconds',
      help: 'From the wake-up of a waiting poll (an append of this process: its commit; of another instance: its NOTIFY arriving) to the poll\'s page of new events',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 1],
      registers,
    })
    sources.observeWakeups((seconds) => woken.observe(seconds))
    // The event plane over WebSockets (contract §14).
    gauge('arena_payouts_held', 'Payouts held for an operator\'s review (status held): release or void them (docs/integrity.md)', () => sources.payoutsHeld())
    gauge('arena_sockets_open', 'Event-plane WebSockets open on this instance', () => sources.sockets.openSockets())
    const frames = new Counter({ name: 'arena_socket_frames_sent_total', help: 'Frames sent on event-plane WebSockets (events, pings, errors)', registers })
    const closes = countedBy(
      'arena_socket_closes_total',
      'Event-plane WebSockets closed, by reason: session_ended (4001), slow_consumer (4008), too_many (4029), restart (1012), error (1011), policy (1008), client (the client or the network)',
      'reason',
      SOCKET_CLOSE_REASONS,
    )
    const fanout = new Histogram({
      name: 'arena_socket_fanout_seconds',
      help: 'From the wake-up that told a socket of new events (an append of this process: its commit; of another instance: its NOTIFY arriving) to the frame carrying them being handed to the socket',
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 1],
      registers,
    })
    sources.sockets.observe({ sent: () => frames.inc(), closed: (reason) => closes.inc({ reason }), fannedOut: (seconds) => fanout.observe(seconds) })
    new Gauge({
      name: 'arena_withdrawals',
      help: 'Withdrawals not yet signed, by status (awaiting_approval, held, pending_signature)',
      labelNames: ['status'],
      registers,
      async collect() {
        try {
          const counts = new Map((await sources.withdrawals()).map((c) => [c.status, c.count]))
          for (const status of UNFINISHED_WITHDRAWALS) this.set({ status }, counts.get(status) ?? 0)
        } catch {
          this.reset()
        }
      },
    })
    new Gauge({
      name: 'arena_jobs',
      help: 'Jobs in the durable queue: due now, queued for later (retries, deadlines, leased), failed for good',
      labelNames: ['state'],
      registers,
      async collect() {
        try {
          const stats = await sources.jobs()
          for (const state of JOB_STATES) this.set({ state }, stats[state])
        } catch {
          this.reset()
        }
      },
    })
    gauge('arena_job_lag_seconds', 'How long the oldest due job has waited for a worker (0 when none is due)', async () => {
      const { oldestDueAt } = await sources.jobs()
      return oldestDueAt === null ? 0 : Math.max(0, (sources.clock.now().getTime() - oldestDueAt.getTime()) / 1000)
    })
    // Matchmaking (contract §16): who waits in each open queue now, and how long the paired waited.
    new Gauge({
      name: 'arena_matchmaking_tickets_open',
      help: 'Open tickets (players waiting) in each open queue, by game id and queue name',
      labelNames: ['game', 'queue'],
      registers,
      async collect() {
        try {
          const counts = await sources.openTickets()
          this.reset() // a closed queue's series goes
          for (const c of counts) this.set({ game: c.gameId, queue: c.queue }, c.open)
        } catch {
          this.reset()
        }
      },
    })
    const waits = new Histogram({
      name: 'arena_matchmaking_wait_seconds',
      help: 'A paired ticket\'s wait, from its place in line (waitingSince; kept through a ready check the other player failed) to its pairing, observed once the pairing committed',
      buckets: [0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800],
      registers,
    })
    sources.observeMatchmakingWaits((seconds) => waits.observe(seconds))
    // Webhooks (contract §18): what waits to be delivered, and for how long the oldest has.
    gauge('arena_webhook_queue_depth', 'Webhook deliveries pending (waiting for their first attempt or a retry), of enabled endpoints or not', async () => (await sources.webhookQueue()).pending)
    gauge('arena_webhook_oldest_pending_seconds', 'Age of the oldest pending webhook delivery, from its creation (0 when none is pending)', async () => {
      const { oldestCreatedAt } = await sources.webhookQueue()
      return oldestCreatedAt === null ? 0 : Math.max(0, (sources.clock.now().getTime() - oldestCreatedAt.getTime()) / 1000)
    })
    // Left out until there is something to say (no scheduled backups, or none tried yet): a 0 would read as "last backup in 1970".
    const backupGauge = (name: string, help: string, read: (status: BackupStatus) => number | undefined) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          const value = read(sources.backups())
          if (value === undefined) this.remove()
          else this.set(value)
        },
      })
    backupGauge('arena_backup_last_success_timestamp_seconds', 'When the last scheduled backup was written (Unix time)', (s) => (s.lastSuccessAt === undefined ? undefined : s.lastSuccessAt / 1000))
    backupGauge('arena_backup_last_failure_timestamp_seconds', 'When a scheduled backup last failed (Unix time)', (s) => (s.lastFailureAt === undefined ? undefined : s.lastFailureAt / 1000))
    backupGauge('arena_backup_last_size_bytes', 'Size of the last scheduled backup archive', (s) => s.lastBytes)
    // Steam sign-ins by how the check with the Steam Web API ended; every outcome from 0, so a rate over it is defined from the start.
    const steamChecks = countedBy(
      'arena_steam_ticket_checks_total',
      'Steam ticket checks with the Steam Web API, by outcome (ok, invalid_ticket, banned, timeout, unavailable, key_refused, unexpected)',
      'outcome',
      STEAM_OUTCOMES,
    )
    sources.observeSteam((outcome) => steamChecks.inc({ outcome }))
    collectDefaultMetrics({ register: this.registry, prefix: 'arena_' })
  }

  /** Called once per answered request (request-context's onAfterResponse). */
  observe(route: string, method: string, status: number, seconds: number): void {
    const labels = { route: route || 'unmatched', method, status: String(status) }
    this.requests.inc(labels)
    this.latency.observe(labels, seconds)
  }
}

export function metricsModule(metrics: AppMetrics, token: string | undefined) {
  return new Elysia({ name: 'arena/metrics' }).get(
    '/metrics',
    async ({ request, set }) => {
      if (token === undefined) throw new AppError('not_found', 'No route for GET /metrics') // what an unknown path answers
      const header = request.headers.get('authorization') ?? ''
      const given = header.startsWith('Bearer ') ? header.slice('Bearer '.length) : ''
      if (!constantTimeEqual(given, token)) throw new AppError('unauthorized', 'A valid metrics bearer token is required')
      set.headers['content-type'] = metrics.registry.contentType
      return await metrics.registry.metrics()
    },
    {
      response: { 200: t.String({ description: 'Prometheus text exposition format' }), ...errors({ 401: ['unauthorized'], 404: ['not_found'] }) },
      detail: { tags: ['health'], summary: 'Prometheus metrics (bearer ARENA_METRICS_TOKEN; 404 when unset)' },
    },
  )
}
