// The console's matchmaking pages in a real browser (chromium, the real app
// over HTTP, either engine): an admin goes from a game's page to its queues
// and opens a staked queue with the form; a moderator finds a staked match
// under Matchmaking, presses Cancel…, reads the confirmation page, gives the
// reason and cancels it (both stakes back). Screenshots of the queues page,
// the Matchmaking page and the confirmation page for the docs.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { describeBrowser, operatorOf, screenshot, signIn, startConsole, type ConsoleWorld } from '../helpers/browser'
import { createGame, players, type Player } from '../helpers/arena'
import { balanceOf, fund, pairedMatch } from '../helpers/matchmaking'
import { NOTICES } from '../../src/console/notices'

describeBrowser('console: matchmaking', () => {
  let world: ConsoleWorld
  let game: { id: string; name: string }
  let people: Player[]
  beforeAll(async () => {
    world = await startConsole()
    game = (await createGame(world.ctx, 'Queue Chess')).game
    people = await players(world.ctx, 2)
    await fund(world.ctx, people, '10')
  }, 120_000)
  afterAll(() => world?.close())

  test('an admin opens a staked queue from the game page; a moderator cancels its match from the Matchmaking page through the confirmation page', async () => {
    const admin = await operatorOf(world.ctx, 'admin')
    const page = await world.newPage()
    await signIn(page, admin.name, admin.password, { next: `/console/games/${game.id}` })
    await page.getByRole('link', { name: 'Queues', exact: true }).click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Queues of Queue Chess')
    const form = page.locator('form[aria-labelledby="new-queue"]')
    await form.getByLabel('Name').fill('ranked-5')
    await form.getByLabel('Rated').check()
    await form.getByLabel('Stake each player puts in').fill('5')
    await form.getByLabel('Rake').fill('0.1')
    await form.getByLabel('Ready check').fill('20')
    await form.getByRole('button', { name: 'Open the queue' }).click()
    expect(await page.getByRole('status').textContent()).toBe(NOTICES.queue_created)
    expect((await world.ctx.services.matchmaking.queues(game.id, false)).queues).toEqual([expect.objectContaining({ name: 'ranked-5', rated: true, stake: '5', rake: '0.1', readyCheckS: 20 })])

    const match = await pairedMatch(world.ctx, game.id, 'ranked-5', [people[0]!, people[1]!])
    expect(await balanceOf(world.ctx, people[0]!)).toBe('5')
    await page.reload()
    await screenshot(page, 'queues')

    const moderator = await operatorOf(world.ctx, 'moderator')
    const mod = await world.newPage()
    await signIn(mod, moderator.name, moderator.password, { next: '/console' })
    await mod.getByRole('link', { name: 'Matchmaking' }).click()
    const held = mod.locator('section[aria-labelledby="stakes-held"] tbody tr')
    expect(await held.count()).toBe(1)
    expect(await held.first().textContent()).toContain(match.id)
    await screenshot(mod, 'matchmaking')
    await mod.getByRole('button', { name: `Cancel the match ${match.id}` }).click()
    expect(await mod.getByRole('heading', { level: 1 }).textContent()).toContain('Cancel the queue match of')
    expect(await mod.locator('section.confirm').textContent()).toContain("Each player's stake of 5 goes back to their wallet")
    expect((await world.ctx.services.matchmaking.match(match.id, null)).match.status).toBe('waiting')
    await mod.getByLabel('Reason').fill('The game server was down')
    await screenshot(mod, 'confirm-cancel-match')
    await mod.getByRole('button', { name: 'Cancel the match' }).click()
    expect(await mod.getByRole('status').textContent()).toBe(NOTICES.match_cancelled)
    expect(await mod.locator('section[aria-labelledby="stakes-held"]').textContent()).toContain('No stake is held')
    expect((await world.ctx.services.matchmaking.match(match.id, null)).match.status).toBe('cancelled')
    expect(await balanceOf(world.ctx, people[0]!)).toBe('10')
    expect(await balanceOf(world.ctx, people[1]!)).toBe('10')
  }, 60_000)
})
