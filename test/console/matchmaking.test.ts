// The console's matchmaking pages (issue 39) over app.handle, on both
// engines: a game's queues with their settings and the tickets waiting now;
// an admin opens, changes and closes a queue through forms that call the
// admin API's service methods (audited via the console; what the API
// refuses, the form refuses, naming the field; closing asks first and
// cancels the waiting tickets); the game's challenge rake set from its page;
// the Matchmaking page listing the stakes held and the open challenges; a
// moderator cancelling a staked match from there (a confirmation page first:
// both stakes refunded); a disputed queue match on the disputes page, linked
// to its match page, resolved from it (the winner paid). Lower roles and
// forms without their token are refused and change nothing.
import { afterAll, describe, expect, test } from 'bun:test'
import { createArenaApp, createGame, players, claim, type Player } from '../helpers/arena'
import { consoleAs, textOf } from '../helpers/operators'
import { NOTICES } from '../../src/console/notices'
import { balanceOf, challenge, createQueue, expectLedgerSound, fund, joined, matchOf, pairedMatch, seatOf } from '../helpers/matchmaking'

const app = await createArenaApp()
afterAll(() => app.close())

const queuesPage = (gameId: string) => `/console/games/${gameId}/queues`
const auditAfter = async (seq: number, action: string) => (await app.storage.read.audit.auditAfter(seq, 200)).filter((r) => r.action === action)
const auditHead = async () => (await app.storage.read.audit.auditHead()).seq
const pair = (people: Player[]) => [people[0]!, people[1]!] as const

/** The create form's fields: a staked, raked queue. */
const form = { name: 'duel-5', rated: 'on', stake: '5', rake: '0.05', windowInitial: '50', windowWiden: '2.5', windowMax: '300', readyCheckS: '20', matchDeadlineS: '', rematchCooldownS: '60', draws: 'result' }

describe("a game's queues", () => {
  test('a viewer reads each queue, its settings and the tickets waiting now; no forms', async () => {
    const { game } = await createGame(app, 'Queue Chess')
    await createQueue(app, game.id, { name: 'casual' })
    await createQueue(app, game.id, { name: 'staked', stake: '2', rake: '0.1', rated: true, matchDeadlineS: 600 })
    const people = await players(app, 3)
    await fund(app, people, '10')
    await joined(app, game.id, 'staked', people[0]!)
    await joined(app, game.id, 'staked', people[1]!)
    // (A third in the other queue, so the counts are told apart.)
    await joined(app, game.id, 'casual', people[2]!)
    // Two waiting (not yet paired: no tick), one in the other.
    const viewer = await consoleAs(app, 'viewer')
    expect((await viewer.get(`/console/games/${game.id}`)).html).toContain(`href="${queuesPage(game.id)}"`)
    const page = await viewer.get(queuesPage(game.id))
    expect(page.status).toBe(200)
    const text = textOf(page.html)
    expect(text).toMatch(/casual .*que_\w+ 1 no none 0 ±100, \+10\/s, up to ±400 30 s — 0 s replay/)
    expect(text).toMatch(/staked .*que_\w+ 2 yes 2 0\.1 ±100, \+10\/s, up to ±400 30 s 600 s 0 s replay/)
    expect(text).toContain('Opening, changing and closing queues needs the admin role.')
    expect(page.html).not.toContain('method="post"' + ` action="${queuesPage(game.id)}"`)
    expect(page.html).not.toContain('/close"')
    // Paired: the tickets are no longer waiting.
    expect(await app.services.matchmaking.matchTick()).toBe(1)
    expect(textOf((await viewer.get(queuesPage(game.id))).html)).toMatch(/staked .*que_\w+ 0 yes/)
    // An unknown game: 404.
    expect((await viewer.get(queuesPage('gam_00000000000000000000000000000000'))).status).toBe(404)
  })

  test('an admin opens a queue through the form (audited via the console); a refused one comes back saying why, nothing opened; lower roles are refused', async () => {
    const { game } = await createGame(app, 'Form Chess')
    const admin = await consoleAs(app, 'admin')
    const page = await admin.get(queuesPage(game.id))
    expect(page.html).toContain(`<form method="post" action="${queuesPage(game.id)}"`)

    const before = await auditHead()
    for (const role of ['viewer', 'moderator', 'finance'] as const) {
      expect((await (await consoleAs(app, role)).post(queuesPage(game.id), form)).status).toBe(403)
    }
    expect((await admin.post(queuesPage(game.id), form, null)).status).toBe(403)
    expect((await app.services.matchmaking.queues(game.id, true)).queues).toEqual([])

    const done = await admin.post(queuesPage(game.id), form)
    expect(done.status).toBe(303)
    expect(done.location).toBe(`${queuesPage(game.id)}?notice=queue_created#queues`)
    const { queues } = await app.services.matchmaking.queues(game.id, false)
    expect(queues).toEqual([
      expect.objectContaining({ name: 'duel-5', rated: true, stake: '5', rake: '0.05', window: { initial: 50, widenPerSecond: 2.5, max: 300 }, readyCheckS: 20, matchDeadlineS: null, rematchCooldownS: 60, draws: 'result', closedAt: null }),
    ])
    expect(await auditAfter(before, 'queue.create')).toEqual([expect.objectContaining({ target: queues[0]!.id, operatorName: admin.op.operator.name, via: 'console' })])
    expect((await admin.get(done.location!)).html).toContain(NOTICES.queue_created)

    // Refused as the API refuses: the name taken, a ready check out of range, a rake without a stake, not a number.
    for (const [fields, says] of [
      [form, 'open queue of that name'],
      [{ ...form, name: 'quick', readyCheckS: '2' }, 'readyCheckS'],
      [{ ...form, name: 'quick', stake: '' }, 'A rake needs a stake'],
      [{ ...form, name: 'quick', windowMax: 'wide' }, 'window/max'],
      [{ ...form, name: 'quick', windowMax: '10' }, 'At least `initial`'],
      [{ ...form, name: 'bad name!' }, 'name'],
    ] as const) {
      const refused = await admin.post(queuesPage(game.id), fields)
      expect(refused.status).toBe(303)
      expect(refused.location).toContain('error=')
      expect(textOf((await admin.get(refused.location!)).html)).toContain(says)
    }
    expect((await app.services.matchmaking.queues(game.id, true)).queues).toHaveLength(1)
  })

  test('an admin changes a queue (tickets keep their place) and closes it through its confirmation page: the waiting tickets cancelled', async () => {
    const { game } = await createGame(app, 'Change Chess')
    await createQueue(app, game.id, { name: 'ranked' })
    const people = await players(app, 1)
    const ticket = await joined(app, game.id, 'ranked', people[0]!)
    const admin = await consoleAs(app, 'admin')
    const path = `${queuesPage(game.id)}/ranked`
    expect((await admin.get(queuesPage(game.id))).html).toContain(`<form method="post" action="${path}"`)

    const before = await auditHead()
    expect((await (await consoleAs(app, 'moderator')).post(path, form)).status).toBe(403)
    // Unticked, rated is absent from the form.
    const { rated: _ticked, name: _name, ...unrated } = form
    const changed = await admin.post(path, { ...unrated, stake: '', rake: '0' })
    expect(changed.status).toBe(303)
    expect(changed.location).toBe(`${queuesPage(game.id)}?notice=queue_updated#queues`)
    const [queue] = (await app.services.matchmaking.queues(game.id, false)).queues
    expect(queue).toMatchObject({ name: 'ranked', rated: false, stake: null, rake: '0', window: { initial: 50, widenPerSecond: 2.5, max: 300 }, readyCheckS: 20, rematchCooldownS: 60, draws: 'result' })
    expect(await auditAfter(before, 'queue.update')).toHaveLength(1)
    // The ticket waits on, in its place.
    expect((await app.services.matchmaking.current(people[0]!.userId, game.id, 'ranked')).ticket.waitingSince).toBe(ticket.waitingSince)

    // Closing asks first, saying how many tickets it cancels; opening the page changes nothing.
    expect((await (await consoleAs(app, 'viewer')).get(`${path}/close`)).status).toBe(403)
    const confirm = await admin.get(`${path}/close`)
    expect(confirm.status).toBe(200)
    expect(textOf(confirm.html)).toContain('Close the queue ranked of Change Chess?')
    expect(textOf(confirm.html)).toContain('The 1 ticket waiting in it is cancelled')
    expect(confirm.html).toContain(`<form method="post" action="${path}/close"`)
    expect((await app.services.matchmaking.queues(game.id, false)).queues).toHaveLength(1)
    expect((await admin.post(`${path}/close`, {}, null)).status).toBe(403)
    const closed = await admin.post(`${path}/close`, {})
    expect(closed.status).toBe(303)
    expect(closed.location).toBe(`${queuesPage(game.id)}?notice=queue_closed#queues`)
    expect((await app.services.matchmaking.queues(game.id, false)).queues).toEqual([])
    const [row] = await app.storage.read.matchmaking.ticketsByIds([ticket.id])
    expect(row).toMatchObject({ status: 'cancelled', closeReason: 'queue_closed' })
    expect(await auditAfter(before, 'queue.close')).toHaveLength(1)
    // Closed queues are listed on asking; closing again is refused, saying why.
    expect(textOf((await admin.get(`${queuesPage(game.id)}?closed=include`)).html)).toMatch(/ranked \(closed\)/)
    expect((await admin.get(`${path}/close`)).status).toBe(404)
    const again = await admin.post(`${path}/close`, {})
    expect(textOf((await admin.get(again.location!)).html)).toContain('No such queue')
  })

  test("an admin sets the game's challenge rake on its page; a refused rake says why; a viewer has no form", async () => {
    const { game } = await createGame(app, 'Rake Chess')
    const path = `/console/games/${game.id}/challenge-rake`
    const viewer = await consoleAs(app, 'viewer')
    const shown = await viewer.get(`/console/games/${game.id}`)
    expect(textOf(shown.html)).toContain("Challenge rake 0: the house's share")
    expect(shown.html).not.toContain(`action="${path}"`)
    expect((await viewer.post(path, { challengeRake: '0.05' })).status).toBe(403)
    const admin = await consoleAs(app, 'admin')
    expect((await admin.get(`/console/games/${game.id}`)).html).toContain(`action="${path}"`)
    const done = await admin.post(path, { challengeRake: '0.05' })
    expect(done.location).toBe(`/console/games/${game.id}?notice=challenge_rake_set#matchmaking`)
    expect((await app.services.games.getGame(game.id)).challengeRake).toBe('0.05')
    const refused = await admin.post(path, { challengeRake: '0.9' })
    expect(textOf((await admin.get(refused.location!)).html)).toContain('challengeRake')
    expect((await app.services.games.getGame(game.id)).challengeRake).toBe('0.05')
  })
})

describe('the Matchmaking page', () => {
  test('stakes held and open challenges, linked; a moderator cancels a staked match through its confirmation page: both stakes refunded', async () => {
    const { game } = await createGame(app, 'Stake Chess')
    await createQueue(app, game.id, { name: 'money', stake: '3', rake: '0.1' })
    const people = await players(app, 4)
    await fund(app, people, '10')
    const match = await pairedMatch(app, game.id, 'money', pair(people))
    expect(await balanceOf(app, people[0]!)).toBe('7')
    const offered = await challenge(app, game.id, people[2]!, { opponent: people[3]!.username, stake: '1' })
    expect(offered.status).toBe(201)
    const { challenge: open } = (await offered.json()) as { challenge: { id: string } }

    const viewer = await consoleAs(app, 'viewer')
    const dashboard = await viewer.get('/console')
    expect(dashboard.html).toContain('href="/console/matchmaking"')
    // The dashboard counts the matches holding stakes and the tickets waiting (across the file's games: read off the store).
    const held = (await app.storage.read.matchmaking.stakesHeld(500)).length
    const waiting = (await app.storage.read.matchmaking.countOpenTickets()).reduce((sum, q) => sum + q.open, 0)
    expect(held).toBeGreaterThanOrEqual(1)
    expect(textOf(dashboard.html)).toContain(`${held} matches holding stakes`)
    expect(textOf(dashboard.html)).toContain(`${waiting} tickets waiting in queues`)
    const page = await viewer.get('/console/matchmaking')
    expect(page.status).toBe(200)
    const text = textOf(page.html)
    const [a, b] = match.players.map((p) => p.username)
    expect(text).toMatch(new RegExp(`queue money ${match.id} Stake Chess ${a} vs ${b} waiting 3 0\\.1`))
    expect(page.html).toContain(`href="/console/matches/${match.id}"`)
    expect(text).toContain(`${people[2]!.username} ${open.id} ${people[3]!.username} 1`)
    // A viewer reads; cancelling is a moderator's.
    expect(page.html).not.toContain(`/console/matches/${match.id}/cancel`)
    expect((await viewer.get(`/console/matches/${match.id}/cancel`)).status).toBe(403)
    expect((await viewer.post(`/console/matches/${match.id}/cancel`, { reason: 'x' })).status).toBe(403)
    // The match page.
    const matchPage = textOf((await viewer.get(`/console/matches/${match.id}`)).html)
    expect(matchPage).toContain('A queue match of Stake Chess')
    expect(matchPage).toContain('Stake each 3')
    expect(matchPage).toContain('(not ready yet)')

    const moderator = await consoleAs(app, 'moderator')
    expect((await moderator.get('/console/matchmaking')).html).toContain(`action="/console/matches/${match.id}/cancel"`)
    const before = await auditHead()
    const confirm = await moderator.get(`/console/matches/${match.id}/cancel`)
    expect(confirm.status).toBe(200)
    expect(textOf(confirm.html)).toContain(`Each player's stake of 3 goes back to their wallet`)
    expect((await matchOf(app, match.id)).status).toBe('waiting')
    expect((await moderator.post(`/console/matches/${match.id}/cancel`, { reason: 'stuck' }, null)).status).toBe(403)
    expect((await moderator.post(`/console/matches/${match.id}/cancel`, { reason: '   ' })).location).toContain('error=')
    expect((await matchOf(app, match.id)).status).toBe('waiting')

    const done = await moderator.post(`/console/matches/${match.id}/cancel`, { reason: 'a server fault' })
    expect(done.status).toBe(303)
    expect(done.location).toBe('/console/matchmaking?notice=match_cancelled#stakes-held')
    expect((await matchOf(app, match.id)).status).toBe('cancelled')
    expect(await balanceOf(app, people[0]!)).toBe('10')
    expect(await balanceOf(app, people[1]!)).toBe('10')
    expect(await auditAfter(before, 'match.cancel')).toEqual([expect.objectContaining({ target: match.id, via: 'console', reason: 'a server fault' })])
    await expectLedgerSound(app)
    const after = await moderator.get(done.location!)
    expect(after.html).toContain(NOTICES.match_cancelled)
    expect(after.html).not.toContain(`href="/console/matches/${match.id}"`)
    // Cancelled: not again.
    expect((await moderator.get(`/console/matches/${match.id}/cancel`)).status).toBe(409)
    const again = await moderator.post(`/console/matches/${match.id}/cancel`, { reason: 'twice' })
    expect(textOf((await moderator.get(again.location!)).html)).toContain('Match is cancelled')
    expect(await balanceOf(app, people[0]!)).toBe('10')
  })
})

test('a disputed queue match: on the disputes page without a tournament, linked to its match page, resolved from there; the winner is paid', async () => {
  const { game, gameKey } = await createGame(app, 'Dispute Chess')
  await createQueue(app, game.id, { name: 'money', stake: '4' })
  const people = await players(app, 2)
  await fund(app, people, '4')
  const match = await pairedMatch(app, game.id, 'money', pair(people), true)
  expect(match.status).toBe('running')
  const [x, y] = match.players.map((seat) => people.find((p) => p.userId === seat.userId)!)
  expect((await claim(app, game.id, gameKey, x!, match.id, { outcome: 'WIN', winnerParticipantId: seatOf(match, x!) })).decision).toBe('pending')
  expect((await claim(app, game.id, gameKey, y!, match.id, { outcome: 'WIN', winnerParticipantId: seatOf(match, y!) })).decision).toBe('dispute')

  const moderator = await consoleAs(app, 'moderator')
  const disputes = await moderator.get('/console/disputes')
  expect(disputes.status).toBe(200)
  const text = textOf(disputes.html)
  expect(text).toContain(`none (a queue's match) queue match ${match.id}`)
  expect(text).toContain(`${x!.username} won`)
  expect(disputes.html).toContain(`href="/console/matches/${match.id}"`)
  expect(disputes.html).toContain(`action="/console/disputes/${match.id}/resolve"`)
  // The match page holds the same form; a viewer has neither.
  const page = await moderator.get(`/console/matches/${match.id}`)
  expect(textOf(page.html)).toContain('Status disputed')
  expect(page.html).toContain(`action="/console/disputes/${match.id}/resolve"`)
  expect((await (await consoleAs(app, 'viewer')).get(`/console/matches/${match.id}`)).html).not.toContain('/resolve"')

  const resolved = await moderator.post(`/console/disputes/${match.id}/resolve`, { winnerParticipantId: seatOf(match, y!) })
  expect(resolved.status).toBe(303)
  expect(resolved.location).toBe('/console/disputes?notice=dispute_resolved')
  const decided = await matchOf(app, match.id)
  expect(decided).toMatchObject({ status: 'decided', decision: { outcome: 'WIN', winnerParticipantId: seatOf(match, y!) } })
  // Pot 8, no rake: all to the winner.
  expect(await balanceOf(app, y!)).toBe('8')
  expect(await balanceOf(app, x!)).toBe('0')
  await expectLedgerSound(app)
  expect(textOf((await moderator.get('/console/disputes')).html)).not.toContain(match.id)
  expect(textOf((await moderator.get(`/console/matches/${match.id}`)).html)).toContain(`${y!.username} won (played)`)
})
