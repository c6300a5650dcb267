// Signing in to the console in a real browser: a signed-out visit goes to the
// sign-in page and comes back after it; a wrong password is the same page
// again, saying so; a one-time password must be replaced on its first use;
// the session cookie's attributes.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { describeBrowser, operatorOf, screenshot, signIn, startConsole, type ConsoleWorld } from '../helpers/browser'

describeBrowser('console sign-in', () => {
  let world: ConsoleWorld
  beforeAll(async () => {
    world = await startConsole()
  }, 60_000)
  afterAll(() => world?.close())

  test('a new operator signs in with its one-time password, must choose a new one, and lands on the console', async () => {
    const admin = await operatorOf(world.ctx, 'admin', { oneTime: true })
    const page = await world.newPage()
    await page.goto('/console/login')
    await screenshot(page, 'sign-in', { fullPage: false })
    await signIn(page, admin.name, admin.password, { newPassword: 'a password of my own' })
    expect(new URL(page.url()).pathname).toBe('/console')
    const cookies = await page.context().cookies()
    expect(cookies.find((c) => c.name === 'arena_console')).toMatchObject({ path: '/console', httpOnly: true, sameSite: 'Strict', secure: false })
    // The device cookie that makes this browser a known place to sign in from: only for the sign-in form.
    expect(cookies.find((c) => c.name === 'arena_device')).toMatchObject({ path: '/console/login', httpOnly: true, sameSite: 'Strict', secure: false })
    // The one-time password is spent: only the new one opens the console now.
    const again = await world.newPage()
    await expect(signIn(again, admin.name, admin.password)).rejects.toThrow('Invalid operator name or password')
    await signIn(again, admin.name, 'a password of my own')
  }, 60_000)

  test('a signed-out visit goes to the sign-in page and back; a wrong password says so and sets no cookie', async () => {
    const viewer = await operatorOf(world.ctx, 'viewer')
    const page = await world.newPage()
    const refused = await page.goto('/console/audit?before=5')
    expect(new URL(page.url()).pathname).toBe('/console/login')
    expect(refused!.status()).toBe(200)
    await page.getByLabel('Operator name').fill(viewer.name)
    await page.getByLabel('Password', { exact: true }).fill('not the password')
    const [answer] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.getByRole('button', { name: 'Sign in' }).click()])
    expect(answer.status()).toBe(401)
    expect(await page.getByRole('alert').textContent()).toBe('Invalid operator name or password')
    expect(await page.context().cookies()).toEqual([])
    // The name is kept, the password is not; the page still knows where to go.
    expect(await page.getByLabel('Operator name').inputValue()).toBe(viewer.name)
    await page.getByLabel('Password', { exact: true }).fill(viewer.password)
    await page.getByRole('button', { name: 'Sign in' }).click()
    expect(new URL(page.url()).pathname + new URL(page.url()).searchParams.get('before')).toBe('/console/audit5')
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Audit log')
  }, 60_000)
})
