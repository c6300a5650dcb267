// The security store on SQLite: the statements of a PIN purchase (mint,
// verify) are compiled once per connection and run with parameters, as in
// wallet.ts (building them with the query builder cost more than running
// them); timestamp_ms columns are epoch-ms integers there. Everything else is
// SecurityQueries' (src/db/stores/security.ts).
import { getTableColumns } from 'drizzle-orm'
import { pinLocks, pinSessions } from '../../schema'
import type { PinLock, PinSession } from '../../../modules/security/store'
import { SecurityQueries } from '../../stores/security'
import type { SqliteScope } from '../storage'
import { insertInto, perConnection, selectList } from '../connection'

const PIN_SESSION_FIELDS = ['id', 'userId', 'tokenHash', 'expiresAt', 'consumedAt', 'createdAt'] as const satisfies readonly (keyof PinSession)[]
type RawPinSession = Omit<PinSession, 'expiresAt' | 'consumedAt' | 'createdAt'> & { expiresAt: number; consumedAt: number | null; createdAt: number }

const statements = perConnection((sqlite) => ({
  pinHash: sqlite.prepare<{ pinHash: string }, [string]>('SELECT pin_hash AS pinHash FROM user_pins WHERE user_id = ?'),
  pinLock: sqlite.prepare<{ failures: number; locks: number; lockedUntil: number | null }, [string]>(
    `SELECT ${selectList(getTableColumns(pinLocks), ['failures', 'locks', 'lockedUntil'])} FROM pin_locks WHERE user_id = ?`,
  ),
  clearPinLock: sqlite.prepare<unknown, [string]>('DELETE FROM pin_locks WHERE user_id = ?'),
  addPinSession: sqlite.prepare<unknown, RawPinSession>(insertInto(pinSessions, PIN_SESSION_FIELDS)),
  pinSession: sqlite.prepare<RawPinSession, [string]>(`SELECT ${selectList(getTableColumns(pinSessions), PIN_SESSION_FIELDS)} FROM pin_sessions WHERE id = ?`),
  consumePinSession: sqlite.prepare<unknown, { id: string; now: number }>('UPDATE pin_sessions SET consumed_at = $now WHERE id = $id'),
}))

export class SqliteSecurityStore extends SecurityQueries {
  constructor(protected override readonly scope: SqliteScope) {
    super(scope)
  }

  private get statements() {
    return statements(this.scope.handle.sqlite)
  }

  // ---- PINs ----

  override async pinHash(userId: string): Promise<string | null> {
    return this.statements.pinHash.get(userId)?.pinHash ?? null
  }

  override async pinLock(userId: string): Promise<PinLock | null> {
    const row = this.statements.pinLock.get(userId)
    return row ? { failures: row.failures, locks: row.locks, lockedUntil: row.lockedUntil === null ? null : new Date(row.lockedUntil) } : null
  }

  override async clearPinLock(userId: string): Promise<void> {
    this.statements.clearPinLock.run(userId)
  }

  // ---- PIN sessions ----

  override async addPinSession(session: PinSession): Promise<void> {
    this.statements.addPinSession.run({
      ...session,
      expiresAt: session.expiresAt.getTime(),
      consumedAt: session.consumedAt === null ? null : session.consumedAt.getTime(),
      createdAt: session.createdAt.getTime(),
    })
  }

  override async pinSession(id: string): Promise<PinSession | null> {
    const row = this.statements.pinSession.get(id)
    return row ? { ...row, expiresAt: new Date(row.expiresAt), consumedAt: row.consumedAt === null ? null : new Date(row.consumedAt), createdAt: new Date(row.createdAt) } : null
  }

  override async consumePinSession(id: string, now: Date): Promise<void> {
    this.statements.consumePinSession.run({ id, now: now.getTime() })
  }
}
