// Signing in to the console in a real browser: the one-time password's
// change, the session cookie, and signing out ending the session.
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
    await screenshot(page, 'sign-in')
    await signIn(page, admin.name, admin.password, { newPassword: 'a password of my own' })
    expect(new URL(page.url()).pathname).toBe('/console')
    const [cookie] = await page.context().cookies()
    expect(cookie).toMatchObject({ name: 'arena_console', path: '/console', httpOnly: true, sameSite: 'Strict', secure: false })
  }, 60_000)
})
