// The PostgreSQL engine behind the storage seam (src/db/storage.ts), for a
// studio running several instances on one database (ARENA_DATABASE_URL).
//
// Every unit of work is one SERIALIZABLE transaction on a pooled connection.
// Stores read then write as they do on SQLite, where one writer at a time
// keeps what a unit of work read true until it commits; here PostgreSQL's
// serializable snapshot isolation gives the same guarantee across instances:
// of two units of work that raced on the same rows, one commits and the
// other fails with 40001 (or 40P01, a deadlock) and is run again from the
// start, on a fresh snapshot, for up to RETRY_BUDGET_MS. So a work function must be safe to run twice:
// its effects outside the database go through afterCommit, which runs only
// for the attempt that committed. docs/decisions.md, "PostgreSQL".
//
// Reads outside a write run on the pool, each statement on the last committed
// state. Wake-ups cross instances by LISTEN/NOTIFY: the events store sends a
// NOTIFY inside the transaction, PostgreSQL delivers it on commit, and every
// instance's listener wakes its own waiting polls.
import { PostgresMatchmakingStore } from './stores/matchmaking'
import { postgresRateLimitStore, type PostgresRateLimitStore } from './rate-limits'
import type postgres from 'postgres'
import type { Counted, Storage, StorageObserver, Stores, Transaction, WriteOptions } from '../storage'
import { StorageObservers } from '../observers'
import { ClosedUnitOfWorkError, isRetryableConflict, mapEngineError, StorageUnavailableError } from '../errors'
import type { EventWakeups } from '../../modules/events/wakeups'
import type { Logger } from '../../shared/logger'
import { openPool, redactUrl, type Pool } from './connection'
import { postgresLeases, type PostgresLeases } from './leases'
import { runMigrations } from './migrate'
import type { MigrationReport } from '../sqlite/migrate'
import { listenForWakeups, type WakeupListener } from './listener'
import type { PostgresScope } from './scope'
import * as tables from './schema'
import { batchedSessionLookup, PostgresAuthStore } from './stores/auth'
import { batchedEventPages, PostgresEventsStore } from './stores/events'
import { PostgresGamesStore } from './stores/games'
import { PostgresJobsStore } from './stores/jobs'
import { PostgresMatchesStore } from './stores/matches'
import { MailQueries } from '../stores/mail'
import { PayoutsQueries } from '../stores/payouts'
import { WebhooksQueries } from '../stores/webhooks'
import { EvidenceQueries } from '../stores/evidence'
import { DeviceCodeQueries } from '../stores/device-codes'
import { OidcQueries } from '../stores/oidc'
import { PostgresSecurityStore } from './stores/security'
import { PostgresAuditStore } from './stores/audit'
import { OperatorsQueries } from '../stores/operators'
import { PostgresRatingsStore } from './stores/ratings'
import { PostgresOperationsStore } from './stores/operations'
import { PostgresWalletStore } from './stores/wallet'
import { PostgresVaultStore } from './stores/vault'

/** Every store on one scope, each built on first use. */
class PostgresStores implements Stores {
  private _auth?: PostgresAuthStore
  private _events?: PostgresEventsStore
  private _games?: PostgresGamesStore
  private _jobs?: PostgresJobsStore
  private _mail?: MailQueries
  private _payouts?: PayoutsQueries
  private _webhooks?: WebhooksQueries
  private _evidence?: EvidenceQueries
  private _deviceCodes?: DeviceCodeQueries
  private _oidc?: OidcQueries
  private _matches?: PostgresMatchesStore
  private _security?: PostgresSecurityStore
  private _audit?: PostgresAuditStore
  private _operators?: OperatorsQueries
  private _matchmaking?: PostgresMatchmakingStore
  private _ratings?: PostgresRatingsStore
  private _operations?: PostgresOperationsStore
  private _wallet?: PostgresWalletStore
  private _vault?: PostgresVaultStore

  constructor(protected readonly scope: PostgresScope) {}

  /** Called on every store access; a unit of work refuses once it is over. */
  protected check(): void {}

  get audit() {
    this.check()
    return (this._audit ??= new PostgresAuditStore(this.scope))
  }
  get operators() {
    this.check()
    return (this._operators ??= new OperatorsQueries(this.scope))
  }
  get matchmaking() {
    this.check()
    return (this._matchmaking ??= new PostgresMatchmakingStore(this.scope))
  }
  get ratings() {
    this.check()
    return (this._ratings ??= new PostgresRatingsStore(this.scope))
  }
  get operations() {
    this.check()
    return (this._operations ??= new PostgresOperationsStore(this.scope))
  }
  get auth() {
    this.check()
    return (this._auth ??= new PostgresAuthStore(this.scope))
  }
  get events() {
    this.check()
    return (this._events ??= new PostgresEventsStore(this.scope))
  }
  get games() {
    this.check()
    return (this._games ??= new PostgresGamesStore(this.scope))
  }
  get jobs() {
    this.check()
    return (this._jobs ??= new PostgresJobsStore(this.scope))
  }
  get mail() {
    this.check()
    return (this._mail ??= new MailQueries(this.scope))
  }
  get evidence() {
    this.check()
    return (this._evidence ??= new EvidenceQueries(this.scope))
  }
  get deviceCodes() {
    this.check()
    return (this._deviceCodes ??= new DeviceCodeQueries(this.scope))
  }
  get oidc() {
    this.check()
    return (this._oidc ??= new OidcQueries(this.scope))
  }
  get matches() {
    this.check()
    return (this._matches ??= new PostgresMatchesStore(this.scope))
  }
  get security() {
    this.check()
    return (this._security ??= new PostgresSecurityStore(this.scope))
  }
  get payouts() {
    this.check()
    return (this._payouts ??= new PayoutsQueries(this.scope))
  }
  get webhooks() {
    this.check()
    return (this._webhooks ??= new WebhooksQueries(this.scope))
  }
  get wallet() {
    this.check()
    return (this._wallet ??= new PostgresWalletStore(this.scope))
  }
  get vault() {
    this.check()
    return (this._vault ??= new PostgresVaultStore(this.scope))
  }
}

/** One attempt at a unit of work: its effects, and whether its work is still running. */
class Attempt {
  open = true
  readonly effects: (() => void)[] = []
}

class PostgresTransaction extends PostgresStores implements Transaction {
  constructor(
    scope: Omit<PostgresScope, 'afterCommit'>,
    private readonly attempt: Attempt,
    private readonly observers: StorageObservers,
  ) {
    super({
      ...scope,
      afterCommit: (effect) => {
        if (!attempt.open) throw new ClosedUnitOfWorkError()
        attempt.effects.push(effect)
      },
    })
  }

  protected override check(): void {
    if (!this.attempt.open) throw new ClosedUnitOfWorkError()
  }

  afterCommit(effect: () => void): void {
    this.scope.afterCommit!(effect)
  }

  count<C extends keyof Counted>(counter: C, label: Counted[C], n: number): void {
    this.afterCommit(() => this.observers.counted(counter, label, n))
  }

  async databaseTime(_processNow: Date): Promise<Date> {
    this.check()
    // In ms since the epoch: the connection hands timestamps over as strings (scope.ts).
    const [row] = await this.scope.sql<{ ms: number }[]>`SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms`
    return new Date(row!.ms)
  }
}

/**
 * How long a unit of work that keeps losing races (40001, 40P01) is run
 * again before the request is answered 503. A budget in time, not attempts:
 * a burst of claims on a small, busy table loses many races for reasons that
 * are not real conflicts (SERIALIZABLE tracks reads per index page, and new
 * rows share the newest page), each costing a millisecond or two; a fixed
 * count of 12 attempts ran out now and then in a burst of 64 claims.
 */
export const RETRY_BUDGET_MS = 3_000

/** Backoff before attempt `n` (2, 3, ...): jittered and growing to 50 ms, so racers stop meeting at the same instant. */
function backoffMs(attempt: number): number {
  return Math.random() * Math.min(50, 2 ** attempt)
}

export interface PostgresStorageOptions {
  url: string
  /** Connections this instance may open (ARENA_DATABASE_POOL). */
  pool: number
  /** Named prepared statements (ARENA_DATABASE_PREPARE; default true). */
  prepare?: boolean
  wakeups: EventWakeups
  logger: Logger
}

export class PostgresStorage implements Storage {
  readonly engine = 'postgres' as const
  readonly location: string
  readonly read: Stores
  readonly loopLeases: PostgresLeases
  readonly rateLimits: PostgresRateLimitStore
  /** Units of work run again after losing a race, since start (for tests and the operator's curiosity). */
  retries = 0
  private readonly observers = new StorageObservers()
  private closed = false

  private constructor(
    private readonly pool: Pool,
    private readonly wakeups: EventWakeups,
    readonly migrations: MigrationReport,
    url: string,
    private readonly listener: WakeupListener,
    poolSize: number,
    prepare: boolean,
  ) {
    this.location = redactUrl(url)
    this.read = new PostgresStores({ db: pool.db, t: tables, sql: pool.sql, wakeups, batches: { sessionWithUser: batchedSessionLookup(pool.db, tables), eventsPage: batchedEventPages(pool.sql) } })
    this.loopLeases = postgresLeases(url)
    // Half the pool's size again, at least 2: each request holds one for a single short statement.
    this.rateLimits = postgresRateLimitStore(url, Math.max(2, Math.ceil(poolSize / 2)), prepare)
  }

  /** Connects, applies pending migrations (once across instances), and starts listening for other instances' wake-ups. */
  static async open(options: PostgresStorageOptions): Promise<PostgresStorage> {
    const pool = openPool(options.url, { max: options.pool, prepare: options.prepare })
    try {
      const migrations = await runMigrations(pool.sql)
      const listener = await listenForWakeups(options.url, options.wakeups, options.logger)
      return new PostgresStorage(pool, options.wakeups, migrations, options.url, listener, options.pool, options.prepare !== false)
    } catch (error) {
      await pool.sql.end({ timeout: 1 }).catch(() => {})
      throw mapEngineError(error)
    }
  }

  /** The pool's postgres.js client: tests and `arena db copy` reach the database through it. */
  get sql(): postgres.Sql {
    return this.pool.sql
  }

  async write<T>(work: (tx: Transaction) => Promise<T>, options: WriteOptions = {}): Promise<T> {
    const isolation = options.rowLocks ? 'isolation level read committed' : 'isolation level serializable'
    const started = performance.now()
    for (let attempt = 1; ; attempt++) {
      const current = new Attempt()
      const begun = performance.now()
      try {
        const result = await this.pool.sql.begin(isolation, async (sql) => {
          try {
            return await work(new PostgresTransaction({ db: this.pool.inTransaction(sql), t: tables, sql, wakeups: this.wakeups, rowLocks: options.rowLocks === true }, current, this.observers))
          } finally {
            current.open = false
          }
        })
        this.observers.committed(1, (performance.now() - begun) / 1000)
        for (const effect of current.effects) {
          try {
            effect()
          } catch {
            // The write is durable and answered; an effect is only a hint (see Transaction.afterCommit).
          }
        }
        return result as T
      } catch (error) {
        if (!isRetryableConflict(error)) throw mapEngineError(error)
        if (performance.now() - started > RETRY_BUDGET_MS) throw new StorageUnavailableError('40001', { cause: error })
        this.retries++
        this.observers.retried()
        await Bun.sleep(backoffMs(attempt + 1))
      }
    }
  }

  observe(observer: StorageObserver): () => void {
    return this.observers.add(observer)
  }

  async sizeBytes(): Promise<number> {
    try {
      const [row] = await this.pool.sql<{ bytes: string }[]>`SELECT pg_database_size(current_database())::text AS bytes`
      return Number(row?.bytes ?? 0)
    } catch (error) {
      throw mapEngineError(error)
    }
  }

  async ping(): Promise<number> {
    const started = performance.now()
    try {
      // Reads a catalog page, not just a constant: a server that accepts
      // connections but cannot read is not ready.
      await this.pool.sql`SELECT count(*) FROM pg_class WHERE relname = 'users'`
    } catch (error) {
      throw mapEngineError(error)
    }
    return performance.now() - started
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    await this.listener.close().catch(() => {})
    await this.loopLeases.close().catch(() => {})
    await this.rateLimits.close().catch(() => {})
    await this.pool.sql.end({ timeout: 5 })
  }
}
