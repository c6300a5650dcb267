// The storage seam: what services see of the database, whatever the engine.
//
// Each module declares the persistence it needs as an async store interface
// in its own folder (modules/<name>/store.ts), in domain terms. An engine
// (src/db/sqlite/, src/db/postgres/) implements every store and this
// Storage. Services hold a Storage and nothing else of the database:
//
//   const view = await storage.read.matches.myMatches(userId)       // committed state
//   await storage.write(async (tx) => {                               // one unit of work
//     const match = await tx.matches.byId(id)
//     await tx.matches.markDecided(id, winner, now)
//     await tx.events.append({ ... })                                 // commits or rolls back with it
//     tx.afterCommit(() => ...)                                      // only once it committed
//   })
import type { RateLimitStore } from '../shared/rate-limit'
import type { AuditStore } from '../modules/audit/store'
import type { AuthStore } from '../modules/auth/store'
import type { DeviceCodesStore } from '../modules/auth/device-code-store'
import type { EventsStore } from '../modules/events/store'
import type { EvidenceStore } from '../modules/evidence/store'
import type { GamesStore } from '../modules/games/store'
import type { MailStore } from '../modules/mail/store'
import type { OidcStore } from '../modules/auth/oidc/store'
import type { MatchesStore } from '../modules/matches/store'
import type { OperatorsStore } from '../modules/operators/store'
import type { OperationsStore } from '../modules/operations/store'
import type { RatingChangeKind, RatingsStore } from '../modules/ratings/store'
import type { MatchmakingStore } from '../modules/matchmaking/store'
import type { SecurityStore } from '../modules/security/store'
import type { WalletStore } from '../modules/wallet/store'
import type { IntegritySignal, PayoutsStore } from '../modules/integrity/store'
import type { WebhookDeliveryOutcome, WebhooksStore } from '../modules/webhooks/store'
import type { JobsStore } from '../jobs/store'
import type { LoopLeases } from '../background/loops'
import type { VaultStore } from '../vault/store'

/** Every module's store, on one connection or inside one unit of work. */
export interface Stores {
  audit: AuditStore
  auth: AuthStore
  /** Device codes (RFC 8628, contract §13): a device's sign-in waiting for the player's approval. */
  deviceCodes: DeviceCodesStore
  events: EventsStore
  /** Files players attached to disputed matches, stored once per content (contract §17). */
  evidence: EvidenceStore
  games: GamesStore
  jobs: JobsStore
  mail: MailStore
  matches: MatchesStore
  /** The OpenID Connect web flow's flows and one-time exchange codes (contract §13). */
  oidc: OidcStore
  operators: OperatorsStore
  /** The operator console's cross-module reads (dashboard counts, queues). */
  operations: OperationsStore
  /** Ratings, their history and seasons (contract §15). */
  ratings: RatingsStore
  /** Queues, tickets, challenges and the matches they make (contract §16). */
  matchmaking: MatchmakingStore
  security: SecurityStore
  wallet: WalletStore
  /** Integrity signals' reads, their flags and the payouts held for an operator's review (contract §17). */
  payouts: PayoutsStore
  /** Webhook endpoints, their deliveries and attempts (contract §18). */
  webhooks: WebhooksStore
  /** Sealed secrets shared by every instance (PostgreSQL); SQLite keeps its secrets in the data dir and refuses. */
  vault: VaultStore
}

/** One unit of work: every store, inside one transaction. */
export interface Transaction extends Stores {
  /**
   * Runs `effect` once this unit of work has committed (a long-poll wake-up,
   * a mail, a signature request); never if it rolls back. An effect that
   * throws is ignored: the write is durable and answered already.
   */
  afterCommit(effect: () => void): void
  /**
   * The database's time, for a duration that one instance starts and another
   * may end (a refresh token spent by one, presented again to another): on
   * PostgreSQL the server's clock_timestamp(), so the instances' clock skew
   * never counts; the read happens again on a retried attempt. SQLite has one
   * process per data dir (src/shared/data-dir-lock.ts): its clock is the
   * database's, and `processNow` is the answer.
   */
  databaseTime(processNow: Date): Promise<Date>
  /**
   * Counts `n` on `counter` (labelled `label`) for /metrics once this unit of
   * work has committed: told to Storage.observe's observers then, never if
   * it rolls back (nor for an attempt run again: only the one that commits).
   */
  count<C extends keyof Counted>(counter: C, label: Counted[C], n: number): void
}

/** What units of work count for /metrics (Transaction.count): each counter, and the values of its one label. */
export interface Counted {
  /** Players' ratings updated, one per player and update, by the update's kind (contract §15). */
  ratingUpdates: RatingChangeKind
  /** Matches a queue paired or a challenge's acceptance made (contract §16), by kind. */
  matchmakingMatches: 'queue' | 'challenge'
  /** Integrity signals raised by decided staked or prize matches, by signal (docs/integrity.md). */
  integritySignals: IntegritySignal
  /** Webhook delivery attempts by outcome (contract §18; src/modules/webhooks/delivery.ts), and deliveries housekeeping expired as failed. */
  webhookDeliveries: WebhookDeliveryOutcome
}

/** How a unit of work may be ordered against the others. */
export interface WriteOptions {
  /**
   * The unit of work decides only on rows it locks as it reads them (on
   * PostgreSQL the stores read a session, a match and its tournament `FOR NO
   * KEY UPDATE` inside a write, so two claims of one match take turns), so
   * those locks alone order it against every write that could change its
   * decision. PostgreSQL then runs it READ COMMITTED instead of SERIALIZABLE:
   * a burst of claims on different matches shares index pages, which
   * SERIALIZABLE counts as conflicts, and those aborted most of a burst. Only
   * for units of work whose every read-then-write is covered by such a lock
   * (the claim path and session issue; docs/decisions.md, "PostgreSQL").
   * SQLite ignores it: one writer at a time.
   */
  rowLocks?: boolean
}

/** What an engine tells /metrics as it writes (see Storage.observe). */
export interface StorageObserver {
  /**
   * A commit made `units` units of work durable; `seconds` from BEGIN to the
   * end of COMMIT. SQLite: one group-commit batch (units is its size).
   * PostgreSQL: one transaction (units is 1).
   */
  committed(units: number, seconds: number): void
  /** A unit of work lost a race (PostgreSQL 40001/40P01) and is run again. */
  retried(): void
  /** A committed unit of work counted `n` on `counter` (Transaction.count). */
  counted?<C extends keyof Counted>(counter: C, label: Counted[C], n: number): void
}

export interface Storage {
  /** Which engine holds the data: SQLite in the data dir, or PostgreSQL (ARENA_DATABASE_URL). */
  readonly engine: 'sqlite' | 'postgres'
  /** Where the data is, for people: a file path (SQLite), a URL without its password. */
  readonly location: string
  /**
   * Reads outside any write: committed state only, never another request's
   * uncommitted rows. Writing through these stores is refused.
   */
  readonly read: Stores
  /**
   * The one way to change state. `work` runs in one transaction and may
   * await store calls; it must not await anything slow (hashing, custody,
   * the network: do that before or after) nor call `write` again (it would
   * wait for itself: the engine fails such a unit of work after a timeout).
   * Every store call must be awaited before `work` returns: `tx` refuses to
   * be used once the work settled. Resolves once the transaction committed;
   * rejects, with nothing written, when `work` throws or the commit fails.
   * Engine errors arrive mapped (src/db/errors.ts).
   */
  write<T>(work: (tx: Transaction) => Promise<T>, options?: WriteOptions): Promise<T>
  /** Tells `observer` of every commit and rerun from now on; returns the function that stops telling it. */
  observe(observer: StorageObserver): () => void
  /** The database's size in bytes: the file and its WAL (SQLite), pg_database_size (PostgreSQL). */
  sizeBytes(): Promise<number>
  /** Readiness: the database answers a query that reads its file; resolves with the latency in ms. */
  ping(): Promise<number>
  /**
   * Who may run a background loop now. SQLite: this process (one data dir,
   * one server). PostgreSQL: one instance at a time among all those on the
   * database (an advisory lock), so two never resume the same withdrawal or
   * prune at once.
   */
  readonly loopLeases: LoopLeases
  /**
   * Where the rate limiter counts (contract §20): PostgreSQL's shared
   * counters, so a limit holds across instances; null on SQLite, whose one
   * server per data dir counts in its own memory.
   */
  readonly rateLimits: RateLimitStore | null
  /** Closes every connection; call it once nothing writes any more (the server stops its loops and flushes its logs first). Safe to call twice. */
  close(): Promise<void>
}
