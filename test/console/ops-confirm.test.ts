// The console for an operator at work, in a real browser (chromium, the real
// app over HTTP, either engine). What must stay true: an action that cannot
// be taken back (cancel a tournament, disqualify a player, reject or approve
// a withdrawal) never happens on one click: the button opens a page saying
// what will happen, and only its own button acts, once (the audit log holds
// one record, and submitting it again is refused); round robin and Swiss
// match tables have no column that is empty by construction (where a winner
// or loser goes), and offer a correction only where one can be taken; the
// withdrawals page keeps the waiting queue first and shows the history in
// every status, with filters that narrow it.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { csrfOf, describeBrowser, operatorOf, screenshot, signIn, startConsole, type ConsoleWorld } from '../helpers/browser'
import { postJson } from '../helpers/app'
import { admin, claim } from '../helpers/arena'
import { mint, PIN, someAddress, verify } from '../helpers/purchases'
import { buildOpsWorld, OPS_ENV, type OpsWorld } from './ops-world'
import { NOTICES } from '../../src/console/notices'

describeBrowser('console: confirmation steps, match columns per format, withdrawal history', () => {
  let console_: ConsoleWorld
  let world: OpsWorld
  beforeAll(async () => {
    console_ = await startConsole({ env: OPS_ENV })
    world = await buildOpsWorld(console_.ctx)
  }, 120_000)
  afterAll(() => console_?.close())

  const auditOf = async (target: string, action: string) => (await console_.ctx.services.storage.read.audit.auditBefore(null, 500)).filter((r) => r.target === target && r.action === action)
  const h1 = (page: Page) => page.getByRole('heading', { level: 1 }).textContent()

  /** The header cells of the match table, and whether each column has a cell saying something (not empty, not a dash). */
  async function matchColumns(page: Page): Promise<{ headers: string[]; saysSomething: boolean[] }> {
    const table = page.locator('section[aria-labelledby="matches"] table')
    const headers = (await table.locator('thead th').allTextContents()).map((h) => h.trim())
    const rows = await table.locator('tbody tr').all()
    const saysSomething = headers.map(() => false)
    for (const row of rows) {
      const cells = await row.locator('th, td').allTextContents()
      cells.forEach((text, i) => {
        if (text.trim() !== '' && text.trim() !== '—') saysSomething[i] = true
      })
    }
    return { headers, saysSomething }
  }

  test('cancelling a tournament takes its confirmation page; one click changes nothing, the confirmation cancels once', async () => {
    const moderator = await operatorOf(console_.ctx, 'moderator')
    const page = await console_.newPage()
    const id = world.doubleElimination.id
    await signIn(page, moderator.name, moderator.password, { next: `/console/tournaments/${id}` })
    await page.getByRole('button', { name: 'Cancel tournament…' }).click()
    expect(await h1(page)).toBe('Cancel Winter Double?')
    expect(new URL(page.url()).pathname).toBe(`/console/tournaments/${id}/cancel`)
    // Opening the page did nothing.
    expect((await console_.ctx.services.games.getTournament(id)).status).toBe('running')
    expect(await auditOf(id, 'tournament.cancel')).toEqual([])
    const consequences = await page.locator('section.confirm li').allTextContents()
    expect(consequences.join('\n')).toContain('All 8 participants get a tournament.cancelled event')
    expect(consequences.join('\n')).toMatch(/Every match not yet decided \(\d+ of \d+\) is cancelled/)
    // Back: still nothing done.
    await page.getByRole('link', { name: 'Back, change nothing' }).click()
    expect(await h1(page)).toBe('Winter Double')
    expect((await console_.ctx.services.games.getTournament(id)).status).toBe('running')

    await page.getByRole('button', { name: 'Cancel tournament…' }).click()
    await page.getByLabel(/^Reason for cancelling/).fill('the venue flooded')
    await screenshot(page, 'confirm-cancel')
    await page.getByRole('button', { name: 'Cancel the tournament' }).click()
    expect(await page.getByRole('status').textContent()).toBe(NOTICES.tournament_cancelled)
    expect((await console_.ctx.services.games.getTournament(id)).status).toBe('cancelled')
    expect(await auditOf(id, 'tournament.cancel')).toHaveLength(1)
    // The confirmation page again (the browser's back button: never cached, so asked again) has no button now, and says why.
    await page.goBack()
    expect(await page.getByRole('alert').textContent()).toBe('Winter Double is cancelled: there is nothing to cancel')
    expect(await page.getByRole('button', { name: 'Cancel the tournament' }).count()).toBe(0)
    // Its form sent again anyway (a second tab, a double submit): refused, nothing more recorded.
    const twice = await page.request.post(`/console/tournaments/${id}/cancel`, { form: { _csrf: await csrfOf(page), reason: 'again' }, headers: { origin: console_.baseUrl }, maxRedirects: 0 })
    expect(twice.status()).toBe(409)
    expect(await auditOf(id, 'tournament.cancel')).toHaveLength(1)
    // A cancelled tournament has no Cancel button, and its confirmation page says why.
    await page.goto(`/console/tournaments/${id}`)
    expect(await page.getByRole('button', { name: 'Cancel tournament…' }).count()).toBe(0)
    const again = await page.goto(`/console/tournaments/${id}/cancel`)
    expect(again!.status()).toBe(409)
  }, 90_000)

  test('disqualifying takes its confirmation page, naming the player and what happens to their matches; the confirmation acts once', async () => {
    const moderator = await operatorOf(console_.ctx, 'moderator')
    const page = await console_.newPage()
    const id = world.roundRobin.id
    const t = await console_.ctx.services.games.getTournament(id)
    const target = t.participants[2]!
    const name = world.people.find((p) => p.userId === target.userId)!.username
    const open = t.matches.filter((m) => m.status !== 'decided' && (m.slot1ParticipantId === target.id || m.slot2ParticipantId === target.id)).length
    await signIn(page, moderator.name, moderator.password, { next: `/console/tournaments/${id}` })
    await page.getByRole('button', { name: `Disqualify ${name}` }).click()
    expect(await h1(page)).toBe(`Disqualify ${name} from League of Four?`)
    expect((await console_.ctx.services.games.getTournament(id)).participants[2]!.disqualifiedAt).toBeNull()
    expect(await page.locator('section.confirm').textContent()).toContain(`Every match of theirs not yet decided (${open}: against `)
    await page.getByLabel(/^Reason for disqualifying/).fill('used a second account')
    await screenshot(page, 'confirm-disqualify')
    await page.getByRole('button', { name: `Disqualify ${name}` }).click()
    expect(await page.getByRole('status').textContent()).toBe(NOTICES.participant_disqualified)
    expect((await console_.ctx.services.games.getTournament(id)).participants[2]!.disqualifiedAt).not.toBeNull()
    const records = (await console_.ctx.services.storage.read.audit.auditBefore(null, 500)).filter((r) => r.action === 'participant.disqualify')
    expect(records).toHaveLength(1)
    // No Disqualify button for them any more; their confirmation page says they are out already.
    expect(await page.getByRole('button', { name: `Disqualify ${name}` }).count()).toBe(0)
    expect((await page.goto(`/console/tournaments/${id}/participants/${target.id}/disqualify`))!.status()).toBe(409)
  }, 90_000)

  test('round robin and Swiss tables have no feed columns and no empty column; corrections are offered only where one can be taken', async () => {
    const moderator = await operatorOf(console_.ctx, 'moderator')
    const page = await console_.newPage()
    await signIn(page, moderator.name, moderator.password, { next: `/console/tournaments/${world.roundRobin.id}` })
    const rr = await matchColumns(page)
    expect(rr.headers).not.toContain('Winner goes to')
    expect(rr.headers).not.toContain('Loser goes to')
    expect(rr.headers).toEqual(['Match', 'Status', 'Player 1', 'Player 2', 'Result', 'Correct the result'])
    expect(rr.saysSomething).toEqual(rr.headers.map(() => true))
    expect(await page.locator('section[aria-labelledby="matches"] caption a[href="#standings"]').count()).toBe(1)
    await page.goto(`/console/tournaments/${world.roundRobin.id}`)
    await screenshot(page, 'tournament-round-robin')

    // A Swiss of 8 with round 1 played and one match of round 2: round 1 can no longer be corrected, round 2's result can.
    const created = await console_.ctx.handle(postJson('/api/v1/admin/tournaments', { gameId: world.game.id, name: 'Autumn Swiss', format: 'swiss', options: { rounds: 3 }, participants: world.people.map((p) => p.userId) }, admin))
    expect(created.status).toBe(201)
    const swissId = ((await created.json()) as { tournament: { id: string } }).tournament.id
    expect((await console_.ctx.handle(postJson(`/api/v1/admin/tournaments/${swissId}/start`, {}, admin))).status).toBe(200)
    const playRunning = async (round: number, count: number) => {
      for (let i = 0; i < count; i++) {
        const t = await console_.ctx.services.games.getTournament(swissId)
        const m = t.matches.find((x) => x.round === round && x.status === 'running')!
        const seat = (pid: string) => world.people.find((p) => p.userId === t.participants.find((x) => x.id === pid)!.userId)!
        const body = { outcome: 'WIN', winnerParticipantId: m.slot1ParticipantId }
        await claim(console_.ctx, world.game.id, world.gameKey, seat(m.slot1ParticipantId!), m.id, body)
        await claim(console_.ctx, world.game.id, world.gameKey, seat(m.slot2ParticipantId!), m.id, body)
      }
    }
    await page.goto(`/console/tournaments/${swissId}`)
    const fresh = await matchColumns(page)
    // Nothing decided yet: no correction to offer, so no such column either.
    expect(fresh.headers).not.toContain('Correct the result')
    expect(fresh.headers).not.toContain('Winner goes to')
    await playRunning(1, 4)
    await playRunning(2, 1)
    await page.reload()
    const swiss = await matchColumns(page)
    expect(swiss.headers).not.toContain('Winner goes to')
    expect(swiss.headers).not.toContain('Loser goes to')
    expect(swiss.saysSomething).toEqual(swiss.headers.map(() => true))
    const correctButtons = page.locator('section[aria-labelledby="matches"] tbody tr').filter({ has: page.getByRole('button', { name: /^Correct / }) })
    expect(await correctButtons.count()).toBe(1)
    expect(await correctButtons.first().locator('th').textContent()).toStartWith('Round 2 #')
    await screenshot(page, 'tournament-swiss')

    // An elimination bracket keeps where winners and losers go; a single elimination without a third-place match has no "Loser goes to".
    await page.goto(`/console/tournaments/${world.doubleElimination.id}`)
    expect((await matchColumns(page)).headers).toEqual(expect.arrayContaining(['Winner goes to', 'Loser goes to']))
    await page.goto(`/console/tournaments/${world.disputed.tournament.id}`)
    const single = await matchColumns(page)
    expect(single.headers).toContain('Winner goes to')
    expect(single.headers).not.toContain('Loser goes to')
  }, 90_000)

  test('withdrawals: the queue first, then the history with a signed and a rejected one; rejecting takes its confirmation page; filters narrow the history', async () => {
    // A small withdrawal (below the approval threshold): signed at once.
    const payer = world.withdrawal.player
    const small = await verify(console_.ctx, payer, await mint(console_.ctx, payer), { pin: PIN, amount: '20', destinationAddress: someAddress(), idempotencyKey: 'small-1' })
    expect(small.status).toBe(200)
    expect(((await small.json()) as { withdrawal: { status: string } }).withdrawal.status).toBe('signed')

    const finance = await operatorOf(console_.ctx, 'finance')
    const page = await console_.newPage()
    await signIn(page, finance.name, finance.password, { next: '/console/withdrawals' })
    const headings = await page.getByRole('heading', { level: 2 }).allTextContents()
    expect(headings.indexOf('Waiting for a decision')).toBeLessThan(headings.indexOf('History'))
    const history = page.locator('section[aria-labelledby="history"]')
    expect(await history.locator('tbody tr').count()).toBe(2)

    await page.getByRole('button', { name: /^Reject the withdrawal of 250/ }).click()
    expect(await h1(page)).toMatch(/^Reject 250(\.0+)? USDC of /)
    expect((await console_.ctx.services.storage.read.wallet.withdrawal(world.withdrawal.id))!.status).toBe('awaiting_approval')
    await page.getByLabel(/^Reason for rejecting/).fill('the address is on a sanctions list')
    await screenshot(page, 'confirm-reject')
    await page.getByRole('button', { name: 'Reject the withdrawal' }).click()
    expect(await page.getByRole('status').textContent()).toBe(NOTICES.withdrawal_rejected)
    expect((await console_.ctx.services.storage.read.wallet.withdrawal(world.withdrawal.id))!.status).toBe('rejected')
    expect(await auditOf(world.withdrawal.id, 'withdrawal.reject')).toHaveLength(1)
    expect(await page.getByText('No withdrawal is waiting.').count()).toBe(1)
    const statuses = await history.locator('tbody tr td:nth-of-type(3)').allTextContents()
    expect(statuses.sort()).toEqual(['rejected (refunded)', 'signed (sent)'])
    expect(await history.textContent()).toContain('the address is on a sanctions list')
    await screenshot(page, 'withdrawals')

    // Filters: by status, by user, by days.
    await page.getByLabel('Status').selectOption('rejected')
    await page.getByRole('button', { name: 'Show' }).click()
    expect(await history.locator('tbody tr td:nth-of-type(3)').allTextContents()).toEqual(['rejected (refunded)'])
    await page.getByLabel('Status').selectOption('')
    await page.getByLabel(/^User/).fill(world.people[0]!.username)
    await page.getByRole('button', { name: 'Show' }).click()
    expect(await history.getByText('No withdrawal matches.').count()).toBe(1)
    await page.getByLabel(/^User/).fill(payer.username.toUpperCase())
    const today = (await console_.ctx.services.storage.read.wallet.withdrawal(world.withdrawal.id))!.createdAt.toISOString().slice(0, 10)
    await page.getByLabel(/^Created from/).fill(today)
    await page.getByLabel(/^to \(UTC day/).fill(today)
    await page.getByRole('button', { name: 'Show' }).click()
    expect(await history.locator('tbody tr').count()).toBe(2)
    await page.getByLabel(/^Created from/).fill('2099-01-01')
    await page.getByRole('button', { name: 'Show' }).click()
    expect(await history.getByText('No withdrawal matches.').count()).toBe(1)
  }, 90_000)
})
