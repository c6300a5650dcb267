// The audit log's guarantees (contract §11), on both engines:
// - a record is appended in the same transaction as its action: when the
//   append fails, the action did not happen (no ban, no credit, no decision);
// - the command line records its actions as `cli:<OS user>`, via `cli`;
// - `arena audit verify` (and AuditLog.verify) finds an edited record, a
//   removed one and a cut tail, and exits 1 on each.
import { afterAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { rmSync } from 'node:fs'
import { postJson, tempDir } from '../helpers/app'
import { admin, createArenaApp, createGame, players, startedTournament } from '../helpers/arena'
import { me, registerUser } from '../helpers/auth'
import { CLI_OPERATOR, run, SOURCE_COMMAND } from '../helpers/process'
import { AuditLog } from '../../src/modules/audit/log'
import { allowAppends, headSeq, recordsAfter, refuseAppends } from './support'

const dataDir = tempDir('arena-audit-')
const ctx = await createArenaApp({}, { dataDir })
afterAll(async () => {
  await ctx.close()
  rmSync(dataDir, { recursive: true, force: true })
})
const cliEnv = { ARENA_DATA_DIR: dataDir, ...ctx.databaseEnv }
const cli = (...args: string[]) => run([...SOURCE_COMMAND, ...args], cliEnv)
const { auditLog } = ctx.peek.tables
const post = (path: string, body: unknown = {}) => ctx.handle(postJson(`/api/v1/admin${path}`, body, admin))
const balanceOf = async (userId: string) => ctx.services.wallet.balance(userId)

describe('appended in the same transaction as the action', () => {
  test('when the append fails, the ban, the credit and the decision did not happen', async () => {
    const user = await registerUser(ctx)
    const [p] = await players(ctx, 1)
    const { game } = await createGame(ctx, 'Same Transaction Duel')
    const t = await startedTournament(ctx, game.id, await players(ctx, 2))
    const final = t.matches.find((m) => m.status === 'running')!
    expect((await post(`/wallets/${p!.userId}/credit`, { amount: '10', reference: 'before' })).status).toBe(200)
    const seq = await headSeq(ctx)

    await refuseAppends(ctx)
    try {
      const banned = await post(`/users/${p!.userId}/ban`, { reason: 'audit down' })
      expect(banned.status).toBeGreaterThanOrEqual(500)
      const credited = await post(`/wallets/${p!.userId}/credit`, { amount: '90', reference: 'during' })
      expect(credited.status).toBeGreaterThanOrEqual(500)
      // A unit of work with row locks (READ COMMITTED on PostgreSQL) rolls back the same way.
      const resolved = await post(`/matches/${final.id}/resolve`, { winnerParticipantId: final.slot1ParticipantId })
      expect(resolved.status).toBeGreaterThanOrEqual(500)
      const deleted = await post(`/users/${user.id}/delete`, { reason: 'audit down' })
      expect(deleted.status).toBeGreaterThanOrEqual(500)
    } finally {
      await allowAppends(ctx)
    }

    // Nothing of it committed: no ban in force (the player's bearer still works), the balance as it was, the match still running, the account still there.
    expect((await me(ctx, p!.tokens.accessToken)).status).toBe(200)
    expect((await ctx.services.auth.userIdOf(p!.username)) ?? null).toBe(p!.userId)
    expect(await balanceOf(p!.userId)).toBe('10')
    expect((await ctx.storage.read.matches.byId(final.id))!.status).toBe('running')
    expect(await ctx.services.auth.userIdOf(user.username)).toBe(user.id)
    expect(await recordsAfter(ctx, seq)).toEqual([])

    // With the log writable again, the same requests act and are recorded, once each.
    expect((await post(`/wallets/${p!.userId}/credit`, { amount: '90', reference: 'during' })).status).toBe(200)
    expect((await post(`/users/${p!.userId}/ban`, { reason: 'audit back' })).status).toBe(200)
    expect((await me(ctx, p!.tokens.accessToken)).status).toBe(401)
    expect(await balanceOf(p!.userId)).toBe('100')
    expect((await recordsAfter(ctx, seq)).map((r) => r.action)).toEqual(['wallet.credit', 'user.ban'])
    expect(await ctx.services.audit.verify(ctx.storage.read.audit)).toMatchObject({ ok: true })
  })
})

describe('the command line', () => {
  test('records its actions as cli:<OS user>, admin, via cli, one request id per command', async () => {
    const [p] = await players(ctx, 1)
    const seq = await headSeq(ctx)
    const credited = await cli('wallet', 'credit', p!.username, '--amount', '7', '--reference', 'from-the-shell')
    expect({ code: credited.code, stderr: credited.stderr }).toEqual({ code: 0, stderr: '' })
    const [record, ...more] = await recordsAfter(ctx, seq)
    expect(more).toEqual([])
    expect(record).toMatchObject({
      operatorId: null,
      operatorName: CLI_OPERATOR,
      role: 'admin',
      via: 'cli',
      action: 'wallet.credit',
      target: p!.userId,
      details: { asset: 'USDC', amount: '7', reference: 'from-the-shell', balance: '7' },
    })
    expect(record!.requestId).toMatch(/^[a-z]{3}_[0-9a-f]{32}$/)

    // arena audit list shows it; --json is the API's page.
    const listed = await cli('audit', 'list', '--after', String(seq), '--json')
    expect(listed.code).toBe(0)
    const page = JSON.parse(listed.stdout) as { records: { id: string; via: string; operator: { name: string } }[]; cursor: string }
    expect(page.records.map((r) => [r.id, r.via, r.operator.name])).toEqual([[record!.id, 'cli', CLI_OPERATOR]])
    expect(page.cursor).toBe(String(record!.seq))
    const text = await cli('audit', 'list', '--after', String(seq))
    expect(text.stdout).toContain(`${CLI_OPERATOR} (admin, cli)  wallet.credit  ${p!.userId}`)
    expect((await cli('audit', 'list', '--limit', '501')).code).toBe(2)
  }, 30_000)
})

describe('actions of the command line outside a transaction of their own', () => {
  test('keys rotate and custody export-recovery-share are recorded, the export before the share is printed', async () => {
    const [p] = await players(ctx, 1)
    // A wallet, so there is a recovery share to export.
    expect((await ctx.handle(new Request('http://localhost/api/v1/wallet', { headers: { authorization: `Bearer ${p!.tokens.accessToken}` } }))).status).toBe(200)
    const seq = await headSeq(ctx)
    const rotated = await cli('keys', 'rotate', '--json')
    expect({ code: rotated.code, stderr: rotated.stderr }).toEqual({ code: 0, stderr: '' })
    const exported = await cli('custody', 'export-recovery-share', p!.username)
    expect({ code: exported.code, stderr: exported.stderr }).toEqual({ code: 0, stderr: '' })
    const records = await recordsAfter(ctx, seq)
    // The new key: current at once in the data dir; on PostgreSQL it signs once every instance has it (`next`).
    const report = JSON.parse(rotated.stdout) as { current: string; next?: { kid: string } }
    const current = report.next?.kid ?? report.current
    expect(records.map((r) => [r.action, r.target, r.via, r.details])).toEqual([
      ['keys.rotate', current, 'cli', { dropPrevious: false }],
      ['custody.export_recovery_share', p!.userId, 'cli', { remove: false }],
    ])
  }, 30_000)
})

describe('arena audit verify', () => {
  test('passes on the written chain; finds an edited record, a cut tail and a removed record, and exits 1', async () => {
    // A few more records, so there is a middle and a tail.
    const [p] = await players(ctx, 1)
    for (let i = 0; i < 4; i++) expect((await post(`/wallets/${p!.userId}/credit`, { amount: '1', reference: `chain-${i}` })).status).toBe(200)
    const all = await recordsAfter(ctx, 0)
    const rows = all.length
    const verify = () => ctx.services.audit.verify(ctx.storage.read.audit)
    expect(await verify()).toEqual({ ok: true, rows })
    const ok = await cli('audit', 'verify')
    expect({ code: ok.code, stdout: ok.stdout }).toEqual({ code: 0, stdout: `ok: ${rows} records, chain intact\n` })

    // An edited record: its hash no longer matches.
    const middle = all[Math.floor(rows / 2)]!
    await ctx.peek.db.update(auditLog).set({ reason: 'nothing to see' }).where(eq(auditLog.seq, middle.seq))
    expect(await verify()).toMatchObject({ ok: false, brokenAt: middle.seq })
    const edited = await cli('audit', 'verify', '--json')
    expect(edited.code).toBe(1)
    expect(JSON.parse(edited.stdout)).toMatchObject({ ok: false, brokenAt: middle.seq })
    await ctx.peek.db.update(auditLog).set({ reason: middle.reason }).where(eq(auditLog.seq, middle.seq))
    expect(await verify()).toEqual({ ok: true, rows })

    // The newest record cut off: the chain ends before its recorded head.
    const last = all.at(-1)!
    await ctx.peek.db.delete(auditLog).where(eq(auditLog.seq, last.seq))
    expect(await verify()).toMatchObject({ ok: false, brokenAt: last.seq })
    const cut = await cli('audit', 'verify')
    expect(cut.code).toBe(1)
    expect(cut.stdout).toContain(`BROKEN at record ${last.seq}`)
    await ctx.peek.db.insert(auditLog).values(last)
    expect(await verify()).toEqual({ ok: true, rows })

    // A record removed from the middle: the next one no longer links to the one before it.
    await ctx.peek.db.delete(auditLog).where(eq(auditLog.seq, middle.seq))
    const next = all[all.indexOf(middle) + 1]!
    expect(await verify()).toMatchObject({ ok: false, brokenAt: next.seq })
    expect((await cli('audit', 'verify')).code).toBe(1)
    await ctx.peek.db.insert(auditLog).values(middle)
    expect(await verify()).toEqual({ ok: true, rows })

    // Records chained without the server's key do not verify.
    const forged = new AuditLog({ key: 'another key of at least thirty-two characters', clock: ctx.clock })
    expect((await forged.verify(ctx.storage.read.audit)).ok).toBe(false)
  }, 60_000)
})
