// The console's confirmation pages over app.handle, on either engine. The
// invariant: opening the confirmation page of an action that cannot be taken
// back (GET at the action's own path) changes nothing and records nothing;
// it holds the one form that posts to that path with the CSRF token (and the
// fields a form with fields carried in its query), and the
// page the button was on holds no form that posts there; below the action's
// role it is refused (403) like the action; for a thing no longer in a state
// to be acted on it answers a 4xx saying why, never a 500.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { req, type TestApp } from '../helpers/app'
import { createArenaApp } from '../helpers/arena'
import { operatorOf } from '../helpers/browser'
import { buildOpsWorld, OPS_ENV, type OpsWorld } from './ops-world'
import type { OperatorRole } from '../../src/modules/operators/roles'

let app: TestApp
let world: OpsWorld
beforeAll(async () => {
  app = await createArenaApp(OPS_ENV)
  world = await buildOpsWorld(app)
}, 120_000)
afterAll(() => app?.close())

async function cookieOf(role: OperatorRole): Promise<string> {
  const operator = await operatorOf(app, role)
  const res = await app.handle(
    req('/console/login', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ name: operator.name, password: operator.password }).toString() }),
  )
  expect(res.status).toBe(303)
  return res.headers.get('set-cookie')!.split(';')[0]!
}

const get = async (cookie: string, path: string) => {
  const res = await app.handle(req(path, { headers: { cookie } }))
  return { status: res.status, html: await res.text() }
}
const auditCount = async () => (await app.services.storage.read.audit.auditBefore(null, 1000)).length
/** The forms of a page that post (method="post") to `action`. */
const postsTo = (html: string, action: string) => [...html.matchAll(/<form method="post" action="([^"]+)"/g)].filter((m) => m[1] === action).length

describe('console confirmation pages', () => {
  test('every confirmation page changes nothing, holds the one form that acts, and the page before has none', async () => {
    const adminCookie = await cookieOf('admin')
    const other = await operatorOf(app, 'moderator')
    const t = world.roundRobin
    const participant = (await app.services.games.getTournament(t.id)).participants[0]!
    // (Turning off an authenticator is offered only for an operator who has one; its page opens either way.)
    // (A form with fields, scheduling a season, opens its page with them in the query.)
    const cases: { from: string; path: string; title: RegExp; offered?: false; query?: string }[] = [
      { from: `/console/tournaments/${t.id}`, path: `/console/tournaments/${t.id}/cancel`, title: /Cancel League of Four\?/ },
      { from: `/console/tournaments/${t.id}`, path: `/console/tournaments/${t.id}/participants/${participant.id}/disqualify`, title: /Disqualify \w+ from League of Four\?/ },
      { from: '/console/withdrawals', path: `/console/withdrawals/${world.withdrawal.id}/approve`, title: /Approve 250(\.0+)? USDC to / },
      { from: '/console/withdrawals', path: `/console/withdrawals/${world.withdrawal.id}/reject`, title: /Reject 250(\.0+)? USDC of / },
      { from: `/console/users/${world.people[0]!.userId}`, path: `/console/users/${world.people[0]!.userId}/ban`, title: /Ban \w+\?/ },
      { from: '/console/games', path: `/console/games/${world.game.id}/rotate-key`, title: new RegExp(`Rotate the key of ${world.game.name}\\?`) },
      { from: `/console/games/${world.game.id}`, path: `/console/games/${world.game.id}/seasons`, title: new RegExp(`Schedule Spring for ${world.game.name}\\?`), query: '?name=Spring&startsAt=2026-12-01T10:00&reset=soft' },
      { from: '/console/operators', path: `/console/operators/${other.id}/disable`, title: /Disable moderator-\d+\?/ },
      { from: '/console/operators', path: `/console/operators/${other.id}/reset-password`, title: /Reset the password of moderator-\d+\?/ },
      { from: '/console/operators', path: `/console/operators/${other.id}/disable-totp`, title: /Turn off the authenticator of moderator-\d+\?/, offered: false },
    ]
    const before = await auditCount()
    for (const { from, path, title, offered, query } of cases) {
      const list = await get(adminCookie, from)
      expect(list.status).toBe(200)
      expect(postsTo(list.html, path)).toBe(0)
      if (offered !== false) expect(list.html).toContain(`<form method="get" action="${path}"`)
      const page = await get(adminCookie, path + (query ?? ''))
      expect(page.status).toBe(200)
      expect(page.html).toMatch(new RegExp(`<h1>${title.source}[^<]*</h1>`))
      expect(postsTo(page.html, path)).toBe(1)
      expect(page.html).toMatch(/<section class="confirm"[^>]*>[\s\S]*<li>[\s\S]*name="_csrf"/)
    }
    expect(await auditCount()).toBe(before)
    expect((await app.services.games.getTournament(t.id)).status).toBe('running')
    expect((await app.services.storage.read.wallet.withdrawal(world.withdrawal.id))!.status).toBe('awaiting_approval')
    expect((await app.services.operators.byId(other.id)).disabled).toBe(false)
    await app.services.gameKeys.verify(world.game.id, world.gameKey)
    expect((await app.services.ratings.seasons(world.game.id)).seasons).toHaveLength(1)
  })

  test('below the role, a confirmation page is refused like its action; for what cannot be acted on, it says why', async () => {
    const viewer = await cookieOf('viewer')
    const moderator = await cookieOf('moderator')
    const finance = await cookieOf('finance')
    expect((await get(viewer, `/console/tournaments/${world.roundRobin.id}/cancel`)).status).toBe(403)
    expect((await get(finance, `/console/tournaments/${world.roundRobin.id}/cancel`)).status).toBe(403)
    expect((await get(moderator, `/console/withdrawals/${world.withdrawal.id}/approve`)).status).toBe(403)
    expect((await get(moderator, `/console/games/${world.game.id}/rotate-key`)).status).toBe(403)
    expect((await get(moderator, `/console/games/${world.game.id}/seasons?name=Spring&startsAt=2026-12-01T10:00&reset=soft`)).status).toBe(403)
    expect((await get(viewer, `/console/users/${world.people[0]!.userId}/ban`)).status).toBe(403)
    expect((await get(moderator, `/console/operators/opr_nope/disable`)).status).toBe(403)
    // Unknown things and impossible states: a 4xx page.
    expect((await get(moderator, '/console/tournaments/trn_nope/cancel')).status).toBe(404)
    expect((await get(moderator, `/console/tournaments/${world.roundRobin.id}/participants/par_nope/disqualify`)).status).toBe(404)
    expect((await get(finance, '/console/withdrawals/wdr_nope/approve')).status).toBe(404)
    const admin = await cookieOf('admin')
    expect((await get(admin, '/console/games/gam_nope/rotate-key')).status).toBe(404)
    expect((await get(admin, '/console/games/gam_nope/seasons?name=Spring&startsAt=2026-12-01T10:00&reset=soft')).status).toBe(404)
    expect((await get(admin, '/console/operators/opr_nope/disable')).status).toBe(404)
    expect((await get(admin, `/console/operators/${(await operatorOf(app, 'viewer')).id}/delete`)).status).toBe(404)
    // The disputed single elimination: a cancelled tournament's page says there is nothing to cancel.
    const cup = world.disputed.tournament.id
    await app.services.games.cancelTournament(cup, 'closing', app.services.audit.actor({ id: null, name: 'token', role: 'admin' }, 'cli'))
    const over = await get(moderator, `/console/tournaments/${cup}/cancel`)
    expect(over.status).toBe(409)
    expect(over.html).toContain('is cancelled: there is nothing to cancel')
    expect(postsTo(over.html, `/console/tournaments/${cup}/cancel`)).toBe(0)
  })
})
