// Invariant: the first sign-in with a one-time password is a normal,
// explained step in a real browser. A correct one-time password leads to
// "Choose your password" (the operator's name, what a password needs, a new
// password and a confirm field, both autocomplete=new-password), never an
// error banner or a field name; a mismatch or a password that breaks the
// rule is said beside its field, with nothing secret in the URL, and however
// many there are they block no one (more than the name's and the address's
// lock-out allow); the new password signs in and lands on the dashboard.
// Reaching or posting the step without the one-time password:
// first-sign-in-step.test.ts (HTTP, both engines).
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { describeBrowser, operatorOf, screenshot, startConsole, type ConsoleWorld } from '../helpers/browser'
import { LOGIN_LIMITS } from '../../src/modules/auth/throttle'
import { NOTICES } from '../../src/console/notices'
import { PASSWORD_STEP_TTL_MS } from '../../src/modules/operators/sessions'

describeBrowser('console: the first sign-in', () => {
  let world: ConsoleWorld
  beforeAll(async () => {
    world = await startConsole()
  }, 60_000)
  afterAll(() => world?.close())

  /** The sign-in form with the one-time password; resolves on the page that answers. */
  async function oneTimeSignIn(page: Page, name: string, password: string): Promise<void> {
    await page.goto('/console/login')
    await page.getByLabel('Operator name').fill(name)
    await page.getByLabel('Password', { exact: true }).fill(password)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForLoadState()
  }

  /** Types into the step's two fields and submits; answers the HTTP status of the page that comes back. */
  async function choose(page: Page, newPassword: string, confirm: string): Promise<number> {
    await page.getByLabel('New password').fill(newPassword)
    await page.getByLabel('Type it again').fill(confirm)
    const [answer] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.getByRole('button', { name: 'Set password and sign in' }).click()])
    await page.waitForLoadState()
    return answer.status()
  }

  /** What the page says, as a reader sees it (no attributes: the fields' own names are not shown). */
  const shown = (page: Page) => page.locator('body').innerText()

  /** The step as it must look whatever happened before: the heading, the fields, no error banner, nothing secret in the URL. */
  async function expectStep(page: Page, name: string, secrets: string[]) {
    expect(new URL(page.url()).pathname).toMatch(/^\/console\/login(\/password)?$/)
    expect(new URL(page.url()).search).toBe('')
    for (const secret of secrets) expect(page.url()).not.toContain(secret)
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Choose your password')
    expect(await page.locator('.error, [role="alert"]').count()).toBe(0)
    expect(await page.getByLabel('Operator name').inputValue()).toBe(name)
    expect(await page.getByLabel('New password').getAttribute('autocomplete')).toBe('new-password')
    expect(await page.getByLabel('Type it again').getAttribute('autocomplete')).toBe('new-password')
    expect(await page.getByLabel('New password').getAttribute('type')).toBe('password')
    expect(await page.getByLabel('Type it again').getAttribute('type')).toBe('password')
    // Nothing typed comes back into the page.
    expect(await page.getByLabel('New password').inputValue()).toBe('')
    expect(await page.getByLabel('Type it again').inputValue()).toBe('')
    expect(await shown(page)).not.toMatch(/newPassword|confirmPassword|validation|body\//)
  }

  test('after a correct one-time password: the choose-your-password step, saying it worked and what a password needs, with both fields', async () => {
    const op = await operatorOf(world.ctx, 'admin', { name: 'first-light', oneTime: true })
    const page = await world.newPage()
    const answers: number[] = []
    page.on('response', (r) => {
      if (r.request().method() === 'POST') answers.push(r.status())
    })
    await oneTimeSignIn(page, op.name, op.password)
    expect(answers).toEqual([200])
    await expectStep(page, op.name, [op.password])
    const text = await shown(page)
    expect(text).toContain(`The one-time password for ${op.name} worked.`)
    expect(text).toContain('8 to 128 characters')
    expect(text).toContain(`until ${new Date(world.ctx.clock.now().getTime() + PASSWORD_STEP_TTL_MS).toISOString().slice(11, 16)} UTC`)
    expect(await page.getByLabel('New password').getAttribute('aria-describedby')).toBe('password-rule')
    // The ticket that binds the step is a cookie the page's script could not read, sent to the sign-in pages only.
    const ticket = (await page.context().cookies()).find((c) => c.name === 'arena_password_step')
    expect(ticket).toMatchObject({ path: '/console/login', httpOnly: true, sameSite: 'Strict' })
    expect(await page.content()).not.toContain(ticket!.value)
    await screenshot(page, 'first-sign-in', { fullPage: false })
  }, 60_000)

  test('a mismatch and a password that breaks the rule are said beside their field; more of them than the lock-out allows block nobody', async () => {
    const op = await operatorOf(world.ctx, 'moderator', { name: 'many-tries', oneTime: true })
    const page = await world.newPage()
    await oneTimeSignIn(page, op.name, op.password)
    await expectStep(page, op.name, [op.password])
    // More than the name's limit and the address's, had the step counted like a sign-in.
    const tries = Math.max(LOGIN_LIMITS.account.maxFailures, LOGIN_LIMITS.address.maxFailures) + 2
    for (let i = 0; i < tries; i++) {
      if (i % 2 === 0) {
        expect(await choose(page, `my new password ${i}`, `my new pasword ${i}`)).toBe(422)
        await expectStep(page, op.name, [op.password, `my new password ${i}`])
        const problem = page.locator('#confirmPassword-problem')
        expect(await problem.textContent()).toBe('The two passwords are not the same. Type the new password in both fields again.')
        expect(await page.getByLabel('Type it again').getAttribute('aria-invalid')).toBe('true')
        expect(await page.getByLabel('Type it again').getAttribute('aria-describedby')).toBe('confirm-hint confirmPassword-problem')
        // The field the sentence is about has the focus, so a screen reader starts there.
        expect(await page.getByLabel('Type it again').evaluate((field) => field === document.activeElement)).toBe(true)
        if (i === 0) await screenshot(page, 'first-sign-in-mismatch', { fullPage: false })
      } else {
        expect(await choose(page, 'short', 'short')).toBe(422)
        await expectStep(page, op.name, [op.password])
        expect(await page.locator('#newPassword-problem').textContent()).toBe('A password needs 8 to 128 characters; that one has 5. Choose another and type it in both fields.')
        expect(await page.getByLabel('New password').getAttribute('aria-invalid')).toBe('true')
        expect(await page.getByLabel('New password').evaluate((field) => field === document.activeElement)).toBe(true)
      }
    }
    // Meanwhile, in another browser, the one-time password is not blocked: the step again, not a 429.
    const other = await world.newPage()
    await oneTimeSignIn(other, op.name, op.password)
    await expectStep(other, op.name, [op.password])
    // And the first browser finishes.
    expect(await choose(page, 'a password at last', 'a password at last')).toBe(303)
    expect(new URL(page.url()).pathname).toBe('/console')
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Dashboard')
  }, 120_000)

  test('a password too long is explained too, and the new password then signs in, lands on the dashboard, and replaces the one-time one', async () => {
    const op = await operatorOf(world.ctx, 'viewer', { name: 'long-typer', oneTime: true })
    const page = await world.newPage()
    await oneTimeSignIn(page, op.name, op.password)
    const long = 'a'.repeat(129)
    expect(await choose(page, long, long)).toBe(422)
    await expectStep(page, op.name, [op.password, long])
    expect(await page.locator('#newPassword-problem').textContent()).toBe('A password needs 8 to 128 characters; that one has 129. Choose another and type it in both fields.')
    expect(await choose(page, 'viewer picked this', 'viewer picked this')).toBe(303)
    expect(new URL(page.url()).pathname).toBe('/console')
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Dashboard')
    expect(await page.locator('p.notice').textContent()).toBe(NOTICES.password_chosen)
    const cookies = await page.context().cookies()
    expect(cookies.find((c) => c.name === 'arena_console')).toMatchObject({ path: '/console', httpOnly: true, sameSite: 'Strict' })
    expect(cookies.find((c) => c.name === 'arena_password_step')).toBeUndefined()
    // The one-time password is spent; the new one signs in straight to the console.
    const again = await world.newPage()
    await oneTimeSignIn(again, op.name, op.password)
    expect(await again.getByRole('alert').textContent()).toBe('Invalid operator name or password')
    await oneTimeSignIn(again, op.name, 'viewer picked this')
    expect(new URL(again.url()).pathname).toBe('/console')
    // Going back to the step after it was used: the sign-in page, saying it has ended.
    await page.goto('/console/login/password')
    expect(new URL(page.url()).pathname).toBe('/console/login')
    expect(await page.locator('p.notice').textContent()).toBe(NOTICES.password_step_ended)
  }, 60_000)
})
