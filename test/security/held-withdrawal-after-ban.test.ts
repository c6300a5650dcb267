// Invariant: a banned user's withdrawal is never signed. Whatever path leads
// to custody (the hold's release job, the pending-signature resumer, a verify
// or an approval signing at once), the owner's standing is read in the unit
// of work that moves the withdrawal toward its signature; a banned owner's
// withdrawal becomes `awaiting_approval` (still debited, no signature, no
// `wallet.withdrawal_signed`), for an operator to reject (the amount back) or
// approve once the ban is lifted. A ban that came while custody was signing
// drops that signature unrecorded. The ledger check holds after each.
// Through HTTP, with the test clock, the job worker and the resumer run by hand.
import { afterAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { LocalFrostCustody, type CustodyClient } from '../../src/modules/wallet/custody'
import { postJson, type TestApp } from '../helpers/app'
import { admin, createArenaApp, type Player } from '../helpers/arena'
import { AwayCustody, banUser, eventsOf, unbanUser } from '../helpers/accounts'
import { login } from '../helpers/auth'
import { tempDir } from '../helpers/app'
import { balance, expectLedgerOk, funded, mint, PIN, someAddress, storedWithdrawal, verify, withdrawalLeaves } from '../helpers/purchases'

const HOLD_S = 3600

/** Local custody whose signing waits until the test opens the gate: a ban can land while custody signs. */
class GatedCustody implements CustodyClient {
  private readonly real = new LocalFrostCustody(join(tempDir('arena-custody-'), 'custody'))
  gated = false
  signed = 0
  private open: (() => void) | null = null
  private entered: (() => void) | null = null
  /** Resolves when a signing has started and is waiting at the gate. */
  waiting = new Promise<void>(() => {})
  arm() {
    this.gated = true
    this.waiting = new Promise<void>((resolve) => (this.entered = resolve))
  }
  release() {
    this.gated = false
    this.open?.()
  }
  createWallet() {
    return this.real.createWallet()
  }
  async signWithdrawal(keyRef: string, message: Uint8Array) {
    if (this.gated) {
      const opened = new Promise<void>((resolve) => (this.open = resolve))
      this.entered?.()
      await opened
    }
    this.signed++
    return this.real.signWithdrawal(keyRef, message)
  }
  health() {
    return Promise.resolve({ ok: true })
  }
}

const away = new AwayCustody()
const gated = new GatedCustody()
const hold = await createArenaApp({ ARENA_NEW_DESTINATION_HOLD_S: String(HOLD_S) }, { custody: away })
const plain = await createArenaApp({}, { custody: gated })
const gatedHold = await createArenaApp({ ARENA_NEW_DESTINATION_HOLD_S: String(HOLD_S) }, { custody: gated })
afterAll(async () => {
  for (const app of [hold, plain, gatedHold]) await app.close()
})

type View = { id: string; status: string; signature?: string }
let keys = 0

async function withdraw(ctx: TestApp, p: Player, amount: string): Promise<Response> {
  return verify(ctx, p, await mint(ctx, p), { pin: PIN, amount, destinationAddress: someAddress(), idempotencyKey: `ban-${++keys}` })
}

async function decide(ctx: TestApp, id: string, decision: 'approve' | 'reject') {
  const res = await ctx.handle(postJson(`/api/v1/admin/withdrawals/${id}/${decision}`, decision === 'reject' ? { reason: 'account taken over' } : {}, admin))
  return { status: res.status, body: (await res.json()) as { withdrawal?: View; error?: { code: string; message: string } } }
}

async function ban(ctx: TestApp, p: Player, until?: string) {
  const res = await banUser(ctx, p.userId, { reason: 'account takeover', ...(until ? { until } : {}) })
  expect(res.status).toBe(200)
}

function neverSigned(row: { status: string; signature: string | null }) {
  expect(row.status).toBe('awaiting_approval')
  expect(row.signature).toBeNull()
}

describe('the hold ends after a ban', () => {
  test('the release job leaves it unsigned, awaiting an operator; approve is refused while banned; reject returns the money', async () => {
    const p = await funded(hold, '100')
    const w = ((await (await withdraw(hold, p, '60')).json()) as { withdrawal: View }).withdrawal
    expect(w.status).toBe('held')
    await ban(hold, p)
    hold.clock.advance(HOLD_S * 1000)
    expect(await hold.runJobs()).toBeGreaterThanOrEqual(1)
    await Bun.sleep(50)
    neverSigned(await storedWithdrawal(hold, w.id))
    expect(await hold.services.withdrawals.resumePending()).toBe(0)
    neverSigned(await storedWithdrawal(hold, w.id))
    expect(await eventsOf(hold, p.userId, 'wallet.withdrawal_signed')).toEqual([])
    expect(await eventsOf(hold, p.userId, 'wallet.withdrawal_released')).toEqual([])
    expect((await eventsOf(hold, p.userId, 'wallet.withdrawal_awaiting_approval')).at(-1)).toEqual({ withdrawalId: w.id })
    await expectLedgerOk(hold)

    const approve = await decide(hold, w.id, 'approve')
    expect(approve.status).toBe(409)
    expect(approve.body.error!.code).toBe('withdrawal_owner_banned')
    neverSigned(await storedWithdrawal(hold, w.id))

    const reject = await decide(hold, w.id, 'reject')
    expect(reject.status).toBe(200)
    expect(reject.body.withdrawal!.status).toBe('rejected')
    await unbanUser(hold, p.userId)
    p.tokens = await login(hold, p.username)
    expect(await balance(hold, p)).toBe('100')
    await expectLedgerOk(hold)
  }, 60_000)

  test('lifting the ban does not release it by itself; an operator approves it, and only then is it signed', async () => {
    const p = await funded(hold, '100')
    const w = ((await (await withdraw(hold, p, '25')).json()) as { withdrawal: View }).withdrawal
    await ban(hold, p)
    hold.clock.advance(HOLD_S * 1000)
    await hold.runJobs()
    neverSigned(await storedWithdrawal(hold, w.id))
    expect((await unbanUser(hold, p.userId)).status).toBe(200)
    await hold.runJobs()
    expect(await hold.services.withdrawals.resumePending()).toBe(0)
    neverSigned(await storedWithdrawal(hold, w.id))
    const approved = await decide(hold, w.id, 'approve')
    expect(approved.status).toBe(200)
    expect(approved.body.withdrawal!.status).toBe('signed')
    p.tokens = await login(hold, p.username)
    expect(await balance(hold, p)).toBe('75')
    await expectLedgerOk(hold)
  }, 60_000)

  test('a ban that ended before the hold did stops nothing: the job signs it', async () => {
    const p = await funded(hold, '50')
    const w = ((await (await withdraw(hold, p, '10')).json()) as { withdrawal: View }).withdrawal
    await ban(hold, p, new Date(hold.clock.now().getTime() + 60_000).toISOString())
    hold.clock.advance(HOLD_S * 1000)
    await hold.runJobs()
    const row = await withdrawalLeaves(hold, w.id, 'pending_signature')
    expect(row.status).toBe('signed')
    await expectLedgerOk(hold)
  }, 60_000)
})

describe('the pending-signature resumer after a ban', () => {
  test('a withdrawal left pending by custody being away is not signed once its owner is banned', async () => {
    const p = await funded(hold, '80')
    const first = ((await (await withdraw(hold, p, '30')).json()) as { withdrawal: View }).withdrawal
    expect(first.status).toBe('held')
    // Released with custody away: pending_signature, debited, unsigned.
    away.away = true
    hold.clock.advance(HOLD_S * 1000)
    await hold.runJobs()
    await Bun.sleep(50)
    expect((await storedWithdrawal(hold, first.id)).status).toBe('pending_signature')
    await ban(hold, p)
    away.away = false
    await hold.services.withdrawals.resumePending()
    neverSigned(await storedWithdrawal(hold, first.id))
    expect(await eventsOf(hold, p.userId, 'wallet.withdrawal_signed')).toEqual([])
    // Nothing left for the resumer; the operator rejects it.
    expect(await hold.services.withdrawals.resumePending()).toBe(0)
    expect((await decide(hold, first.id, 'reject')).body.withdrawal!.status).toBe('rejected')
    await expectLedgerOk(hold)
  }, 60_000)
})

describe('a ban while custody signs', () => {
  test('released by the job, banned before the signature is recorded: the signature is dropped, never stored or sent', async () => {
    const p = await funded(gatedHold, '40')
    const w = ((await (await withdraw(gatedHold, p, '15')).json()) as { withdrawal: View }).withdrawal
    expect(w.status).toBe('held')
    gated.arm()
    gatedHold.clock.advance(HOLD_S * 1000)
    await gatedHold.runJobs()
    await gated.waiting
    const before = gated.signed
    await ban(gatedHold, p)
    gated.release()
    const row = await withdrawalLeaves(gatedHold, w.id, 'pending_signature')
    expect(gated.signed).toBe(before + 1) // custody did sign ...
    neverSigned(row) // ... and the signature was not recorded
    expect(await eventsOf(gatedHold, p.userId, 'wallet.withdrawal_signed')).toEqual([])
    expect(gatedHold.logText()).toContain('signature discarded')
    await expectLedgerOk(gatedHold)
  }, 60_000)

  test('a verify signing at once, banned before the signature is recorded: the verify answers it awaiting an operator', async () => {
    const p = await funded(plain, '40')
    gated.arm()
    const answer = withdraw(plain, p, '15')
    await gated.waiting
    await ban(plain, p)
    gated.release()
    const res = await answer
    expect(res.status).toBe(200)
    const w = ((await res.json()) as { withdrawal: View }).withdrawal
    expect(w.status).toBe('awaiting_approval')
    expect(w.signature).toBeUndefined()
    neverSigned(await storedWithdrawal(plain, w.id))
    expect(await eventsOf(plain, p.userId, 'wallet.withdrawal_signed')).toEqual([])
    expect((await decide(plain, w.id, 'reject')).status).toBe(200)
    await expectLedgerOk(plain)
  }, 60_000)
})
