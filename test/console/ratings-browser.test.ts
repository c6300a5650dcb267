// The console's ratings pages in a real browser (chromium, the real app over
// HTTP, either engine): an admin goes from the games list to a game's page,
// reads its board, fills the season form, reads the confirmation page and
// schedules the season, which the page then lists; a viewer's page has no
// form. Screenshots of the game page and the confirmation page for the docs
// (test/helpers/browser.ts, screenshot).
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { describeBrowser, operatorOf, screenshot, signIn, startConsole, type ConsoleWorld } from '../helpers/browser'
import { playedCup, type Player } from '../helpers/arena'
import { NOTICES } from '../../src/console/notices'

describeBrowser('console: ratings', () => {
  let world: ConsoleWorld
  let game: { id: string; name: string }
  let people: Player[]
  beforeAll(async () => {
    world = await startConsole()
    const cup = await playedCup(world.ctx, 'Glicko Chess')
    game = cup.game
    people = cup.people
  }, 120_000)
  afterAll(() => world?.close())

  test('an admin schedules a season from the game page through its confirmation page; a viewer has no form and reads a player\'s ratings on their page', async () => {
    const admin = await operatorOf(world.ctx, 'admin')
    const page = await world.newPage()
    await signIn(page, admin.name, admin.password, { next: '/console/games' })
    await page.getByRole('link', { name: 'Glicko Chess' }).click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Glicko Chess')
    const board = page.locator('section[aria-labelledby="leaderboard"] tbody tr')
    expect(await board.count()).toBe(people.length)
    const { entries } = await world.ctx.services.ratings.leaderboard(game.id, {})
    expect(await board.first().textContent()).toContain(entries[0]!.username!)

    await page.getByLabel('Name').fill('Winter')
    await page.getByLabel('Starts at (UTC)').fill('2026-11-29T10:00')
    await page.getByLabel('Reset').selectOption('hard')
    await screenshot(page, 'game-ratings')
    await page.getByRole('button', { name: 'Schedule…' }).click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Schedule Winter for Glicko Chess?')
    expect(await page.locator('section.confirm').textContent()).toContain('At 2026-11-29 10:00:00 UTC every rating of Glicko Chess is reset, hard: everyone starts again at 1500')
    // Opening it scheduled nothing.
    expect((await world.ctx.services.ratings.seasons(game.id)).seasons).toHaveLength(1)
    await screenshot(page, 'confirm-season')
    await page.getByRole('button', { name: 'Schedule Winter' }).click()
    expect(await page.getByRole('status').textContent()).toBe(NOTICES.season_scheduled)
    expect(await page.locator('section[aria-labelledby="seasons"] tbody tr').first().textContent()).toContain('Winter')
    expect((await world.ctx.services.ratings.seasons(game.id)).seasons[0]).toMatchObject({ name: 'Winter', status: 'scheduled', reset: 'hard', startsAt: '2026-11-29T10:00:00.000Z' })

    const viewer = await operatorOf(world.ctx, 'viewer')
    const viewerPage = await world.newPage()
    await signIn(viewerPage, viewer.name, viewer.password, { next: `/console/games/${game.id}` })
    expect(await viewerPage.getByRole('button', { name: 'Schedule…' }).count()).toBe(0)
    // The board's first player's page: their rating and changes in the game.
    await viewerPage.getByRole('link', { name: entries[0]!.username! }).click()
    const ratings = viewerPage.locator('section[aria-labelledby="ratings"]')
    expect(await ratings.getByRole('link', { name: 'Glicko Chess' }).count()).toBe(1)
    expect(await ratings.locator('tbody tr').count()).toBe(entries[0]!.rating.matches)
    await screenshot(ratings, 'user-ratings')
  }, 60_000)
})
