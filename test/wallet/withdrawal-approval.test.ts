// Contract §10: a withdrawal strictly above ARENA_WITHDRAWAL_APPROVAL_ABOVE is
// `awaiting_approval` (debited at once, nothing signed) until an operator
// approves it (signed) or rejects it (rejected, the amount reversed); the
// first withdrawal to an address the user never had a signed withdrawal to is
// `held` for ARENA_NEW_DESTINATION_HOLD_S, then a durable job signs it. Every
// status change is a wallet event; the ledger check holds after each step.
// Through HTTP, with the test clock and the job worker run by hand.
import { afterAll, describe, expect, test } from 'bun:test'
import { and, asc, eq } from 'drizzle-orm'
import { checkLedger } from '../../src/modules/wallet/ledger'
import type { Withdrawal as WithdrawalView } from '../../src/modules/wallet/model'
import { postJson, req, type TestApp } from '../helpers/app'
import { admin, createArenaApp, type Player } from '../helpers/arena'
import { deleteOwn } from '../helpers/accounts'
import { login, PASSWORD } from '../helpers/auth'
import { balance, funded, mint, PIN, someAddress, verify } from '../helpers/purchases'

const HOLD_S = 3600
const approval = await createArenaApp({ ARENA_WITHDRAWAL_APPROVAL_ABOVE: '100' })
const hold = await createArenaApp({ ARENA_NEW_DESTINATION_HOLD_S: String(HOLD_S) })
const both = await createArenaApp({ ARENA_WITHDRAWAL_APPROVAL_ABOVE: '100', ARENA_NEW_DESTINATION_HOLD_S: String(HOLD_S) })
const plain = await createArenaApp()
afterAll(async () => {
  for (const app of [approval, hold, both, plain]) await app.close()
})

type Answer = { status: number; body: { withdrawal?: WithdrawalView; valid?: boolean; error?: { code: string; message: string; status: number } } }

let keys = 0
async function withdraw(ctx: TestApp, p: Player, amount: string, destinationAddress = someAddress(), key = `approval-${++keys}`): Promise<Answer> {
  const res = await verify(ctx, p, await mint(ctx, p), { pin: PIN, amount, destinationAddress, idempotencyKey: key })
  return { status: res.status, body: (await res.json()) as Answer['body'] }
}

async function decide(ctx: TestApp, id: string, decision: 'approve' | 'reject', body: unknown = decision === 'reject' ? { reason: 'not this one' } : {}): Promise<Answer> {
  const res = await ctx.handle(postJson(`/api/v1/admin/withdrawals/${id}/${decision}`, body, admin))
  return { status: res.status, body: (await res.json()) as Answer['body'] }
}

const authz = (p: Player) => ({ authorization: `Bearer ${p.tokens.accessToken}` })

async function listed(ctx: TestApp, p: Player): Promise<WithdrawalView[]> {
  const res = await ctx.handle(req('/api/v1/wallet/withdrawals', { headers: authz(p) }))
  expect(res.status).toBe(200)
  return ((await res.json()) as { withdrawals: WithdrawalView[] }).withdrawals
}

async function history(ctx: TestApp, p: Player): Promise<{ kind: string; amount: string; reference: string | null; balanceAfter: string }[]> {
  const res = await ctx.handle(req('/api/v1/wallet/transactions', { headers: authz(p) }))
  expect(res.status).toBe(200)
  return ((await res.json()) as { transactions: { kind: string; amount: string; reference: string | null; balanceAfter: string }[] }).transactions
}

/** The wallet events of this user, oldest first: type and data. */
async function walletEvents(ctx: TestApp, p: Player): Promise<{ type: string; data: unknown }[]> {
  const { outboxEvents } = ctx.peek.tables
  const rows = await ctx.peek.db.select().from(outboxEvents).where(and(eq(outboxEvents.userId, p.userId), eq(outboxEvents.topic, 'wallet'))).orderBy(asc(outboxEvents.id))
  return rows.map((r) => ({ type: r.type, data: r.data }))
}

/** Moves the clock; the bearer (15 minutes) is renewed by logging in again. */
async function advance(ctx: TestApp, ms: number, p: Player) {
  ctx.clock.advance(ms)
  p.tokens = await login(ctx, p.username)
}

async function ledgerOk(ctx: TestApp) {
  const check = await checkLedger(ctx.storage.read.wallet)
  expect(check.problems).toEqual([])
  expect(check.ok).toBe(true)
}

/** Waits until the user's withdrawal is in `status` (a release signs after its job's commit). */
async function until(ctx: TestApp, p: Player, id: string, status: string): Promise<WithdrawalView> {
  for (let i = 0; i < 200; i++) {
    const row = (await listed(ctx, p)).find((w) => w.id === id)!
    if (row.status === status) return row
    await Bun.sleep(10)
  }
  throw new Error(`withdrawal ${id} never became ${status}`)
}

describe('approval above ARENA_WITHDRAWAL_APPROVAL_ABOVE=100', () => {
  test('exactly at the threshold: signed at once', async () => {
    const p = await funded(approval, '500')
    const at = await withdraw(approval, p, '100')
    expect(at.status).toBe(200)
    expect(at.body.withdrawal).toMatchObject({ status: 'signed', amount: '100' })
    expect(at.body.withdrawal!.reason).toBeUndefined()
    expect(await balance(approval, p)).toBe('400')
    await ledgerOk(approval)
  })

  test('one unit above: awaiting_approval, the balance already lower, nothing signed; approve signs it, once', async () => {
    const p = await funded(approval, '500')
    const above = await withdraw(approval, p, '100.000001')
    expect(above.status).toBe(200)
    const w = above.body.withdrawal!
    expect(above.body.valid).toBe(true)
    expect(w).toMatchObject({ status: 'awaiting_approval', reason: 'approval_required', amount: '100.000001' })
    expect(w.signature).toBeUndefined()
    expect(w.releasesAt).toBeUndefined()
    expect(await balance(approval, p)).toBe('399.999999')
    expect((await listed(approval, p)).map((x) => x.status)).toEqual(['awaiting_approval'])
    await ledgerOk(approval)
    // The resumer signs only pending_signature withdrawals.
    expect(await approval.services.withdrawals.resumePending()).toBe(0)
    expect((await listed(approval, p))[0]!.status).toBe('awaiting_approval')

    const approved = await decide(approval, w.id, 'approve')
    expect(approved.status).toBe(200)
    expect(approved.body.withdrawal).toMatchObject({ id: w.id, status: 'signed', amount: '100.000001' })
    expect(approved.body.withdrawal!.signature!.length).toBeGreaterThan(80)
    expect(approved.body.withdrawal!.reason).toBeUndefined()
    expect(await balance(approval, p)).toBe('399.999999')
    await ledgerOk(approval)

    // Idempotent: approving again answers it as it is; rejecting it now is 409: custody has had it.
    const again = await decide(approval, w.id, 'approve')
    expect(again).toEqual(approved)
    const late = await decide(approval, w.id, 'reject')
    expect(late.status).toBe(409)
    expect(late.body.error).toMatchObject({ code: 'withdrawal_signing_started', status: 409 })
    expect(late.body.error!.message).toContain('signed')

    expect((await walletEvents(approval, p)).map((e) => e.type)).toEqual([
      'wallet.credited',
      'wallet.withdrawal_pending',
      'wallet.withdrawal_awaiting_approval',
      'wallet.withdrawal_approved',
      'wallet.withdrawal_signed',
    ])
    expect((await walletEvents(approval, p))[3]!.data).toEqual({ withdrawalId: w.id, status: 'pending_signature' })
    expect((await history(approval, p)).map((t) => [t.kind, t.amount, t.balanceAfter])).toEqual([
      ['credit', '500', '500'],
      ['withdrawal', '-100.000001', '399.999999'],
    ])
    await ledgerOk(approval)
  })

  test('reject: rejected with the reason, the balance restored by a withdrawal_reversal; idempotent; approve after it is 409', async () => {
    const p = await funded(approval, '500')
    const w = (await withdraw(approval, p, '250')).body.withdrawal!
    expect(w.status).toBe('awaiting_approval')
    expect(await balance(approval, p)).toBe('250')

    const rejected = await decide(approval, w.id, 'reject', { reason: 'looks like account takeover' })
    expect(rejected.status).toBe(200)
    expect(rejected.body.withdrawal).toMatchObject({ id: w.id, status: 'rejected', rejectionReason: 'looks like account takeover', amount: '250' })
    expect(await balance(approval, p)).toBe('500')
    await ledgerOk(approval)

    const again = await decide(approval, w.id, 'reject', { reason: 'another reason' })
    expect(again).toEqual(rejected)
    const approveLate = await decide(approval, w.id, 'approve')
    expect(approveLate.status).toBe(409)
    expect(approveLate.body.error).toMatchObject({ code: 'withdrawal_not_awaiting_approval', status: 409 })
    expect(await balance(approval, p)).toBe('500')

    expect((await history(approval, p)).map((t) => [t.kind, t.amount, t.reference, t.balanceAfter])).toEqual([
      ['credit', '500', expect.any(String), '500'],
      ['withdrawal', '-250', w.id, '250'],
      ['withdrawal_reversal', '250', w.id, '500'],
    ])
    expect((await listed(approval, p)).map((x) => [x.status, x.rejectionReason])).toEqual([['rejected', 'looks like account takeover']])
    const events = await walletEvents(approval, p)
    expect(events.at(-1)).toEqual({ type: 'wallet.withdrawal_rejected', data: { withdrawalId: w.id, reason: 'looks like account takeover' } })
    await ledgerOk(approval)
  })

  test('approve or reject of one that never awaited approval is 409; unknown ids 404; a reject without a reason 422', async () => {
    const p = await funded(approval, '500')
    const w = (await withdraw(approval, p, '10')).body.withdrawal!
    expect(w.status).toBe('signed')
    for (const decision of ['approve', 'reject'] as const) {
      const answer = await decide(approval, w.id, decision)
      expect(answer.status).toBe(409)
      expect(answer.body.error!.code).toBe(decision === 'approve' ? 'withdrawal_not_awaiting_approval' : 'withdrawal_signing_started')
      for (const id of ['wdr_00000000000000000000000000', 'nonsense']) {
        const unknown = await decide(approval, id, decision)
        expect(unknown.status).toBe(404)
        expect(unknown.body.error!.code).toBe('not_found')
      }
    }
    const pending = (await withdraw(approval, p, '200')).body.withdrawal!
    for (const body of [{}, { reason: '' }, { reason: 7 }]) expect((await decide(approval, pending.id, 'reject', body)).status).toBe(422)
    const noToken = await approval.handle(postJson(`/api/v1/admin/withdrawals/${pending.id}/approve`, {}))
    expect(noToken.status).toBe(401)
    expect((await listed(approval, p)).at(-1)!.status).toBe('awaiting_approval')
    await ledgerOk(approval)
  })

  test('awaiting and held withdrawals keep the account from being deleted (balance_not_empty)', async () => {
    const p = await funded(approval, '150')
    const w = (await withdraw(approval, p, '150')).body.withdrawal!
    expect(w.status).toBe('awaiting_approval')
    expect(await balance(approval, p)).toBe('0')
    const refused = await deleteOwn(approval, p.tokens.accessToken, PASSWORD)
    expect(refused.status).toBe(409)
    expect(refused.body.error.code).toBe('balance_not_empty')
    const view = await approval.handle(req(`/api/v1/admin/users/${p.userId}`, { headers: admin }))
    expect(view.status).toBe(200)
    expect(JSON.stringify(await view.json())).toContain('"pendingWithdrawals":1')

    const q = await funded(hold, '20')
    expect((await withdraw(hold, q, '20')).body.withdrawal!.status).toBe('held')
    expect(await balance(hold, q)).toBe('0')
    const heldRefused = await deleteOwn(hold, q.tokens.accessToken, PASSWORD)
    expect(heldRefused.status).toBe(409)
    expect(heldRefused.body.error.code).toBe('balance_not_empty')
  })
})

describe('the new-destination hold (ARENA_NEW_DESTINATION_HOLD_S=3600)', () => {
  test('the first withdrawal to an address is held; its job is not due before the hold ends; then it is signed; the next one to it is not held', async () => {
    const p = await funded(hold, '500')
    const address = someAddress()
    const first = await withdraw(hold, p, '40', address)
    const releasesAt = new Date(hold.clock.now().getTime() + HOLD_S * 1000).toISOString()
    expect(first.body.withdrawal).toMatchObject({ status: 'held', reason: 'new_destination', releasesAt })
    expect(first.body.withdrawal!.signature).toBeUndefined()
    expect(await balance(hold, p)).toBe('460')
    await ledgerOk(hold)
    // While it is held a second one to the same address is held too: only a signed one makes it known.
    const second = await withdraw(hold, p, '10', address)
    expect(second.body.withdrawal!.status).toBe('held')

    await advance(hold, HOLD_S * 1000 - 1, p)
    expect(await hold.runJobs()).toBe(0)
    expect(await hold.services.withdrawals.resumePending()).toBe(0)
    expect((await listed(hold, p)).map((w) => w.status)).toEqual(['held', 'held'])

    await advance(hold, 1, p)
    // Both of this user's releases (made at the same clock time), and any earlier test's.
    expect(await hold.runJobs()).toBeGreaterThanOrEqual(2)
    const signed = await until(hold, p, first.body.withdrawal!.id, 'signed')
    expect(signed.signature!.length).toBeGreaterThan(80)
    expect(signed.releasesAt).toBeUndefined()
    await until(hold, p, second.body.withdrawal!.id, 'signed')
    expect(await balance(hold, p)).toBe('450')
    await ledgerOk(hold)

    const third = await withdraw(hold, p, '5', address)
    expect(third.body.withdrawal).toMatchObject({ status: 'signed' })
    expect(third.body.withdrawal!.reason).toBeUndefined()
    // Another address: held again.
    expect((await withdraw(hold, p, '5')).body.withdrawal!.status).toBe('held')

    const types = (await walletEvents(hold, p)).filter((e) => (e.data as { withdrawalId?: string }).withdrawalId === first.body.withdrawal!.id).map((e) => e.type)
    expect(types).toEqual(['wallet.withdrawal_pending', 'wallet.withdrawal_held', 'wallet.withdrawal_released', 'wallet.withdrawal_signed'])
    await ledgerOk(hold)
  })

  test('the release survives a restart: a new app on the same database runs the due job', async () => {
    const p = await funded(hold, '100')
    const w = (await withdraw(hold, p, '30')).body.withdrawal!
    expect(w.status).toBe('held')
    const restarted = await createArenaApp({ ARENA_NEW_DESTINATION_HOLD_S: String(HOLD_S) }, { dataDir: hold.config.dataDir })
    try {
      restarted.clock.set(new Date(hold.clock.now().getTime() + HOLD_S * 1000))
      p.tokens = await login(restarted, p.username)
      expect(await restarted.runJobs()).toBeGreaterThanOrEqual(1)
      await until(restarted, p, w.id, 'signed')
      await ledgerOk(restarted)
    } finally {
      await restarted.close()
    }
  })

  test('a held withdrawal counts toward the daily limit like a pending one (countsTowardDailyLimit)', async () => {
    const { countsTowardDailyLimit } = await import('../../src/modules/wallet/withdrawal-request')
    expect(['awaiting_approval', 'held', 'pending_signature', 'signed', 'failed', 'rejected'].map((s) => countsTowardDailyLimit(s as never))).toEqual([true, true, true, true, false, false])
  })
})

describe('approval and hold together: both must clear', () => {
  test('approved before the hold ends: held until then, signed by the job', async () => {
    const p = await funded(both, '1000')
    const w = (await withdraw(both, p, '200')).body.withdrawal!
    const releasesAt = new Date(both.clock.now().getTime() + HOLD_S * 1000).toISOString()
    expect(w).toMatchObject({ status: 'awaiting_approval', reason: 'approval_required', releasesAt })
    await advance(both, 60_000, p)
    const approved = await decide(both, w.id, 'approve')
    expect(approved.body.withdrawal).toMatchObject({ status: 'held', reason: 'new_destination', releasesAt })
    expect(await decide(both, w.id, 'approve')).toEqual(approved)
    // (Approved and held it could still be rejected: test/security/held-withdrawal-reject.test.ts.)
    expect(await both.runJobs()).toBe(0)
    await advance(both, HOLD_S * 1000, p)
    expect(await both.runJobs()).toBe(2) // the verify's release and the approval's: the second finds it released and does nothing
    await until(both, p, w.id, 'signed')
    expect((await walletEvents(both, p)).map((e) => e.type).slice(1)).toEqual([
      'wallet.withdrawal_pending',
      'wallet.withdrawal_awaiting_approval',
      'wallet.withdrawal_approved',
      'wallet.withdrawal_held',
      'wallet.withdrawal_released',
      'wallet.withdrawal_signed',
    ])
    await ledgerOk(both)
  })

  test('approved after the hold ended: signed at once; rejected while awaiting: the release job does nothing', async () => {
    const p = await funded(both, '1000')
    const late = (await withdraw(both, p, '200')).body.withdrawal!
    const refused = (await withdraw(both, p, '300')).body.withdrawal!
    await advance(both, HOLD_S * 1000, p)
    expect((await decide(both, refused.id, 'reject')).body.withdrawal!.status).toBe('rejected')
    expect(await both.runJobs()).toBe(2) // both releases run and find nothing held
    expect((await listed(both, p)).map((w) => w.status)).toEqual(['awaiting_approval', 'rejected'])
    const approved = await decide(both, late.id, 'approve')
    expect(approved.body.withdrawal).toMatchObject({ status: 'signed' })
    expect(await balance(both, p)).toBe('800')
    await ledgerOk(both)
  })
})

describe('without the settings', () => {
  test('any amount, any address: signed at once', async () => {
    const p = await funded(plain, '1000000')
    expect((await withdraw(plain, p, '999999')).body.withdrawal!.status).toBe('signed')
  })
})
