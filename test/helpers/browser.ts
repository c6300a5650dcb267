// The console in a real browser: the real app (createTestApp, either engine)
// served over real HTTP on a free port, driven by Debian's chromium through
// playwright-core (no browser download: the system's binary, headless, in a
// fresh profile each launch). Tests sign operators in through the real sign-in form, so
// cookies, CSRF tokens, redirects and the CSP are exercised as a browser
// meets them.
//
//   const world = await startConsole()
//   const admin = await operatorOf(world.ctx, 'admin')
//   const page = await world.newPage()
//   await signIn(page, admin.name, admin.password)
//   await screenshot(page, 'users')
//   await world.close()
import { describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core'
import { createTestApp, req, type TestApp, type TestAppOptions } from './app'
import { ROOT } from './process'
import { ADMIN_TOKEN } from './arena'
import type { OperatorRole } from '../../src/modules/operators/roles'
import type { OperatorIdentity } from '../../src/modules/audit/log'

export const CHROMIUM = process.env.ARENA_CHROMIUM ?? '/usr/bin/chromium'

/** The flags of every run (besides the fresh profile playwright adds): headless, no sandbox (containers, root in CI), and nothing that reaches the network on its own. */
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']

/** A 1366×768 laptop: every page must be usable at this size. */
export const VIEWPORT = { width: 1366, height: 768 }

/** A phone (390×844 CSS pixels, a touch screen that honours the page's viewport meta): the console must be usable there too. */
export const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true }

/** Where screenshots go: `$ARENA_SCREENSHOT_DIR` (docs/console when regenerating the docs' pictures), else test-results/console/. */
export const SCREENSHOT_DIR = resolve(ROOT, process.env.ARENA_SCREENSHOT_DIR || join('test-results', 'console'))

export const chromiumAvailable = existsSync(CHROMIUM)

/**
 * `describe` for the browser suites. Without chromium: in CI (CI=true) the
 * suite fails, saying what is missing (.ci/run installs it); elsewhere it is
 * skipped with the reason printed, so a developer without chromium can still
 * run everything else.
 */
export function describeBrowser(name: string, body: () => void): void {
  if (chromiumAvailable) {
    describe(name, () => {
      body()
      // Last in every browser suite, before its afterAll closes the app: what
      // the clicks did left the audit log's chain (and the security log's) whole.
      test('after the browser tests, the audit chain and the security-event chain verify', async () => {
        expect(openWorlds.size).toBeGreaterThan(0)
        for (const world of openWorlds) {
          const { services, storage } = world.ctx
          await services.securityLog.flush()
          expect(await services.audit.verify(storage.read.audit)).toEqual({ ok: true, rows: expect.any(Number) })
          expect(await services.securityLog.verify()).toMatchObject({ ok: true })
        }
      })
    })
    return
  }
  const reason = `${CHROMIUM} is missing: the console's browser tests need Debian's chromium (apt-get install chromium)`
  if (process.env.CI === 'true' || process.env.CI === '1') {
    describe(name, () => {
      test('chromium is installed', () => {
        throw new Error(reason)
      })
    })
    return
  }
  console.warn(`skipping "${name}": ${reason}`)
  describe.skipIf(!chromiumAvailable)(name, body)
}

export interface ConsoleWorld {
  ctx: TestApp
  /** http://127.0.0.1:<port> */
  baseUrl: string
  browser: Browser
  /** A page in a new browser context: its own cookies, so each operator gets a separate browser. A laptop's window unless told (PHONE). */
  newPage(device?: { viewport: { width: number; height: number }; isMobile?: boolean; hasTouch?: boolean }): Promise<Page>
  /** Closes the browser, the server and the app. */
  close(): Promise<void>
}

/**
 * The real app on a real port, and a headless chromium in a fresh profile.
 * The admin token is set (ADMIN_TOKEN, `admin` headers of ./arena), so a
 * test can set its world up through the admin API: `ctx.handle(postJson(…, admin))`.
 */
export async function startConsole(options: TestAppOptions = {}): Promise<ConsoleWorld> {
  const ctx = await createTestApp({ ...options, env: { ARENA_ADMIN_TOKEN: ADMIN_TOKEN, ...options.env } })
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, development: false, fetch: (request) => ctx.handle(request) })
  const baseUrl = `http://127.0.0.1:${server.port}`
  let browser: Browser
  try {
    // playwright gives every launch a fresh --user-data-dir of its own (a new
    // temp profile, removed on close) and refuses one passed in the args.
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, timeout: 60_000 })
  } catch (error) {
    server.stop(true)
    await ctx.close()
    throw error
  }
  const contexts: BrowserContext[] = []
  const world: ConsoleWorld = {
    ctx,
    baseUrl,
    browser,
    async newPage(device = { viewport: VIEWPORT }) {
      const context = await browser.newContext({ baseURL: baseUrl, locale: 'en-GB', ...device })
      context.setDefaultTimeout(15_000)
      contexts.push(context)
      return context.newPage()
    },
    async close() {
      openWorlds.delete(world)
      for (const context of contexts) await context.close().catch(() => {})
      await browser.close().catch(() => {})
      server.stop(true)
      await ctx.close()
    },
  }
  openWorlds.add(world)
  return world
}

/** The worlds started and not yet closed: describeBrowser's last test checks their chains. */
const openWorlds = new Set<ConsoleWorld>()

/** Stands for whoever set the test's operators up (as `arena operator create` run by the admin token would). */
const SETUP: OperatorIdentity = { id: null, name: 'token', role: 'admin' }

export interface TestOperator {
  id: string
  name: string
  role: OperatorRole
  /** Its own password (the one-time one already replaced), unless created with `oneTime`. */
  password: string
}

let operatorCount = 0

/**
 * Creates an operator of `role` through the operator service and completes
 * the one-time-password change, so `password` signs in directly. With
 * `{ oneTime: true }`, `password` is the printed one-time password, for tests
 * of the change itself.
 */
export async function operatorOf(ctx: TestApp, role: OperatorRole, options: { name?: string; oneTime?: boolean } = {}): Promise<TestOperator> {
  const name = options.name ?? `${role}-${++operatorCount}`
  const by = ctx.services.audit.actor(SETUP, 'cli')
  const created = await ctx.services.operators.create({ name, role }, by)
  if (options.oneTime) return { id: created.operator.id, name, role, password: created.password }
  const password = `${name} chose this password`
  const signedIn = await ctx.services.operatorSessions.signIn({ name, password: created.password, newPassword: password, kind: 'console', userAgent: null, ip: null })
  await ctx.services.operatorSessions.signOut(signedIn.token)
  return { id: created.operator.id, name, role, password }
}

/** A new operator of `role` signed in through POST /console/login without a browser: its session cookie (`name=value`), for `req(path, { headers: { cookie } })`. */
export async function consoleCookie(ctx: TestApp, role: OperatorRole): Promise<string> {
  const operator = await operatorOf(ctx, role)
  const res = await ctx.handle(
    req('/console/login', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ name: operator.name, password: operator.password }).toString() }),
  )
  expect(res.status).toBe(303)
  return res.headers.get('set-cookie')!.split(';')[0]!
}

/** Signs in through the console's form; resolves once the browser is on a signed-in page. */
export async function signIn(page: Page, name: string, password: string, options: { next?: string; newPassword?: string } = {}): Promise<void> {
  await page.goto(`/console/login${options.next ? `?next=${encodeURIComponent(options.next)}` : ''}`)
  await page.getByLabel('Operator name').fill(name)
  await page.getByLabel('Password', { exact: true }).fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForLoadState()
  if (options.newPassword !== undefined) {
    // The one-time password: the choose-your-password step, the new one typed twice.
    await page.getByLabel('New password').fill(options.newPassword)
    await page.getByLabel('Type it again').fill(options.newPassword)
    await page.getByRole('button', { name: 'Set password and sign in' }).click()
    await page.waitForLoadState()
  }
  if (new URL(page.url()).pathname.startsWith('/console/login')) {
    const message = await page.locator('.error, .field-problem').first().textContent().catch(() => null)
    throw new Error(`signing in as ${name} failed: ${message ?? 'still on the sign-in page'}`)
  }
}

/** Saves a PNG of the whole page (or with `{ fullPage: false }` of the 1366×768 window; or of one element, a Locator) as `<dir>/<name>.png`. Returns its path. */
export async function screenshot(target: Page | Locator, name: string, options: { fullPage?: boolean } = {}): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true })
  const path = join(SCREENSHOT_DIR, `${name}.png`)
  if ('goto' in target) await target.screenshot({ path, fullPage: options.fullPage ?? true })
  else await target.screenshot({ path })
  return path
}

/** The CSRF token the page's forms carry (for tests that post by hand with the page's own cookie). */
export async function csrfOf(page: Page): Promise<string> {
  const token = await page.locator('input[name="_csrf"]').first().getAttribute('value')
  if (!token) throw new Error('no CSRF token on this page')
  return token
}
