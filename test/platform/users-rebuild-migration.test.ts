// Upgrading to identities (migration 0020 / pg 0013): users.email,
// email_key and password_hash become nullable. On SQLite that rebuilds the
// users table (a new table, a copy, DROP, RENAME), which every other table
// refers to: run as SQLite prescribes (foreign keys off around the migration,
// checked before it commits), no session, refresh token or wallet row of an
// existing account is lost, and the references still hold.
import { expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { join } from 'node:path'
import { readMigrationFiles } from 'drizzle-orm/migrator'
import { runMigrations } from '../../src/db/sqlite/migrate'
import { tempDir } from '../helpers/app'
import { describeOnEngine } from '../helpers/engine'

const all = readMigrationFiles({ migrationsFolder: join(import.meta.dir, '..', '..', 'drizzle') })
const beforeIdentities = all.slice(0, all.findIndex((m) => m.sql.some((s) => s.includes('CREATE TABLE `identities`'))))

describeOnEngine('sqlite', 'the users table rebuilt by a migration (SQLite)', () => {
  test('keeps every row that refers to a user, and foreign keys on afterwards', () => {
    expect(beforeIdentities.length).toBeGreaterThan(0)
    expect(beforeIdentities.length).toBeLessThan(all.length)
    const db = new Database(join(tempDir(), 'arena.sqlite'))
    db.run('PRAGMA foreign_keys = ON')
    runMigrations(db, beforeIdentities)
    db.run(`INSERT INTO users (id, email, email_key, username, username_key, password_hash, country, created_at) VALUES ('usr_1', 'a@example.com', 'a@example.com', 'alice', 'alice', 'hash', 'DE', 1)`)
    db.run(`INSERT INTO auth_sessions (id, user_id, created_at, last_used_at, expires_at) VALUES ('ses_1', 'usr_1', 1, 1, 2)`)
    db.run(`INSERT INTO refresh_tokens (token_hash, session_id, issued_at) VALUES ('h', 'ses_1', 1)`)
    runMigrations(db, all)
    expect(db.query('SELECT id FROM auth_sessions').all()).toEqual([{ id: 'ses_1' }])
    expect(db.query('SELECT token_hash FROM refresh_tokens').all()).toEqual([{ token_hash: 'h' }])
    expect(db.query('SELECT email, password_hash FROM users').all()).toEqual([{ email: 'a@example.com', password_hash: 'hash' }])
    expect(db.query('PRAGMA foreign_key_check').all()).toEqual([])
    expect(db.query<{ foreign_keys: number }, []>('PRAGMA foreign_keys').get()!.foreign_keys).toBe(1)
    // The cascade still points at the rebuilt table.
    db.run(`DELETE FROM users WHERE id = 'usr_1'`)
    expect(db.query('SELECT id FROM auth_sessions').all()).toEqual([])
    db.close()
  })
})
