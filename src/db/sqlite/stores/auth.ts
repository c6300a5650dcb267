// The auth store on SQLite: the queries written once (src/db/stores/auth.ts),
// and the two lookups of every authenticated request and every claim as
// statements prepared once per connection.
import { getTableColumns } from 'drizzle-orm'
import { authSessions, users } from '../../schema'
import type { SessionWithUser, UserStanding } from '../../../modules/auth/store'
import { AuthQueries } from '../../stores/auth'
import { perConnection, selectList } from '../connection'
import type { SqliteScope } from '../storage'
import { SESSION_USER_COLUMNS, toUserBan, USER_PROFILE_COLUMNS } from '../../rows'

/** The authentication statement's row: a session, and its user's SESSION_USER_COLUMNS as a JSON array in that order (as stored: times in ms). */
interface SessionWithUserRaw {
  userId: string
  lastUsedAt: number
  expiresAt: number
  revokedAt: number | null
  /** null when the user row is gone. */
  user: string | null
}

/** AuthStore.standing's row (times in ms). */
interface StandingRaw {
  bannedAt: number | null
  bannedUntil: number | null
  banReason: string | null
  deletedAt: number | null
}

const sessionColumns = getTableColumns(authSessions)
const userColumns = getTableColumns(users)

/**
 * Each SESSION_USER_COLUMNS value as stored to its value as read, by the
 * column's own kind (Drizzle's mapping: an instant's ms to a Date, a flag's
 * 0/1 to a boolean); null stays null.
 */
const sessionUserDecoders = SESSION_USER_COLUMNS.map((key) => {
  const column = userColumns[key]
  return (stored: unknown) => (stored === null ? null : column.mapFromDriverValue(stored as never))
})

// The lookup behind every authenticated request, compiled once per
// connection: one raw statement, the user's columns read by one scalar
// subquery as a JSON array. Every SQLite statement outside a transaction takes
// and drops a read lock (two fcntl and an fstat here), and Drizzle maps each
// row it reads: the two prepared primary-key lookups this replaces were a
// quarter of the CPU of GET /me under load. SQLite ran the equivalent JOIN
// slower than either (it recompiles a statement with a JOIN at every new
// binding); one subquery per column walked the users index eight times.
const statements = perConnection((sqlite) => ({
  standing: sqlite.prepare<StandingRaw, [string]>(
    `SELECT ${selectList(userColumns, ['bannedAt', 'bannedUntil', 'banReason', 'deletedAt'])} FROM users WHERE "${userColumns.id.name}" = ?`,
  ),
  sessionWithUser: sqlite.prepare<SessionWithUserRaw, [string]>(
    `SELECT ${selectList(sessionColumns, ['userId', 'lastUsedAt', 'expiresAt', 'revokedAt'], 's')},
      (SELECT json_array(${SESSION_USER_COLUMNS.map((key) => `"${userColumns[key].name}"`).join(', ')}) FROM users WHERE "${userColumns.id.name}" = s."${sessionColumns.userId.name}") AS "user"
    FROM auth_sessions s WHERE s."${sessionColumns.id.name}" = ?`,
  ),
}))

function optionalDate(ms: number | null): Date | null {
  return ms === null ? null : new Date(ms)
}

/**
 * The session's user from the statement's JSON array: SESSION_USER_COLUMNS
 * zipped with the values, each decoded by its column, the profile's straight
 * into the answer (they come first in the list) and the ban's through
 * toUserBan. The same as rows.ts toSessionUser, without its intermediate row:
 * this runs on every authenticated request (see docs/decisions.md, "The
 * session lookup reads the user by key").
 */
function sessionUser(id: string, json: string): NonNullable<SessionWithUser['user']> {
  const stored = JSON.parse(json) as unknown[]
  const user: Record<string, unknown> = { id }
  for (let i = 0; i < USER_PROFILE_COLUMNS.length; i++) user[SESSION_USER_COLUMNS[i]!] = sessionUserDecoders[i]!(stored[i])
  const ban: Record<string, unknown> = {}
  for (let i = USER_PROFILE_COLUMNS.length; i < SESSION_USER_COLUMNS.length; i++) ban[SESSION_USER_COLUMNS[i]!] = sessionUserDecoders[i]!(stored[i])
  user.ban = toUserBan(ban as Parameters<typeof toUserBan>[0])
  return user as unknown as NonNullable<SessionWithUser['user']>
}

export class SqliteAuthStore extends AuthQueries {
  constructor(private readonly sqliteScope: SqliteScope) {
    super(sqliteScope)
  }

  override async sessionWithUser(sessionId: string): Promise<SessionWithUser | null> {
    const row = statements(this.sqliteScope.handle.sqlite).sessionWithUser.get(sessionId)
    if (!row) return null
    return {
      userId: row.userId,
      lastUsedAt: new Date(row.lastUsedAt),
      expiresAt: new Date(row.expiresAt),
      revokedAt: optionalDate(row.revokedAt),
      user: row.user === null ? null : sessionUser(row.userId, row.user),
    }
  }

  override async standing(userId: string): Promise<UserStanding | null> {
    // One writer at a time: a ban cannot commit between this read and the end
    // of the write that made it. Compiled once: every claim reads it.
    const row = statements(this.sqliteScope.handle.sqlite).standing.get(userId)
    if (!row) return null
    return {
      ban: toUserBan({ bannedAt: optionalDate(row.bannedAt), bannedUntil: optionalDate(row.bannedUntil), banReason: row.banReason }),
      deletedAt: optionalDate(row.deletedAt),
    }
  }
}
