import { afterAll, expect, test } from 'bun:test'
import { createTestApp, postJson } from '../helpers/app'
const ctx = await createTestApp()
afterAll(() => ctx.close())
test('displayName: stored at registration, returned by login and /me', async () => {
  const r = await ctx.handle(postJson('/api/v1/user/register', { email: 'dn@example.test', username: 'dn_user', password: 'correct horse battery', country: 'DE', displayName: 'Dee En', accept_terms: true }))
  expect(r.status).toBe(201)
  expect((await r.json()).user.displayName).toBe('Dee En')
  const login = await ctx.handle(postJson('/api/v1/user/login', { identifier: 'dn_user', password: 'correct horse battery' }))
  const body = await login.json()
  expect(body.user.displayName).toBe('Dee En')
  const me = await ctx.handle(new Request('http://localhost/api/v1/me', { headers: { authorization: `Bearer ${body.accessToken}` } }))
  expect((await me.json()).user.displayName).toBe('Dee En')
})
