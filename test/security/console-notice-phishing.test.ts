// Invariant: the console's banners say only what the server wrote. A link
// with text in `?notice=` (or a forged `?error=`) shows nothing: a notice in
// the URL is a code with one fixed text (src/console/notices.ts), an error
// travels signed with the operator's session. Every action still shows its
// notice, and a refused form its error, after the redirect (issue 33,
// defect 5). Over HTTP, on both engines.
import { afterAll, describe, expect, test } from 'bun:test'
import { NOTICES, type NoticeCode } from '../../src/console/notices'
import { errorSignature } from '../../src/console/http'
import { postJson, req } from '../helpers/app'
import { admin, createArenaApp, createGame, players } from '../helpers/arena'
import { operatorOf } from '../helpers/browser'
import { cliActor } from '../helpers/operators'
import { totpCode } from '../../src/modules/operators/totp'

const ctx = await createArenaApp()
afterAll(() => ctx.close())

const PHISH = 'Your session expired, sign in again at https://arena-login.example/console'
const FORM = { 'content-type': 'application/x-www-form-urlencoded' }

interface Answer {
  status: number
  html: string
  location: string | null
}
const answer = async (r: Response): Promise<Answer> => ({ status: r.status, html: await r.text(), location: r.headers.get('location') })

/** The text of the page's notice banner (role="status"), or null without one. */
const banner = (html: string) => /<p class="notice" role="status">([^<]*)<\/p>/.exec(html)?.[1] ?? null
/** The text of the page's error banner (role="alert"), or null without one. */
const alert = (html: string) => /<p class="error" role="alert">([^<]*)<\/p>/.exec(html)?.[1] ?? null
const unescape = (text: string | null) => text?.replaceAll('&amp;', '&').replaceAll('&#39;', "'").replaceAll('&quot;', '"').replaceAll('&lt;', '<').replaceAll('&gt;', '>') ?? null

async function signedIn(role: 'viewer' | 'moderator' | 'admin') {
  const operator = await operatorOf(ctx, role)
  const res = await ctx.handle(req('/console/login', { method: 'POST', headers: FORM, body: new URLSearchParams({ name: operator.name, password: operator.password }).toString() }))
  expect(res.status).toBe(303)
  const cookie = res.headers.get('set-cookie')!.split(';')[0]!
  const get = async (path: string) => answer(await ctx.handle(req(path, { headers: { cookie } })))
  const csrf = /name="_csrf" value="([^"]+)"/.exec((await get('/console')).html)![1]!
  const post = async (path: string, fields: Record<string, string> = {}) =>
    answer(await ctx.handle(req(path, { method: 'POST', headers: { cookie, ...FORM }, body: new URLSearchParams({ _csrf: csrf, ...fields }).toString() })))
  /** Posts a form and follows its 303: the page the operator lands on. */
  const follow = async (path: string, fields: Record<string, string> = {}) => {
    const posted = await post(path, fields)
    expect(posted.status).toBe(303)
    // As a browser does: the #fragment stays on the client.
    return { location: posted.location!, page: await get(posted.location!.split('#')[0]!) }
  }
  return { operator, location: res.headers.get('location')!, cookie, csrf, get, post, follow }
}

const PAGES = ['/console', '/console/users', '/console/operators', '/console/account', '/console/games', '/console/tournaments', '/console/disputes', '/console/withdrawals', '/console/security', '/console/audit']

describe('text in the URL', () => {
  test("an attacker's sentence in ?notice= shows on no page, signed in or not", async () => {
    const op = await signedIn('admin')
    for (const path of PAGES) {
      const page = await op.get(`${path}?notice=${encodeURIComponent(PHISH)}`)
      expect({ path, status: page.status }).toEqual({ path, status: 200 })
      expect(page.html).not.toContain('arena-login.example')
      expect(banner(page.html)).toBeNull()
    }
    const login = await answer(await ctx.handle(req(`/console/login?notice=${encodeURIComponent(PHISH)}`)))
    expect(login.status).toBe(200)
    expect(login.html).not.toContain('arena-login.example')
    expect(banner(login.html)).toBeNull()
    // A code that is not listed shows nothing either, nor does a listed one's prototype name.
    for (const code of ['constructor', '__proto__', 'toString', 'signed_in ', 'SIGNED_IN']) expect(banner((await op.get(`/console?notice=${encodeURIComponent(code)}`)).html)).toBeNull()
  })

  test('a forged ?error= shows nothing: unsigned, signed for another session, or signed for other words', async () => {
    const op = await signedIn('admin')
    const other = await signedIn('viewer')
    const forged = [
      `error=${encodeURIComponent(PHISH)}`,
      `error=${encodeURIComponent(PHISH)}&error_sig=${'0'.repeat(64)}`,
      `error=${encodeURIComponent(PHISH)}&error_sig=${errorSignature(other.csrf, PHISH)}`,
      `error=${encodeURIComponent(PHISH)}&error_sig=${errorSignature(op.csrf, 'Request failed validation')}`,
    ]
    for (const path of ['/console/users', '/console/operators', '/console/account', '/console/security', '/console/audit']) {
      for (const query of forged) {
        const page = await op.get(`${path}?${query}`)
        expect(page.status).toBe(200)
        expect(page.html).not.toContain('arena-login.example')
        expect(alert(page.html)).toBeNull()
      }
    }
  })

  test('every notice code shows its fixed text', async () => {
    const op = await signedIn('admin')
    for (const [code, text] of Object.entries(NOTICES)) expect(unescape(banner((await op.get(`/console?notice=${code}`)).html))).toBe(text)
  })
})

describe('each action still shows its notice', () => {
  const shows = (landed: { location: string; page: Answer }, code: NoticeCode) => {
    expect(landed.location).toContain(`notice=${code}`)
    expect(landed.page.status).toBe(200)
    expect(unescape(banner(landed.page.html))).toBe(NOTICES[code])
  }

  test('sign in and out', async () => {
    const op = await signedIn('viewer')
    expect(op.location).toBe('/console?notice=signed_in')
    expect(unescape(banner((await op.get(op.location)).html))).toBe(NOTICES.signed_in)
    const out = await op.post('/console/logout')
    expect(out.location).toBe('/console/login?notice=signed_out')
    const login = await answer(await ctx.handle(req(out.location!)))
    expect(unescape(banner(login.html))).toBe(NOTICES.signed_out)
  })

  test('users: ban and lift; a refused ban comes back with its signed error', async () => {
    const moderator = await signedIn('moderator')
    const [p] = await players(ctx, 1)
    const path = `/console/users/${p!.userId}`
    shows(await moderator.follow(`${path}/ban`, { reason: 'cheating', until: '' }), 'user_banned')
    shows(await moderator.follow(`${path}/unban`), 'user_unbanned')
    const refused = await moderator.follow(`${path}/ban`, { reason: 'cheating', until: 'tomorrow-ish' })
    expect(refused.location).toContain('error_sig=')
    expect(unescape(alert(refused.page.html))).toContain('Expected a date and time (UTC)')
    expect(banner(refused.page.html)).toBeNull()
    // The same link in another operator's session shows nothing.
    const other = await signedIn('moderator')
    expect(alert((await other.get(refused.location)).html)).toBeNull()
  })

  test('operators: disable, enable, role, authenticator reset', async () => {
    const adminOp = await signedIn('admin')
    const target = await operatorOf(ctx, 'viewer')
    const path = `/console/operators/${target.id}`
    shows(await adminOp.follow(`${path}/disable`), 'operator_disabled')
    shows(await adminOp.follow(`${path}/enable`), 'operator_enabled')
    shows(await adminOp.follow(`${path}/role`, { role: 'moderator' }), 'operator_role_changed')
    const { secret } = await ctx.services.operatorTotp.beginTotp(target.id, target.password)
    await ctx.services.operatorTotp.confirmTotp(target.id, totpCode(secret, ctx.clock.now()), cliActor(ctx))
    shows(await adminOp.follow(`${path}/disable-totp`), 'operator_totp_reset')
  })

  test('account: ending another session of mine, then my own', async () => {
    const op = await signedIn('viewer')
    const second = await ctx.handle(req('/console/login', { method: 'POST', headers: FORM, body: new URLSearchParams({ name: op.operator.name, password: op.operator.password }).toString() }))
    expect(second.status).toBe(303)
    const rows = [...(await op.get('/console/account')).html.matchAll(/<tr( aria-current="true")?>.*?\/console\/account\/sessions\/([^/"]+)\/revoke/g)]
    const current = rows.find((r) => r[1] !== undefined)![2]!
    const other = rows.find((r) => r[1] === undefined)![2]!
    shows(await op.follow(`/console/account/sessions/${other}/revoke`), 'session_ended')
    const own = await op.post(`/console/account/sessions/${current}/revoke`)
    expect(own.location).toBe('/console/login?notice=own_session_ended')
    expect(unescape(banner((await answer(await ctx.handle(req(own.location!)))).html))).toBe(NOTICES.own_session_ended)
  })

  test('games: create and rotate show their notice on the answering page', async () => {
    const adminOp = await signedIn('admin')
    const created = await adminOp.post('/console/games', { name: 'Notice Duel' })
    expect(created.status).toBe(201)
    expect(unescape(banner(created.html))).toBe(NOTICES.game_created)
    const gameId = /\/console\/games\/(gam_[A-Za-z0-9]+)\/rotate-key/.exec(created.html)![1]!
    const rotated = await adminOp.post(`/console/games/${gameId}/rotate-key`)
    expect(rotated.status).toBe(200)
    expect(unescape(banner(rotated.html))).toBe(NOTICES.game_key_rotated)
  })

  test('tournaments: start, disqualify, cancel', async () => {
    const moderator = await signedIn('moderator')
    const { game } = await createGame(ctx, 'Notice Cup Game')
    const people = await players(ctx, 4)
    const res = await ctx.handle(postJson('/api/v1/admin/tournaments', { gameId: game.id, name: 'Notice Cup', format: 'single_elimination', participants: people.map((p) => p.userId) }, admin))
    const { tournament } = (await res.json()) as { tournament: { id: string } }
    const path = `/console/tournaments/${tournament.id}`
    shows(await moderator.follow(`${path}/start`), 'tournament_started')
    const started = await ctx.services.games.getTournament(tournament.id)
    const running = started.matches.find((m) => m.status === 'running')!
    shows(await moderator.follow(`${path}/participants/${running.slot2ParticipantId}/disqualify`, { reason: 'cheating' }), 'participant_disqualified')
    shows(await moderator.follow(`${path}/cancel`, { reason: 'venue closed' }), 'tournament_cancelled')
  })
})
