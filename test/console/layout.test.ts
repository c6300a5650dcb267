// The console's frame in a real browser at a laptop's and a phone's size: on
// a 390×844 phone the sidebar gives way to a "Menu" disclosure that opens
// without script, the page's content starts on the first screen and takes
// the screen's width, and the page never scrolls sideways; on a laptop the
// sidebar is there and the menu is not. A table's first column (a row's
// header cell) has the same background as the row's other cells, not the
// column headers' grey.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { describeBrowser, operatorOf, PHONE, screenshot, signIn, startConsole, type ConsoleWorld } from '../helpers/browser'
import { createGame } from '../helpers/arena'
import { registerUser } from '../helpers/auth'

describeBrowser('console: layout on a laptop and a phone', () => {
  let world: ConsoleWorld
  beforeAll(async () => {
    world = await startConsole()
    await createGame(world.ctx, 'Band Check')
    await createGame(world.ctx, 'Second Game')
    for (const username of ['phone_one', 'phone_two']) await registerUser(world.ctx, { username })
  }, 60_000)
  afterAll(() => world?.close())

  const box = async (page: Page, selector: string) => (await page.locator(selector).first().boundingBox())!

  test('on a phone the menu folds above the page, opens on a tap, and the page keeps the width of the screen', async () => {
    const admin = await operatorOf(world.ctx, 'admin')
    const page = await world.newPage(PHONE)
    await signIn(page, admin.name, admin.password, { next: '/console/users' })
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Users')

    // The sidebar is gone; the menu is one closed line above the page.
    expect(await page.locator('nav.sidebar').isVisible()).toBe(false)
    const menu = page.locator('details.menu')
    expect(await menu.isVisible()).toBe(true)
    expect(await menu.getAttribute('open')).toBeNull()
    expect(await page.getByRole('link', { name: 'Audit log' }).count()).toBe(0)
    expect(await menu.locator('summary').textContent()).toBe('Menu · Users')

    // The content starts within the first screen and is not squeezed beside a sidebar.
    const main = await box(page, 'main')
    const heading = await box(page, 'main h1')
    expect(main.x).toBeLessThan(1)
    expect(main.width).toBeGreaterThan(PHONE.viewport.width - 2)
    expect(heading.y + heading.height).toBeLessThan(PHONE.viewport.height / 3)
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.viewport.width)
    await screenshot(page, 'phone', { fullPage: false })

    await menu.locator('summary').tap()
    expect(await menu.getAttribute('open')).toBe('')
    expect(await page.getByRole('link', { name: 'Users' }).getAttribute('aria-current')).toBe('page')
    expect(await page.getByRole('link', { name: 'Operators' }).isVisible()).toBe(true)
    await screenshot(page, 'phone-menu', { fullPage: false })
    await page.getByRole('link', { name: 'Audit log' }).tap()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Audit log')
    expect(await page.locator('details.menu').getAttribute('open')).toBeNull()
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.viewport.width)

    // A wide table scrolls inside the page; the page itself does not widen.
    await page.goto('/console/games')
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.viewport.width)
  }, 60_000)

  test('on a laptop the sidebar is there and the menu is not', async () => {
    const viewer = await operatorOf(world.ctx, 'viewer')
    const page = await world.newPage()
    await signIn(page, viewer.name, viewer.password, { next: '/console/games' })
    expect(await page.locator('nav.sidebar').isVisible()).toBe(true)
    expect(await page.locator('details.menu').isVisible()).toBe(false)
    expect(await page.getByRole('link', { name: 'Games & keys' }).count()).toBe(1)
    expect((await box(page, 'main')).x).toBeGreaterThanOrEqual((await box(page, 'nav.sidebar')).width)
  }, 60_000)

  test("a table's first column (the row's header cell) is on the row's background, not the column headers' grey", async () => {
    const viewer = await operatorOf(world.ctx, 'viewer')
    const page = await world.newPage()
    await signIn(page, viewer.name, viewer.password, { next: '/console/games' })
    const backgrounds = await page.evaluate(() => {
      const color = (el: Element | null) => (el ? getComputedStyle(el).backgroundColor : null)
      const row = document.querySelector('tbody tr:has(th[scope="row"])')
      return { rowHeader: color(row?.querySelector('th') ?? null), cells: [...(row?.querySelectorAll('td') ?? [])].map(color), columnHeader: color(document.querySelector('thead th')) }
    })
    expect(backgrounds.cells.length).toBeGreaterThan(0)
    for (const cell of backgrounds.cells) expect(backgrounds.rowHeader).toBe(cell)
    // The column headers keep their grey: the difference is intended there.
    expect(backgrounds.columnHeader).not.toBe(backgrounds.rowHeader)
  }, 60_000)
})
