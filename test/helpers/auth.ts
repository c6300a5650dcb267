// Accounts and logins through the real HTTP routes.
import { expect } from 'bun:test'
import { and, eq, isNotNull } from 'drizzle-orm'
import type { TokenResponse } from '../../src/modules/auth/model'
import type { Handler, TestApp } from './app'
import { postJson, req } from './app'

export const PASSWORD = 'correct horse battery'

let counter = 0

export interface Registered {
  id: string
  email: string
  username: string
  password: string
}

export async function registerUser(ctx: Handler, overrides: Record<string, unknown> = {}): Promise<Registered> {
  counter++
  const body = {
    email: `player${counter}_${Date.now()}@example.com`,
    username: `player${counter}_${Math.floor(Math.random() * 1e6)}`,
    password: PASSWORD,
    country: 'DE',
    accept_terms: true,
    ...overrides,
  }
  const res = await ctx.handle(postJson('/api/v1/user/register', body))
  expect(res.status).toBe(201)
  const { user } = (await res.json()) as { user: { id: string } }
  return { id: user.id, email: body.email as string, username: body.username as string, password: body.password as string }
}

/** What login and refresh answer (the server's model). */
export type Tokens = TokenResponse

export async function login(ctx: Handler, identifier: string, password = PASSWORD, headers: Record<string, string> = {}): Promise<Tokens> {
  const res = await ctx.handle(postJson('/api/v1/user/login', { identifier, password }, headers))
  expect(res.status).toBe(200)
  return (await res.json()) as Tokens
}

export function bearer(accessToken: string): Record<string, string> {
  return { authorization: `Bearer ${accessToken}` }
}

export function rotate(ctx: Handler, tokens: Pick<Tokens, 'accessToken' | 'refreshToken'>) {
  return ctx.handle(postJson('/api/v1/auth/validate', { refreshToken: tokens.refreshToken }, bearer(tokens.accessToken)))
}

export function me(ctx: Handler, accessToken: string) {
  return ctx.handle(req('/api/v1/me', { headers: bearer(accessToken) }))
}

/** The auth session (`sid`) an access token belongs to. */
export function sessionIdOf(accessToken: string): string {
  return JSON.parse(Buffer.from(accessToken.split('.')[1]!, 'base64url').toString()).sid as string
}

/**
 * Makes the session's spent refresh tokens look spent `ms` earlier. The
 * refresh retry grace is measured on the database's clock, which on
 * PostgreSQL is the server's own and does not follow a test's ManualClock: a
 * test steps past the grace by moving the stamps instead (on SQLite, where the
 * process clock is the database's, this does the same as advancing it).
 */
export async function spentEarlier(app: TestApp, accessToken: string, ms: number): Promise<void> {
  const { refreshTokens } = app.peek.tables
  const spent = await app.peek.db.select().from(refreshTokens).where(and(eq(refreshTokens.sessionId, sessionIdOf(accessToken)), isNotNull(refreshTokens.spentAt)))
  for (const row of spent) {
    await app.peek.db.update(refreshTokens).set({ spentAt: new Date(row.spentAt!.getTime() - ms) }).where(eq(refreshTokens.tokenHash, row.tokenHash))
  }
}
