// What each engine throws, mapped once (src/db/errors.ts): a unique violation
// is a conflict services answer in their own terms, the database being away
// is a 503, a lost race is run again. The errors are built the way the
// drivers build them (PostgreSQL's SQLSTATE in `code`, Drizzle's wrapper with
// the driver's error as its cause); the suites check the same paths for real
// (test/scale/postgres-faults.test.ts, test/platform/unstorable-text.test.ts).
import { describe, expect, test } from 'bun:test'
import { DrizzleQueryError } from 'drizzle-orm/errors'
import { isRetryableConflict, isStorageUnavailable, mapEngineError, UniqueViolationError, UnstorableTextError } from '../../src/db/errors'

const postgresError = (code: string, fields: Record<string, string> = {}) => Object.assign(new Error(`postgres ${code}`), { code, ...fields })
const wrapped = (cause: Error) => new DrizzleQueryError('insert into "users" ...', [], cause)

describe('PostgreSQL errors', () => {
  test('a unique violation names its columns as SQLite does, wrapped by Drizzle or not', () => {
    const raw = postgresError('23505', { table_name: 'users', detail: 'Key (email_key)=(a@b.c) already exists.', constraint_name: 'users_email_key_unique' })
    for (const error of [raw, wrapped(raw)]) {
      const mapped = mapEngineError(error)
      expect(mapped).toBeInstanceOf(UniqueViolationError)
      expect((mapped as UniqueViolationError).involves('email_key')).toBe(true)
      expect((mapped as UniqueViolationError).involves('username_key')).toBe(false)
    }
    const composite = mapEngineError(postgresError('23505', { table_name: 'match_claims', detail: 'Key (match_id, claim_round, participant_id)=(m, 1, p) already exists.' }))
    expect((composite as UniqueViolationError).constraint).toBe('match_claims.match_id, match_claims.claim_round, match_claims.participant_id')
  })

  test('shutdown, restart, too many connections, lost or refused connections and a read-only standby are the storage being away', () => {
    for (const code of ['57P01', '57P02', '57P03', '53300', '53100', '08006', '08001', '25006', 'CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT', 'ECONNREFUSED', 'ECONNRESET']) {
      expect({ code, unavailable: isStorageUnavailable(postgresError(code)) }).toEqual({ code, unavailable: true })
      expect({ code, wrapped: isStorageUnavailable(wrapped(postgresError(code))) }).toEqual({ code, wrapped: true })
    }
  })

  test('a serialization failure or deadlock is a race to run again, not a 503 or a conflict', () => {
    for (const code of ['40001', '40P01']) {
      expect(isRetryableConflict(postgresError(code))).toBe(true)
      expect(isRetryableConflict(wrapped(postgresError(code)))).toBe(true)
      expect(isStorageUnavailable(postgresError(code))).toBe(false)
    }
    expect(isRetryableConflict(postgresError('23505'))).toBe(false)
  })

  test('U+0000 in text is the request, not the storage', () => {
    expect(mapEngineError(wrapped(postgresError('22021')))).toBeInstanceOf(UnstorableTextError)
    expect(isStorageUnavailable(postgresError('22021'))).toBe(false)
  })

  test('an error that is not the engine’s passes through unchanged', () => {
    const plain = new Error('a bug')
    expect(mapEngineError(plain)).toBe(plain)
    const syntax = postgresError('42601')
    expect(mapEngineError(syntax)).toBe(syntax)
  })
})
