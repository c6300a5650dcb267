// The dashboard says in a word whether each hash chain holds: "verified" with
// how many records and when it was checked, or "broken" with the record, the
// reason and what to do (the command to run, the docs' steps); the hashes
// stay folded in a <details>. A record edited in the database shows "broken"
// once the dashboard walks again (its last walk over five minutes old), or at
// once after "Check again"; the edit undone, "verified" again.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import type { Page } from 'playwright-core'
import { describeBrowser, operatorOf, screenshot, signIn, startConsole, type ConsoleWorld } from '../helpers/browser'
import { createGame } from '../helpers/arena'
import { registerUser } from '../helpers/auth'
import { CHECK_MAX_AGE_MS } from '../../src/modules/operations/chain-checks'

describeBrowser('console: the dashboard tells whether the chains hold', () => {
  let world: ConsoleWorld
  beforeAll(async () => {
    world = await startConsole()
    await createGame(world.ctx, 'Chain Game')
    await createGame(world.ctx, 'Second Chain Game')
    const player = await registerUser(world.ctx, { username: 'chain_player' })
    for (let i = 0; i < 3; i++) world.ctx.services.securityLog.record({ userId: player.id, source: 'server', kind: 'DEBUGGER_DETECTED', level: 'WARN', details: { n: i } })
    await world.ctx.services.securityLog.flush()
  }, 60_000)
  afterAll(() => world?.close())

  const card = (page: Page, label: RegExp) => page.locator('li.chain-card', { has: page.locator('.label', { hasText: label }) })

  test('verified, then broken after a record is edited in the database, then verified once it is put back', async () => {
    const { ctx } = world
    const { auditLog, securityEvents } = ctx.peek.tables
    const viewer = await operatorOf(ctx, 'viewer')
    const page = await world.newPage()
    await signIn(page, viewer.name, viewer.password)
    const audit = card(page, /^audit chain/)
    const security = card(page, /^security-event chain/)

    const records = await ctx.storage.read.audit.auditAfter(0, 100)
    expect(await audit.locator('.value').textContent()).toBe('verified')
    expect(await audit.locator('.detail').textContent()).toBe(`${records.length} records, none edited, removed or reordered; checked 2026-11-22 10:00:00 UTC.`)
    expect(await security.locator('.value').textContent()).toBe('verified')
    // The hashes: folded, there when opened.
    const head = await ctx.storage.read.audit.auditHead()
    const hashes = audit.locator('details.hashes')
    expect(await hashes.getAttribute('open')).toBeNull()
    expect(await hashes.locator('code').isVisible()).toBe(false)
    await hashes.locator('summary').click()
    expect(await hashes.locator('code').textContent()).toBe(`record ${head.seq}: ${head.hash}`)

    // An audit record's reason edited behind the server's back.
    const first = records[0]!
    await ctx.peek.db.update(auditLog).set({ reason: 'nothing to see' }).where(eq(auditLog.id, first.id))
    try {
      // Within five minutes of the last walk the dashboard shows that walk's result.
      await page.reload()
      expect(await audit.locator('.value').textContent()).toBe('verified')
      ctx.clock.advance(CHECK_MAX_AGE_MS + 1_000)
      await page.reload()
      expect(await audit.locator('.value').textContent()).toBe('broken')
      const said = (await audit.locator('.detail').textContent())!
      expect(said).toContain(`At record ${first.seq}: record content does not match its hash (a record was edited). Checked 2026-11-22 10:05:01 UTC.`)
      expect(said).toContain('arena audit verify')
      expect(said).toContain('When a chain is broken')
      expect(await audit.getAttribute('class')).toContain('broken')
      expect(await security.locator('.value').textContent()).toBe('verified')
      await screenshot(page, 'dashboard-broken', { fullPage: false })
    } finally {
      await ctx.peek.db.update(auditLog).set({ reason: first.reason }).where(eq(auditLog.id, first.id))
    }

    // A security event edited: "Check again" walks at once, and the dashboard shows that walk.
    const [event] = await ctx.peek.db.select().from(securityEvents).orderBy(securityEvents.seq).limit(1)
    await ctx.peek.db.update(securityEvents).set({ kind: 'NOTHING_HAPPENED' }).where(eq(securityEvents.id, event!.id))
    try {
      await security.getByRole('link', { name: 'Check again' }).click()
      expect(new URL(page.url()).pathname).toBe('/console/security')
      const chains = await page.locator('.chain').allTextContents()
      expect(chains[0]).toContain(`Security-event chain: BROKEN at record ${event!.seq}: row content does not match its hash`)
      expect(chains[0]).toContain('arena security verify-log')
      expect(chains[1]).toContain('Audit chain: verified')
      await page.getByRole('link', { name: 'Dashboard' }).click()
      expect(await security.locator('.value').textContent()).toBe('broken')
      expect(await security.locator('.detail').textContent()).toContain('arena security verify-log')
    } finally {
      await ctx.peek.db.update(securityEvents).set({ kind: event!.kind }).where(eq(securityEvents.id, event!.id))
    }
    await security.getByRole('link', { name: 'Check again' }).click()
    await page.getByRole('link', { name: 'Dashboard' }).click()
    expect(await security.locator('.value').textContent()).toBe('verified')
    expect(await audit.locator('.value').textContent()).toBe('verified')
  }, 60_000)
})
