// The device page's "Sign in with <provider>" (contract §13): a player with no
// password signs in on /device through a configured OpenID Connect provider
// (a real oidc-provider on loopback, its login and consent forms driven over
// HTTP), comes back to the page signed in, and approves the device's code;
// the device's poll gets tokens of the account the provider proved (created
// by that first sign-in). A provider sign-in that comes back with an error
// shows a fixed text, never words from the URL, and signs nobody in.
import { afterAll, beforeEach, expect, test } from 'bun:test'
import { createTestApp, req } from '../helpers/app'
import { startOidcProvider } from '../helpers/oidc-provider'
import { cookieOf, csrfIn, expectError, form, pollDevice, startDevice } from '../helpers/device-codes'

const CALLBACK = 'http://localhost/api/v1/auth/oidc/test/callback'
const fx = await startOidcProvider({ redirectUris: [CALLBACK] })
const ctx = await createTestApp({ env: { ARENA_OIDC_PROVIDERS: JSON.stringify([{ name: 'test', issuer: fx.issuer, clientId: fx.clientId, clientSecret: fx.clientSecret }]) } })
afterAll(async () => {
  await ctx.close()
  await fx.close()
})
// The provider's tokens carry the real time: the app's clock reads it too.
beforeEach(() => ctx.clock.set(new Date()))

test('sign in on the page with the provider, approve: the device gets tokens of the account the provider proved', async () => {
  const issued = await startDevice(ctx)
  const page = await (await ctx.handle(req(`/device?code=${issued.userCode}`))).text()
  expect(page).toContain(`href="/device/signin/test?code=${issued.userCode}"`)
  const started = await ctx.handle(req(`/device/signin/test?code=${issued.userCode}`))
  expect(started.status).toBe(303)
  const callback = await fx.authorize(started.headers.get('location')!, `tv-player-${Math.floor(Math.random() * 1e9)}`)
  const back = await ctx.handle(new Request(callback.href))
  const location = back.headers.get('location')!
  expect(location.startsWith(`/device?code=${issued.userCode}&signin=`)).toBe(true)
  const signedIn = await ctx.handle(req(location))
  expect(signedIn.status).toBe(303)
  expect(signedIn.headers.get('location')).toBe(`/device?code=${issued.userCode}`)
  const cookie = cookieOf(signedIn)
  // The one-time code works once.
  expect((await ctx.handle(req(location))).status).toBe(401)
  const confirm = await ctx.handle(req(`/device?code=${issued.userCode}`, { headers: { cookie } }))
  const html = await confirm.text()
  expect(html).toContain('Approve')
  const answer = await ctx.handle(form('/device/approve', { _csrf: csrfIn(html), code: issued.userCode, decision: 'approve' }, { cookie }))
  expect(answer.status).toBe(200)
  const granted = await pollDevice(ctx, issued.deviceCode)
  expect(granted.status).toBe(200)
  const tokens = (await granted.json()) as { user: { id: string; identities: string[] } }
  expect(tokens.user.identities).toContain('oidc:test')
})

test('a provider sign-in that came back with an error shows a fixed text and signs nobody in', async () => {
  const res = await ctx.handle(req('/device?code=ABCD-1234&signin_error=access_denied'))
  expect(res.status).toBe(401)
  expect(res.headers.get('set-cookie')).toBeNull()
  expect(await res.text()).toContain('The sign-in was cancelled at the provider')
  const odd = await (await ctx.handle(req(`/device?signin_error=${encodeURIComponent('<b>call 555</b>')}`))).text()
  expect(odd).not.toContain('call 555')
  await expectError(await pollDevice(ctx, 'nothing'), 400, 'expired_token')
})
