// The users pages in a real browser: search, a user in full, a moderator's
// ban seen on the user's page and in the audit log under the operator's
// name; a viewer has no ban form, and a ban it forges (with its own valid
// CSRF token) is refused with 403 and changes nothing; a moderator unlinks a
// guest's identity through its confirmation page.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { csrfOf, describeBrowser, operatorOf, screenshot, signIn, startConsole, type ConsoleWorld } from '../helpers/browser'
import { admin } from '../helpers/arena'
import { registerUser, type Registered } from '../helpers/auth'
import { postJson } from '../helpers/app'
import { NOTICES } from '../../src/console/notices'

describeBrowser('console: users', () => {
  let world: ConsoleWorld
  let player: Registered
  beforeAll(async () => {
    world = await startConsole()
    player = await registerUser(world.ctx, { username: 'console_player', email: 'console.player@example.com' })
    await registerUser(world.ctx, { username: 'other_player', email: 'other@example.com' })
    const credited = await world.ctx.handle(postJson(`/api/v1/admin/wallets/${player.id}/credit`, { amount: '125.50', reference: 'welcome bonus' }, admin))
    expect(credited.status).toBe(200)
  }, 60_000)
  afterAll(() => world?.close())

  test('a moderator finds the user, bans it from its page, sees the ban there and lifts it', async () => {
    const moderator = await operatorOf(world.ctx, 'moderator')
    const page = await world.newPage()
    await signIn(page, moderator.name, moderator.password, { next: '/console/users' })
    expect(await page.getByRole('link', { name: 'Users' }).getAttribute('aria-current')).toBe('page')
    await page.getByLabel(/^Search/).fill('console_pl')
    await page.getByRole('button', { name: 'Search' }).click()
    expect(await page.locator('tbody tr').count()).toBe(1)
    await screenshot(page, 'users')
    await page.getByRole('link', { name: 'console_player' }).click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('User console_player')
    expect(await page.locator('#ledger ~ table, section[aria-labelledby="ledger"] table').first().textContent()).toContain('welcome bonus')

    // Ban opens its confirmation page, saying what a ban does; the form is there.
    await page.getByRole('button', { name: 'Ban…' }).click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Ban console_player?')
    expect((await world.ctx.services.users.detail(player.id)).ban).toBeNull()
    await page.getByLabel(/^Reason/).fill('cheating in ranked matches <script>alert(1)</script>')
    await page.getByLabel(/^Until/).fill('2026-12-24T18:00')
    await page.getByRole('button', { name: 'Ban console_player' }).click()
    expect(await page.getByRole('status').textContent()).toBe(NOTICES.user_banned)
    const banSection = page.locator('section[aria-labelledby="ban"]')
    // Whatever an operator types is text on the page: escaped by the renderer, never markup.
    expect(await banSection.textContent()).toContain('cheating in ranked matches <script>alert(1)</script>')
    expect(await page.locator('main script').count()).toBe(0)
    expect(await banSection.textContent()).toContain('in force')
    await screenshot(page, 'user')
    const banned = (await world.ctx.services.users.detail(player.id)).ban
    expect(banned).toMatchObject({ reason: 'cheating in ranked matches <script>alert(1)</script>', until: '2026-12-24T18:00:00.000Z', inForce: true })

    // A refusal by the service comes back to the confirmation page with its message (a ban ending in the past).
    await page.getByRole('button', { name: 'Replace the ban…' }).click()
    await page.getByLabel(/^Reason/).fill('again')
    await page.getByLabel(/^Until/).fill('2020-01-01T00:00')
    await page.getByRole('button', { name: 'Replace the ban' }).click()
    expect(await page.getByRole('alert').textContent()).toContain('Expected a time in the future')
    expect((await world.ctx.services.users.detail(player.id)).ban?.reason).toBe('cheating in ranked matches <script>alert(1)</script>')

    await page.getByRole('link', { name: 'Back, change nothing' }).click()
    await page.getByRole('button', { name: 'Lift the ban' }).click()
    expect(await page.getByRole('status').textContent()).toBe(NOTICES.user_unbanned)
    expect((await world.ctx.services.users.detail(player.id)).ban).toBeNull()

    // The audit log: the ban and the unban under the moderator's name, the ban with its reason; the refused ban left nothing.
    await page.getByRole('link', { name: 'Audit log' }).click()
    const rows = page.locator('tbody tr')
    const cells = async (i: number) => (await rows.nth(i).locator('td').allTextContents()).map((c) => c.trim())
    // The target: the username, linked, with the id in small print under it.
    expect((await cells(0)).slice(1, 6)).toEqual([moderator.name, 'moderator', 'console', 'user.unban', `console_player${player.id}`])
    expect((await cells(1)).slice(1, 7)).toEqual([moderator.name, 'moderator', 'console', 'user.ban', `console_player${player.id}`, 'cheating in ranked matches <script>alert(1)</script>'])
    // Before them only the setup's (the moderator's creation, the credit): the refused ban recorded nothing.
    expect((await rows.locator('td:nth-child(5)').allTextContents()).map((c) => c.trim())).toEqual(['user.unban', 'user.ban', 'operator.create', 'wallet.credit'])
    await page.getByRole('link', { name: 'console_player' }).first().click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('User console_player')
  }, 60_000)

  test('a viewer reads the user but has no ban form; a ban it forges with its own CSRF token is 403 and changes nothing', async () => {
    const viewer = await operatorOf(world.ctx, 'viewer')
    const page = await world.newPage()
    await signIn(page, viewer.name, viewer.password, { next: `/console/users/${player.id}` })
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('User console_player')
    expect(await page.locator(`form[action$="/ban"]`).count()).toBe(0)
    expect(await page.getByRole('button', { name: /^Ban/ }).count()).toBe(0)
    await screenshot(page, 'user-as-viewer')

    const csrf = await csrfOf(page)
    const forged = await page.request.post(`/console/users/${player.id}/ban`, { form: { _csrf: csrf, reason: 'forged' }, headers: { origin: world.baseUrl }, maxRedirects: 0 })
    expect(forged.status()).toBe(403)
    expect(await forged.text()).toContain('This needs the moderator role')
    expect((await world.ctx.services.users.detail(player.id)).ban).toBeNull()
  }, 60_000)

  test("a moderator unlinks a guest's Google identity from its page: the confirmation page, the reason, the notice; the last one has no button", async () => {
    const deviceSecret = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')
    const created = await world.ctx.handle(postJson('/api/v1/user/login/device', { deviceSecret, create: true }))
    expect(created.status).toBe(200)
    const guest = ((await created.json()) as { user: { id: string; username: string } }).user
    // The OpenID Connect proof is its module's: here the guest has linked a Google identity.
    await world.ctx.services.identities.link(guest.id, { provider: 'oidc:google', subject: '108812345678901234567', email: 'guest.player@gmail.com', emailVerified: true })

    const moderator = await operatorOf(world.ctx, 'moderator')
    const page = await world.newPage()
    await signIn(page, moderator.name, moderator.password, { next: `/console/users/${guest.id}` })
    const identities = page.locator('section[aria-labelledby="identities"]')
    expect(await identities.textContent()).toContain('108812345678901234567')
    expect(await page.locator('section[aria-labelledby="account"]').textContent()).toContain('none (no password identity)')
    await screenshot(page, 'user-identities')

    await page.getByRole('button', { name: 'Unlink google (OpenID Connect)…' }).click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(`Unlink google (OpenID Connect) from ${guest.username}?`)
    await screenshot(page, 'confirm-unlink')
    await page.getByLabel(/^Reason/).fill('the Google account is no longer theirs')
    await page.getByRole('button', { name: 'Unlink google (OpenID Connect)' }).click()
    expect(await page.getByRole('status').textContent()).toBe(NOTICES.identity_unlinked)
    expect(await identities.textContent()).not.toContain('108812345678901234567')
    // The device is the only way in now: no button for it.
    expect(await identities.getByRole('button').count()).toBe(0)
    expect(await identities.textContent()).toContain('the only way in')
    expect((await world.ctx.services.users.detail(guest.id)).identities.map((i) => i.provider)).toEqual(['device'])
  }, 60_000)
})
