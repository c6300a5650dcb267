// The operator's own account in a real browser: setting up an authenticator
// (the secret shown once, a code confirming it), signing in with a code from
// then on, turning it off; its sessions, ending another one of them, and
// signing out ending this one (the old cookie opens nothing any more).
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { csrfOf, describeBrowser, operatorOf, screenshot, signIn, startConsole, type ConsoleWorld } from '../helpers/browser'
import { totpCode } from '../../src/modules/operators/totp'
import { NOTICES } from '../../src/console/notices'

describeBrowser('console: account', () => {
  let world: ConsoleWorld
  beforeAll(async () => {
    world = await startConsole()
  }, 60_000)
  afterAll(() => world?.close())

  test('an operator sets up an authenticator, then signs in with its code, then turns it off', async () => {
    const viewer = await operatorOf(world.ctx, 'viewer')
    const page = await world.newPage()
    await signIn(page, viewer.name, viewer.password, { next: '/console/account' })
    // The password is asked again: a wrong one sets nothing up.
    await page.getByLabel('Your password').fill('not the password')
    await page.getByRole('button', { name: 'Set up an authenticator' }).click()
    expect(await page.getByRole('alert').textContent()).toContain('Password is incorrect')
    await page.getByLabel('Your password').fill(viewer.password)
    await page.getByRole('button', { name: 'Set up an authenticator' }).click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Set up an authenticator')
    const secret = (await page.locator('dl.secret dd code').first().textContent())!.trim()
    expect(await page.locator('dl.secret dd code').nth(1).textContent()).toStartWith('otpauth://totp/')
    await screenshot(page, 'account-totp')

    // A wrong code is refused with a message; the enrolment stays pending and the right code finishes it.
    await page.getByLabel(/^The code/).fill('000000' === totpCode(secret, world.ctx.clock.now()) ? '111111' : '000000')
    await page.getByRole('button', { name: 'Confirm' }).click()
    expect(await page.getByRole('alert').textContent()).toContain('Not the current code')
    await page.getByText('Finish a setup you began').click()
    await page.getByLabel(/^The code/).fill(totpCode(secret, world.ctx.clock.now()))
    await page.getByRole('button', { name: 'Confirm' }).click()
    expect(await page.getByRole('status').textContent()).toBe(NOTICES.totp_enabled)

    // Signing in again: the code is asked for, and the next time step's code lets it in.
    const other = await world.newPage()
    await other.goto('/console/login')
    await other.getByLabel('Operator name').fill(viewer.name)
    await other.getByLabel('Password', { exact: true }).fill(viewer.password)
    await other.getByRole('button', { name: 'Sign in' }).click()
    expect(await other.getByRole('alert').textContent()).toContain('code')
    world.ctx.clock.advance(30_000)
    await other.getByLabel('Password', { exact: true }).fill(viewer.password)
    await other.getByLabel(/^Authenticator code/).fill(totpCode(secret, world.ctx.clock.now()))
    await other.getByRole('button', { name: 'Sign in' }).click()
    expect(new URL(other.url()).pathname).toBe('/console')

    // Turning it off asks for the password and a code of a step not used yet (the sign-in above used this one).
    await page.goto('/console/account')
    world.ctx.clock.advance(30_000)
    await page.getByLabel('Your password').fill(viewer.password)
    await page.getByLabel(/^A code your authenticator/).fill(totpCode(secret, world.ctx.clock.now()))
    await page.getByRole('button', { name: 'Turn off the authenticator' }).click()
    expect(await page.getByRole('status').textContent()).toBe(NOTICES.totp_disabled)
    expect((await world.ctx.services.operators.byId(viewer.id)).totpEnabled).toBe(false)
  }, 90_000)

  test('an operator ends another of its sessions from the account page; signing out ends this one, and its cookie opens nothing', async () => {
    const viewer = await operatorOf(world.ctx, 'viewer')
    const laptop = await world.newPage()
    const desktop = await world.newPage()
    await signIn(laptop, viewer.name, viewer.password, { next: '/console/account' })
    await signIn(desktop, viewer.name, viewer.password, { next: '/console/account' })
    await desktop.reload()
    // Both live (the one operatorOf opened to choose the password has ended), this one marked.
    expect(await desktop.getByRole('button', { name: /^End/ }).count()).toBe(2)
    expect(await desktop.locator('tr[aria-current="true"]').count()).toBe(1)
    await screenshot(desktop, 'account')
    // End the laptop's session (the row that is not this one).
    await desktop.locator('tbody tr:not([aria-current])').getByRole('button', { name: 'End' }).click()
    expect(await desktop.getByRole('status').textContent()).toBe(NOTICES.session_ended)
    await laptop.goto('/console/account')
    expect(new URL(laptop.url()).pathname).toBe('/console/login')

    // Signing out: the cookie the browser held no longer opens anything, even sent by hand.
    const cookie = (await desktop.context().cookies()).find((c) => c.name === 'arena_console')
    await desktop.getByRole('button', { name: 'Sign out' }).click()
    expect(new URL(desktop.url()).pathname).toBe('/console/login')
    expect(await desktop.getByRole('status').textContent()).toBe(NOTICES.signed_out)
    // Only the device cookie stays: this browser remains a known place to sign in from (docs/decisions.md).
    expect((await desktop.context().cookies()).map((c) => c.name)).toEqual(['arena_device'])
    const replayed = await fetch(`${world.baseUrl}/console/account`, { headers: { cookie: `${cookie!.name}=${cookie!.value}` }, redirect: 'manual' })
    expect(replayed.status).toBe(303)
    expect(replayed.headers.get('location')).toStartWith('/console/login')
  }, 90_000)

  test('a form without the CSRF token, or with a wrong one, or from another origin, is refused with 403 and changes nothing', async () => {
    const viewer = await operatorOf(world.ctx, 'viewer')
    const page = await world.newPage()
    await signIn(page, viewer.name, viewer.password, { next: '/console/account' })
    const csrf = await csrfOf(page)
    const origin = { origin: world.baseUrl }
    const missing = await page.request.post('/console/account/totp', { form: { password: viewer.password }, headers: origin, maxRedirects: 0 })
    expect(missing.status()).toBe(403)
    expect(await missing.text()).toContain('no valid CSRF token')
    const wrong = await page.request.post('/console/account/totp', { form: { _csrf: csrf.replace(/.$/, (c) => (c === '0' ? '1' : '0')), password: viewer.password }, headers: origin, maxRedirects: 0 })
    expect(wrong.status()).toBe(403)
    const crossSite = await page.request.post('/console/account/totp', { form: { _csrf: csrf, password: viewer.password }, headers: { origin: 'https://evil.example' }, maxRedirects: 0 })
    expect(crossSite.status()).toBe(403)
    expect(await crossSite.text()).toContain('must come from the console itself')
    // Nothing began: no enrolment is pending (a confirm finds none).
    const row = await world.ctx.storage.read.operators.operatorById(viewer.id)
    expect(row!.totpSecretSealed).toBeNull()
  }, 60_000)
})
