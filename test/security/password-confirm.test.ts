// A signed-in user's password asked again — PUT /security/pin, POST
// /user/password/change, POST /me/delete — is a guess like a login, and
// counted like one: in one unit of work with the block check, before the
// slow hash. So a burst of wrong guesses sent at once on one stolen bearer
// gets at most five of them judged; the rest answer 429 (or 503 while the
// hash gate is full), never another judged guess.
import { afterAll, expect, test } from 'bun:test'
import { createTestApp, postJson } from '../helpers/app'
import { bearer, login, PASSWORD, registerUser } from '../helpers/auth'

// The real argon2id cost (hashGate given): the races here span the hash, whose time is their window.
const ctx = await createTestApp({ hashGate: {} })
afterAll(() => ctx.close())

const BURST = 30

const routes: Record<string, (accessToken: string, guess: string) => Request> = {
  'PUT /security/pin': (token, guess) =>
    new Request('http://localhost/api/v1/security/pin', {
      method: 'PUT',
      headers: { ...bearer(token), 'content-type': 'application/json' },
      body: JSON.stringify({ pin: '493817', password: guess }),
    }),
  'POST /user/password/change': (token, guess) => postJson('/api/v1/user/password/change', { currentPassword: guess, newPassword: 'a brand new passphrase' }, bearer(token)),
  'POST /me/delete': (token, guess) => postJson('/api/v1/me/delete', { password: guess }, bearer(token)),
}

for (const [route, request] of Object.entries(routes)) {
  test(`${route}: ${BURST} wrong passwords at once get at most 5 judged; then even the right one is 429`, async () => {
    const user = await registerUser(ctx)
    const { accessToken } = await login(ctx, user.username)
    const statuses = await Promise.all(Array.from({ length: BURST }, (_, i) => ctx.handle(request(accessToken, `wrong guess ${i}`)).then((res) => res.status)))
    const judged = statuses.filter((status) => status === 403).length
    expect(judged).toBeGreaterThan(0)
    expect(judged).toBeLessThanOrEqual(5)
    expect(statuses.every((status) => status === 403 || status === 429 || status === 503)).toBe(true)
    // Blocked: the right password is not even checked.
    const right = await ctx.handle(request(accessToken, PASSWORD))
    expect(right.status).toBe(429)
    expect(right.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/)
  })
}
