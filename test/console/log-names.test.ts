// The audit and security logs name what their records point at: a user by
// username (a deleted one as "deleted account"), a tournament, a game and an
// operator by name, a match, a participant and a withdrawal by the tournament
// and player they belong to, each linked to its page with the id in small
// print; the names of a whole page come from one query. A record's details
// are shown whole (pretty JSON, never cut).
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { describeBrowser, operatorOf, screenshot, signIn, startConsole, type ConsoleWorld } from '../helpers/browser'
import { postJson } from '../helpers/app'
import { admin, claim, createGame, players, startedTournament, type Player } from '../helpers/arena'
import { funded, mint, someAddress, verify, PIN } from '../helpers/purchases'
import { OPS_ENV } from './ops-world'

describeBrowser('console: names in the audit and security logs', () => {
  let world: ConsoleWorld
  const ids = {} as { game: string; cup: string; league: string; match: string; participant: string; withdrawal: string; deleted: string; operator: string }
  let nadia: Player
  let oscar: Player
  let pat: Player

  beforeAll(async () => {
    world = await startConsole({ env: OPS_ENV })
    const { ctx } = world
    const ok = async (request: Request, status = 200) => {
      const res = await ctx.handle(request)
      expect({ status: res.status, body: res.status === status ? null : await res.text() }).toEqual({ status, body: null })
      return (await res.json()) as Record<string, any>
    }
    const { game, gameKey } = await createGame(ctx, 'Name Game')
    ids.game = game.id
    nadia = await funded(ctx, '500')
    const [o, p] = await players(ctx, 2)
    oscar = o!
    pat = p!
    const [doomed] = await players(ctx, 1)
    ids.deleted = doomed!.userId

    // A match whose players disagree, resolved by the admin: match.resolve names the match.
    const cup = await startedTournament(ctx, game.id, [nadia, oscar])
    ids.cup = cup.id
    const match = cup.matches[0]!
    ids.match = match.id
    const seat = (pid: string) => [nadia, oscar].find((p) => p.userId === cup.participants.find((x) => x.id === pid)!.userId)!
    await claim(ctx, game.id, gameKey, seat(match.slot1ParticipantId!), match.id, { outcome: 'WIN', winnerParticipantId: match.slot1ParticipantId })
    await claim(ctx, game.id, gameKey, seat(match.slot2ParticipantId!), match.id, { outcome: 'WIN', winnerParticipantId: match.slot2ParticipantId })
    await ok(postJson(`/api/v1/admin/matches/${match.id}/resolve`, { winnerParticipantId: match.slot1ParticipantId }, admin))

    // A participant disqualified: participant.disqualify names the participant.
    const league = (await ok(postJson('/api/v1/admin/tournaments', { gameId: game.id, name: 'Naming League', format: 'round_robin', participants: [nadia.userId, oscar.userId, pat.userId] }, admin), 201)).tournament
    ids.league = league.id
    await ok(postJson(`/api/v1/admin/tournaments/${league.id}/start`, {}, admin))
    ids.participant = league.participants.find((p: { userId: string }) => p.userId === pat.userId).id
    await ok(postJson(`/api/v1/admin/tournaments/${league.id}/participants/${ids.participant}/disqualify`, { reason: 'no show' }, admin))

    // A withdrawal above the approval threshold, rejected: withdrawal.reject names the withdrawal.
    const verified = await verify(ctx, nadia, await mint(ctx, nadia), { pin: PIN, amount: '250', destinationAddress: someAddress(), idempotencyKey: 'names-1' })
    expect(verified.status).toBe(200)
    ids.withdrawal = ((await verified.json()) as { withdrawal: { id: string } }).withdrawal.id
    await ok(postJson(`/api/v1/admin/withdrawals/${ids.withdrawal}/reject`, { reason: 'address on a sanctions list' }, admin))

    await ok(postJson(`/api/v1/admin/users/${oscar.userId}/ban`, { reason: 'abuse' }, admin))
    await ok(postJson(`/api/v1/admin/users/${ids.deleted}/delete`, { reason: 'asked to be forgotten' }, admin))
    ids.operator = (await operatorOf(ctx, 'moderator', { name: 'morgan' })).id
    await ctx.services.securityLog.flush()
  }, 120_000)
  afterAll(() => world?.close())

  /** The newest audit row of `action` (whose target's id is `id`, when given). */
  const auditRow = (page: Page, action: string, id?: string) => {
    const rows = page.locator('tbody tr', { has: page.locator('td code.name', { hasText: new RegExp(`^${action.replace('.', '\\.')}$`) }) })
    return (id === undefined ? rows : rows.filter({ has: page.locator('small.id', { hasText: id }) })).first()
  }

  test('an admin reads every target by name, linked to its page, with the id in small print; a deleted account reads "deleted account"', async () => {
    const calls: number[] = []
    const store = world.ctx.storage.read.operations
    const namesOf = store.namesOf.bind(store)
    store.namesOf = (list) => {
      calls.push(list.length)
      return namesOf(list)
    }
    try {
      const op = await operatorOf(world.ctx, 'admin')
      const page = await world.newPage()
      await signIn(page, op.name, op.password, { next: '/console/audit' })
      // One lookup for the page, with every record's target in it.
      const records = await world.ctx.storage.read.audit.auditBefore(null, 50)
      expect(calls).toEqual([records.length])

      const target = async (action: string, id?: string) => {
        const cell = auditRow(page, action, id).locator('td').nth(5)
        const links = await cell.locator('a').evaluateAll((as) => as.map((a) => [a.textContent, a.getAttribute('href')]))
        return { text: (await cell.locator('.named').evaluate((el) => el.firstChild === null ? '' : [...el.childNodes].filter((n) => !(n instanceof HTMLElement && n.tagName === 'SMALL')).map((n) => n.textContent).join(''))).trim(), links, id: await cell.locator('small.id').textContent() }
      }
      expect(await target('game.create')).toEqual({ text: 'Name Game', links: [['Name Game', '/console/games']], id: ids.game })
      expect(await target('tournament.start')).toEqual({ text: 'Naming League', links: [['Naming League', `/console/tournaments/${ids.league}`]], id: ids.league })
      expect(await target('match.resolve')).toEqual({ text: 'a match of Cup', links: [['Cup', `/console/tournaments/${ids.cup}`]], id: ids.match })
      expect(await target('participant.disqualify')).toEqual({
        text: `${pat.username} in Naming League`,
        links: [
          [pat.username, `/console/users/${pat.userId}`],
          ['Naming League', `/console/tournaments/${ids.league}`],
        ],
        id: ids.participant,
      })
      expect(await target('withdrawal.reject')).toEqual({ text: `a withdrawal by ${nadia.username}`, links: [[nadia.username, `/console/users/${nadia.userId}`]], id: ids.withdrawal })
      expect(await target('user.ban')).toEqual({ text: oscar.username, links: [[oscar.username, `/console/users/${oscar.userId}`]], id: oscar.userId })
      expect(await target('user.delete')).toEqual({ text: 'deleted account', links: [['deleted account', `/console/users/${ids.deleted}`]], id: ids.deleted })
      expect(await target('operator.create', ids.operator)).toEqual({ text: 'morgan', links: [['morgan', '/console/operators']], id: ids.operator })

      // The details whole: folded under their fields' names, pretty JSON that parses back to the record's.
      const stored = records.find((r) => r.action === 'withdrawal.reject')!
      const details = auditRow(page, 'withdrawal.reject').locator('td').nth(7)
      expect(await details.locator('summary').textContent()).toBe(`${Object.keys(stored.details).length} fields: ${Object.keys(stored.details).join(', ')}`)
      await details.locator('summary').click()
      const pre = (await details.locator('pre').textContent())!
      expect(pre).toBe(JSON.stringify(stored.details, null, 2))
      expect(JSON.parse(pre)).toEqual(stored.details)
      expect(pre).toContain(String(stored.details.destinationAddress))
      // Wrapped inside its cell: the page does not grow sideways for it.
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(1366)
      await screenshot(page, 'audit', { fullPage: false })

      await page.getByRole('link', { name: 'Naming League' }).first().click()
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Naming League')
    } finally {
      store.namesOf = namesOf
    }
  }, 60_000)

  test("a viewer reads the operator's name without a link to the Operators page it may not open", async () => {
    const viewer = await operatorOf(world.ctx, 'viewer')
    const page = await world.newPage()
    await signIn(page, viewer.name, viewer.password, { next: '/console/audit' })
    const cell = auditRow(page, 'operator.create', ids.operator).locator('td').nth(5)
    expect(await cell.locator('a').count()).toBe(0)
    expect(await cell.locator('[title]').textContent()).toBe('morgan')
  }, 60_000)

  test("the security log names each event's user, a deleted one as \"deleted account\"", async () => {
    const viewer = await operatorOf(world.ctx, 'viewer')
    const page = await world.newPage()
    await signIn(page, viewer.name, viewer.password, { next: '/console/security' })
    const userCell = (kind: string) => page.locator('tbody tr', { has: page.locator('td code.name', { hasText: new RegExp(`^${kind}$`) }) }).first().locator('td').nth(5)
    expect(await userCell('ACCOUNT_BANNED').locator('a').textContent()).toBe(oscar.username)
    expect(await userCell('ACCOUNT_BANNED').locator('small.id').textContent()).toBe(oscar.userId)
    expect(await userCell('ACCOUNT_DELETED').locator('a').textContent()).toBe('deleted account')
    expect(await userCell('ACCOUNT_DELETED').locator('a').getAttribute('href')).toBe(`/console/users/${ids.deleted}`)
    await page.getByRole('link', { name: 'Verify now' }).first().click()
    await screenshot(page, 'security', { fullPage: false })
    await userCell('ACCOUNT_BANNED').locator('a').click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(`User ${oscar.username}`)
  }, 60_000)
})
