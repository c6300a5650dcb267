// Engine errors, mapped in one place. A store or the unit of work turns what
// the engine throws into one of these, so services and routes never read an
// engine's error code: a unique violation is a conflict the service may answer
// in domain terms; a busy, full or failing disk is the storage being away
// (503 with Retry-After), not the request being wrong.

/** The storage cannot serve now (busy past its timeout, disk full, I/O error, file gone or read-only). Answered 503. */
export class StorageUnavailableError extends Error {
  override readonly name = 'StorageUnavailableError'
  constructor(
    /** The engine's own code, for the operator's log only. */
    readonly engineCode: string,
    options: { cause: unknown },
  ) {
    super(`storage unavailable (${engineCode})`, options)
  }
}

/** A store call or afterCommit after its unit of work's work settled (a call that was not awaited): refused, whatever the engine. */
export class ClosedUnitOfWorkError extends Error {
  override readonly name = 'ClosedUnitOfWorkError'
  constructor() {
    super('this unit of work is over: a store call or afterCommit after its work settled (a call that was not awaited?)')
  }
}

/**
 * A text value the engine cannot store or compare: PostgreSQL refuses U+0000
 * in text (22021) and what its encoding cannot hold (22P05). SQLite stores
 * such text. Answered 422: the request, not the storage, is the problem.
 */
export class UnstorableTextError extends Error {
  override readonly name = 'UnstorableTextError'
  constructor(options: { cause: unknown }) {
    super('a text value holds a character the database cannot store (U+0000)', options)
  }
}

/** A write broke a unique or primary-key constraint. */
export class UniqueViolationError extends Error {
  override readonly name = 'UniqueViolationError'
  constructor(
    /** The engine's description of the constraint: the table and columns, e.g. `users.email`. */
    readonly constraint: string,
    options: { cause: unknown },
  ) {
    super(`unique constraint violated: ${constraint}`, options)
  }

  /** Whether the violated constraint covers `column` (`table.column` or a bare column name). */
  involves(column: string): boolean {
    return this.constraint.split(/[\s,]+/).some((part) => part === column || part.endsWith(`.${column}`))
  }
}

// SQLite saying the disk, not the request, is the problem.
const SQLITE_UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|FULL|IOERR|CANTOPEN|READONLY)/
const SQLITE_UNIQUE = /^SQLITE_CONSTRAINT_(UNIQUE|PRIMARYKEY)$/

// PostgreSQL (SQLSTATE classes and codes) and postgres.js (its own codes for a
// connection it lost or could not open) saying the server, not the request,
// is the problem: shut down or restarting, out of connections or resources,
// the connection gone, a read-only standby.
const POSTGRES_UNAVAILABLE = /^(08...|53...|57P0[1-4]|58...|25006|CONNECTION_(CLOSED|ENDED|DESTROYED)|CONNECT_TIMEOUT|ECONNREFUSED|ECONNRESET|ENOENT|EPIPE|ETIMEDOUT)$/
/** Serialization failure and deadlock: the transaction lost a race; run it again from the start. */
const POSTGRES_RETRY = /^(40001|40P01)$/
const POSTGRES_UNIQUE = '23505'
const POSTGRES_UNSTORABLE_TEXT = /^(22021|22P05)$/

/** Whether `error` (or what it was mapped from) is PostgreSQL telling this transaction to run again (40001, 40P01). */
export function isRetryableConflict(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = engineCode(e)
    if (code !== undefined && POSTGRES_RETRY.test(code)) return true
  }
  return false
}

/** The columns a PostgreSQL unique violation names, as SQLite would: `users.email_key`. */
function postgresConstraint(error: { table_name?: string; detail?: string; constraint_name?: string }): string {
  // detail: 'Key (email_key)=(a@b.c) already exists.'; the columns are what services ask about.
  const columns = /^Key \(([^)]*)\)=/.exec(error.detail ?? '')?.[1]
  if (!columns) return error.constraint_name ?? 'unknown'
  return columns
    .split(',')
    .map((column) => `${error.table_name ?? ''}.${column.trim()}`.replace(/^\./, ''))
    .join(', ')
}

function engineCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : undefined
}

/** The engine-neutral form of `error`, or `error` itself when it is not an engine error this layer names. */
export function mapEngineError(error: unknown): unknown {
  if (error instanceof StorageUnavailableError || error instanceof UniqueViolationError || error instanceof UnstorableTextError) return error
  // Drizzle wraps what the PostgreSQL driver throws (DrizzleQueryError, the
  // driver's error as its cause): the engine's code may be a level down.
  for (let e: unknown = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const mapped = mapOne(e)
    if (mapped !== undefined) return mapped
  }
  return error
}

function mapOne(error: unknown): Error | undefined {
  const code = engineCode(error)
  if (code === undefined) return undefined
  if (SQLITE_UNAVAILABLE.test(code) || POSTGRES_UNAVAILABLE.test(code)) return new StorageUnavailableError(code, { cause: error })
  if (code === POSTGRES_UNIQUE) return new UniqueViolationError(postgresConstraint(error as object), { cause: error })
  if (POSTGRES_UNSTORABLE_TEXT.test(code)) return new UnstorableTextError({ cause: error })
  if (SQLITE_UNIQUE.test(code)) {
    // "UNIQUE constraint failed: users.email" → "users.email"
    const message = (error as Error).message ?? ''
    return new UniqueViolationError(message.slice(message.indexOf(':') + 1).trim(), { cause: error })
  }
  return undefined
}

/** Whether `error` is the storage being away (answered 503 + Retry-After), not the request being wrong. */
export function isStorageUnavailable(error: unknown): boolean {
  return mapEngineError(error) instanceof StorageUnavailableError
}
