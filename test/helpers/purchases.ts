// Players with a PIN and a funded wallet, and the PIN-session calls, through HTTP.
import { expect } from 'bun:test'
import { ed25519 } from '@noble/curves/ed25519.js'
import { addressOf } from '../../src/modules/wallet/frost'
import { eq } from 'drizzle-orm'
import { checkLedger } from '../../src/modules/wallet/ledger'
import { postJson, req, type Handler, type TestApp } from './app'
import { admin, players, type Player } from './arena'
import { PASSWORD } from './auth'

export const PIN = '482916'

export function someAddress(): string {
  return addressOf(ed25519.getPublicKey(ed25519.utils.randomSecretKey()))
}

const authz = (p: Player) => ({ authorization: `Bearer ${p.tokens.accessToken}` })

export async function funded(ctx: Handler, balance: string): Promise<Player> {
  const [p] = await players(ctx, 1)
  const set = await ctx.handle(new Request('http://localhost/api/v1/security/pin', { method: 'PUT', headers: { ...authz(p!), 'content-type': 'application/json' }, body: JSON.stringify({ pin: PIN, password: PASSWORD }) }))
  expect(set.status).toBe(200)
  if (balance !== '0') {
    const credited = await ctx.handle(postJson(`/api/v1/admin/wallets/${p!.userId}/credit`, { amount: balance, reference: `fund-${p!.userId}` }, admin))
    expect(credited.status).toBe(200)
  }
  return p!
}

export function mintRaw(ctx: Handler, p: Player) {
  return ctx.handle(postJson('/api/v1/security/pin-session', {}, authz(p)))
}

export async function mint(ctx: Handler, p: Player): Promise<{ sessionId: string; sessionToken: string; expiresAt: string; maxAttempts: number }> {
  const res = await mintRaw(ctx, p)
  expect(res.status).toBe(201)
  return (await res.json()) as { sessionId: string; sessionToken: string; expiresAt: string; maxAttempts: number }
}

export interface VerifyBody {
  pin?: unknown
  amount?: unknown
  destinationAddress?: unknown
  idempotencyKey?: unknown
}

export function verify(ctx: Handler, p: Player, session: { sessionId: string; sessionToken: string }, body: VerifyBody, secure = session.sessionToken) {
  return ctx.handle(postJson(`/api/v1/security/pin-session/${session.sessionId}/verify`, body, { ...authz(p), 'x-secure-session': secure }))
}

export async function balance(ctx: Handler, p: Player): Promise<string> {
  return ((await (await ctx.handle(req('/api/v1/wallet', { headers: authz(p) }))).json()) as { balance: string }).balance
}

/** The withdrawal's row as stored. */
export async function storedWithdrawal(ctx: TestApp, id: string) {
  const { withdrawals } = ctx.peek.tables
  return (await ctx.peek.db.select().from(withdrawals).where(eq(withdrawals.id, id)))[0]!
}

/** Waits until the stored withdrawal leaves `status` (signing after a job's commit runs on its own); its row then. */
export async function withdrawalLeaves(ctx: TestApp, id: string, status: string) {
  for (let i = 0; i < 1000; i++) {
    const row = await storedWithdrawal(ctx, id)
    if (row.status !== status) return row
    await Bun.sleep(10)
  }
  throw new Error(`withdrawal ${id} stayed ${status}`)
}

/** The ledger check finds nothing wrong. */
export async function expectLedgerOk(ctx: TestApp) {
  const check = await checkLedger(ctx.storage.read.wallet)
  expect(check.problems).toEqual([])
  expect(check.ok).toBe(true)
}
