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

function engineCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : undefined
}

/** The engine-neutral form of `error`, or `error` itself when it is not an engine error this layer names. */
export function mapEngineError(error: unknown): unknown {
  if (error instanceof StorageUnavailableError || error instanceof UniqueViolationError) return error
  const code = engineCode(error)
  if (code === undefined) return error
  if (SQLITE_UNAVAILABLE.test(code)) return new StorageUnavailableError(code, { cause: error })
  if (SQLITE_UNIQUE.test(code)) {
    // "UNIQUE constraint failed: users.email" → "users.email"
    const message = (error as Error).message ?? ''
    return new UniqueViolationError(message.slice(message.indexOf(':') + 1).trim(), { cause: error })
  }
  return error
}

/** Whether `error` is the storage being away (answered 503 + Retry-After), not the request being wrong. */
export function isStorageUnavailable(error: unknown): boolean {
  return mapEngineError(error) instanceof StorageUnavailableError
}
