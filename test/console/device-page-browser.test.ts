// The device-code page (contract §13, RFC 8628) in a real browser with
// JavaScript off: the real app on a real port (either engine), Debian's
// chromium through playwright-core. A "device" asks for a code over HTTP,
// the player opens its verificationUriComplete, signs in with a password,
// sees the code and approves it; the device's next poll gets tokens, once.
// Denying works the same way, and a page left open past its sign-in asks to
// sign in again rather than approving anything.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { BrowserContext, Page } from 'playwright-core'
import { remote, type Handler } from '../helpers/app'
import { registerUser } from '../helpers/auth'
import { describeBrowser, screenshot, startConsole, VIEWPORT, type ConsoleWorld } from '../helpers/browser'
import { expectError, pollDevice, startDevice } from '../helpers/device-codes'

describeBrowser('the device-code page', () => {
  let world: ConsoleWorld
  let device: Handler
  const contexts: BrowserContext[] = []
  beforeAll(async () => {
    // Codes live an hour here, so a code outlives the page's 15-minute sign-in in the last test.
    world = await startConsole({ env: { ARENA_DEVICE_CODE_TTL_S: '3600' } })
    device = remote(() => world.baseUrl)
  }, 60_000)
  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => {})
    await world?.close()
  })

  /** A browser of its own, with JavaScript off: the page must work with forms and links alone. */
  async function browserPage(): Promise<Page> {
    const context = await world.browser.newContext({ baseURL: world.baseUrl, locale: 'en-GB', viewport: VIEWPORT, javaScriptEnabled: false })
    context.setDefaultTimeout(15_000)
    contexts.push(context)
    return context.newPage()
  }

  async function signInOnPage(page: Page, identifier: string, password: string): Promise<void> {
    await page.getByLabel('Email or username').fill(identifier)
    await page.getByLabel('Password').fill(password)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForLoadState()
  }

  test('open the link with the code, sign in with a password, approve: the device gets tokens once', async () => {
    const player = await registerUser(device)
    const issued = await startDevice(device)
    expect(issued.verificationUri).toBe(`${world.baseUrl}/device`)
    await expectError(await pollDevice(device, issued.deviceCode), 400, 'authorization_pending')

    const page = await browserPage()
    await page.goto(issued.verificationUriComplete)
    expect(await page.getByText(issued.userCode).count()).toBeGreaterThan(0)
    await screenshot(page, 'device-sign-in', { fullPage: false })
    await signInOnPage(page, player.username, player.password)
    expect(new URL(page.url()).pathname).toBe('/device')
    expect(await page.getByText(`Signed in as ${player.username}`).count()).toBe(1)
    expect(await page.locator('p.code').textContent()).toBe(issued.userCode)
    const cookie = (await page.context().cookies()).find((c) => c.name === 'arena_device_page')
    expect(cookie).toMatchObject({ path: '/device', httpOnly: true, sameSite: 'Lax', secure: false })
    await screenshot(page, 'device-approve', { fullPage: false })
    await page.getByRole('button', { name: 'Approve' }).click()
    await page.waitForLoadState()
    expect(await page.getByRole('status').textContent()).toContain('return to your device')

    // The device waits its interval (the server runs on the test's clock).
    world.ctx.clock.advance(5_100)
    const granted = await pollDevice(device, issued.deviceCode)
    expect(granted.status).toBe(200)
    expect(((await granted.json()) as { user: { id: string } }).user.id).toBe(player.id)
    world.ctx.clock.advance(5_100)
    await expectError(await pollDevice(device, issued.deviceCode), 400, 'expired_token')
  }, 60_000)

  test('typing the code by hand after signing in, then denying: the device hears access_denied', async () => {
    const player = await registerUser(device)
    const issued = await startDevice(device)
    const page = await browserPage()
    await page.goto('/device')
    await signInOnPage(page, player.email, player.password)
    await page.getByLabel('The code your device shows').fill(issued.userCode.toLowerCase().replace('-', ' '))
    await page.getByRole('button', { name: 'Continue' }).click()
    await page.waitForLoadState()
    await page.getByRole('button', { name: 'Deny' }).click()
    await page.waitForLoadState()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Device denied')
    await expectError(await pollDevice(device, issued.deviceCode), 400, 'access_denied')
  }, 60_000)

  test('a wrong password is the same form again, saying so; an unknown code says no device is waiting', async () => {
    const player = await registerUser(device)
    const page = await browserPage()
    await page.goto('/device?code=ZZZZ-ZZZZ')
    await signInOnPage(page, player.username, 'not my password')
    expect(await page.getByRole('alert').textContent()).toContain('Invalid identifier or password')
    await signInOnPage(page, player.username, player.password)
    expect(await page.getByRole('alert').textContent()).toContain('No device is waiting for that code')
  }, 60_000)

  test('a page left open past its 15-minute sign-in approves nothing: it asks to sign in again', async () => {
    const player = await registerUser(device)
    const issued = await startDevice(device)
    const page = await browserPage()
    await page.goto(issued.verificationUriComplete)
    await signInOnPage(page, player.username, player.password)
    world.ctx.clock.advance(15 * 60_000)
    await page.getByRole('button', { name: 'Approve' }).click()
    await page.waitForLoadState()
    expect(await page.getByRole('alert').textContent()).toContain('sign in again')
    await expectError(await pollDevice(device, issued.deviceCode), 400, 'authorization_pending')
  }, 60_000)
})
