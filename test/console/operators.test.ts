// Operators in a real browser: an admin creates one (its one-time password
// shown on the answering page, never in a URL), the new operator's first
// sign-in chooses a password, a reset and a disable end its sessions, and the
// audit log page shows each action under the admin's name. Below admin the
// section is absent from the navigation and refused.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { describeBrowser, operatorOf, screenshot, signIn, startConsole, type ConsoleWorld } from '../helpers/browser'
import { NOTICES } from '../../src/console/notices'

describeBrowser('console: operators', () => {
  let world: ConsoleWorld
  beforeAll(async () => {
    world = await startConsole()
  }, 60_000)
  afterAll(() => world?.close())

  test('an admin creates an operator, resets its password, disables, enables it and changes its role; the audit log shows each under the admin\'s name', async () => {
    const admin = await operatorOf(world.ctx, 'admin', { name: 'alice-admin' })
    const page = await world.newPage()
    await signIn(page, admin.name, admin.password, { next: '/console/operators' })
    await page.getByLabel(/^Name/).fill('bob-mod')
    await page.getByLabel(/^Role/).selectOption('moderator')
    const [created] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.getByRole('button', { name: 'Create' }).click()])
    // The password is on the page answering the form itself: no redirect carried it.
    expect(created.status()).toBe(201)
    expect(page.url()).toEndWith('/console/operators')
    const password = (await page.getByLabel('One-time password').textContent())!.trim()
    expect(password.length).toBeGreaterThan(16)
    await screenshot(page, 'operator-created')

    // Bob signs in with it in a browser of his own and must choose a password.
    const bob = await world.newPage()
    await signIn(bob, 'bob-mod', password, { newPassword: 'bob chose this one', next: '/console/account' })
    expect(await bob.getByRole('heading', { level: 1 }).textContent()).toBe('Your account')
    // A moderator has no Operators section, and its page is refused.
    expect(await bob.getByRole('link', { name: 'Operators' }).count()).toBe(0)
    const refused = await bob.goto('/console/operators')
    expect(refused!.status()).toBe(403)

    // A reset: a new one-time password, shown once; Bob's session ends.
    await page.goto('/console/operators')
    expect(await page.locator('tbody tr').count()).toBe(2)
    await screenshot(page, 'operators')
    // Each of reset, disable and turning off an authenticator opens its confirmation page first.
    await page.getByRole('button', { name: 'Reset the password of bob-mod' }).click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Reset the password of bob-mod?')
    await page.getByRole('button', { name: 'Reset the password of bob-mod' }).click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('New password for bob-mod')
    const second = (await page.getByLabel('One-time password').textContent())!.trim()
    expect(second).not.toBe(password)
    await bob.goto('/console/account')
    expect(new URL(bob.url()).pathname).toBe('/console/login')

    // Disabling: Bob cannot sign in any more.
    await page.goto('/console/operators')
    await page.getByRole('button', { name: 'Disable bob-mod' }).click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Disable bob-mod?')
    expect(await world.ctx.services.operators.byId((await world.ctx.services.operators.byName('bob-mod')).id)).toMatchObject({ disabled: false })
    await page.getByRole('button', { name: 'Disable bob-mod' }).click()
    expect(await page.getByRole('status').textContent()).toBe(NOTICES.operator_disabled)
    // Enabled again, and made finance: each takes effect and is audited.
    await page.getByRole('button', { name: 'Enable bob-mod' }).click()
    expect(await page.getByRole('status').textContent()).toBe(NOTICES.operator_enabled)
    await page.getByLabel('New role for bob-mod').selectOption('finance')
    await page.getByRole('button', { name: 'Set the role of bob-mod' }).click()
    expect(await page.getByRole('status').textContent()).toBe(NOTICES.operator_role_changed)
    expect(await world.ctx.services.operators.byId((await world.ctx.services.operators.byName('bob-mod')).id)).toMatchObject({ role: 'finance', disabled: false })
    // The last enabled admin cannot be disabled: the refusal comes back as a message.
    await page.getByRole('button', { name: 'Disable alice-admin' }).click()
    await page.getByRole('button', { name: 'Disable alice-admin' }).click()
    expect(await page.getByRole('alert').textContent()).toContain('last enabled admin')

    await page.getByRole('link', { name: 'Audit log' }).click()
    const rows = page.locator('tbody tr')
    const text = (await rows.allTextContents()).join('\n')
    for (const action of ['operator.create', 'operator.reset_password', 'operator.disable', 'operator.enable', 'operator.role']) expect(text).toContain(action)
    // Newest first, each under Alice's name and role, through the console, with its request id.
    expect(await rows.first().locator('td').nth(1).textContent()).toBe('alice-admin')
    expect(await rows.first().locator('td').nth(2).textContent()).toBe('admin')
    expect(await rows.first().locator('td').nth(3).textContent()).toBe('console')
    expect(await rows.first().locator('td').nth(4).textContent()).toBe('operator.role')
    expect(await rows.first().locator('td').nth(8).textContent()).toMatch(/^req_/)
    await page.getByRole('link', { name: 'Verify now' }).click()
    expect(await page.locator('.chain').textContent()).toContain('verified')
  }, 90_000)
})
