// The security-event log in a real browser: newest first, a page at a time,
// each event's user named and linked to the user's page; "Verify now" walks both hash
// chains (the security log's and the audit log's) and says they hold.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { describeBrowser, operatorOf, screenshot, signIn, startConsole, type ConsoleWorld } from '../helpers/browser'
import { admin } from '../helpers/arena'
import { registerUser } from '../helpers/auth'
import { postJson } from '../helpers/app'

describeBrowser('console: security events', () => {
  let world: ConsoleWorld
  beforeAll(async () => {
    world = await startConsole()
  }, 60_000)
  afterAll(() => world?.close())

  test('a viewer pages through the events newest first and verifies both chains', async () => {
    const player = await registerUser(world.ctx, { username: 'watched_player' })
    // 55 events, then a ban: more than one page. Recorded as the server's: an account's own
    // client reports stop at 20 a day (docs/operations.md), and this is about paging.
    for (let i = 0; i < 55; i++) world.ctx.services.securityLog.record({ userId: player.id, source: 'server', kind: 'DEBUGGER_DETECTED', level: 'WARN', details: { n: i } })
    const banned = await world.ctx.handle(postJson(`/api/v1/admin/users/${player.id}/ban`, { reason: 'tampering' }, admin))
    expect(banned.status).toBe(200)
    await world.ctx.services.securityLog.flush()

    const viewer = await operatorOf(world.ctx, 'viewer')
    const page = await world.newPage()
    await signIn(page, viewer.name, viewer.password, { next: '/console/security' })
    expect(await page.getByRole('link', { name: 'Security events' }).getAttribute('aria-current')).toBe('page')
    const rows = page.locator('tbody tr')
    expect(await rows.count()).toBe(50)
    const first = (await rows.first().locator('td').allTextContents()).map((c) => c.trim())
    expect(first.slice(2, 6)).toEqual(['WARN', 'ACCOUNT_BANNED', 'server', `watched_player${player.id}`])
    expect(await rows.first().locator('td').nth(5).locator('a').textContent()).toBe('watched_player')
    expect(await page.locator('.chain').first().textContent()).toContain('not checked')

    await page.getByRole('link', { name: 'Older' }).click()
    expect(await rows.count()).toBe(6)
    expect(await rows.last().locator('td').nth(6).textContent()).toBe('{ "n": 0 }')
    await page.getByRole('link', { name: 'Newest' }).click()
    expect(await rows.count()).toBe(50)

    await page.getByRole('link', { name: 'Verify now' }).first().click()
    const chains = await page.locator('.chain').allTextContents()
    expect(chains[0]).toContain('Security-event chain: verified, 56 records checked')
    expect(chains[1]).toContain('Audit chain: verified')

    await page.getByRole('link', { name: 'watched_player' }).first().click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('User watched_player')
  }, 60_000)
})
