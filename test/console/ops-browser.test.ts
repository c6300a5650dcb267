// The console's operations pages in a real browser (chromium, the real app
// over HTTP, either engine): a moderator resolves a dispute and a finance
// operator approves a withdrawal by clicking through the pages, and the audit
// log shows each under the operator's name; a viewer sees neither button and
// a POST it forges with its own CSRF token is 403 with nothing changed. The
// run saves screenshots of each page (test/helpers/browser.ts, screenshot).
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { csrfOf, describeBrowser, operatorOf, screenshot, signIn, startConsole, type ConsoleWorld } from '../helpers/browser'
import { buildOpsWorld, OPS_ENV, type OpsWorld } from './ops-world'
import { NOTICES } from '../../src/console/notices'

describeBrowser('console: operations', () => {
  let console_: ConsoleWorld
  let world: OpsWorld
  beforeAll(async () => {
    console_ = await startConsole({ env: OPS_ENV })
    world = await buildOpsWorld(console_.ctx)
  }, 120_000)
  afterAll(() => console_?.close())

  const auditOf = async (target: string) => (await console_.ctx.services.storage.read.audit.auditBefore(null, 500)).filter((r) => r.target === target)

  test('a viewer sees the dashboard, the queues and the pictures, but no resolve or approve button; forged posts are 403 and change nothing', async () => {
    const viewer = await operatorOf(console_.ctx, 'viewer')
    const page = await console_.newPage()
    await signIn(page, viewer.name, viewer.password)
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Dashboard')
    expect(await page.getByRole('link', { name: 'Dashboard' }).getAttribute('aria-current')).toBe('page')
    expect(await page.getByRole('link', { name: /disputes waiting/ }).textContent()).toContain('1')
    await screenshot(page, 'dashboard')

    await page.getByRole('link', { name: 'Tournaments', exact: true }).click()
    await page.getByRole('link', { name: 'Winter Double' }).click()
    const picture = page.getByRole('img', { name: /Bracket of Winter Double/ })
    expect(await picture.count()).toBe(1)
    expect(await page.locator('svg rect').count()).toBeGreaterThan(14)
    await screenshot(page, 'tournament-double-elimination')

    await page.goto(`/console/tournaments/${world.roundRobin.id}`)
    expect(await page.getByRole('heading', { name: 'Standings' }).count()).toBe(1)
    expect(await page.locator('section[aria-labelledby="standings"] tbody tr').count()).toBe(4)
    // (Its picture for the docs, as a moderator sees it, is ops-confirm.test.ts's.)

    await page.getByRole('link', { name: 'Disputes' }).click()
    expect(await page.getByRole('cell', { name: 'Dispute Cup' }).count()).toBe(1)
    expect(await page.getByRole('button', { name: 'Resolve' }).count()).toBe(0)
    const csrf = await csrfOf(page)
    const forgedResolve = await page.request.post(`/console/disputes/${world.disputed.match.id}/resolve`, {
      form: { _csrf: csrf, winnerParticipantId: world.disputed.match.slot1ParticipantId! },
      headers: { origin: console_.baseUrl },
      maxRedirects: 0,
    })
    expect(forgedResolve.status()).toBe(403)
    expect((await console_.ctx.services.storage.read.matches.byId(world.disputed.match.id))!.status).toBe('disputed')

    await page.getByRole('link', { name: 'Withdrawals' }).click()
    expect(await page.locator('section[aria-labelledby="waiting"]').getByRole('rowheader', { name: world.withdrawal.player.username }).count()).toBe(1)
    expect(await page.getByRole('button', { name: /Approve/ }).count()).toBe(0)
    const forgedApprove = await page.request.post(`/console/withdrawals/${world.withdrawal.id}/approve`, { form: { _csrf: csrf }, headers: { origin: console_.baseUrl }, maxRedirects: 0 })
    expect(forgedApprove.status()).toBe(403)
    expect((await console_.ctx.services.storage.read.wallet.withdrawal(world.withdrawal.id))!.status).toBe('awaiting_approval')
    expect(await auditOf(world.withdrawal.id)).toEqual([])
  }, 90_000)

  test('a moderator resolves the dispute in the browser; the audit log names the moderator', async () => {
    const moderator = await operatorOf(console_.ctx, 'moderator', { name: 'maria' })
    const page = await console_.newPage()
    await signIn(page, moderator.name, moderator.password, { next: '/console/disputes' })
    expect(await page.getByRole('link', { name: 'Disputes' }).getAttribute('aria-current')).toBe('page')
    await screenshot(page, 'disputes')
    const winner = world.disputed.claimedBy[1]!
    await page.getByRole('radio', { name: winner.username }).check()
    await page.getByRole('button', { name: 'Resolve' }).click()
    expect(await page.getByRole('status').textContent()).toBe(NOTICES.dispute_resolved)
    expect(await page.getByText('No match is disputed.').count()).toBe(1)
    const match = (await console_.ctx.services.storage.read.matches.byId(world.disputed.match.id))!
    expect(match).toMatchObject({ status: 'decided', winnerParticipantId: world.disputed.match.slot2ParticipantId })
    const [record] = await auditOf(world.disputed.match.id)
    expect(record).toMatchObject({ operatorName: 'maria', role: 'moderator', via: 'console' })
    // The audit log page: the action under the operator's name.
    await page.getByRole('link', { name: 'Audit log' }).click()
    const row = page.locator('tbody tr', { hasText: 'match.resolve' }).first()
    expect(await row.textContent()).toContain('maria')
  }, 60_000)

  test('a finance operator approves the withdrawal in the browser; it is signed and the audit log names the operator', async () => {
    const finance = await operatorOf(console_.ctx, 'finance', { name: 'fiona' })
    const page = await console_.newPage()
    await signIn(page, finance.name, finance.password, { next: '/console/withdrawals' })
    // Approve opens its confirmation page: nothing is signed yet.
    await page.getByRole('button', { name: /^Approve the withdrawal of / }).click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toMatch(/^Approve 250(\.0+)? USDC to /)
    expect((await console_.ctx.services.storage.read.wallet.withdrawal(world.withdrawal.id))!.status).toBe('awaiting_approval')
    expect(await page.locator('section.confirm').textContent()).toContain('It is signed now')
    await screenshot(page, 'confirm-approve')
    await page.getByRole('button', { name: /^Approve 250/ }).click()
    expect(await page.getByRole('status').textContent()).toBe(NOTICES.withdrawal_approved)
    expect((await console_.ctx.services.storage.read.wallet.withdrawal(world.withdrawal.id))!.status).toBe('signed')
    const [record] = await auditOf(world.withdrawal.id)
    expect(record).toMatchObject({ operatorName: 'fiona', role: 'finance', via: 'console', action: 'withdrawal.approve' })
    await page.getByRole('link', { name: 'Audit log' }).click()
    const row = page.locator('tbody tr', { hasText: 'withdrawal.approve' }).first()
    expect(await row.textContent()).toContain('fiona')
  }, 60_000)

  test('a moderator creates a Swiss tournament from the form and starts it; the page shows what was chosen', async () => {
    const moderator = await operatorOf(console_.ctx, 'moderator')
    const page = await console_.newPage()
    await signIn(page, moderator.name, moderator.password, { next: '/console/tournaments' })
    await page.getByRole('link', { name: 'New tournament' }).click()
    await page.getByLabel('Name', { exact: true }).fill('Spring Swiss')
    await page.getByRole('combobox', { name: /^Format/ }).selectOption('swiss')
    await page.getByLabel(/^Rounds \(Swiss\)/).fill('3')
    await page.getByLabel(/^Usernames/).fill(world.people.map((p) => p.username).join(', '))
    await screenshot(page, 'tournament-new')
    await page.getByRole('button', { name: 'Create tournament' }).click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Spring Swiss')
    expect(await page.getByRole('status').textContent()).toBe(NOTICES.tournament_created)
    expect(await page.locator('dl.facts').textContent()).toContain('3 rounds')
    await page.getByRole('button', { name: 'Start now' }).click()
    expect(await page.getByRole('status').textContent()).toBe(NOTICES.tournament_started)
    expect(await page.locator('section[aria-labelledby="standings"] tbody tr').count()).toBe(8)
    await screenshot(page, 'tournament-as-moderator')
  }, 60_000)

  test('an admin creates a game and sees its key once; reloading the games page does not show it again', async () => {
    const adminOp = await operatorOf(console_.ctx, 'admin')
    const page = await console_.newPage()
    await signIn(page, adminOp.name, adminOp.password, { next: '/console/games' })
    await page.getByLabel('Name').fill('Rocket Golf')
    await page.getByRole('button', { name: 'Create game' }).click()
    const key = (await page.locator('#game-key').textContent())!.trim()
    expect(key.length).toBeGreaterThan(20)
    await screenshot(page, 'games-fresh-key')
    const game = (await console_.ctx.services.operations.games()).find((g) => g.name === 'Rocket Golf')!
    await console_.ctx.services.gameKeys.verify(game.id, key)
    expect(page.url()).not.toContain(key)
    await page.goto('/console/games')
    expect(await page.locator('#game-key').count()).toBe(0)
    expect(await page.content()).not.toContain(key)
  }, 60_000)
})
