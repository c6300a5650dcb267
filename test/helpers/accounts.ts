// The operator's user routes and what an account change leaves behind (its
// outbox events, its security events), for the tests of contract §8.
import { join } from 'node:path'
import { and, eq } from 'drizzle-orm'
import { CustodyRefusedError, LocalFrostCustody, type CustodyClient } from '../../src/modules/wallet/custody'
import { postJson, req, tempDir, type Handler, type TestApp } from './app'
import { admin } from './arena'

/**
 * Local custody that can be made unreachable for signing, so a withdrawal
 * stays `pending_signature` (debited, unsigned): a remote provider being away;
 * or made to refuse (the withdrawal fails and its amount goes back).
 */
export class AwayCustody implements CustodyClient {
  away = false
  refusing = false
  private readonly real = new LocalFrostCustody(join(tempDir('arena-custody-'), 'custody'))
  createWallet() {
    return this.real.createWallet()
  }
  signWithdrawal(keyRef: string, message: Uint8Array) {
    if (this.refusing) return Promise.reject(new CustodyRefusedError('provider refused: destination blocked'))
    return this.away ? Promise.reject(new Error('ECONNREFUSED custody provider')) : this.real.signWithdrawal(keyRef, message)
  }
  health() {
    return Promise.resolve({ ok: !this.away })
  }
}

export interface Answer {
  status: number
  body: Record<string, any>
}

async function answer(res: Response): Promise<Answer> {
  return { status: res.status, body: (await res.json()) as Record<string, any> }
}

export const banUser = async (ctx: Handler, userId: string, body: Record<string, unknown>) => answer(await ctx.handle(postJson(`/api/v1/admin/users/${userId}/ban`, body, admin)))
export const unbanUser = async (ctx: Handler, userId: string) => answer(await ctx.handle(postJson(`/api/v1/admin/users/${userId}/unban`, {}, admin)))
export const deleteUser = async (ctx: Handler, userId: string, reason = 'asked by mail') => answer(await ctx.handle(postJson(`/api/v1/admin/users/${userId}/delete`, { reason }, admin)))
export const userDetail = async (ctx: Handler, userId: string) => answer(await ctx.handle(req(`/api/v1/admin/users/${userId}`, { headers: admin })))
export const searchUsers = async (ctx: Handler, query: string) => answer(await ctx.handle(req(`/api/v1/admin/users${query}`, { headers: admin })))

export const deleteOwn = async (ctx: Handler, accessToken: string, password: string) =>
  answer(await ctx.handle(postJson('/api/v1/me/delete', { password }, { authorization: `Bearer ${accessToken}` })))

/** The `data` of the user's outbox events of one type, oldest first. */
export async function eventsOf(ctx: TestApp, userId: string, type: string): Promise<Record<string, unknown>[]> {
  const { outboxEvents } = ctx.peek.tables
  const rows = await ctx.peek.db.select().from(outboxEvents).where(and(eq(outboxEvents.userId, userId), eq(outboxEvents.type, type))).orderBy(outboxEvents.seq)
  return rows.map((row) => row.data)
}

/** The user's server security events of one kind, once the buffer is written. */
export async function securityEventsOf(ctx: TestApp, userId: string, kind: string) {
  await ctx.services.securityLog.flush()
  const { securityEvents } = ctx.peek.tables
  return ctx.peek.db.select().from(securityEvents).where(and(eq(securityEvents.userId, userId), eq(securityEvents.kind, kind), eq(securityEvents.source, 'server')))
}

/**
 * An operator credit as a client under load makes it: a 503 (on PostgreSQL, a
 * burst of credits on one wallet can outlast the engine's retry budget for
 * its balance row) is tried again, as the answer says; a reference credits
 * once, so a retry never credits twice. The last answer's status.
 */
export async function creditSurely(ctx: Handler, userId: string, reference: string, amount = '1'): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    const res = await ctx.handle(postJson(`/api/v1/admin/wallets/${userId}/credit`, { amount, reference }, admin))
    if (res.status !== 503 || attempt === 5) return res.status
  }
}
