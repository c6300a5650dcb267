// The SQLite engine behind the storage seam (src/db/storage.ts).
//
// Two connections to the data dir's file. The write connection belongs to the
// group committer: every unit of work runs there, one after another, each in
// its own savepoint of a shared BEGIN IMMEDIATE transaction (see
// group-commit.ts). The read connection serves reads that are not part of a
// write; in WAL mode each of its statements reads the last committed state,
// so nothing outside a batch sees a batch's uncommitted rows. It is
// query_only: a write sent there by mistake fails instead of escaping the
// committer.
import { SqliteMatchmakingStore } from './stores/matchmaking'
import { closeSync, existsSync, fsync, openSync, readSync, statSync } from 'node:fs'
import type { Counted, Storage, StorageObserver, Stores, Transaction, WriteOptions } from '../storage'
import { StorageObservers } from '../observers'
import { mapEngineError } from '../errors'
import type { EventWakeups } from '../../modules/events/wakeups'
import { inProcessLeases } from '../../background/loops'
import { openDatabase, type DbHandle } from './connection'
import * as schema from '../schema'
import type { Db, QueryScope, Tables } from '../stores/scope'
import { ClosedUnitOfWorkError } from '../errors'
import { createGroupCommitter, type GroupCommitOptions, type GroupCommitter, type ItemContext } from './group-commit'
import { runMigrations, type MigrationReport } from './migrate'
import { SqliteAuthStore } from './stores/auth'
import { SqliteEventsStore } from './stores/events'
import { SqliteGamesStore } from './stores/games'
import { SqliteWebhooksStore } from './stores/webhooks'
import { SqliteJobsStore } from './stores/jobs'
import { SqliteMatchesStore } from './stores/matches'
import { MailQueries } from '../stores/mail'
import { PayoutsQueries } from '../stores/payouts'
import { EvidenceQueries } from '../stores/evidence'
import { DeviceCodeQueries } from '../stores/device-codes'
import { OidcQueries } from '../stores/oidc'
import { SqliteSecurityStore } from './stores/security'
import { AuditQueries } from '../stores/audit'
import { OperatorsQueries } from '../stores/operators'
import { SqliteRatingsStore } from './stores/ratings'
import { SqliteOperationsStore } from './stores/operations'
import { SqliteWalletStore } from './stores/wallet'
import { SqliteVault } from './stores/vault'

/** What every SQLite store is built on: a connection, and the unit of work it runs in (none on the read connection). */
export interface SqliteScope extends QueryScope {
  handle: DbHandle
}

/** A scope on `handle`: its Drizzle and the schema's tables, as the stores written once see them (src/db/stores/scope.ts). */
function sqliteScope(handle: DbHandle, wakeups: EventWakeups, afterCommit?: (effect: () => void) => void): SqliteScope {
  return { handle, db: handle.db as unknown as Db, t: schema as unknown as Tables, wakeups, afterCommit }
}

/** Every store on one scope, each built on first use (a claim touches three of seven). */
class SqliteStores implements Stores {
  private _auth?: SqliteAuthStore
  private _events?: SqliteEventsStore
  private _games?: SqliteGamesStore
  private _jobs?: SqliteJobsStore
  private _mail?: MailQueries
  private _payouts?: PayoutsQueries
  private _webhooks?: SqliteWebhooksStore
  private _evidence?: EvidenceQueries
  private _deviceCodes?: DeviceCodeQueries
  private _oidc?: OidcQueries
  private _matches?: SqliteMatchesStore
  private _security?: SqliteSecurityStore
  private _audit?: AuditQueries
  private _operators?: OperatorsQueries
  private _matchmaking?: SqliteMatchmakingStore
  private _ratings?: SqliteRatingsStore
  private _operations?: SqliteOperationsStore
  private _wallet?: SqliteWalletStore

  constructor(protected readonly scope: SqliteScope) {}

  /** Called on every store access; a unit of work refuses once it is over. */
  protected check(): void {}

  get audit() {
    this.check()
    return (this._audit ??= new AuditQueries(this.scope))
  }
  get operators() {
    this.check()
    return (this._operators ??= new OperatorsQueries(this.scope))
  }
  get matchmaking() {
    this.check()
    return (this._matchmaking ??= new SqliteMatchmakingStore(this.scope))
  }
  get ratings() {
    this.check()
    return (this._ratings ??= new SqliteRatingsStore(this.scope))
  }
  get operations() {
    this.check()
    return (this._operations ??= new SqliteOperationsStore(this.scope))
  }
  get auth() {
    this.check()
    return (this._auth ??= new SqliteAuthStore(this.scope))
  }
  get events() {
    this.check()
    return (this._events ??= new SqliteEventsStore(this.scope))
  }
  get games() {
    this.check()
    return (this._games ??= new SqliteGamesStore(this.scope))
  }
  get jobs() {
    this.check()
    return (this._jobs ??= new SqliteJobsStore(this.scope))
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
    return (this._matches ??= new SqliteMatchesStore(this.scope))
  }
  get security() {
    this.check()
    return (this._security ??= new SqliteSecurityStore(this.scope))
  }
  get payouts() {
    this.check()
    return (this._payouts ??= new PayoutsQueries(this.scope))
  }
  get webhooks() {
    this.check()
    return (this._webhooks ??= new SqliteWebhooksStore(this.scope))
  }
  get wallet() {
    this.check()
    return (this._wallet ??= new SqliteWalletStore(this.scope))
  }
  get vault() {
    this.check()
    return SqliteVault
  }
}

class SqliteTransaction extends SqliteStores implements Transaction {
  constructor(
    handle: DbHandle,
    wakeups: EventWakeups,
    private readonly item: ItemContext,
    private readonly observers: StorageObservers,
  ) {
    super(sqliteScope(handle, wakeups, (effect) => item.afterCommit(effect)))
  }

  protected override check(): void {
    if (!this.item.open) throw new ClosedUnitOfWorkError()
  }

  afterCommit(effect: () => void): void {
    this.scope.afterCommit!(effect)
  }

  count<C extends keyof Counted>(counter: C, label: Counted[C], n: number): void {
    this.afterCommit(() => this.observers.counted(counter, label, n))
  }

  async databaseTime(processNow: Date): Promise<Date> {
    this.check()
    return processNow
  }
}

/** Frames waiting in the WAL past which the committer checkpoints between batches (SQLite's automatic checkpoint default). */
export const WAL_CHECKPOINT_FRAMES = 1000

/** How much of the database file the read connection maps (the whole file, up to this). */
export const READ_MMAP_BYTES = 256 * 1024 * 1024

export interface SqliteStorageOptions {
  /** The database file (created if missing). */
  path: string
  wakeups: EventWakeups
  groupCommit?: GroupCommitOptions
  /** Sees the migrations about to be applied; throws to refuse them (see runMigrations). */
  beforeMigrations?: (pending: readonly number[]) => void
  /**
   * Told once when an fsync of the WAL failed after its batch committed: from
   * then on every write is refused (503), and the process should stop (the
   * server does: src/db/open.ts). docs/decisions.md, "The fsync off the event loop".
   */
  onSyncFailure?: (error: unknown) => void
  /** How the WAL is synced (fsync on a thread); tests inject failures here. */
  syncWal?: (fd: number) => Promise<void>
}

/** fsync(2) of `fd` on Bun's thread pool (node:fs's callback form): the event loop goes on meanwhile. */
export function fsyncOnThread(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fsync(fd, (error) => (error ? reject(error) : resolve())))
}

export class SqliteStorage implements Storage {
  readonly engine = 'sqlite' as const
  readonly location: string
  /** The write connection: the committer's; tests and fault injection reach the file through it. */
  readonly writer: DbHandle
  /** The read connection (query_only). */
  readonly reader: DbHandle
  readonly read: Stores
  readonly commits: GroupCommitter
  readonly migrations: MigrationReport
  /** One data dir, one server: the loops run in this process (see Storage.loopLeases). */
  readonly loopLeases = inProcessLeases()
  /** One data dir, one server: the rate limiter counts in this process (src/shared/rate-limit.ts). */
  readonly rateLimits = null
  private readonly wakeups: EventWakeups
  private readonly observers = new StorageObservers()
  private closed = false
  /** The WAL file, open for its fsync (see the constructor). */
  private readonly walFd: number
  /** The WAL-index (-shm) file, read for how many frames wait for a checkpoint. */
  private readonly shmFd: number

  constructor(options: SqliteStorageOptions) {
    this.wakeups = options.wakeups
    this.writer = openDatabase(options.path)
    try {
      this.migrations = runMigrations(this.writer.sqlite, undefined, options.beforeMigrations)
      this.reader = openDatabase(options.path)
    } catch (error) {
      this.writer.close()
      throw error
    }
    this.location = this.writer.path
    this.reader.sqlite.run('PRAGMA query_only = ON')
    // Every commit on the write connection invalidates the read connection's
    // page cache, so under writes each read paid a pread per page again: the
    // claim path's authentication lookup cost a quarter more than on the one
    // shared connection of before. Memory-mapped, a page is a pointer into the
    // OS page cache instead (WAL frames are still read). The price: an I/O
    // error while reading a mapped page of the database file is a SIGBUS, not
    // SQLITE_IOERR. docs/decisions.md, "One storage seam".
    this.reader.sqlite.run(`PRAGMA mmap_size = ${READ_MMAP_BYTES}`)
    this.read = new SqliteStores(sqliteScope(this.reader, this.wakeups))
    // The fsync off the event loop (docs/decisions.md, "The fsync off the
    // event loop"): the writer commits with synchronous=NORMAL (WAL frames
    // written, not synced; checkpoints still sync the WAL before copying it
    // and the database after) and the committer syncs the WAL file on a
    // thread before it answers a batch: what synchronous=FULL does in WAL
    // mode, minus the loop waiting. The descriptor stays valid: SQLite
    // deletes the WAL only when the last connection to the database closes
    // (ours is open), and a TRUNCATE checkpoint keeps its inode.
    this.writer.sqlite.query('SELECT count(*) FROM sqlite_master').get()
    const walPath = `${this.location}-wal`
    if (!existsSync(walPath)) throw new Error(`SQLite in WAL mode but no WAL file at ${walPath}`)
    this.walFd = openSync(walPath, 'r')
    this.shmFd = openSync(`${this.location}-shm`, 'r')
    this.writer.sqlite.run('PRAGMA synchronous = NORMAL')
    // SQLite's automatic checkpoint runs inside COMMIT, while the read
    // snapshot below is held at the state before that commit: it could never
    // copy the newest frames, so the WAL would never start again from its
    // beginning and would grow for as long as writes keep coming. The
    // committer checkpoints instead, between batches, once nothing is pending
    // (checkpointDue), at SQLite's default threshold.
    this.writer.sqlite.run('PRAGMA wal_autocheckpoint = 0')
    const shmFd = this.shmFd
    const header = new Uint32Array(1)
    const walFramesNotCheckpointed = () => {
      // The WAL-index header (SQLite's file format, "WAL-index format"): mxFrame at byte 16, nBackfill at 96, native byte order.
      readSync(shmFd, header, 0, 4, 16)
      const mxFrame = header[0]!
      readSync(shmFd, header, 0, 4, 96)
      return mxFrame - header[0]!
    }
    const checkpointStatement = this.writer.sqlite.prepare('PRAGMA wal_checkpoint(PASSIVE)')
    const reader = this.reader.sqlite
    const pin = reader.prepare('SELECT 1 FROM sqlite_master LIMIT 1')
    const syncWal = options.syncWal ?? fsyncOnThread
    const walFd = this.walFd
    const onBatch = options.groupCommit?.onBatch
    this.commits = createGroupCommitter(this.writer.db, {
      ...options.groupCommit,
      durability: {
        sync: () => syncWal(walFd),
        // The read connection sees a commit only once it is durable: its
        // snapshot is held (a read transaction) from before each COMMIT until
        // that commit's sync returned, and then moves on.
        beforeCommit: () => {
          if (reader.inTransaction) return
          reader.run('BEGIN')
          pin.get()
        },
        afterSync: () => {
          if (reader.inTransaction) reader.run('COMMIT')
        },
        onSyncFailure: options.onSyncFailure,
        checkpointDue: () => walFramesNotCheckpointed() >= WAL_CHECKPOINT_FRAMES,
        checkpoint: () => {
          checkpointStatement.get()
        },
      },
      mapError: mapEngineError,
      onBatch: (report) => {
        onBatch?.(report)
        if (report.committed) this.observers.committed(report.size, report.ms / 1000)
      },
    })
  }

  observe(observer: StorageObserver): () => void {
    return this.observers.add(observer)
  }

  async sizeBytes(): Promise<number> {
    const { sqlite } = this.reader
    const pages = sqlite.query<{ page_count: number }, []>('PRAGMA page_count').get()?.page_count ?? 0
    const pageSize = sqlite.query<{ page_size: number }, []>('PRAGMA page_size').get()?.page_size ?? 0
    let wal = 0
    try {
      wal = statSync(`${this.location}-wal`).size
    } catch {
      // No WAL file (yet, or checkpointed away on close).
    }
    return pages * pageSize + wal
  }

  // Options are for engines with concurrent writers (see WriteOptions): here one unit of work runs at a time.
  write<T>(work: (tx: Transaction) => Promise<T>, _options?: WriteOptions): Promise<T> {
    return this.commits.run((_db, item) => work(new SqliteTransaction(this.writer, this.wakeups, item, this.observers)))
  }

  async ping(): Promise<number> {
    const started = performance.now()
    // Reads a page of the database file (SELECT 1 alone would not touch it),
    // on both connections: one that can read but not write is not ready.
    for (const { sqlite } of [this.reader, this.writer]) sqlite.query('SELECT count(*) FROM sqlite_master').get()
    return performance.now() - started
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    // The last batch's sync answers its items and releases the read snapshot.
    await this.commits.settled()
    if (this.reader.sqlite.inTransaction) this.reader.sqlite.run('COMMIT')
    this.reader.close()
    this.writer.close()
    closeSync(this.walFd)
    closeSync(this.shmFd)
  }
}
