// The console's operations pages over app.handle (no browser): every page
// renders for a viewer with what the world holds; each action works for the
// role it needs, is refused (403, nothing changed) below it, is recorded in
// the audit log under the operator's name, and a refusal by the service comes
// back as the page with its message, never a 500. Both engines.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { req, type TestApp } from '../helpers/app'
import { createArenaApp } from '../helpers/arena'
import { operatorOf } from '../helpers/browser'
import { buildOpsWorld, OPS_ENV, type OpsWorld } from './ops-world'
import { NOTICES } from '../../src/console/notices'

let app: TestApp
let world: OpsWorld
beforeAll(async () => {
  app = await createArenaApp(OPS_ENV)
  world = await buildOpsWorld(app)
}, 120_000)
afterAll(() => app?.close())

interface Signed {
  name: string
  cookie: string
  get(path: string): Promise<{ status: number; html: string; location: string | null }>
  post(path: string, fields: Record<string, string>, csrf?: string): Promise<{ status: number; html: string; location: string | null }>
}

/** An operator of `role` signed in through POST /console/login, with its cookie and its pages' CSRF token. */
async function signedIn(role: 'viewer' | 'moderator' | 'finance' | 'admin'): Promise<Signed> {
  const operator = await operatorOf(app, role)
  const res = await app.handle(
    req('/console/login', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ name: operator.name, password: operator.password }).toString() }),
  )
  expect(res.status).toBe(303)
  const cookie = res.headers.get('set-cookie')!.split(';')[0]!
  const answer = async (r: Response) => ({ status: r.status, html: await r.text(), location: r.headers.get('location') })
  const get = async (path: string) => answer(await app.handle(req(path, { headers: { cookie } })))
  const csrfOf = async () => /name="_csrf" value="([^"]+)"/.exec((await get('/console')).html)![1]!
  return {
    name: operator.name,
    cookie,
    get,
    async post(path, fields, csrf) {
      const body = new URLSearchParams({ _csrf: csrf ?? (await csrfOf()), ...fields }).toString()
      return answer(await app.handle(req(path, { method: 'POST', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body })))
    },
  }
}

async function auditOf(target: string) {
  const records = await app.services.storage.read.audit.auditBefore(null, 500)
  return records.filter((r) => r.target === target)
}

describe('console operations pages', () => {
  test('the dashboard counts what is waiting and links each number to its page', async () => {
    const viewer = await signedIn('viewer')
    const { status, html } = await viewer.get('/console')
    expect(status).toBe(200)
    const counts = await app.services.operations.dashboard()
    expect(counts).toMatchObject({ players: 8, disputedMatches: 1, withdrawalsAwaitingApproval: 1, withdrawalsHeld: 0, runningTournaments: 3 })
    expect(counts.liveMatches).toBeGreaterThanOrEqual(4)
    expect(counts.databaseBytes).toBeGreaterThan(0)
    expect(html).toContain('aria-current="page"')
    expect(html).toMatch(/<a href="\/console\/disputes"><span class="value bad">1<\/span>/)
    expect(html).toMatch(/<a href="\/console\/withdrawals"><span class="value bad">1<\/span>/)
    expect(html).toContain('database size')
  })

  test('a viewer sees the dispute with both claims but no resolve form; a forged resolve is 403 and changes nothing', async () => {
    const viewer = await signedIn('viewer')
    const page = await viewer.get('/console/disputes')
    expect(page.status).toBe(200)
    expect(page.html).toContain('Dispute Cup')
    expect(page.html).toContain(`claims: ${world.disputed.claimedBy[0]!.username} won`)
    expect(page.html).toContain(`claims: ${world.disputed.claimedBy[1]!.username} won`)
    expect(page.html).not.toContain('/resolve')
    const forged = await viewer.post(`/console/disputes/${world.disputed.match.id}/resolve`, { winnerParticipantId: world.disputed.match.slot1ParticipantId! })
    expect(forged.status).toBe(403)
    expect(forged.html).toContain('This needs the moderator role')
    expect((await app.services.storage.read.matches.byId(world.disputed.match.id))!.status).toBe('disputed')
    const noCsrf = await viewer.post(`/console/disputes/${world.disputed.match.id}/resolve`, { winnerParticipantId: 'x' }, 'not-the-token')
    expect(noCsrf.status).toBe(403)
  })

  test('a viewer sees the withdrawal but no approve or reject; a forged approval is 403 and changes nothing', async () => {
    const viewer = await signedIn('viewer')
    const page = await viewer.get('/console/withdrawals')
    expect(page.status).toBe(200)
    expect(page.html).toContain(world.withdrawal.player.username)
    expect(page.html).toContain('250')
    expect(page.html).not.toContain('/approve')
    const forged = await viewer.post(`/console/withdrawals/${world.withdrawal.id}/approve`, {})
    expect(forged.status).toBe(403)
    // A moderator is not finance either.
    const moderator = await signedIn('moderator')
    expect((await moderator.post(`/console/withdrawals/${world.withdrawal.id}/approve`, {})).status).toBe(403)
    expect((await app.services.storage.read.wallet.withdrawal(world.withdrawal.id))!.status).toBe('awaiting_approval')
    expect(await auditOf(world.withdrawal.id)).toEqual([])
  })

  test('the double elimination page draws its bracket as an accessible picture, with the match table below', async () => {
    const viewer = await signedIn('viewer')
    const { status, html } = await viewer.get(`/console/tournaments/${world.doubleElimination.id}`)
    expect(status).toBe(200)
    expect(html).toMatch(/<svg[^>]*role="img"[^>]*aria-labelledby="bracket-title bracket-desc"/)
    expect(html).toContain('<title id="bracket-title">Bracket of Winter Double (Double elimination)</title>')
    expect(html).toContain('Winners bracket')
    expect(html).toContain('Losers bracket')
    expect(html).toContain('Grand final')
    expect(html.match(/<polyline /g)!.length).toBeGreaterThan(10)
    expect(html).toContain('<th scope="col">Winner goes to</th>')
    // A viewer has no action forms.
    expect(html).not.toContain('/start"')
    expect(html).not.toContain('/correct"')
  })

  test('the round robin page shows the live standings table, draw included', async () => {
    const viewer = await signedIn('viewer')
    const { html } = await viewer.get(`/console/tournaments/${world.roundRobin.id}`)
    expect(html).toContain('<h2 id="standings">Standings</h2>')
    expect(html).not.toContain('<svg')
    const t = await app.services.games.getTournament(world.roundRobin.id)
    expect(t.standings.reduce((sum, s) => sum + s.draws, 0)).toBe(2)
    expect(html).toContain('<th scope="col" class="num">Points</th>')
  })

  test('a moderator resolves the dispute; the bracket advances and the audit log names the operator', async () => {
    const moderator = await signedIn('moderator')
    expect((await moderator.get('/console/disputes')).html).toContain('/resolve')
    const winner = world.disputed.match.slot2ParticipantId!
    const done = await moderator.post(`/console/disputes/${world.disputed.match.id}/resolve`, { winnerParticipantId: winner })
    expect(done.status).toBe(303)
    expect(done.location).toStartWith('/console/disputes?notice=')
    const match = (await app.services.storage.read.matches.byId(world.disputed.match.id))!
    expect(match).toMatchObject({ status: 'decided', winnerParticipantId: winner })
    const [record] = await auditOf(world.disputed.match.id)
    expect(record).toMatchObject({ operatorName: moderator.name, role: 'moderator', via: 'console' })
    // Again: no longer disputed, so the page comes back saying so (409), not an error page.
    const again = await moderator.post(`/console/disputes/${world.disputed.match.id}/resolve`, { winnerParticipantId: winner })
    expect(again.status).toBe(409)
    expect(again.html).toContain('role="alert"')
    expect(again.html).toContain('only disputed or running matches can be resolved')
  })

  test('a finance operator approves the withdrawal: signed, and audited under its name', async () => {
    const finance = await signedIn('finance')
    const page = await finance.get('/console/withdrawals')
    expect(page.html).toContain(`/console/withdrawals/${world.withdrawal.id}/approve`)
    const done = await finance.post(`/console/withdrawals/${world.withdrawal.id}/approve`, {})
    expect(done.status).toBe(303)
    expect((await app.services.storage.read.wallet.withdrawal(world.withdrawal.id))!.status).toBe('signed')
    const [record] = await auditOf(world.withdrawal.id)
    expect(record).toMatchObject({ operatorName: finance.name, role: 'finance', via: 'console', action: 'withdrawal.approve' })
    expect((await finance.get('/console/withdrawals')).html).toContain('No withdrawal is waiting.')
  })

  test('an admin creates a game: the key is on the answering page once, works, and is never in a redirect; rotating shows a new one', async () => {
    const adminOp = await signedIn('admin')
    const created = await adminOp.post('/console/games', { name: 'Chess Blitz' })
    expect(created.status).toBe(201)
    expect(created.location).toBeNull()
    const key = /<code class="mono" id="game-key">([^<]+)<\/code>/.exec(created.html)![1]!
    const game = (await app.services.operations.games()).find((g) => g.name === 'Chess Blitz')!
    await app.services.gameKeys.verify(game.id, key)
    expect((await adminOp.get('/console/games')).html).not.toContain(key)
    const rotated = await adminOp.post(`/console/games/${game.id}/rotate-key`, {})
    expect(rotated.status).toBe(200)
    const newKey = /<code class="mono" id="game-key">([^<]+)<\/code>/.exec(rotated.html)![1]!
    expect(newKey).not.toBe(key)
    await app.services.gameKeys.verify(game.id, newKey)
    expect(app.services.gameKeys.verify(game.id, key)).rejects.toThrow()
    const viewer = await signedIn('viewer')
    expect((await viewer.get('/console/games')).html).not.toContain('rotate-key')
    expect((await viewer.post('/console/games', { name: 'Forged' })).status).toBe(403)
  })

  test('a moderator creates a tournament of every format from the form; a bad field comes back marked', async () => {
    const moderator = await signedIn('moderator')
    expect((await moderator.get('/console/tournaments/new')).status).toBe(200)
    const names = world.people.map((p) => p.username)
    const cases: Record<string, string>[] = [
      { format: 'single_elimination', thirdPlaceMatch: 'on', participants: names.slice(0, 4).join(', ') },
      { format: 'double_elimination', grandFinal: 'simple', participants: names.slice(0, 6).join('\n') },
      { format: 'round_robin', participants: names.slice(0, 3).join(' ') },
      { format: 'swiss', rounds: '3', participants: names.join(',') },
    ]
    for (const fields of cases) {
      const res = await moderator.post('/console/tournaments', { gameId: world.game.id, name: `Form ${fields.format}`, mode: 'players', grandFinal: 'reset', ...fields })
      expect(res.status).toBe(303)
      const id = /\/console\/tournaments\/([^?]+)\?/.exec(res.location!)![1]!
      const t = await app.services.games.getTournament(id)
      expect(t.format).toBe(fields.format as typeof t.format)
      expect(t.status).toBe('draft')
      if (fields.format === 'single_elimination') expect(t.options.thirdPlaceMatch).toBe(true)
      if (fields.format === 'double_elimination') expect(t.options.grandFinal).toBe('simple')
      if (fields.format === 'swiss') expect(t.options.rounds).toBe(3)
      const started = await moderator.post(`/console/tournaments/${id}/start`, {})
      expect(started.status).toBe(303)
      expect((await app.services.games.getTournament(id)).status).toBe('running')
    }
    // A registration tournament, with check-in, an entry fee and prizes.
    const at = (hours: number) => new Date(Date.now() + hours * 3_600_000).toISOString().slice(0, 16)
    const reg = await moderator.post('/console/tournaments', {
      gameId: world.game.id,
      name: 'Open Sign-up',
      format: 'swiss',
      mode: 'registration',
      closesAt: at(24),
      maxPlayers: '16',
      checkInOpensAt: at(20),
      checkInClosesAt: at(24),
      startsAt: at(25),
      seeding: 'random',
      entryFee: '5',
      prizes: '40, 20',
    })
    expect(reg.status).toBe(303)
    const regId = /\/console\/tournaments\/([^?]+)\?/.exec(reg.location!)![1]!
    const open = await app.services.games.getTournament(regId)
    expect(open).toMatchObject({ status: 'registration', entryFee: '5', prizes: ['40', '20'] })
    expect(open.registration).toMatchObject({ maxPlayers: 16, seeding: 'random' })
    expect(open.registration!.checkIn).not.toBeNull()

    // Refused by the form (a player missing) and by the service (an unknown player): the form again, fields kept.
    const few = await moderator.post('/console/tournaments', { gameId: world.game.id, name: 'Too few', format: 'round_robin', mode: 'players', participants: 'alice' })
    expect(few.status).toBe(422)
    expect(few.html).toContain('List at least two players')
    expect(few.html).toContain('value="Too few"')
    const unknown = await moderator.post('/console/tournaments', { gameId: world.game.id, name: 'Ghosts', format: 'round_robin', mode: 'players', participants: 'alice, nobody_here' })
    expect(unknown.status).toBeGreaterThanOrEqual(400)
    expect(unknown.status).toBeLessThan(500)
    expect(unknown.html).toContain('role="alert"')
    // A viewer may not.
    const viewer = await signedIn('viewer')
    expect((await viewer.get('/console/tournaments/new')).status).toBe(403)
    expect((await viewer.post('/console/tournaments', { gameId: world.game.id, name: 'x', format: 'swiss', mode: 'players', participants: 'alice bob' })).status).toBe(403)
  })

  test('tournament actions: disqualify and correct (moderator), fund (finance), cancel with a reason; each audited', async () => {
    const moderator = await signedIn('moderator')
    const finance = await signedIn('finance')
    const id = world.roundRobin.id
    const t = await app.services.games.getTournament(id)
    const decided = t.matches.find((m) => m.status === 'decided' && m.outcome === 'WIN')!
    const loser = decided.winnerParticipantId === decided.slot1ParticipantId ? decided.slot2ParticipantId! : decided.slot1ParticipantId!
    const corrected = await moderator.post(`/console/tournaments/${id}/matches/${decided.id}/correct`, { winnerParticipantId: loser, reason: 'replay showed the other player won' })
    expect(corrected.status).toBe(303)
    expect((await app.services.storage.read.matches.byId(decided.id))!.winnerParticipantId).toBe(loser)
    expect((await auditOf(decided.id))[0]).toMatchObject({ operatorName: moderator.name, reason: 'replay showed the other player won' })

    const funded = await finance.post(`/console/tournaments/${id}/fund`, { amount: '30', reference: 'sponsor-1' })
    expect(funded.status).toBe(303)
    expect(funded.location).toBe(`/console/tournaments/${id}?notice=tournament_funded`)
    expect((await finance.get(funded.location!)).html).toContain(`<p class="notice" role="status">${NOTICES.tournament_funded}</p>`)
    expect((await auditOf(id)).find((r) => r.action === 'tournament.fund')).toMatchObject({ details: { escrow: '30' } })
    expect((await moderator.post(`/console/tournaments/${id}/fund`, { amount: '30', reference: 'sponsor-2' })).status).toBe(403)
    const badAmount = await finance.post(`/console/tournaments/${id}/fund`, { amount: 'lots', reference: 'sponsor-3' })
    expect(badAmount.status).toBe(422)
    expect(badAmount.html).toContain('role="alert"')

    const target = t.participants[3]!
    const dq = await moderator.post(`/console/tournaments/${id}/participants/${target.id}/disqualify`, { reason: 'left the event' })
    expect(dq.status).toBe(303)
    expect((await app.services.games.getTournament(id)).participants[3]!.disqualifiedAt).not.toBeNull()

    const cancelled = await moderator.post(`/console/tournaments/${id}/cancel`, { reason: 'venue closed' })
    expect(cancelled.status).toBe(303)
    expect((await app.services.games.getTournament(id)).status).toBe('cancelled')
    const actions = (await auditOf(id)).map((r) => r.action)
    expect(actions).toContain('tournament.cancel')
    const list = await moderator.get('/console/tournaments?status=cancelled')
    expect(list.html).toContain('League of Four')
    expect((await moderator.get('/console/tournaments?status=bogus')).status).toBe(422)
  })

  test('an unknown tournament is a 404 page; a signed-out visit goes to the sign-in page', async () => {
    const viewer = await signedIn('viewer')
    expect((await viewer.get('/console/tournaments/tournament_nope')).status).toBe(404)
    const out = await app.handle(req('/console/disputes'))
    expect(out.status).toBe(303)
    expect(out.headers.get('location')).toBe('/console/login?next=%2Fconsole%2Fdisputes')
  })
})
