// The account routes of contract §8 (verified email, password change and
// reset) through HTTP, and what a test reads back about them.
import { and, eq } from 'drizzle-orm'
import { postJson, type Handler, type TestApp } from './app'
import { bearer } from './auth'

export interface ErrorBody {
  error: { code: string; message: string; status: number }
}

export function verifyEmail(ctx: Handler, accessToken: string, code: unknown) {
  return ctx.handle(postJson('/api/v1/user/email/verify', { code }, bearer(accessToken)))
}

export function resendVerification(ctx: Handler, accessToken: string) {
  return ctx.handle(postJson('/api/v1/user/email/resend', {}, bearer(accessToken)))
}

export function changePassword(ctx: Handler, accessToken: string, currentPassword: string, newPassword: string) {
  return ctx.handle(postJson('/api/v1/user/password/change', { currentPassword, newPassword }, bearer(accessToken)))
}

/** `address`: the client address, sent as X-Forwarded-For (the app must trust the proxy for it to count). */
export function forgotPassword(ctx: Handler, email: string, address?: string) {
  return ctx.handle(postJson('/api/v1/user/password/forgot', { email }, address ? { 'x-forwarded-for': address } : {}))
}

export function resetPassword(ctx: Handler, body: { email: string; code: string; newPassword: string }, address?: string) {
  return ctx.handle(postJson('/api/v1/user/password/reset', body, address ? { 'x-forwarded-for': address } : {}))
}

export async function errorCode(res: Response): Promise<string> {
  return ((await res.json()) as ErrorBody).error.code
}

/** The user's stored code of that purpose (its hash and failures), or undefined. */
export async function storedCode(ctx: TestApp, userId: string, purpose: 'verify_email' | 'reset_password') {
  const { accountCodes } = ctx.peek.tables
  const [row] = await ctx.peek.db.select().from(accountCodes).where(and(eq(accountCodes.userId, userId), eq(accountCodes.purpose, purpose)))
  return row
}

/** The types of the user's outbox events of a topic, oldest first. */
export async function eventTypes(ctx: TestApp, userId: string, topic?: string): Promise<string[]> {
  const { outboxEvents } = ctx.peek.tables
  const rows = await ctx.peek.db.select().from(outboxEvents).where(eq(outboxEvents.userId, userId)).orderBy(outboxEvents.seq)
  return rows.filter((e) => topic === undefined || e.topic === topic).map((e) => e.type)
}

/** The user's outbox events of one type, oldest first, with their data. */
export async function eventsOf(ctx: TestApp, userId: string, type: string): Promise<{ data: unknown }[]> {
  const { outboxEvents } = ctx.peek.tables
  const rows = await ctx.peek.db.select().from(outboxEvents).where(and(eq(outboxEvents.userId, userId), eq(outboxEvents.type, type))).orderBy(outboxEvents.seq)
  return rows.map((e) => ({ data: e.data }))
}

/** The user's security events written so far (the buffer flushed first), oldest first. */
export async function securityEventsOf(ctx: TestApp, userId: string) {
  await ctx.services.securityLog.flush()
  const { securityEvents } = ctx.peek.tables
  const rows = await ctx.peek.db.select().from(securityEvents).where(eq(securityEvents.userId, userId)).orderBy(securityEvents.seq)
  return rows.map((e) => ({ kind: e.kind, level: e.level, source: e.source, details: e.details }))
}
