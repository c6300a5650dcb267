// The security-event log: best effort (never slows a request), bounded (sheds
// and counts under a flood), visible to operators, tamper-evident.
import { afterAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { verifySecurityLog } from '../../src/modules/security/event-log'
import { postJson, req, tempDir } from '../helpers/app'
import { admin, createArenaApp, players } from '../helpers/arena'
import { run, SOURCE_COMMAND } from '../helpers/process'
import { spentEarlier } from '../helpers/auth'

const ctx = await createArenaApp({}, { securityLogOptions: { capacity: 50, batchSize: 1000, flushMs: 60_000 } })
afterAll(() => ctx.close())
const { securityEvents } = ctx.peek.tables

const report = (token: string, body: unknown) => ctx.handle(postJson('/api/v1/security/events', body, { authorization: `Bearer ${token}` }))

describe('POST /security/events', () => {
  test('ENV_COMPROMISED is accepted (202) and visible to operators once flushed', async () => {
    const [p] = await players(ctx, 1)
    const res = await report(p!.tokens.accessToken, { kind: 'ENV_COMPROMISED', level: 'COMPROMISED', details: { checks: ['root', 'debugger'] }, occurredAt: '2026-11-22T09:59:00.000Z' })
    expect(res.status).toBe(202)
    expect(await res.json()).toEqual({ accepted: true })
    await ctx.services.securityLog.flush()
    const listed = (await (await ctx.handle(req('/api/v1/admin/security-events?limit=500', { headers: admin }))).json()) as { events: { kind: string; level: string; userId: string; details: unknown; occurredAt: string; source: string }[]; cursor: string }
    const mine = listed.events.find((e) => e.userId === p!.userId && e.kind === 'ENV_COMPROMISED')
    expect(mine).toMatchObject({ level: 'COMPROMISED', source: 'client', details: { checks: ['root', 'debugger'] }, occurredAt: '2026-11-22T09:59:00.000Z' })
    const next = (await (await ctx.handle(req(`/api/v1/admin/security-events?after=${listed.cursor}`, { headers: admin }))).json()) as { events: unknown[] }
    expect(next.events).toEqual([])
    for (const query of ['limit=1.5', 'limit=0', 'after=-1', 'after=99999999999999999']) {
      expect((await ctx.handle(req(`/api/v1/admin/security-events?${query}`, { headers: admin }))).status).toBe(422)
    }
  })

  test('bad kind or level is 422; details over 8 KiB is 413; no bearer is 401', async () => {
    const [p] = await players(ctx, 1)
    expect((await report(p!.tokens.accessToken, { kind: 'ENV_COMPROMISED', level: 'PANIC' })).status).toBe(422)
    expect((await report(p!.tokens.accessToken, { kind: 'env-compromised' })).status).toBe(422)
    expect((await report(p!.tokens.accessToken, { kind: 'X', details: 'not an object' })).status).toBe(422)
    for (const occurredAt of ['yesterday', '0', '2026-11-22', '2020-01-01T00:00:00.000Z', '2030-01-01T00:00:00.000Z']) {
      expect((await report(p!.tokens.accessToken, { kind: 'X', occurredAt })).status).toBe(422)
    }
    expect((await report(p!.tokens.accessToken, { kind: 'BIG', details: { blob: 'x'.repeat(9000) } })).status).toBe(413)
    expect((await ctx.handle(postJson('/api/v1/security/events', { kind: 'X' }))).status).toBe(401)
  })

  test('a flood beyond the buffer sheds, is counted in /readyz, and does not slow other requests', async () => {
    const [a, b] = await players(ctx, 2)
    await ctx.services.securityLog.flush()
    const results: boolean[] = []
    // Spread over users so neither the per-user rate limit nor the daily bound is what refuses them.
    const flooders = await players(ctx, 5)
    for (const f of flooders) {
      for (let i = 0; i < 20; i++) {
        const res = await report(f.tokens.accessToken, { kind: 'FLOOD', level: 'SAFE' })
        expect(res.status).toBe(202)
        results.push(((await res.json()) as { accepted: boolean }).accepted)
      }
    }
    expect(results.filter((x) => x).length).toBe(50)
    expect(results.filter((x) => !x).length).toBe(50)
    const ready = (await (await ctx.handle(req('/readyz'))).json()) as { securityEvents: { buffered: number; shed: number } }
    expect(ready.securityEvents).toMatchObject({ buffered: 50, shed: 50 })
    const started = performance.now()
    expect((await ctx.handle(req('/api/v1/me', { headers: { authorization: `Bearer ${a!.tokens.accessToken}` } }))).status).toBe(200)
    expect(performance.now() - started).toBeLessThan(200)
    expect(await ctx.services.securityLog.flush()).toBe(50)
    void b
  })

  test('one user flooding is rate limited with 429 and Retry-After', async () => {
    const [p] = await players(ctx, 1)
    const statuses: number[] = []
    for (let i = 0; i < 40; i++) statuses.push((await report(p!.tokens.accessToken, { kind: 'SPAM', level: 'SAFE' })).status)
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0)
    await ctx.services.securityLog.flush()
  })

  test('server-side events: refresh-token reuse is logged as COMPROMISED', async () => {
    const [p] = await players(ctx, 1)
    const rotate = () => ctx.handle(postJson('/api/v1/auth/validate', { refreshToken: p!.tokens.refreshToken }, { authorization: `Bearer ${p!.tokens.accessToken}` }))
    await rotate()
    await spentEarlier(ctx, p!.tokens.accessToken, ctx.config.refreshReuseGraceS * 1000) // past the retry grace (on the database's clock): a replay
    await rotate()
    await ctx.services.securityLog.flush()
    const rows = await ctx.peek.db.select().from(securityEvents).where(eq(securityEvents.userId, p!.userId))
    expect(rows.map((r) => [r.source, r.kind, r.level])).toContainEqual(['server', 'REFRESH_TOKEN_REUSED', 'COMPROMISED'])
  })
})

test('a burst of bad game keys is logged once as INVALID_GAME_KEY_BURST', async () => {
  const { game } = (await (await ctx.handle(postJson('/api/v1/admin/games', { name: 'Probed' }, admin))).json()) as { game: { id: string } }
  const [p] = await players(ctx, 1)
  for (let i = 0; i < 8; i++) {
    const res = await ctx.handle(postJson(`/api/v1/game-sdk/${game.id}/sessions`, { matchId: 'mat_x' }, { authorization: `Bearer ${p!.tokens.accessToken}`, 'x-game-key': `agk_guess_${i}` }))
    expect(res.status).toBe(403)
  }
  await ctx.services.securityLog.flush()
  const bursts = await ctx.peek.db.select().from(securityEvents).where(eq(securityEvents.kind, 'INVALID_GAME_KEY_BURST'))
  expect(bursts.length).toBe(1)
  expect(bursts[0]!.details).toMatchObject({ gameId: game.id, failures: 5 })
})

describe('tamper evidence', () => {
  test('verify-log passes on the written chain and names the first edited or removed row', async () => {
    const dataDir = tempDir('arena-seclog-')
    const local = await createArenaApp({}, { dataDir })
    try {
      const [p] = await players(local, 1)
      for (let i = 0; i < 5; i++) await local.handle(postJson('/api/v1/security/events', { kind: `EVENT_${i}`, details: { i } }, { authorization: `Bearer ${p!.tokens.accessToken}` }))
      await local.services.securityLog.flush()
      const key = local.secrets.chainKey
      expect(await verifySecurityLog(local.services.storage.read.security, key)).toEqual({ ok: true, rows: 5 })
      // The CLI opens the same database: the data dir on SQLite, the app's URL on PostgreSQL.
      const cliEnv = { ARENA_DATA_DIR: dataDir, ...local.databaseEnv }
      const ok = await run([...SOURCE_COMMAND, 'security', 'verify-log'], cliEnv)
      expect(ok.code).toBe(0)

      // Tampering with the stored rows, behind the app's back.
      await local.peek.db.update(securityEvents).set({ details: { i: 99 } }).where(eq(securityEvents.seq, 3))
      const edited = await verifySecurityLog(local.services.storage.read.security, key)
      expect(edited).toMatchObject({ ok: false, brokenAt: 3 })
      const broken = await run([...SOURCE_COMMAND, 'security', 'verify-log', '--json'], cliEnv)
      expect(broken.code).toBe(1)
      expect(JSON.parse(broken.stdout)).toMatchObject({ ok: false, brokenAt: 3 })

      await local.peek.db.update(securityEvents).set({ details: { i: 2 } }).where(eq(securityEvents.seq, 3))
      expect((await verifySecurityLog(local.services.storage.read.security, key)).ok).toBe(true)
      // Cutting the newest events off the end is caught by the recorded head.
      await local.peek.db.delete(securityEvents).where(eq(securityEvents.seq, 5))
      expect(await verifySecurityLog(local.services.storage.read.security, key)).toMatchObject({ ok: false, brokenAt: 5 })
      // A chain rebuilt without the server's secret does not verify.
      expect((await verifySecurityLog(local.services.storage.read.security, 'another key of at least thirty-two characters')).ok).toBe(false)
      await local.peek.db.delete(securityEvents).where(eq(securityEvents.seq, 2))
      expect(await verifySecurityLog(local.services.storage.read.security, key)).toMatchObject({ ok: false, brokenAt: 3 })
    } finally {
      await local.close()
    }
  }, 30_000)
})
