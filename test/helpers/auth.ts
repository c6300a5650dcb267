// Accounts and logins through the real HTTP routes.
import { expect } from 'bun:test'
import type { Handler } from './app'
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

export interface Tokens {
  accessToken: string
  refreshToken: string
  expiresIn: number
  tokenType: string
  user: { id: string; email: string; username: string; country: string; createdAt: string }
}

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
