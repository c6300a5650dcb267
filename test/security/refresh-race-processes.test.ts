// Invariant: rotations racing from separate processes, each with its own
// connections (on PostgreSQL, its own pool: an instance), with the retry
// grace off, still let exactly one win: the IMMEDIATE transaction (SQLite),
// the SERIALIZABLE one run again on a conflict (PostgreSQL), and the
// spent-token guard hold across connections, not just within one event loop.
// The losers see a spent token (a replay) or the session it revoked, never a
// lock error.
import { afterAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { createTestApp } from '../helpers/app'
import { login, registerUser } from '../helpers/auth'
import { run } from '../helpers/process'

const ctx = await createTestApp()
afterAll(() => ctx.close())

/** Eight processes rotate one fresh refresh token at the same moment; their outcomes. */
async function race(graceS: number): Promise<string[]> {
  const user = await registerUser(ctx)
  const tokens = await login(ctx, user.username)
  const sid = JSON.parse(Buffer.from(tokens.accessToken.split('.')[1]!, 'base64url').toString()).sid as string
  const startAt = String(Date.now() + 1500)
  const worker = join(import.meta.dir, '..', 'helpers', 'rotate-worker.ts')
  // On PostgreSQL the processes share the test's database, as instances would.
  const database = ctx.databaseEnv
  const results = await Promise.all(
    Array.from({ length: 8 }, () => run([process.execPath, worker, ctx.config.dataDir, sid, user.id, tokens.refreshToken, startAt, String(graceS)], database)),
  )
  return results.map((r) => (r.code === 0 ? (JSON.parse(r.stdout.trim()) as { outcome: string }).outcome : `exit ${r.code}: ${r.stderr}`))
}

test('8 processes rotating one refresh token, grace off: exactly one wins', async () => {
  const outcomes = await race(0)
  expect(outcomes.filter((o) => o === 'won').length).toBe(1)
  // The first loser replays the spent token and revokes the session; the
  // later ones then find it revoked. Every loser is a 401, none a lock error.
  expect(outcomes).toContain('refresh_token_reused')
  for (const outcome of outcomes.filter((o) => o !== 'won')) expect(['refresh_token_reused', 'unauthorized']).toContain(outcome)
}, 30_000)

// With the retry grace (contract §7), the same race across processes logs
// nobody out: every rotation is the first or a retry within the grace.
test('8 processes rotating one refresh token within the retry grace: all win', async () => {
  expect(await race(60)).toEqual(Array(8).fill('won'))
}, 30_000)
